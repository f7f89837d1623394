package main

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	parquetgo "github.com/parquet-go/parquet-go"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/trace"
	"github.com/gprobe/gprobe/disasm"
	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/target"
)

// Go programs on this machine's uprobes: testdata/goprogs/recurse, whose
// 64 goroutines recurse 300 frames deep through main.descend with 2 KB
// frames, so that their stacks grow and move while probes fire.

// goProg is a Go test program built for one test, probed in a group and
// with event names no one else uses (the kernel checks event names across
// groups).
type goProg struct {
	bin, group, tag string
}

func buildGoProg(t *testing.T, name string) *goProg {
	t.Helper()
	bin := target.RealPath(testenv.BuildGo(t, testenv.GoProgram(t, name), ""))
	return &goProg{bin: bin, group: fmt.Sprintf("gogo%d", os.Getpid()), tag: fmt.Sprintf("%d", os.Getpid())}
}

// TestGoUretprobeCrashes proves why gprobe never puts a uretprobe on a Go
// function by default: with one on main.descend (written as a raw r: line,
// which gprobe installs as given), the program dies the first time a
// goroutine's stack is copied while a call is open, since the copy meets
// the uretprobe's trampoline address where a return address should be.
func TestGoUretprobeCrashes(t *testing.T) {
	requireRecording(t)
	fs := liveFS(t)
	p := buildGoProg(t, "recurse")
	t.Cleanup(func() { removeGroup(t, fs, p.group) })
	_, off := testenv.FuncSymbol(t, p.bin, "main.descend")
	ev := "descend_ret_" + p.tag
	line := fmt.Sprintf("r:%s/%s %s:%#x", p.group, ev, p.bin, off)
	if r := runGprobe("add", "-q", line); r.Code != 0 {
		t.Fatalf("add %q: %s", line, r)
	}
	out := filepath.Join(t.TempDir(), "crash.dat")
	r := runGprobe("record", "-e", p.group+":"+ev, "-o", out, "--", p.bin)
	if r.Code == 0 {
		t.Fatalf("the program survived a uretprobe on main.descend: %s", r)
	}
	if !strings.Contains(r.Stderr, "unexpected return pc") && !strings.Contains(r.Stderr, "unknown caller pc") {
		t.Fatalf("the program failed, but not by the uretprobe's return address (exit %d):\n%s", r.Code, tail(r.Stderr, 2000))
	}
	t.Logf("exit %d: %s", r.Code, firstMatch(r.Stderr, "unknown caller pc", "unexpected return pc"))
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// firstMatch is the first line of s holding one of subs.
func firstMatch(s string, subs ...string) string {
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				return l
			}
		}
	}
	return ""
}

// goEvents reads a recording's events of group into per-event lists of
// their fields (Value's text: a Go string cut at its length).
func goEvents(t *testing.T, path, group string) map[string][]map[string]string {
	t.Helper()
	rec, err := analyze.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	out := map[string][]map[string]string{}
	err = rec.Run(func(e *trace.Event) error {
		if e.Kind != trace.Data || e.System != group {
			return nil
		}
		f := map[string]string{}
		for _, n := range e.ArgNames() {
			f[n], _ = e.Value(n)
		}
		f["common_pid"] = strconv.Itoa(e.PID)
		out[e.Name] = append(out[e.Name], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// analyzeJSON runs gprobe analyze --json on path and returns its latency
// rows by function.
func analyzeJSON(t *testing.T, path string) map[string]latency.Result {
	t.Helper()
	r := runGprobe("analyze", "--json", path)
	var rep struct {
		Latency []latency.Result `json:"latency"`
	}
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &rep) != nil {
		t.Fatalf("analyze: %s", r)
	}
	rows := map[string]latency.Result{}
	for _, row := range rep.Latency {
		rows[row.Function] = row
	}
	return rows
}

// TestGoSafeReturns probes a Go function's entry and returns the way
// gprobe does by default, while 64 goroutines recurse through it 300 deep
// with 2 KB frames, their stacks moving under the probes: the program
// lives (where a uretprobe kills it, TestGoUretprobeCrashes), entries,
// returns and the program's own count of calls are equal, the string
// argument is recorded as its text, the goroutine ids are the ones the
// program prints, and analyze pairs every call.
func TestGoSafeReturns(t *testing.T) {
	requireRecording(t)
	fs := liveFS(t)
	p := buildGoProg(t, "recurse")
	t.Cleanup(func() { removeGroup(t, fs, p.group) })
	ev := "descend_" + p.tag
	add := runGprobe("-x", p.bin, "-a", p.group+":"+ev+"=main.descend name:string depth", "-a", p.group+":"+ev+"=main.descend%return $retval")
	if add.Code != 0 || !strings.Contains(add.Stderr, "main.descend is Go code: its returns are probed on its return instructions") {
		t.Fatalf("add: %s", add)
	}
	lines := installed(t, fs, p.group)
	for _, l := range lines {
		if strings.HasPrefix(l, "r:") {
			t.Fatalf("a uretprobe on a Go function: %s", l)
		}
	}
	t.Logf("installed:\n%s", strings.Join(lines, "\n"))
	out := filepath.Join(t.TempDir(), "safe.dat")
	r := runGprobe("record", "-e", p.group+":"+ev, "-e", p.group+":"+ev+"__retinsn", "-o", out, "--", p.bin)
	if r.Code != 0 || !strings.Contains(r.Stderr, "no events lost") {
		t.Fatalf("record (the program must live): %s", r)
	}
	var calls int
	goids := map[string]string{} // worker name -> its goroutine id as the program prints it
	for _, l := range strings.Split(r.Stdout, "\n") {
		var id uint64
		var name string
		if n, _ := fmt.Sscanf(l, "goroutine %d %s", &id, &name); n == 2 {
			goids[name] = strconv.FormatUint(id, 10)
		}
		fmt.Sscanf(l, "calls %d", &calls)
	}
	if calls != 64*301 || len(goids) != 64 {
		t.Fatalf("the program says %d calls, %d goroutines:\n%s", calls, len(goids), tail(r.Stdout, 500))
	}
	evs := goEvents(t, out, p.group)
	entries, returns := evs[ev], evs[ev+"__retinsn"]
	if len(entries) != calls || len(returns) != calls {
		t.Errorf("%d entries, %d returns; the program made %d calls", len(entries), len(returns), calls)
	}
	depths := map[string]int{}
	for _, e := range entries {
		want, ok := goids[e["name_string"]]
		if g, _ := trace.ParseUint(e["goid"]); !ok || strconv.FormatUint(g, 10) != want {
			t.Fatalf("entry %v: its goroutine printed id %q for %q", e, want, e["name_string"])
		}
		depths[e["name_string"]]++
	}
	for name, n := range depths {
		if n != 301 {
			t.Errorf("%s: %d entries, want 301", name, n)
		}
	}
	// Goroutines move between threads while their calls are open: a
	// return on another thread than its goroutine's entry before it.
	threadOf := map[string]string{}
	for _, e := range entries {
		threadOf[e["goid"]] = e["common_pid"]
	}
	migrated := 0
	for _, e := range returns {
		if e["r0"] == "" || e["goid"] == "" {
			t.Fatalf("return %v without its value or goroutine", e)
		}
		if threadOf[e["goid"]] != e["common_pid"] {
			migrated++
		}
	}
	// A call's depth on its goroutine, stack top less stack pointer, is
	// the same at its entry and at its return, though the stack moved in
	// between: per goroutine, the returns' depths are the entries' in
	// reverse (the recursion unwinds), and the stack moved (its top
	// changed) under every goroutine.
	depthsOf := func(evs []map[string]string) (map[string][]uint64, map[string]map[string]bool) {
		d, tops := map[string][]uint64{}, map[string]map[string]bool{}
		for _, e := range evs {
			sp, _ := trace.ParseUint(e["go_sp"])
			hi, _ := trace.ParseUint(e["go_hi"])
			d[e["goid"]] = append(d[e["goid"]], hi-sp)
			if tops[e["goid"]] == nil {
				tops[e["goid"]] = map[string]bool{}
			}
			tops[e["goid"]][e["go_hi"]] = true
		}
		return d, tops
	}
	in, tops := depthsOf(entries)
	outs, _ := depthsOf(returns)
	moved := 0
	for g, ds := range in {
		rs := outs[g]
		if len(rs) != len(ds) {
			t.Errorf("goroutine %s: %d entries, %d returns", g, len(ds), len(rs))
			continue
		}
		for i := range ds {
			if ds[i] != rs[len(rs)-1-i] {
				t.Fatalf("goroutine %s: the entry at depth %d returns at depth %d", g, ds[i], rs[len(rs)-1-i])
			}
		}
		if len(tops[g]) > 1 {
			moved++
		}
	}
	if moved != len(in) {
		t.Errorf("the stacks of %d of %d goroutines moved under the probes", moved, len(in))
	}
	rows := analyzeJSON(t, out)
	row, ok := rows[ev]
	if !ok || row.Count != uint64(calls) || row.UnmatchedEntries != 0 || row.UnmatchedReturns != 0 {
		t.Errorf("analyze: %+v (want %d calls, all paired)", row, calls)
	}
	t.Logf("%d calls, %d entries, %d returns, %d goroutines; analyze: %d calls, %d no-return, %d no-entry; %d returns on another thread than their goroutine's last entry",
		calls, len(entries), len(returns), len(goids), row.Count, row.UnmatchedEntries, row.UnmatchedReturns, migrated)
}

// TestGoPanicsAndGoexit: calls that leave by a panic or runtime.Goexit run
// no return instruction; analyze counts them as calls without a return,
// and pairs the others, even when a panic recovered inside the recursion
// leaves deeper calls open below a call that returns (testdata/goprogs/
// values: deep(4, true) recovers at level 2, so levels 1 and 0 never
// return; mayPanic panics for every third n; goexits ends its goroutine
// for odd n).
func TestGoPanicsAndGoexit(t *testing.T) {
	requireRecording(t)
	fs := liveFS(t)
	p := buildGoProg(t, "values")
	t.Cleanup(func() { removeGroup(t, fs, p.group) })
	var names []string
	for _, fn := range []string{"deep", "mayPanic", "goexits"} {
		ev := fn + "_" + p.tag
		names = append(names, "-e", p.group+":"+ev, "-e", p.group+":"+ev+"__retinsn")
		if r := runGprobe("-x", p.bin, "-q", "-a", p.group+":"+ev+"=main."+fn, "-a", p.group+":"+ev+"=main."+fn+"%return"); r.Code != 0 {
			t.Fatalf("add main.%s: %s", fn, r)
		}
	}
	const rounds = 9
	out := filepath.Join(t.TempDir(), "panics.dat")
	r := runGprobe(append(append([]string{"record"}, names...), "-o", out, "--", p.bin, strconv.Itoa(rounds))...)
	if r.Code != 0 || !strings.Contains(r.Stderr, "no events lost") {
		t.Fatalf("record: %s", r)
	}
	rows := analyzeJSON(t, out)
	for _, c := range []struct {
		fn              string
		count, noReturn uint64
	}{
		// per round: deep(4, true) 5 calls, 3 return; deep(4, false) 5 return
		{"deep", rounds * 8, rounds * 2},
		// i = 0, 3, 6 panic
		{"mayPanic", rounds - 3, 3},
		// odd i: 1, 3, 5, 7
		{"goexits", rounds - 4, 4},
	} {
		row := rows[c.fn+"_"+p.tag]
		if row.Count != c.count || row.UnmatchedEntries != c.noReturn || row.UnmatchedReturns != 0 {
			t.Errorf("%s: %d calls, %d without return, %d without entry; want %d, %d, 0", c.fn, row.Count, row.UnmatchedEntries, row.UnmatchedReturns, c.count, c.noReturn)
		}
	}
}

// TestGoCLI: what gprobe prints about a Go program (testdata/goprogs/
// values), offline.
func TestGoCLI(t *testing.T) {
	p := buildGoProg(t, "values")
	bin := p.bin
	off := func(fn string, check bool) string {
		s, o := testenv.FuncSymbol(t, bin, fn)
		if check {
			f, err := elf.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			text := f.Section(".text")
			code := make([]byte, 64)
			if _, err := text.ReadAt(code, int64(s.Value-text.Addr)); err != nil {
				t.Fatal(err)
			}
			sc, ok := disasm.FindGoStackCheck(arch.AMD64, code, s.Value)
			if !ok {
				t.Fatalf("%s has no stack check", fn)
			}
			o += uint64(sc.End)
		}
		return fmt.Sprintf("%s:0x%x", bin, o)
	}
	const pairing = " goid=+152(%r14):u64 go_sp=%sp:x64 go_hi=+8(%r14):x64"
	note := "main.results is Go code: its returns are probed on its return instructions, since a uretprobe kills a Go program when a goroutine's stack moves (--uretprobe puts one anyway).\n"
	for _, c := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		// the entry after the stack check, or at the entry without one;
		// names after the whole function
		{[]string{"-D", "main.huge n", "-D", "main.small"}, 0,
			"p:probe_values/main_huge " + off("main.huge", true) + " n=%ax:s64" + pairing + "\n" +
				"p:probe_values/main_small " + off("main.small", false) + pairing + "\n", ""},
		{[]string{"-D", "main.(*T).Method", "-D", "main.T.Value t.N", "-D", "main.main.func1"}, 0,
			"p:probe_values/main_T_Method " + off("main.(*T).Method", false) + pairing + "\n" +
				"p:probe_values/main_T_Value " + off("main.T.Value", false) + " N=%cx:s64" + pairing + "\n" +
				"p:probe_values/main_main_func1 " + off("main.main.func1", true) + pairing + "\n", ""},
		// Go values
		{[]string{"-D", "main.strs s:string n", "-D", "main.slices c c[2]", "-D", "main.ifaces e", "-D", "main.maps m.len", "-D", "main.ptrs t.Name:string t->Next->N"}, 0,
			"p:probe_values/main_strs " + off("main.strs", false) + " s_string=+0(%ax):string s_string_len=%bx:s64 n=%cx:s64" + pairing + "\n" +
				"p:probe_values/main_slices " + off("main.slices", false) + " c_array=%ax:x64 c_len=%bx:s64 c_cap=%cx:s64 c=+16(%ax):s64" + pairing + "\n" +
				"p:probe_values/main_ifaces " + off("main.ifaces", false) + " e_tab=%ax:x64 e_data=%bx:x64" + pairing + "\n" +
				"p:probe_values/main_maps " + off("main.maps", false) + " len=+0(%ax):x64" + pairing + "\n" +
				"p:probe_values/main_ptrs " + off("main.ptrs", false) + " Name=+0(+0(%ax)):string Name_len=+8(%ax):s64 N=+16(+48(%ax)):s64" + pairing + "\n", ""},
		// $params leaves the results out
		{[]string{"-D", "main.named $params"}, 0, "p:probe_values/main_named " + off("main.named", false) + " n=%ax:s64" + pairing + "\n", ""},
		// a line of a function named as Go names it
		{[]string{"-D", "main.named:5"}, 0, "", ""},
		// the returns: on the return instructions, said once; a uretprobe when asked
		{[]string{"-D", "main.results%return $retval", "-D", "main.results%return"}, 0, "", note},
		{[]string{"--uretprobe", "-D", "main.results%return $retval"}, 0,
			"r:probe_values/main_results__return " + off("main.results", false) + " $retval\n", ""},
		// $goid where g is not in its register, or not a Go program
		{[]string{"-D", "runtime.memmove $goid"}, exitEOPNOTSUPP, "",
			"$goid reads the running goroutine through %r14, which runtime.memmove does not keep: it is assembly (" + runtimeFile(t, "memmove_amd64.s") + "); read it in a Go function that calls it\n  Error: Failed to add events.\n"},
		{[]string{"-V", "main.named"}, 0, "Available variables at main.named\n\t@<main.named+0>\n\t\tint\tn\n", ""},
		// a function of a package with an import path, named without it
		{[]string{"-D", "gprobetest/values/shapes.(*Box).Area b.W scale"}, 0,
			"p:probe_values/shapes_Box_Area " + off("gprobetest/values/shapes.(*Box).Area", false) + " W=+0(%ax):s64 scale=%bx:s64" + pairing + "\n", ""},
	} {
		args := append([]string{"-x", bin}, c.args...)
		r := runGprobe(args...)
		if c.stdout == "" && c.code == 0 {
			// lines whose offsets are the compiler's: checked by shape
			if r.Code != 0 || r.Stderr != c.stderr || !goShape(r.Stdout, c.args) {
				t.Errorf("%q: %s\nwant stderr %q", c.args, r, c.stderr)
			}
			continue
		}
		if r.Code != c.code || r.Stdout != c.stdout || r.Stderr != c.stderr {
			t.Errorf("%q: %s\nwant exit %d, stdout\n%s\nstderr\n%s", c.args, r, c.code, c.stdout, c.stderr)
		}
	}
	// -L and --ret-insn -L read main.work as a function, with Go's source.
	src := filepath.Join(testenv.GoProgram(t, "values"), "main.go")
	if r := runGprobe("-x", bin, "-L", "main.named"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "<main.named@"+src+":0>\n      0  func named(n int) (count int, err error) {\n") {
		t.Errorf("-L main.named: %s", r)
	}
	if r := runGprobe("-x", bin, "--ret-insn", "-L", "main.strs"); r.Code != 0 || !strings.Contains(r.Stdout, "return         retq  "+src+":") {
		t.Errorf("--ret-insn -L main.strs: %s", r)
	}
	// arm64: the same values in its registers, g in x28.
	arm := target.RealPath(testenv.BuildGo(t, testenv.GoProgram(t, "values"), "arm64"))
	_, armOff := testenv.FuncSymbol(t, arm, "main.strs")
	want := fmt.Sprintf("p:probe_values/main_strs %s:0x%x s_string=+0(%%x0):string s_string_len=%%x1:s64 n=%%x2:s64 goid=+152(%%x28):u64 go_sp=%%sp:x64 go_hi=+8(%%x28):x64\n", arm, armOff)
	if r := runGprobe("-x", arm, "-D", "main.strs s:string n"); r.Code != 0 || r.Stdout != want {
		t.Errorf("arm64: %s\nwant %s", r, want)
	}
	// $goid in a program that is not Go.
	if r := runGprobe("-x", "/bin/true", "-D", "main $goid"); r.Code != exitEOPNOTSUPP || !strings.Contains(r.Stderr, "$goid is a Go program's goroutine id, and /usr/bin/true is not a Go program.") {
		t.Errorf("$goid in /bin/true: %s", r)
	}
}

// goShape checks -D's lines where offsets are the compiler's: main.named:5
// is one probe named main_named_L5; FUNC%return twice is return-instruction
// probes of the results with the pairing fields, then without the results.
func goShape(out string, args []string) bool {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if args[1] == "main.named:5" {
		return len(lines) == 1 && strings.HasPrefix(lines[0], "p:probe_values/main_named_L5 ")
	}
	n := 0
	for _, l := range lines {
		if !strings.HasPrefix(l, "p:probe_values/main_results__retinsn ") || !strings.HasSuffix(l, " goid=+152(%r14):u64 go_sp=%sp:x64 go_hi=+8(%r14):x64") {
			return false
		}
		if strings.Contains(l, " r0=%ax:s64 r1_tab=%bx:x64 r1_data=%cx:x64 ") {
			n++
		}
	}
	return len(lines) >= 2 && n == len(lines)/2
}

// runtimeFile is the path of a source file of the Go runtime that built the
// test programs.
func runtimeFile(t *testing.T, name string) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "src", "runtime", name)
}

// TestGoPerfArgs compares, through the command line, gprobe's arguments
// with perf probe 6.1's where perf reads Go right (integers in registers,
// fields through pointers): the fetches are perf's, followed by the
// pairing fields; the place differs by design (after the stack check).
func TestGoPerfArgs(t *testing.T) {
	perf := testenv.RequirePerf(t)
	p := buildGoProg(t, "values")
	const pairing = " goid=+152(%r14):u64 go_sp=%sp:x64 go_hi=+8(%r14):x64"
	for _, def := range []string{"main.strs n", "main.ptrs t->N", "main.ptrs t->Next->N", "main.(*T).Method x t->N", "main.manyargs a i", "main.huge n"} {
		pr := perf.Probe("-x", p.bin, "-D", def)
		gr := runGprobe("-x", p.bin, "-D", def)
		pf, gf := strings.Fields(pr.Stdout), strings.Fields(strings.TrimSuffix(gr.Stdout, pairing+"\n"))
		if pr.Code != 0 || gr.Code != 0 || len(pf) < 3 || strings.Join(pf[2:], " ") != strings.Join(gf[2:], " ") {
			t.Errorf("%q: perf %s\ngprobe %s", def, pr, gr)
		}
	}
}

// TestGoStringsExported records a Go string as text where the kernel's
// string fetch reads on past its end (the literals of testdata/goprogs/
// values lie end to end, with no NUL between them): the recording holds
// more than the string, gprobe's export holds the string.
func TestGoStringsExported(t *testing.T) {
	requireRecording(t)
	fs := liveFS(t)
	p := buildGoProg(t, "values")
	t.Cleanup(func() { removeGroup(t, fs, p.group) })
	ev := "strs_" + p.tag
	if r := runGprobe("-x", p.bin, "-q", "-a", p.group+":"+ev+"=main.strs s:string n"); r.Code != 0 {
		t.Fatalf("add: %s", r)
	}
	dir := t.TempDir()
	dat, pq := filepath.Join(dir, "s.dat"), filepath.Join(dir, "s.parquet")
	if r := runGprobe("record", "-e", p.group+":"+ev, "-o", dat, "--", p.bin, "3"); r.Code != 0 {
		t.Fatalf("record: %s", r)
	}
	rep, err := exec.Command("trace-cmd", "report", "-i", dat).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rep), `s_string="alphag`) {
		t.Errorf("the kernel read exactly the string? (the test needs it to read past)\n%s", rep)
	}
	if r := runGprobe("export", "--parquet", pq, dat); r.Code != 0 {
		t.Fatalf("export: %s", r)
	}
	fh, err := os.Open(pq)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	type row struct {
		Event string  `parquet:"event"`
		S     *string `parquet:"s_string,optional"`
		Len   *int64  `parquet:"s_string_len,optional"`
		N     *int64  `parquet:"n,optional"`
	}
	rd := parquetgo.NewGenericReader[row](fh)
	rows := make([]row, 10)
	n, _ := rd.Read(rows)
	var got []string
	for _, r := range rows[:n] {
		if r.S != nil && r.Len != nil && r.N != nil {
			got = append(got, fmt.Sprintf("%s/%d/%d", *r.S, *r.Len, *r.N))
		}
	}
	if strings.Join(got, " ") != "alpha/5/0 beta/4/1 gamma/5/2" {
		t.Errorf("exported strings: %q", got)
	}
}
