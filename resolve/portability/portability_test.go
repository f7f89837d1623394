package portability

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/testenv"
)

// probeList exercises every status on Debian's 6.1 and 6.12 kernels.
const probeList = `# every status on 6.1 and 6.12
vfs_read
vfs_read file->f_pos count
tcp_sendmsg sk->sk_sndbuf size
do_sys_openat2%return $retval
do_sys_openat2:22
vfs_read file->f_version
dev_queue_xmit skb->len
check_conflicting_open
kmem_cache_alloc_noprof s->size
kmem_cache_alloc s->size
nosuch_function
`

// wantStatus is the expected matrix, columns in kernel order: 6.1 with
// DWARF, without DWARF (symbols and .BTF), its raw BTF; then 6.12 the same.
var wantStatus = map[string][6]string{
	// struct file's f_pos and struct sock's sk_sndbuf moved in 6.12.
	"vfs_read":                       {"ok 1", "ok 1", "ok 1", "ok 1", "ok 1", "ok 1"},
	"vfs_read file->f_pos count":     {"ok 1", "ok 1", "ok 1", "field-moved 1", "field-moved 1", "field-moved 1"},
	"tcp_sendmsg sk->sk_sndbuf size": {"ok 1", "ok 1", "ok 1", "field-moved 1", "field-moved 1", "field-moved 1"},
	"do_sys_openat2%return $retval":  {"ok 1", "ok 1", "ok 1", "ok 1", "ok 1", "ok 1"},
	// Line 22 of do_sys_openat2 has no code in 6.12; lines need DWARF.
	"do_sys_openat2:22": {"ok 1", "missing", "missing", "line-moved", "missing", "missing"},
	// 6.12 removed file->f_version.
	"vfs_read file->f_version": {"ok 1", "ok 1", "ok 1", "arg-missing", "arg-missing", "arg-missing"},
	// 6.12's dev_queue_xmit is inlined everywhere (6.1 has one
	// out-of-line copy too); inline instances need DWARF.
	"dev_queue_xmit skb->len": {"ok 14", "ok 1", "ok 1", "inlined 15", "missing", "missing"},
	// Only check_conflicting_open.isra.0 in 6.12: perf finds it through
	// DWARF; the symbol table alone shows the clone but not the name;
	// pahole leaves clones out of BTF.
	"check_conflicting_open": {"ok 1", "ok 1", "ok 1", "clone 1", "clone", "missing"},
	// The allocators became *_noprof in 6.10.
	"kmem_cache_alloc_noprof s->size": {"missing", "missing", "missing", "ok 1", "ok 1", "ok 1"},
	"kmem_cache_alloc s->size":        {"ok 1", "ok 1", "ok 1", "missing", "missing", "missing"},
	"nosuch_function":                 {"missing", "missing", "missing", "missing", "missing", "missing"},
}

// form is one kernel as check sees it, and the images perf can read for it.
type form struct {
	kind     string // "dwarf", "stripped" or "btf"
	dbg      string // the -dbg vmlinux of the same kernel
	stripped string // its form without DWARF
}

// image is what perf reads for a cell: the file itself, or for a raw BTF
// file (perf reads ELF only) the same kernel without DWARF.
func (f form) image(path string) string {
	if f.kind == "btf" {
		return f.stripped
	}
	return path
}

// TestCheckAgreesWithPerf checks every cell of a probe list on Debian's
// 6.1 and 6.12 kernels, each with DWARF, without (symbols and .BTF) and as
// a raw BTF file, against perf probe -D on the same image: its exit status
// and its definitions. Where perf cannot answer (it reads no BTF), its
// answer on the -dbg image of the same kernel at the function's own symbol
// must be gprobe's. Each status is also checked against independent
// evidence: the ELF symbol table, and perf's answers for less of the spec
// (without its arguments, the function's entry alone).
func TestCheckAgreesWithPerf(t *testing.T) {
	perf := testenv.RequirePerf(t)
	var kernels []string
	forms := map[string]form{}
	for _, k := range []*testenv.Kernel{testenv.Linux61, testenv.Linux612} {
		dbg, _ := testenv.RequireVmlinux(t, k)
		stripped, raw := testenv.BTFForms(t, k)
		kernels = append(kernels, dbg, stripped, raw)
		forms[dbg] = form{"dwarf", dbg, stripped}
		forms[stripped] = form{"stripped", dbg, stripped}
		forms[raw] = form{"btf", dbg, stripped}
	}
	points, err := ReadProbes(strings.NewReader(probeList), "list")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{}
	if feat, known := tracefs.RunningFeatures(); known {
		opts.Features = &feat
	}
	rep, err := Check(points, kernels, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != len(points)*len(kernels) {
		t.Fatalf("%d results for %d points on %d kernels", len(rep.Results), len(points), len(kernels))
	}
	seen := map[Status]bool{}
	for i, c := range rep.Results {
		seen[c.Status] = true
		if want := wantStatus[c.Spec][i%len(kernels)]; c.cell() != want {
			t.Errorf("%s on %s: %s, want %s (%s)", c.Spec, c.Kernel, c.cell(), want, c.Reason)
		}
	}
	for _, s := range []Status{OK, Inlined, Clone, Missing, ArgMissing, FieldMoved, LineMoved} {
		if !seen[s] {
			t.Errorf("no cell has status %s: the list does not exercise it", s)
		}
	}
	v := &verifier{t: t, perf: perf, syms: map[string]*symtab{}}
	for _, f := range forms {
		if v.syms[f.dbg] == nil {
			v.syms[f.dbg] = readSymtab(t, f.dbg)
		}
	}
	var wg sync.WaitGroup
	for i := range rep.Results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := rep.Results[i]
			f := forms[c.Kernel]
			v.definitions(c, f)
			v.status(rep, i, f)
		}()
		if i%2 == 1 {
			wg.Wait() // perf, two at a time
		}
	}
	wg.Wait()
	t.Logf("%d cells: definitions as perf -D gives them on the same image %d, as perf gives them on the -dbg image at the function's own symbol (BTF only, where perf reads no BTF) %d",
		len(rep.Results), v.sameImage.Load(), v.dbgImage.Load())
	if got := rep.Unresolved(); !slices.Equal(got, []string{"nosuch_function"}) {
		t.Errorf("Unresolved() = %q, want nosuch_function", got)
	}
	checkDefinitionFiles(t, rep)
}

type verifier struct {
	t    *testing.T
	perf *testenv.Perf
	syms map[string]*symtab // by -dbg vmlinux
	// Cells whose definitions are perf's on the same image (both failing
	// included), and those checked against perf on the -dbg image.
	sameImage, dbgImage atomic.Int64
}

// perfDefs runs perf probe -D on image and returns its definitions, and
// whether it succeeded.
func (v *verifier) perfDefs(image, spec string) (defs []string, stderr string, ok bool) {
	r := v.perf.Probe("-k", image, "-D", spec)
	if r.Code != 0 {
		return nil, r.Stderr, false
	}
	for _, l := range strings.Split(r.Stdout, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			defs = append(defs, l)
		}
	}
	return defs, r.Stderr, true
}

// definitions checks a cell's sites and definitions against perf.
func (v *verifier) definitions(c Result, f form) {
	t := v.t
	image := f.image(c.Kernel)
	defs, stderr, ok := v.perfDefs(image, c.Spec)
	st := v.syms[f.dbg]
	switch {
	case ok:
		// perf answered from the symbol table: on the raw BTF file gprobe
		// names the function itself, perf _text+N.
		if f.kind == "btf" {
			defs = st.rebase(defs)
		}
		if c.Sites != len(defs) || !slices.Equal(c.Definitions, defs) {
			t.Errorf("%s on %s: gprobe %q, perf -D on %s %q", c.Spec, c.Kernel, c.Definitions, image, defs)
			return
		}
		v.sameImage.Add(1)
	case f.kind != "dwarf" && strings.Contains(stderr, "has no debug information") && c.Sites > 0:
		// perf 6.1 reads no BTF: on the same kernel with DWARF, perf's
		// definitions at the function's own symbol (BTF has no inline
		// instances) must be gprobe's, argument for argument.
		dbgDefs, _, ok := v.perfDefs(f.dbg, c.Spec)
		if !ok {
			t.Errorf("%s on %s: gprobe resolved it from BTF, perf -D fails on %s", c.Spec, c.Kernel, f.dbg)
			return
		}
		fn := strings.Fields(c.Spec)[0]
		var own []string
		for _, d := range dbgDefs {
			if strings.HasPrefix(place(d), fn+"+") {
				own = append(own, d)
			}
		}
		if got := st.rebase(c.Definitions); !slices.Equal(got, own) {
			t.Errorf("%s on %s: gprobe %q (as %q), perf -D on %s at %s itself %q", c.Spec, c.Kernel, c.Definitions, got, f.dbg, fn, own)
			return
		}
		v.dbgImage.Add(1)
	default:
		if c.Sites != 0 {
			t.Errorf("%s on %s: gprobe resolved %q, perf -D on %s failed:\n%s", c.Spec, c.Kernel, c.Definitions, image, stderr)
			return
		}
		v.sameImage.Add(1)
	}
}

// status checks a cell's status against evidence independent of gprobe.
func (v *verifier) status(rep *Report, i int, f form) {
	t := v.t
	c := rep.Results[i]
	image := f.image(c.Kernel)
	fields := strings.Fields(c.Spec)
	point, fn := fields[0], fields[0]
	if j := strings.IndexAny(fn, ":%+;@"); j >= 0 {
		fn = fn[:j]
	}
	st := v.syms[f.dbg]
	_, _, resolvesHere := v.perfDefs(image, c.Spec)
	_, _, entryHere := v.perfDefs(image, fn)
	fail := func(why string) { t.Errorf("%s on %s is %s, but %s", c.Spec, c.Kernel, c.Status, why) }
	switch c.Status {
	case OK, FieldMoved:
		if !st.funcs[fn] {
			fail("the kernel has no symbol " + fn)
		}
		if c.Status == FieldMoved {
			v.moved(rep, i)
		}
	case Inlined:
		if st.funcs[fn] || st.clones[fn] {
			fail("the kernel has a symbol for " + fn)
		}
	case Clone:
		if st.funcs[fn] || !st.clones[fn] {
			fail("the kernel's symbols are not only clones of " + fn)
		}
		for _, d := range c.Definitions {
			if !strings.HasPrefix(place(d), fn+".") {
				fail(d + " is not at a clone")
			}
		}
	case Missing:
		// The function is not there, or this form of the kernel has no
		// DWARF and the point needs it.
		_, stderr, pointHere := v.perfDefs(image, point)
		needsDWARF := f.kind != "dwarf" && !pointHere && strings.Contains(stderr, "has no debug information")
		if resolvesHere || entryHere && !needsDWARF {
			fail(fmt.Sprintf("perf -D on %s resolves %s: %v, %s: %v", image, c.Spec, resolvesHere, fn, entryHere))
		}
	case ArgMissing:
		// Without DWARF perf refuses every argument: ask the -dbg image
		// whether the argument exists in this kernel.
		_, _, withArgs := v.perfDefs(f.dbg, c.Spec)
		_, _, pointOnly := v.perfDefs(image, point)
		if withArgs || !pointOnly {
			fail(fmt.Sprintf("perf -D with the arguments on %s: %v, without them on %s: %v", f.dbg, withArgs, image, pointOnly))
		}
	case LineMoved:
		if resolvesHere || !entryHere || f.kind != "dwarf" {
			fail(fmt.Sprintf("perf -D %s on %s: %v, %s: %v", c.Spec, image, resolvesHere, fn, entryHere))
		}
	}
}

var offsetRE = regexp.MustCompile(`[-+]?\d+\(`)

// moved checks that perf's definitions for a field-moved cell read other
// offsets than on the first kernel where the point resolved.
func (v *verifier) moved(rep *Report, i int) {
	n := len(rep.Kernels)
	c := rep.Results[i]
	row := rep.Results[i-i%n : i-i%n+n]
	for _, ref := range row {
		if ref.Sites == 0 {
			continue
		}
		a, b := offsetRE.FindAllString(ref.Definitions[0], -1), offsetRE.FindAllString(c.Definitions[0], -1)
		if slices.Equal(a, b) {
			v.t.Errorf("%s on %s is field-moved, but reads the offsets %q of %s", c.Spec, c.Kernel, b, ref.Kernel)
		}
		return
	}
}

// place is a definition's SYMBOL+OFFSET.
func place(def string) string {
	f := strings.Fields(def)
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// symtab is a -dbg vmlinux's function symbols, read with debug/elf.
type symtab struct {
	funcs, clones map[string]bool
	syms          []elf.Symbol
	text          uint64 // _text
}

func readSymtab(t *testing.T, path string) *symtab {
	syms := testenv.ELFSymbols(t, path)
	st := &symtab{funcs: map[string]bool{}, clones: map[string]bool{}}
	for _, s := range syms {
		if s.Name == "_text" {
			st.text = s.Value
		}
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		st.syms = append(st.syms, s)
		if base, _, ok := strings.Cut(s.Name, "."); ok {
			st.clones[base] = true
		} else {
			st.funcs[s.Name] = true
		}
	}
	return st
}

// rebase rewrites _text+N places as the function symbol holding the
// address (FUNC+OFF), as perf names places it found through DWARF.
func (st *symtab) rebase(defs []string) []string {
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d
		off, ok := strings.CutPrefix(place(d), "_text+")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(off, 10, 64)
		if err != nil {
			continue
		}
		addr := st.text + n
		for _, s := range st.syms {
			if s.Value <= addr && addr < s.Value+s.Size {
				out[i] = strings.Replace(d, place(d), fmt.Sprintf("%s+%d", s.Name, addr-s.Value), 1)
				break
			}
		}
	}
	return out
}

// checkDefinitionFiles writes each kernel's definitions and reads them
// back with the kernel's grammar: one line per definition, event names
// unique across points.
func checkDefinitionFiles(t *testing.T, rep *Report) {
	dir := t.TempDir()
	paths, err := rep.WriteDefinitions(dir)
	if err != nil {
		t.Fatal(err)
	}
	for k, path := range paths {
		total := 0
		for i := k; i < len(rep.Results); i += len(rep.Kernels) {
			total += rep.Results[i].Sites
		}
		if path == "" {
			if total != 0 {
				t.Errorf("no definitions file for %s", rep.Kernels[k])
			}
			continue
		}
		if filepath.Dir(path) != dir {
			t.Errorf("%s is not in %s", path, dir)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
		if len(lines) != total {
			t.Errorf("%s: %d definitions, want %d", path, len(lines), total)
		}
		last, names := "", map[string]bool{}
		for _, l := range lines {
			p, err := probedef.Parse(l, &probedef.Options{NoStat: true})
			if err != nil {
				t.Errorf("%s: %q: %v", path, l, err)
				continue
			}
			// The sites of one point share its event name, consecutively.
			if names[p.Event] && p.Event != last {
				t.Errorf("%s: event %s defined by two points", path, p.Event)
			}
			names[p.Event], last = true, p.Event
		}
	}
}
