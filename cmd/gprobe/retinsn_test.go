package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/target"
)

// Return-instruction probes (--ret-insn) and boot-time probes (--boot)
// through the command line: fixtures for the text, this machine's uprobes
// for a real run (the kernels are in qemu_retinsn_test.go).

func TestRetInsnCLI(t *testing.T) {
	for _, c := range []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"-k", fixture, "--ret-insn", "-L", "fd_install"}, 0, `<fd_install@0xffffffff81001350 fs/open.c:46> 2 exits
  fd_install+40       tailcall       jmpq account_io         fs/open.c:53
  fd_install.cold+20  tailcall       jmpq warn_slowpath_fmt  fs/open.c:49
`, ""},
		{[]string{"-k", fixture, "--ret-insn", "-L", "vfs_read%return"}, 0, `<vfs_read@0xffffffff81001e40 fs/read_write.c:86> 3 exits
  vfs_read+178  return         retq  fs/read_write.c:114
  vfs_read+343  return         retq  fs/read_write.c:91
  vfs_read+359  return         retq  fs/read_write.c:114
`, ""},
		{[]string{"-k", fixture, "--ret-insn", "-D", "build_open_how%return $retval"}, 0, `p:probe/build_open_how__retinsn build_open_how+60 %ax
p:probe/build_open_how__retinsn build_open_how+87 %ax
`, ""},
		{[]string{"-k", fixture, "--ret-insn", "-D", "fput%return $retval"}, exitEOPNOTSUPP, "", `fput leaves by 1 exit(s) a probe cannot catch exactly, so return-instruction probes would miss returns:
  fput+44  indirect-jump  jmp *%rax
 Use a return probe (fput%return without --ret-insn); --ret-insn -L fput lists every exit.
  Error: Failed to add events.
`},
		{[]string{"-k", fixture, "--ret-insn", "-D", "vfs_read"}, exitEINVAL, "", "--ret-insn probes a function's returns: write FUNC%return, not vfs_read.\n  Error: Failed to add events.\n"},
		{[]string{"-k", fixture, "--ret-insn", "-L", "vfs_read:3"}, exitEINVAL, "", "--ret-insn takes a function (FUNC or FUNC%return), not vfs_read:3.\n  Error: Failed to show exits.\n"},
		{[]string{"-k", fixture, "--ret-insn", "-L", "nosuch"}, exitENOENT, "", "Failed to find function nosuch in kernel\n  Error: Failed to show exits.\n"},
		{[]string{"-k", fixture, "--boot", "-D", "vfs_read:6 file count", "-D", "vfs_read%return $retval"}, 0,
			"kprobe_event=p:probe/vfs_read_L6,vfs_read+15,file=%di:x64,count=%dx:x64;r:probe/vfs_read__return,vfs_read+0,$retval ftrace=nop\n", ""},
		{[]string{"-k", fixture, "--boot", "--ret-insn", "-D", "fd_install%return $retval"}, 0,
			"kprobe_event=p:probe/fd_install__tailcall,fd_install+40;p:probe/fd_install__tailcall,fd_install.cold+20 ftrace=nop\n", ""},
		{[]string{"-k", fixture, "--boot", "-D", `vfs_read s=\"a,b":string`}, exitEINVAL, "",
			`"p:probe/vfs_read vfs_read+0 s=\"a,b":string" does not fit on the kernel command line: it holds a double quote, which the command line's parser takes for quoting and removes` + "\n  Error: Failed to add events.\n"},
	} {
		r := runGprobe(c.args...)
		if r.Code != c.code || r.Stdout != c.stdout || r.Stderr != c.stderr {
			t.Errorf("%q: %s\nwant exit %d, stdout\n%s\nstderr\n%s", c.args, r, c.code, c.stdout, c.stderr)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-k", fixture, "--boot", "-L", "vfs_read"}, " Error: --boot prints definitions: use it with -D"},
		{[]string{"-k", fixture, "--ret-insn", "-F"}, " Error: --ret-insn goes with -D, -a or -L"},
	} {
		if r := runGprobe(c.args...); r.Code != exitUsage || firstLine(r.Stderr) != c.want {
			t.Errorf("%q: %s\nwant exit %d and %q", c.args, r, exitUsage, c.want)
		}
	}
}

// retInsnProg is testdata/retinsn/prog.c built for one test, its functions
// renamed with a prefix unique to the process (event names are checked
// across all groups of uprobe_events).
type retInsnProg struct {
	bin, group, prefix string
}

func buildRetInsnProg(t *testing.T) *retInsnProg {
	t.Helper()
	testenv.Tool(t, "gcc")
	name := fmt.Sprintf("gretinsn%d", os.Getpid())
	p := &retInsnProg{bin: filepath.Join(t.TempDir(), name), group: "probe_" + name, prefix: fmt.Sprintf("g%d_", os.Getpid())}
	args := []string{"-O2", "-g", "-o", p.bin}
	for _, f := range []string{"classify", "dispatch", "helper"} {
		args = append(args, "-D"+f+"="+p.prefix+f)
	}
	if out, err := exec.Command("gcc", append(args, "testdata/retinsn/prog.c")...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	p.bin = target.RealPath(p.bin)
	return p
}

// traceLine is one event of trace-cmd report on a uprobe: its pid, event
// name and arg1 (absent on a tail call).
var traceLine = regexp.MustCompile(`^\s*\S+-(\d+)\s+\[\d+\]\s+[\d.]+:\s+(\S+):\s+\([0-9a-f <-]+\)(?: arg1=(-?\d+))?\s*$`)

// TestRetInsnUprobes proves --ret-insn on this machine's uprobes: for a
// program whose classify has four return instructions and whose dispatch
// returns or tail-calls helper, in one recording the return-instruction
// events (returns plus tail calls) are exactly as many as the uretprobe's
// for each function, and every FUNC__retinsn value is the value the
// uretprobe reports for the same return; a second recording of entries
// and return instructions gives analyze one call per call made.
func TestRetInsnUprobes(t *testing.T) {
	requireRecording(t)
	fs := liveFS(t)
	p := buildRetInsnProg(t)
	t.Cleanup(func() { removeGroup(t, fs, p.group) })
	const calls = 300
	for _, args := range [][]string{
		{"-x", p.bin, "-q", "-a", p.prefix + "classify%return $retval:s64", "-a", p.prefix + "dispatch%return $retval:s64", "-a", p.prefix + "classify", "-a", p.prefix + "dispatch"},
		{"-x", p.bin, "-q", "--ret-insn", "-a", p.prefix + "classify%return $retval:s64", "-a", p.prefix + "dispatch%return $retval:s64"},
	} {
		if r := runGprobe(args...); r.Code != 0 {
			t.Fatalf("%q: %s", args, r)
		}
	}
	events := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, "-e", p.group+":"+p.prefix+n)
		}
		return out
	}
	dir := t.TempDir()
	record := func(file string, names ...string) string {
		t.Helper()
		out := filepath.Join(dir, file)
		args := append(append([]string{"record"}, events(names...)...), "-o", out, "--", p.bin, strconv.Itoa(calls))
		if r := runGprobe(args...); r.Code != 0 || !strings.Contains(r.Stderr, "no events lost") {
			t.Fatalf("%q: %s", args, r)
		}
		return out
	}

	rets := record("returns.dat", "classify__return", "classify__retinsn", "dispatch__return", "dispatch__retinsn", "dispatch__tailcall")
	rep, err := exec.Command("trace-cmd", "report", "-i", rets).Output()
	if err != nil {
		t.Fatalf("trace-cmd report: %v", err)
	}
	counts := map[string]int{}
	pending := map[string]string{} // function -> the retinsn value awaiting its uretprobe ("" for a tail call)
	agree := 0
	for _, l := range strings.Split(string(rep), "\n") {
		m := traceLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		ev := strings.TrimPrefix(m[2], p.prefix)
		counts[ev]++
		fn, kind, _ := strings.Cut(ev, "__")
		switch kind {
		case "retinsn", "tailcall":
			if v, open := pending[fn]; open {
				t.Errorf("%s: %s follows an unreported %q", fn, kind, v)
			}
			pending[fn] = m[3]
		case "return":
			v, open := pending[fn]
			if !open {
				t.Errorf("%s: a return the return instructions did not see: %s", fn, l)
				continue
			}
			delete(pending, fn)
			if v != "" && v != m[3] {
				t.Errorf("%s returned %s by its uretprobe, %s by its return instruction", fn, m[3], v)
			}
			if v != "" {
				agree++
			}
		}
	}
	t.Logf("events: %v; %d return values agree", counts, agree)
	for _, fn := range []string{"classify", "dispatch"} {
		insn := counts[fn+"__retinsn"] + counts[fn+"__tailcall"]
		if counts[fn+"__return"] != calls || insn != calls {
			t.Errorf("%s: %d uretprobe events, %d return-instruction events; want %d each", fn, counts[fn+"__return"], insn, calls)
		}
	}
	if counts["dispatch__tailcall"] != calls/2 || agree != 2*calls-calls/2 {
		t.Errorf("dispatch tail-called %d times (want %d); %d values compared (want %d)", counts["dispatch__tailcall"], calls/2, agree, 2*calls-calls/2)
	}

	calls2 := record("calls.dat", "classify", "classify__retinsn", "dispatch", "dispatch__retinsn", "dispatch__tailcall")
	r := runGprobe("analyze", "--json", calls2)
	var an struct {
		Latency []struct {
			Function         string
			Count            int
			UnmatchedEntries int    `json:"unmatched_entries"`
			UnmatchedReturns int    `json:"unmatched_returns"`
			ReturnEvent      string `json:"return_event"`
		}
	}
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &an) != nil {
		t.Fatalf("analyze: %s", r)
	}
	if len(an.Latency) != 2 {
		t.Fatalf("analyze: %s", r.Stdout)
	}
	for _, row := range an.Latency {
		if row.Count != calls || row.UnmatchedEntries != 0 || row.UnmatchedReturns != 0 || !strings.Contains(row.ReturnEvent, "__retinsn") && !strings.Contains(row.ReturnEvent, "__tailcall") {
			t.Errorf("analyze: %+v; want %d calls, all matched", row, calls)
		}
	}
}
