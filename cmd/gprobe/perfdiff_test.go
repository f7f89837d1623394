package main

// Differential tests: gprobe and perf probe (Debian linux-perf 6.1) answer
// the same questions on the same images, and their answers must be
// identical byte for byte (stdout, stderr and exit status). The specs are
// generated from each image (every function, its probe-able lines, entry,
// return, offsets, lazy patterns, file forms), not written out by hand.
//
// Two kinds of disagreement are not failures, and both are checked:
//   - perf emits an offset inside an instruction (the kernel rejects it
//     with EILSEQ); gprobe refuses it. objdump must confirm the address is
//     not an instruction start.
//   - perf 6.1 reads uninitialised memory in cu_find_lineinfo() for
//     addresses without an is_stmt row, so some answers vary from run to run
//     or crash. Such a spec is reported, not compared, once perf has been
//     seen to disagree with itself.
//
// perf must be installed (scripts/provision.sh); without it the tests are
// skipped, unless GPROBE_REQUIRE_PERF=1 (as in CI), which makes that fatal.
// perf's answers are cached by testenv.Perf, keyed by the image's content
// and perf's version; a disagreement is always asked of perf again, live.

import (
	"bufio"
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

const fixtureDir = "../../testdata/vmlinux-fixtures"

// result is one command's answer: stdout, stderr and exit status.
type result = testenv.Result

func runGprobe(args ...string) result {
	var out, errb bytes.Buffer
	code := run(append([]string{"gprobe"}, args...), &out, &errb)
	return result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// same compares two results; for usage errors only the first stderr line
// (the message) is compared, since the usage text names the program.
func same(p, g result) bool {
	if p.Code != g.Code || p.Stdout != g.Stdout {
		return false
	}
	if p.Code == exitUsage {
		return firstLine(p.Stderr) == firstLine(g.Stderr)
	}
	return p.Stderr == g.Stderr
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// diffStats counts outcomes of one test.
type diffStats struct {
	mu                            sync.Mutex
	same, midInsn, flaky, crashed int
	perfBug                       int // perf wrong, gprobe right (explained)
	notes                         []string
}

func (s *diffStats) add(kind *int, note string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*kind++
	if note != "" {
		s.notes = append(s.notes, note)
	}
}

// checker compares gprobe with perf for one image.
type checker struct {
	t     *testing.T
	perf  *testenv.Perf
	image string // path of the image
	user  bool   // -x image
	stats *diffStats
	// bitfields maps a -D spec to the bitfield type the DWARF oracle
	// computed for its argument (argsdiff_test.go), guarded by stats.mu.
	bitfields map[string]string
	// explain, when set, may account for a disagreement as a known perf
	// mistake (returning a note), after it has verified that it is one.
	explain func(args []string, p, g result) (string, bool)
	// asked are the questions put to gprobe and its answers (guarded by
	// stats.mu), asked again of the image's variants (checkVariants).
	asked []asked
}

type asked struct {
	args []string
	g    result
}

func (c *checker) check(args ...string) {
	c.t.Helper()
	c.compare(args, c.gprobe(args...))
}

// gprobe runs gprobe and records the question and its answer.
func (c *checker) gprobe(args ...string) result {
	g := runGprobe(args...)
	c.stats.mu.Lock()
	c.asked = append(c.asked, asked{args: args, g: g})
	c.stats.mu.Unlock()
	return g
}

// variant is the checker's image in another form with the same DWARF (a
// copy with compressed debug sections) and flags for gprobe (--no-cache).
type variant struct {
	image string
	flags []string
	every int // ask only every every-th question (when above 1)
}

func (v variant) String() string {
	return strings.TrimSpace(filepath.Base(v.image) + " " + strings.Join(v.flags, " "))
}

// checkVariants asks gprobe every question asked so far again, of each
// variant, and requires the same answer byte for byte (the variant's path
// read as the image's): the same DWARF gives the same answers, which are
// perf's (or perf's mistakes, as checked) on the image itself.
func (c *checker) checkVariants(vs []variant) {
	c.t.Helper()
	for _, v := range vs {
		var jobs []func()
		for i, a := range c.asked {
			if v.every > 1 && i%v.every != 0 {
				continue
			}
			args := append([]string{}, v.flags...)
			for _, arg := range a.args {
				args = append(args, strings.ReplaceAll(arg, c.image, v.image))
			}
			jobs = append(jobs, func() {
				g := runGprobe(args...)
				g.Stdout = strings.ReplaceAll(g.Stdout, v.image, c.image)
				g.Stderr = strings.ReplaceAll(g.Stderr, v.image, c.image)
				if g != a.g {
					c.t.Errorf("gprobe %s on %s differs from its answer on %s:\n%s:\n%s\n%s:\n%s",
						strings.Join(a.args, " "), v, filepath.Base(c.image), filepath.Base(c.image), a.g, v, g)
				}
			})
		}
		runParallel(2, jobs)
		c.t.Logf("%s: %d answers identical to %s's", v, len(jobs), filepath.Base(c.image))
	}
}

func (c *checker) compare(args []string, g result) {
	c.t.Helper()
	p := c.perf.Probe(args...)
	if same(p, g) {
		c.stats.add(&c.stats.same, "")
		return
	}
	c.stats.mu.Lock()
	want := c.bitfields[args[len(args)-1]]
	c.stats.mu.Unlock()
	if why := classifyArgs(c.t, args, want, p, g); why != "" {
		c.stats.add(&c.stats.midInsn, fmt.Sprintf("perf wrong (%s): %q", why, args))
		return
	}
	if why, ok := renamedRepeats(p, g); ok {
		c.stats.add(&c.stats.midInsn, fmt.Sprintf("perf wrong (%s): %q", why, args))
		return
	}
	if why, ok := c.blacklistedByPerf(p, g); ok {
		c.stats.add(&c.stats.midInsn, fmt.Sprintf("perf wrong (%s): %q", why, args))
		return
	}
	if c.user && p.Code == 0 && g.Code == 0 && p.Stderr == g.Stderr && globalsAtFileOffsets(c.t, c.image, p.Stdout) == g.Stdout {
		// perf fetches a global as @SYM+OFF, which the kernel refuses on
		// a uprobe; gprobe at its file offset (TestUprobeGlobals reads it
		// for real).
		c.stats.add(&c.stats.midInsn, fmt.Sprintf("perf wrong (a global as @SYM on a uprobe): %q", args))
		return
	}
	if p.Code == 0 && g.Code == exitEINVAL && strings.Contains(g.Stderr, "The kernel would refuse this definition") {
		// perf printed a line the kernel's parser refuses (emit/probedef
		// follows it, and is checked against real kernels' error_log).
		c.stats.add(&c.stats.midInsn, fmt.Sprintf("perf wrong (the kernel refuses the line): %q", args))
		return
	}
	// A refusal is checked against objdump first; when objdump disagrees,
	// a known perf mistake (explain) may still account for the difference.
	if p.Code == 0 && g.Code == exitEINVAL && strings.Contains(g.Stderr, "is not an instruction boundary") &&
		(c.explain == nil || c.perfMidInsn(args, p.Stdout) > 0) {
		c.verifyPerfMidInsn(args, p.Stdout)
		c.stats.add(&c.stats.midInsn, fmt.Sprintf("perf wrong (mid-instruction): %q", args))
		return
	}
	if c.explain != nil {
		if note, ok := c.explain(args, p, g); ok {
			c.stats.add(&c.stats.perfBug, note)
			return
		}
	}
	if p.Code == 0 && g.Code == exitEINVAL && strings.Contains(g.Stderr, "is only available on a return probe") {
		// perf emits $retval on an entry probe; the kernel refuses it
		// (RETVAL_ON_PROBE). Check that this is what perf printed.
		for _, line := range strings.Split(strings.TrimSpace(p.Stdout), "\n") {
			if !strings.HasPrefix(line, "p:") || !strings.Contains(line, "$retval") {
				c.t.Errorf("gprobe refused %q for $retval on an entry probe, but perf printed %q", args, line)
			}
		}
		c.stats.add(&c.stats.midInsn, fmt.Sprintf("perf wrong ($retval on an entry probe): %q", args))
		return
	}
	if p.Code == 139 {
		c.stats.add(&c.stats.crashed, fmt.Sprintf("perf crashed: %q", args))
		return
	}
	// perf 6.1 sometimes answers differently from run to run.
	// About half of perf's runs differ on the affected specs: ten more
	// runs make missing it a one-in-a-thousand event.
	for i := 0; i < 10; i++ {
		p2 := c.perf.Live(args...)
		if same(p2, g) || p2 != p {
			c.stats.add(&c.stats.flaky, fmt.Sprintf("perf nondeterministic: %q", args))
			return
		}
	}
	c.t.Errorf("gprobe %s differs from perf probe:\nperf: %s\ngprobe: %s", strings.Join(args, " "), p, g)
}

var symbolArgRE = regexp.MustCompile(`@([A-Za-z_][A-Za-z0-9_.]*)([+-]\d+)`)

// globalsAtFileOffsets rewrites perf's @SYM+OFF fetches of a user binary's
// globals as the @+FILEOFFSET uprobes take: the symbol's address plus
// OFF, less .text's address-offset delta (read with debug/elf); a symbol
// that is not one data object is left as it is.
func globalsAtFileOffsets(t *testing.T, image, out string) string {
	t.Helper()
	f, err := elf.Open(image)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text := f.Section(".text")
	syms, _ := f.Symbols()
	return symbolArgRE.ReplaceAllStringFunc(out, func(m string) string {
		sub := symbolArgRE.FindStringSubmatch(m)
		off, _ := strconv.ParseInt(sub[2], 10, 64)
		var addrs []uint64
		for _, s := range syms {
			if s.Name == sub[1] && elf.ST_TYPE(s.Info) == elf.STT_OBJECT {
				addrs = append(addrs, s.Value)
			}
		}
		if len(addrs) != 1 || text == nil {
			return m
		}
		return fmt.Sprintf("@+0x%x", int64(addrs[0]-(text.Addr-text.Offset))+off)
	})
}

var placeRE = regexp.MustCompile(`^[pr]:\S+ (\S+)\+(\d+)$|^[pr]:\S+ (\S+):0x([0-9a-f]+)$`)

// verifyPerfMidInsn confirms with objdump that an address perf printed is
// not an instruction start, so that gprobe's refusal is right.
func (c *checker) verifyPerfMidInsn(args []string, perfOut string) {
	c.t.Helper()
	if c.perfMidInsn(args, perfOut) == 0 {
		c.t.Errorf("gprobe refused %q as mid-instruction, but objdump says every address perf printed starts an instruction:\n%s", args, perfOut)
	}
}

// perfMidInsn counts the addresses perf printed that objdump says are not
// instruction starts.
func (c *checker) perfMidInsn(args []string, perfOut string) int {
	c.t.Helper()
	img, err := elf.Open(c.image)
	if err != nil {
		c.t.Fatal(err)
	}
	defer img.Close()
	syms, _ := img.Symbols()
	bad := 0
	for _, line := range strings.Split(strings.TrimSpace(perfOut), "\n") {
		m := placeRE.FindStringSubmatch(line)
		if m == nil {
			c.t.Errorf("%q: cannot parse perf output line %q", args, line)
			continue
		}
		var addr uint64
		var section string // a module's symbols are section-relative
		if m[1] != "" {
			off, _ := strconv.ParseUint(m[2], 10, 64)
			name := m[1]
			if img.Type == elf.ET_REL {
				_, name, _ = strings.Cut(name, ":")
			}
			found := false
			for _, s := range syms {
				if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
					addr, found = s.Value+off, true
					if img.Type == elf.ET_REL && int(s.Section) < len(img.Sections) {
						section = img.Sections[s.Section].Name
					}
					break
				}
			}
			if !found {
				c.t.Errorf("%q: symbol %s not in %s", args, m[1], c.image)
				continue
			}
		} else {
			off, _ := strconv.ParseUint(m[4], 16, 64)
			text := img.Section(".text")
			addr = off + text.Addr - text.Offset
		}
		// Disassemble just the function around the address.
		lo, hi := addr, addr+1
		for _, s := range syms {
			if section != "" && (int(s.Section) >= len(img.Sections) || img.Sections[s.Section].Name != section) {
				continue
			}
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value <= addr && addr < s.Value+s.Size {
				lo, hi = s.Value, s.Value+s.Size
				break
			}
		}
		if !objdumpStarts(c.t, c.image, img.Machine, lo, hi, section)[addr] {
			bad++
		}
	}
	return bad
}

var (
	objdumpMu    sync.Mutex
	objdumpCache = map[string]map[uint64]bool{}
)

// objdumpStarts returns the instruction start addresses in [lo, hi) of
// an image according to binutils objdump.
func objdumpStarts(t *testing.T, path string, m elf.Machine, lo, hi uint64, section string) map[uint64]bool {
	t.Helper()
	objdumpMu.Lock()
	defer objdumpMu.Unlock()
	key := fmt.Sprintf("%s%s@%x-%x", path, section, lo, hi)
	if s, ok := objdumpCache[key]; ok {
		return s
	}
	tool := "objdump"
	if m == elf.EM_AARCH64 {
		tool = "aarch64-linux-gnu-objdump"
	}
	args := []string{"-d", "-w", "--insn-width=16",
		fmt.Sprintf("--start-address=%#x", lo), fmt.Sprintf("--stop-address=%#x", hi)}
	if section != "" {
		args = append(args, "-j", section)
	}
	out, err := exec.Command(tool, append(args, path)...).Output()
	if err != nil {
		t.Fatalf("%s -d %s: %v", tool, path, err)
	}
	re := regexp.MustCompile(`^\s*([0-9a-f]+):\t`)
	starts := map[uint64]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if mm := re.FindStringSubmatch(sc.Text()); mm != nil {
			a, _ := strconv.ParseUint(mm[1], 16, 64)
			starts[a] = true
		}
	}
	objdumpCache[key] = starts
	return starts
}

// perfFuncs lists an image's functions as perf -F does.
func perfFuncs(t *testing.T, perf *testenv.Perf, target ...string) []string {
	t.Helper()
	r := perf.Probe(append(target, "-F")...)
	if r.Code != 0 {
		t.Fatalf("perf probe -F: %s", r)
	}
	return strings.Fields(r.Stdout)
}

// numberedLines returns the numbers -L prints for a function (capped).
func numberedLines(listing string, max int) []int {
	var out []int
	for i, line := range strings.Split(listing, "\n") {
		if i == 0 || len(line) < 9 {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSpace(line[:7])); err == nil {
			out = append(out, n)
		}
	}
	if len(out) > max {
		// Keep the first lines and the last one: prologue and epilogue
		// are where perf's line choices are subtle.
		out = append(out[:max-1], out[len(out)-1])
	}
	return out
}

// functionSpecs are the specs generated for one function.
func functionSpecs(fn, listing string) [][]string {
	specs := [][]string{
		{"-L", fn},
		{"-D", fn},
		{"-D", fn + "%return"},
		{"-D", fn + "+1"},
		{"-D", fn + "+4"},
		{"-D", fn + ";*return*"},
	}
	seen := map[int]bool{}
	for _, n := range append(numberedLines(listing, 6), 1, 2) {
		if !seen[n] {
			seen[n] = true
			specs = append(specs, []string{"-D", fmt.Sprintf("%s:%d", fn, n)})
		}
	}
	specs = append(specs, []string{"-L", fn + ":1-4"})
	return specs
}

// checkAll compares specs (each a list of arguments after base). perf
// spends ~0.1 s per run loading its libraries and kallsyms (seconds on a
// distribution vmlinux), so -D specs that gprobe answers successfully are
// batched into one perf run with several -D options (perf prints their
// definitions in order), whose answer is cached like any other; a batch
// that differs is re-checked spec by spec, live. Everything else runs
// alone. gprobe answers the specs two at a time.
func (c *checker) checkAll(base []string, specs [][]string) {
	answers := make([]result, len(specs))
	var runs []func()
	for i, s := range specs {
		runs = append(runs, func() { answers[i] = runGprobe(append(append([]string{}, base...), s...)...) })
	}
	runParallel(2, runs)
	var jobs []func()
	var batch [][]string
	var batchOut []result
	flush := func(batch [][]string, outs []result) {
		if len(batch) == 0 {
			return
		}
		jobs = append(jobs, func() {
			var args []string
			var want result
			args = append(args, base...)
			for i, s := range batch {
				args = append(args, s...)
				want.Stdout += outs[i].Stdout
				want.Stderr += outs[i].Stderr
			}
			if same(c.perf.Probe(args...), want) {
				c.stats.add(&c.stats.same, "")
				c.stats.mu.Lock()
				c.stats.same += len(batch) - 1
				c.stats.mu.Unlock()
				return
			}
			for i, s := range batch {
				c.compare(append(append([]string{}, base...), s...), outs[i])
			}
		})
	}
	for i, s := range specs {
		args := append(append([]string{}, base...), s...)
		g := answers[i]
		c.stats.mu.Lock()
		c.asked = append(c.asked, asked{args: args, g: g}) // in order: checkVariants samples by index
		_, bitfield := c.bitfields[s[len(s)-1]]
		c.stats.mu.Unlock()
		if len(s) == 2 && s[0] == "-D" && g.Code == 0 && !bitfield {
			batch = append(batch, s)
			batchOut = append(batchOut, g)
			if len(batch) == 40 {
				flush(batch, batchOut)
				batch, batchOut = nil, nil
			}
			continue
		}
		jobs = append(jobs, func() { c.compare(args, g) })
	}
	flush(batch, batchOut)
	runParallel(2, jobs)
}

func runParallel(n int, jobs []func()) {
	ch := make(chan func())
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				j()
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
}

func (s *diffStats) report(t *testing.T) {
	t.Helper()
	sort.Strings(s.notes)
	for _, n := range s.notes {
		t.Log(n)
	}
	t.Logf("identical to perf: %d; perf wrong, gprobe differs as checked (mid-instruction offsets confirmed by objdump, $retval on entry probes, bitfield offsets, values over 64 bits): %d; perf nondeterministic: %d; perf crashed: %d",
		s.same, s.midInsn, s.flaky, s.crashed)
	if s.perfBug > 0 {
		t.Logf("perf wrong, gprobe right (the perf mistake reproduced on demand gives perf's exact answer): %d", s.perfBug)
	}
	if s.same == 0 {
		t.Error("no spec was answered identically: the comparison is not working")
	}
}

// eachFixture runs fn as a parallel subtest for every kernel fixture, with
// a checker and the base arguments (-k IMAGE -s SRC), then reports.
func eachFixture(t *testing.T, fn func(t *testing.T, c *checker, base []string)) {
	perf := testenv.RequirePerf(t)
	images, _ := filepath.Glob(filepath.Join(fixtureDir, "*.elf"))
	if len(images) < 10 {
		t.Fatalf("expected 10 fixtures in %s, found %d", fixtureDir, len(images))
	}
	src := filepath.Join(fixtureDir, "src")
	for i, img := range images {
		t.Run(filepath.Base(img), func(t *testing.T) {
			t.Parallel()
			stats := &diffStats{}
			c := &checker{t: t, perf: perf, image: img, stats: stats}
			fn(t, c, []string{"-k", img, "-s", src})
			stats.report(t)
			c.checkVariants(variants(t, img, i))
		})
	}
}

// variants is the form in which every answer about image number i of a
// test is asked again: a copy with compressed debug sections read with the
// index, the same without the index, or the image itself without the
// index, in turn, with the compression forms in turn, so that over a
// test's images each form is read both ways, at the cost of one more
// gprobe run per question.
func variants(t *testing.T, img string, i int) []variant {
	if i%3 == 2 {
		return []variant{{image: img, flags: []string{"--no-cache"}}}
	}
	z := testenv.Compressed(t, img, testenv.CompressionForms[i/3%len(testenv.CompressionForms)])
	if i%3 == 1 {
		return []variant{{image: z, flags: []string{"--no-cache"}}}
	}
	return []variant{{image: z}}
}

// TestPerfDiffFixtures compares -L and -D on every kernel fixture.
func TestPerfDiffFixtures(t *testing.T) {
	eachFixture(t, func(t *testing.T, c *checker, base []string) {
		perf, img := c.perf, c.image
		{
			var specs [][]string
			for _, fn := range perfFuncs(t, perf, "-k", img) {
				listing := runGprobe(append(base, "-L", fn)...).Stdout
				specs = append(specs, functionSpecs(fn, listing)...)
			}
			specs = append(specs, [][]string{
				{"-L", "fs/open.c:10-40"}, {"-L", "fs/read_write.c:1+30"}, {"-L", "nosuch.c:1-5"},
				{"-D", "fs/open.c:20"}, {"-D", "fs/read_write.c:40"}, {"-D", "include/linux/err.h:30"},
				{"-D", "fs/read_write.c;*count*"}, {"-D", "vfs_read@fs/read_write.c"}, {"-D", "vfs_read@nosuch.c"},
				{"-L", "vfs_read@fs/read_write.c"}, {"-D", "vfs_read@read_write.c:3"}, {"-D", "nosuch_function"},
				{"-D", "vfs_read", "-D", "vfs_write%return"}, {"-D", "vfs_read+100000"},
				{"--no-inlines", "-D", "select_task_rq_fair"}, {"-D", "IS_ERR"}, {"-L", "IS_ERR"},
				{"-D", "vfs_read:4", "-q"}, {"-L", "do_sys_open:3-1"}, {"-D", "vfs_read:x"},
				{"-F"}, {"-F", "*"}, {"-F", "(sys_*|ksys_*)&!*write*"},
				{"-L"}, {"-D", "vfs_read", "-L", "vfs_read"}, {"-L", "vfs_read", "-F"},
				{"-D", "myev=vfs_read"}, {"-D", "grp:ev=vfs_read:3"}, {"-D", "x=vfs_read%return"}, {"-D", "g:e=fs/open.c:20"},
				{"-D", `e\:x=vfs_read`}, {"-D", "vfs_read@read_write.c;*ret*"}, {"-D", "account_io@fs/namei.c"},
				{"-D", "jiffies"}, {"-D", "init_task%return"}, {"-D", "init_task+0"},
				{"-D", "vfs_read %ax"}, {"-D", "vfs_read%return $retval"}, {"-D", "vfs_read%return r=$retval:s64"},
				{"-D", "vfs_read x=+0(%di):u32 $comm"}, {"-D", `do_sys_open:3 \123`}, {"-D", "vfs_read $stack1 @jiffies"},
				{"-D", "vfs_read:3 a=%dx:x32 b=-8(%sp)"}, {"-D", "nosuch %ax"}, {"-D", "vfs_read $retval"},
				{"-D", "vfs_read;*nomatch* %ax"}, {"-D", "n=vfs_read n=$comm:string"},
				{"-D", "vfs_*"}, {"-D", "*open*"}, {"-D", "ksys_[rw]*:2"}, {"-D", "vfs_*%return"}, {"-L", "vfs_*"},
			}...)
			c.checkAll(base, specs)
		}
	})
}

// TestPerfDiffUserBinaries compiles a C program (x86-64 with GCC and
// clang at -O0/-O2 with DWARF 4 and 5, all PIE as the toolchains default,
// a GCC non-PIE build, GCC and clang with LTO, arm64 at -O2) and compares
// -x answers.
func TestPerfDiffUserBinaries(t *testing.T) {
	perf := testenv.RequirePerf(t)
	type build struct {
		cc, name string
		flags    []string
	}
	var builds []build
	for _, cc := range []string{"gcc", "clang"} {
		for _, o := range []string{"-O0", "-O2"} {
			for _, d := range []string{"-gdwarf-4", "-gdwarf-5"} {
				name := "prog" + o + d
				if cc != "gcc" {
					name = "prog-" + cc + o + d
				}
				builds = append(builds, build{cc, name, []string{o, d}})
			}
		}
	}
	builds = append(builds, build{"aarch64-linux-gnu-gcc", "prog-arm64-O2-gdwarf-5", []string{"-O2", "-gdwarf-5"}},
		build{"clang", "prog-clang-O2-flto-gdwarf-5", []string{"-O2", "-flto", "-gdwarf-5"}},
		build{"gcc", "prog-O2-no-pie", []string{"-O2", "-g", "-no-pie"}},
		build{"gcc", "prog-O2-flto-gdwarf-4", []string{"-O2", "-flto", "-gdwarf-4"}},
		build{"gcc", "prog-O2-flto-gdwarf-5", []string{"-O2", "-flto", "-gdwarf-5"}})
	for i, b := range builds {
		b := b
		t.Run(b.name, func(t *testing.T) {
			bin := testenv.BuildC(t, b.cc, "testdata/uprobe/prog.c", b.name, b.flags...)
			stats := &diffStats{}
			c := &checker{t: t, perf: perf, image: bin, user: true, stats: stats, explain: explainDeclFile0(t, bin)}
			base := []string{"-x", bin, "-s", "testdata/uprobe"}
			var specs [][]string
			for _, fn := range []string{"work", "add_item", "drop_item", "twice", "main", "walk"} {
				listing := runGprobe(append(base, "-L", fn)...).Stdout
				specs = append(specs, functionSpecs(fn, listing)...)
			}
			specs = append(specs, [][]string{{"-D", "prog.c:20"}, {"-D", "prog.c;*total*"}, {"-L", "prog.c:1-30"},
				{"-F"}, {"-F", "*"}, {"-F", "(*_item|w*)&!walk"}, {"-F", "*@plt|*.*"}}...)
			c.checkAll(base, specs)
			stats.report(t)
			c.checkVariants(variants(t, bin, i))
		})
	}
}

// TestPerfDiffSharedFuncs: -F on a shared library lists each exported
// function twice, from .symtab and from .dynsym, as perf 6.1 loads both.
func TestPerfDiffSharedFuncs(t *testing.T) {
	perf := testenv.RequirePerf(t)
	bin := testenv.BuildC(t, "gcc", "testdata/uprobe/prog.c", "prog-O2-shared", "-O2", "-g", "-shared", "-fPIC")
	stats := &diffStats{}
	c := &checker{t: t, perf: perf, image: bin, user: true, stats: stats}
	c.checkAll([]string{"-x", bin}, [][]string{{"-F"}, {"-F", "*"}, {"-F", "w*"}, {"--no-demangle", "-F", "*"}})
	stats.report(t)
	if r := runGprobe("-x", bin, "-F", "work"); r.Stdout != "work\nwork\n" {
		t.Errorf("-F work on a shared library: %q, want it twice", r.Stdout)
	}
}

// explainDeclFile0 accounts for perf 6.1 leaving out of a -L listing the
// declaration line of a function whose DW_AT_decl_file is 0: in DWARF 5
// that is the unit's primary source file (clang writes it), but libdw's
// dwarf_decl_file takes 0 for "no file", so perf's walk skips the line.
// The listings must differ only there: the lines gprobe numbers and perf
// does not are such declaration lines, read here with debug/dwarf.
func explainDeclFile0(t *testing.T, bin string) func(args []string, p, g result) (string, bool) {
	t.Helper()
	d := dwarfOf(t, bin)
	decl := map[int64]bool{}
	for r := d.Reader(); ; {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagSubprogram {
			continue
		}
		if f, ok := e.Val(dwarf.AttrDeclFile).(int64); ok && f == 0 {
			if l, ok := e.Val(dwarf.AttrDeclLine).(int64); ok {
				decl[l] = true
			}
		}
	}
	numbered := regexp.MustCompile(`^ *(\d+)  (.*)$`)
	return func(args []string, p, g result) (string, bool) {
		if len(decl) == 0 || p.Code != 0 || g.Code != 0 || p.Stderr != g.Stderr || args[len(args)-2] != "-L" {
			return "", false
		}
		gl, pl := strings.Split(g.Stdout, "\n"), strings.Split(p.Stdout, "\n")
		if len(gl) != len(pl) {
			return "", false
		}
		var extra []string
		for i := range gl {
			if gl[i] == pl[i] {
				continue
			}
			m := numbered.FindStringSubmatch(gl[i])
			if m == nil || pl[i] != "         "+m[2] {
				return "", false
			}
			n, _ := strconv.ParseInt(m[1], 10, 64)
			if !decl[n] {
				return "", false
			}
			extra = append(extra, m[1])
		}
		return fmt.Sprintf("perf wrong (DWARF 5 decl_file 0 taken for no file, declaration lines %s unlisted): %q", strings.Join(extra, ","), args), true
	}
}

// TestPerfDiffNoDebugInfo: a binary built without DWARF, or with its DWARF
// split off into .dwo files (GCC and clang -gsplit-dwarf; perf 6.1 does not
// follow the skeleton units either), gets perf's answers: symbol-only
// probes work, questions that need DWARF name the missing debug
// information and the -g that would add it.
func TestPerfDiffNoDebugInfo(t *testing.T) {
	perf := testenv.RequirePerf(t)
	for _, b := range []struct {
		cc, name string
		flags    []string
	}{
		{"gcc", "prog-g0", []string{"-O2", "-g0"}},
		{"gcc", "prog-gsplit-dwarf", []string{"-O2", "-gsplit-dwarf"}},
		{"clang", "prog-clang-gsplit-dwarf", []string{"-O2", "-gsplit-dwarf"}},
	} {
		t.Run(b.name, func(t *testing.T) {
			bin := testenv.BuildC(t, b.cc, "testdata/uprobe/prog.c", b.name, b.flags...)
			stats := &diffStats{}
			c := &checker{t: t, perf: perf, image: bin, user: true, stats: stats}
			base := []string{"-x", bin, "-s", "testdata/uprobe"}
			c.checkAll(base, [][]string{
				{"-D", "work"}, {"-D", "work%return"}, {"-D", "work+4"}, {"-D", "work n"}, {"-D", "work:3"},
				{"-D", "prog.c:20"}, {"-D", "nosuch"}, {"-L", "work"}, {"-V", "work"}, {"-V", "main:2"},
			})
			stats.report(t)
		})
	}
}
