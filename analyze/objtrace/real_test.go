package objtrace_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/analyze/objtrace"
	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/internal/testenv"
)

// objprog's objects: how many it makes, and what each one's life is
// (testdata/objprog.c).
const nObjects = 9

func events(i int) int {
	n := 1 + 1 + 2*(i+1) // made, first reference, main's pairs
	if i%3 == 0 {
		n += 2 // the first reference dropped, freed
	}
	return n
}

// sourceLine is the line of objprog.c holding want inside function fn.
func sourceLine(t *testing.T, fn, want string) int {
	t.Helper()
	b, err := os.ReadFile("testdata/objprog.c")
	if err != nil {
		t.Fatal(err)
	}
	in := false
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, " "+fn+"(") && strings.HasPrefix(l, "__attribute__") {
			in = true
		}
		if in && strings.Contains(l, want) {
			return i + 1
		}
	}
	t.Fatalf("no %q in %s", want, fn)
	return 0
}

// TestRealObjects records objprog through real uprobes that fetch the
// object pointer and the caller (the return address at %sp on entry, a
// return probe's own return address), and checks --object, --objects
// and --refcount against the program's known behaviour.
func TestRealObjects(t *testing.T) {
	testenv.Tracefs(t)
	bin := testenv.BuildC(t, "gcc", "testdata/objprog.c", "objprog", "-O0", "-g")
	gprobe := testenv.Gprobe(t)
	// Event names are unique machine-wide, as perf's are.
	group, tag := fmt.Sprintf("objt_%d", os.Getpid()), fmt.Sprintf("o%d_", os.Getpid())
	run := func(args ...string) (string, string) {
		t.Helper()
		var out, errb bytes.Buffer
		cmd := exec.Command(gprobe, args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("gprobe %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
		}
		return out.String(), errb.String()
	}
	t.Cleanup(func() {
		exec.Command(gprobe, "del", group+":*").Run()
		b, _ := os.ReadFile(filepath.Join(testenv.TracefsRoot, "uprobe_events"))
		if strings.Contains(string(b), group+"/") {
			t.Errorf("probes left behind:\n%s", b)
		}
	})
	run("-q", "-x", bin,
		"-a", group+":"+tag+"new=obj_new%return o=$retval:x64",
		"-a", group+":"+tag+"ref=obj_ref+0 o=%di:x64 caller=+0(%sp):x64",
		"-a", group+":"+tag+"unref=obj_unref+0 o=%di:x64 caller=+0(%sp):x64",
		"-a", group+":"+tag+"free=obj_free+0 o=%di:x64 caller=+0(%sp):x64")
	dat := filepath.Join(t.TempDir(), "objprog.dat")
	out, rerr := run("record", "-e", group+":*", "-o", dat, "--", bin, fmt.Sprint(nObjects))
	if !strings.Contains(rerr, "no events lost") {
		t.Fatalf("record lost events: %s", rerr)
	}
	var addrs []string // by object index, as the program printed them
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		addrs = append(addrs, strings.TrimPrefix(sc.Text(), "0x"))
	}
	if len(addrs) != nObjects {
		t.Fatalf("objprog printed %q", out)
	}
	index := map[string]int{}
	for i, a := range addrs {
		index[a] = i
	}
	// objKey splits "PID:0xADDR" into the process and the object index.
	var pid string
	objIndex := func(key string) int {
		t.Helper()
		p, a, ok := strings.Cut(key, ":0x")
		i, known := index[a]
		if !ok || !known || (pid != "" && p != pid) {
			t.Fatalf("object %q is none of objprog's %v (pid %s)", key, addrs, pid)
		}
		pid = p
		return i
	}

	// --objects: every object, by events then by lifetime.
	var byEvents objtrace.Ranking
	js, _ := run("analyze", "--objects", "100", "--json", dat)
	if err := json.Unmarshal([]byte(js), &byEvents); err != nil {
		t.Fatal(err)
	}
	if byEvents.Objects != nObjects || len(byEvents.Top) != nObjects || byEvents.By != "events" {
		t.Fatalf("ranking %+v", byEvents)
	}
	total := 0
	for r, o := range byEvents.Top {
		i := objIndex(o.Object)
		total += events(i)
		if o.Events != events(i) {
			t.Errorf("object %d (%s) has %d events, want %d", i, o.Object, o.Events, events(i))
		}
		if r > 0 && o.Events > byEvents.Top[r-1].Events {
			t.Errorf("rank %d has more events than rank %d", r+1, r)
		}
		if !strings.HasSuffix(o.FirstEvent, "_new__return") {
			t.Errorf("object %d begins with %s", i, o.FirstEvent)
		}
		if want := "_unref"; i%3 == 0 {
			if !strings.HasSuffix(o.LastEvent, "_free") {
				t.Errorf("held object %d ends with %s", i, o.LastEvent)
			}
		} else if !strings.HasSuffix(o.LastEvent, want) {
			t.Errorf("leaked object %d ends with %s", i, o.LastEvent)
		}
	}
	if byEvents.Values != int64(total) || fmt.Sprint(byEvents.Fields) != fmt.Sprintf("[%[1]s:%[2]sfree o %[1]s:%[2]snew__return o %[1]s:%[2]sref o %[1]s:%[2]sunref o]", group, tag) {
		t.Errorf("values %d (want %d), fields %v: the callers must not count", byEvents.Values, total, byEvents.Fields)
	}
	// The held objects are freed from the last made to the first: the
	// life of each holds the lives of those made after it, and the first
	// object's holds every other one's. (A leaked object may outlive a
	// held one made after it when the machine stalls during its life.)
	var byLife objtrace.Ranking
	js, _ = run("analyze", "--objects", "100", "--rank", "lifetime", "--json", dat)
	if err := json.Unmarshal([]byte(js), &byLife); err != nil {
		t.Fatal(err)
	}
	var held []int
	for r, o := range byLife.Top {
		if i := objIndex(o.Object); i%3 == 0 {
			held = append(held, i)
		}
		if o.LifetimeNs != o.LastTS-o.FirstTS || (r > 0 && o.LifetimeNs > byLife.Top[r-1].LifetimeNs) {
			t.Errorf("rank %d: %+v after %+v", r+1, o, byLife.Top[max(r-1, 0)])
		}
	}
	if len(byLife.Top) != nObjects || objIndex(byLife.Top[0].Object) != 0 || fmt.Sprint(held) != "[0 3 6]" || byLife.By != "lifetime" {
		t.Errorf("by lifetime %+v: held objects in order %v, want the first object first and [0 3 6]", byLife.Top, held)
	}
	text, _ := run("analyze", "--objects", "3", "--rank", "lifetime", dat)
	if !strings.HasPrefix(text, "OBJECTS BY LIFETIME (top 3 of 9 objects; ") || !strings.Contains(text, pid+":0x"+addrs[0]) {
		t.Errorf("text ranking:\n%s", text)
	}

	// --object: a leaked object's life, its first reference taken in
	// leak_open, named by file and line.
	leaked := 4
	obj := pid + ":0x" + addrs[leaked]
	var trace struct {
		Object  string
		Events  []objtrace.Hit
		Summary objtrace.Summary
	}
	js, _ = run("analyze", "--object", obj, "--json", dat)
	if err := json.Unmarshal([]byte(js), &trace); err != nil {
		t.Fatal(err)
	}
	s := trace.Summary
	if trace.Object != obj || len(trace.Events) != events(leaked) || s.Events != events(leaked) || s.LifetimeNs != s.LastTS-s.FirstTS || s.LifetimeNs == 0 {
		t.Fatalf("trace of %s: %d events, summary %+v", obj, len(trace.Events), s)
	}
	leakLine := sourceLine(t, "leak_open", "obj_ref(o);")
	for k, h := range trace.Events {
		if fmt.Sprint(h.Matched) != "[o]" || fmt.Sprint(h.TGID) != pid || h.Comm != "objprog" || (k > 0 && h.TS < trace.Events[k-1].TS) {
			t.Errorf("hit %d: %+v", k, h)
		}
	}
	first := trace.Events[1]
	if !strings.HasSuffix(first.Event, "_ref") || len(first.Fields) != 2 || first.Fields[1].Name != "caller" ||
		!regexp.MustCompile(fmt.Sprintf(`^leak_open\+0x[0-9a-f]+ testdata/objprog\.c:%d$`, leakLine)).MatchString(first.Fields[1].Caller) {
		t.Errorf("first reference %+v, want one taken in leak_open at testdata/objprog.c:%d", first, leakLine)
	}
	made := trace.Events[0]
	if !strings.HasSuffix(made.Event, "_new__return") || len(made.Fields) != 2 || !strings.HasPrefix(made.Fields[1].Caller, "main+0x") {
		t.Errorf("made %+v, want a return into main", made)
	}
	text, _ = run("analyze", "--object", obj, dat)
	if lines := strings.Split(strings.TrimSpace(text), "\n"); len(lines) != events(leaked)+2 ||
		!strings.HasPrefix(lines[len(lines)-1], fmt.Sprintf("%s: %d events, first ", obj, events(leaked))) {
		t.Errorf("text trace:\n%s", text)
	}
	// A bare address is a kernel one: none here, and the note says whose it may be.
	text, _ = run("analyze", "--object", "0x"+addrs[leaked], dat)
	if !strings.Contains(text, "no event carries this address") || !strings.Contains(text, "process "+pid+" carry the same number") {
		t.Errorf("bare address:\n%s", text)
	}

	// --refcount: the leaks by the call site that took them.
	var rep struct{ Refcount refcount.Report }
	js, _ = run("analyze", "--refcount", "get="+tag+"ref,put="+tag+"unref", "--json", dat)
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	rc := rep.Refcount
	if rc.Objects != nObjects || rc.Outstanding != 6 || rc.Underflows != 0 || rc.UnmatchedPuts != 0 || len(rc.Sites) != 2 {
		t.Fatalf("refcount %+v", rc)
	}
	dupLine := sourceLine(t, "leak_dup", "obj_ref(o);")
	sites := map[string]string{}
	for _, st := range rc.Sites {
		sites[st.Function] = fmt.Sprintf("%d %s", st.Objects, st.Source)
	}
	if want := map[string]string{"leak_open": fmt.Sprintf("3 testdata/objprog.c:%d", leakLine), "leak_dup": fmt.Sprintf("3 testdata/objprog.c:%d", dupLine)}; fmt.Sprint(sites) != fmt.Sprint(want) {
		t.Errorf("leak sites %v, want %v", sites, want)
	}
	text, _ = run("analyze", "--refcount", "get="+tag+"ref,put="+tag+"unref", dat)
	for _, want := range []string{
		fmt.Sprintf("\n3 objects leaked, taken in leak_open() at testdata/objprog.c:%d\n", leakLine),
		fmt.Sprintf("\n3 objects leaked, taken in leak_dup() at testdata/objprog.c:%d\n", dupLine),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	if testing.Verbose() {
		for _, args := range [][]string{{"--object", obj}, {"--objects", "5"}, {"--objects", "3", "--rank", "lifetime"}, {"--refcount", "get=" + tag + "ref,put=" + tag + "unref"}} {
			o, _ := run(append(append([]string{"analyze"}, args...), dat)...)
			t.Logf("gprobe analyze %s objprog.dat\n%s", strings.Join(args, " "), o)
		}
	}
}
