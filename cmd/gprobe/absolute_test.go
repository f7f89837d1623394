package main

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/kallsyms"
	"github.com/gprobe/gprobe/internal/perfprobe"
	"github.com/gprobe/gprobe/internal/testenv"
)

// Absolute addresses (0xADDR) and the PATH-first form against perf probe
// 6.1. Every difference is one of perf's mistakes, checked here case by
// case (docs/differences.md):
//   - midInsn: perf writes an address inside an instruction (objdump says
//     so); gprobe refuses it. TestAbsoluteMidInstructionUprobe shows what
//     perf's line does to a running program;
//   - notCode: perf writes a uprobe at a file offset outside the binary's
//     executable sections (debug/elf says so), which never fires;
//   - dropsOffset: perf ignores +OFF after an address (its line is the one
//     for the address alone); gprobe adds it (its line is perf's for the
//     sum);
//   - noReason: variables at an absolute address: perf prints only its
//     trailer, gprobe the reason, with perf's exit status;
//   - retval: $retval on an entry probe (the kernel refuses it);
//   - otherText: perf checks a kernel address against the running
//     kernel's text even for another kernel's vmlinux; gprobe against the
//     image's .text (debug/elf says the address is outside it).
type absDiff int

const (
	absSame absDiff = iota
	midInsn
	notCode
	dropsOffset
	noReason
	retval
	otherText
)

func TestPerfDiffAbsolute(t *testing.T) {
	perf := testenv.RequirePerf(t)
	home := ownHome(t)
	prog := testenv.BuildC(t, "gcc", "testdata/uprobe/prog.c", "prog-O2", "-O2", "-g")
	magic := testenv.BuildC(t, "gcc", "testdata/uprobe/magic.c", "magic", "-O2", "-g")
	_, work := testenv.FuncSymbol(t, prog, "work")
	_, mag := testenv.FuncSymbol(t, magic, "magic")
	lib := testenv.BuildC(t, "gcc", "testdata/uprobe/prog.c", "libprog.so", "-O2", "-g", "-shared", "-fPIC")
	_, libWork := testenv.FuncSymbol(t, lib, "work")
	vm := fixtureDir + "/x86_64-dwarf4-O2.elf"
	sk, _ := testenv.FuncSymbol(t, vm, "start_kernel")
	start := sk.Value
	x := func(bin string, rest ...string) []string { return append([]string{"-x", bin}, rest...) }
	hex := func(a uint64) string { return fmt.Sprintf("0x%x", a) }
	cases := []struct {
		args []string
		diff absDiff
	}{
		{x(prog, "-D", hex(work)), absSame},
		{x(prog, "-D", hex(work)+"%return"), absSame},
		{x(prog, "-D", hex(work)+" %di"), absSame},
		{x(prog, "-D", hex(work)+" n=%di:u32 s=+0(%si):string"), absSame},
		{x(prog, "-D", "e="+hex(work)), absSame},
		{x(prog, "-D", "g:e="+hex(work)), absSame},
		{x(prog, "-D", hex(work)+"%return $retval"), absSame},
		{x(prog, "-D", hex(work)+":3"), absSame},
		{x(prog, "-D", "0X"+strconv.FormatUint(work, 16)), absSame},
		{x(prog, "-D", "0x12zz"), absSame},
		{x(prog, "-D", hex(work), "-D", "add_item"), absSame},
		{x(lib, "-D", hex(libWork)), absSame}, // a shared library
		{x(lib, "-D", "e="+hex(libWork)+"%return $retval"), absSame},
		{x(lib, "-D", "0x3"), notCode},
		{x(magic, "-D", hex(mag)), absSame},
		{x(magic, "-D", hex(mag+5)), absSame},
		{x(magic, "-D", hex(mag+1)), midInsn},
		{x(magic, "-D", hex(mag+3)), midInsn},
		{x(prog, "-D", "0x0"), notCode},
		{x(prog, "-D", "0x1"), notCode},
		{x(prog, "-D", "0xffffffffff"), notCode},
		{x(magic, "-D", hex(mag)+"+5"), dropsOffset},
		{x(prog, "-D", hex(work)+" n"), noReason},
		{x(prog, "-D", hex(work)+" $params"), noReason},
		{x(prog, "-D", hex(work)+" $retval"), retval},
		// The kernel: an image given with -k ...
		{[]string{"-k", vm, "-D", hex(start + 5)}, absSame},
		{[]string{"-k", vm, "-D", "e=" + hex(start+5) + " %ax"}, absSame},
		{[]string{"-k", vm, "-D", hex(start+5) + "%return"}, absSame},
		{[]string{"-k", vm, "-D", hex(start)}, absSame}, // perf's "out of .text" at the start of text
		{[]string{"-k", vm, "-D", "0x10"}, absSame},
		{[]string{"-k", vm, "-D", hex(start + 7)}, midInsn},
		{[]string{"-k", vm, "-D", "0xffffffff81006080"}, otherText}, // the fixture's .bss
		// ... and the running kernel without one (its kallsyms).
		{[]string{"-D", "0x10"}, absSame},
		{[]string{"-D", "0xffffffffc0000000"}, absSame},
	}
	if vmlinux, _ := targetVmlinux(); vmlinux == "" {
		cases = append(cases, struct {
			args []string
			diff absDiff
		}{[]string{"-D", "e=" + hex(runningText(t)+0x1000) + " %di"}, absSame})
	}
	stats := &diffStats{}
	for _, c := range cases {
		p, g := perf.ProbeIn(home, c.args...), runGprobe(c.args...)
		if c.diff == absSame {
			if !same(p, g) {
				t.Errorf("gprobe %s differs from perf probe:\nperf: %s\ngprobe: %s", strings.Join(c.args, " "), p, g)
				continue
			}
			stats.add(&stats.same, "")
			continue
		}
		if p.Code != 0 && c.diff != noReason {
			t.Errorf("%q: perf failed, the case expects perf's mistaken line: %s", c.args, p)
			continue
		}
		addr := c.args[len(c.args)-1]
		switch c.diff {
		case midInsn:
			img := c.args[1]
			a, _ := strconv.ParseUint(strings.TrimPrefix(addr, "0x"), 16, 64)
			if c.args[0] == "-x" {
				a = codeAddr(t, img, a)
			}
			if g.Code != exitEINVAL || !strings.Contains(g.Stderr, "is not an instruction boundary") || objdumpStarts(t, img, elf.EM_X86_64, a&^0xff, a+0x100, "")[a] {
				t.Errorf("%q: want a boundary refusal of an address objdump does not start an instruction at:\nperf: %s\ngprobe: %s", c.args, p, g)
			}
		case notCode:
			a, _ := strconv.ParseUint(strings.TrimPrefix(addr, "0x"), 16, 64)
			if g.Code != exitEINVAL || !strings.Contains(g.Stderr, "is not in the code of") || inExecSection(t, c.args[1], a) {
				t.Errorf("%q: want a refusal of an offset outside the executable sections:\nperf: %s\ngprobe: %s", c.args, p, g)
			}
		case dropsOffset:
			base, off, _ := strings.Cut(addr, "+")
			a, _ := strconv.ParseUint(strings.TrimPrefix(base, "0x"), 16, 64)
			o, _ := strconv.ParseUint(off, 0, 64)
			alone := perf.ProbeIn(home, append(c.args[:len(c.args)-1:len(c.args)-1], base)...)
			sum := perf.ProbeIn(home, append(c.args[:len(c.args)-1:len(c.args)-1], hex(a+o))...)
			if p != alone || g != sum {
				t.Errorf("%q: perf's answer should be its answer for %s alone and gprobe's perf's for %s:\nperf: %s\nperf alone: %s\ngprobe: %s\nperf for the sum: %s",
					c.args, base, hex(a+o), p, alone, g, sum)
			}
		case noReason:
			if p.Code != exitENOENT || p.Stdout != "" || p.Stderr != perfprobe.AddTrailer+"\n" ||
				g.Code != p.Code || !strings.HasSuffix(g.Stderr, perfprobe.AddTrailer+"\n") || !strings.Contains(g.Stderr, "is an absolute address: it has no variables in scope") {
				t.Errorf("%q: want perf's bare trailer and gprobe's reason with perf's status:\nperf: %s\ngprobe: %s", c.args, p, g)
			}
		case retval:
			if !strings.HasPrefix(p.Stdout, "p:") || !strings.Contains(p.Stdout, "$retval") || g.Code != exitEINVAL || !strings.Contains(g.Stderr, "is only available on a return probe") {
				t.Errorf("%q: want perf's $retval on an entry probe refused:\nperf: %s\ngprobe: %s", c.args, p, g)
			}
		case otherText:
			a, _ := strconv.ParseUint(strings.TrimPrefix(addr, "0x"), 16, 64)
			f, err := elf.Open(c.args[1])
			if err != nil {
				t.Fatal(err)
			}
			text := f.Section(".text")
			f.Close()
			if g.Code != exitENOENT || !strings.HasPrefix(g.Stderr, addr+" is out of .text, skip it.\n") || a > text.Addr && a <= text.Addr+text.Size {
				t.Errorf("%q: want the address refused as out of the image's .text:\nperf: %s\ngprobe: %s", c.args, p, g)
			}
		}
		stats.add(&stats.midInsn, fmt.Sprintf("perf wrong (%v): %q", c.diff, c.args))
	}
	stats.report(t)
}

func (d absDiff) String() string {
	return [...]string{"same", "mid-instruction", "not in the code", "+OFF dropped", "no reason given", "$retval on entry", "another kernel's text"}[d]
}

// targetVmlinux is the vmlinux perf would find for the running kernel
// (none on most test machines: then both answer from kallsyms).
func targetVmlinux() (string, error) {
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "", err
	}
	for _, p := range []string{"/boot/vmlinux-" + strings.TrimSpace(string(rel)), "/usr/lib/debug/boot/vmlinux-" + strings.TrimSpace(string(rel))} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", nil
}

// runningText is the running kernel's _stext.
func runningText(t *testing.T) uint64 {
	t.Helper()
	ks := kallsyms.Running()
	if ks == nil {
		testenv.Missing(t, "/proc/kallsyms")
	}
	start, _, ok := ks.Text()
	if !ok {
		testenv.Missing(t, "_stext and _etext in /proc/kallsyms (kptr_restrict?)")
	}
	return start
}

// sectionAt is the allocated section of bin whose file bytes hold offset
// off (ok false for none).
func sectionAt(t *testing.T, bin string, off uint64) (s elf.SectionHeader, ok bool) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS && off >= s.Offset && off < s.Offset+s.Size {
			return s.SectionHeader, true
		}
	}
	return s, false
}

// codeAddr converts a file offset of bin to its address.
func codeAddr(t *testing.T, bin string, off uint64) uint64 {
	t.Helper()
	s, ok := sectionAt(t, bin, off)
	if !ok {
		t.Fatalf("%s: offset 0x%x is in no allocated section", bin, off)
	}
	return off - s.Offset + s.Addr
}

// inExecSection says whether a file offset of bin is in an executable
// section.
func inExecSection(t *testing.T, bin string, off uint64) bool {
	s, ok := sectionAt(t, bin, off)
	return ok && s.Flags&elf.SHF_EXECINSTR != 0
}

// The PATH-first form of the man page ("perf probe /bin/zsh zfree"): the
// path names the binary (as given, links not resolved), the rest is one
// definition; -n adds nothing. Compared with perf probe -n.
func TestPerfDiffPathFirst(t *testing.T) {
	perf := testenv.RequirePerf(t)
	home := ownHome(t)
	testenv.Tracefs(t)
	prog := testenv.BuildC(t, "gcc", "testdata/uprobe/prog.c", "prog-O2", "-O2", "-g")
	link := filepath.Join(t.TempDir(), "proglink")
	if err := os.Symlink(prog, link); err != nil {
		t.Fatal(err)
	}
	stats := &diffStats{}
	for _, args := range [][]string{
		{"-n", prog, "work"},
		{"-n", prog, "work n"},
		{"-n", prog, "work", "n"}, // the rest joined into one definition
		{"-n", prog, "ev=work%return $retval"},
		{"-n", prog, "work n", "add_item key"},
		{"-n", link, "work"},
		{"-n", "-x", prog, prog, "work"}, // with -x the path is part of the definition
		{"-n", prog},                     // "-x/-m must follow the probe definitions"
		{"-n", prog, "0x" + strconv.FormatUint(funcOffset(t, prog, "work"), 16)},
		{"-n", "-q", prog, "work"},
	} {
		p, g := perf.ProbeIn(home, args...), runGprobe(args...)
		if !same(usageAsGprobe(p), g) && (p.Code != g.Code || p.Stdout != g.Stdout || !sameUsage(p.Stderr, g.Stderr)) {
			t.Errorf("gprobe %s differs from perf probe:\nperf: %s\ngprobe: %s", strings.Join(args, " "), p, g)
			continue
		}
		stats.add(&stats.same, "")
	}
	stats.report(t)
}

// usageAsGprobe is perf's answer with its usage block naming gprobe, as
// gprobe's names itself.
func usageAsGprobe(r result) result {
	for _, s := range []string{" Usage: ", "    or: "} {
		r.Stderr = strings.ReplaceAll(r.Stderr, s+"perf probe ", s+"gprobe ")
	}
	return r
}

func funcOffset(t *testing.T, bin, name string) uint64 {
	_, off := testenv.FuncSymbol(t, bin, name)
	return off
}

// TestAbsoluteMidInstructionUprobe is the proof for refusing a uprobe
// inside an instruction: perf probe 6.1 prints one for magic+1 (inside
// "mov $0x12345678,%eax"), the kernel accepts it, it never fires, and
// while it is enabled the program loads 0x123456cc instead: the
// breakpoint byte replaced the immediate's low byte.
func TestAbsoluteMidInstructionUprobe(t *testing.T) {
	perf := testenv.RequirePerf(t)
	home := ownHome(t)
	fsRoot := testenv.Tracefs(t)
	fs := tracefs.At(fsRoot)
	magic := testenv.BuildC(t, "gcc", "testdata/uprobe/magic.c", "magic", "-O2", "-g")
	_, off := testenv.FuncSymbol(t, magic, "magic")
	addr := fmt.Sprintf("0x%x", off+1)
	p := perf.ProbeIn(home, "-x", magic, "-D", "gprobe_absmid:mid="+addr)
	want := fmt.Sprintf("p:gprobe_absmid/mid %s:%s\n", magic, addr)
	if p.Code != 0 || p.Stdout != want {
		t.Fatalf("perf probe -D: %s\nwant %q", p, want)
	}
	if g := runGprobe("-x", magic, "-D", "gprobe_absmid:mid="+addr); g.Code != exitEINVAL || !strings.Contains(g.Stderr, "a uprobe there would never fire") {
		t.Fatalf("gprobe does not refuse %s: %s", addr, g)
	}
	if err := fs.Write(probe.Uprobe, strings.TrimSpace(p.Stdout)); err != nil {
		t.Fatalf("the kernel refused perf's line (it accepted it when this test was written): %v", err)
	}
	t.Cleanup(func() {
		_ = fs.Enable("gprobe_absmid", "mid", false)
		_ = fs.Delete(probe.Uprobe, "gprobe_absmid", "mid")
	})
	run := func() map[string]int {
		out, err := exec.Command(magic, "10").Output()
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, l := range strings.Fields(string(out)) {
			n[l]++
		}
		return n
	}
	if got := run(); got["12345678"] != 10 {
		t.Fatalf("before enabling: %v", got)
	}
	if err := fs.Enable("gprobe_absmid", "mid", true); err != nil {
		t.Fatal(err)
	}
	got := run()
	_ = fs.Enable("gprobe_absmid", "mid", false)
	time.Sleep(10 * time.Millisecond)
	hits := uprobeHits(t, fs, "mid")
	if got["123456cc"] != 10 || hits != 0 {
		t.Errorf("with perf's probe enabled the program printed %v (want 123456cc 10 times) and the probe fired %d times (want 0)", got, hits)
	}
	if got := run(); got["12345678"] != 10 {
		t.Errorf("after disabling: %v", got)
	}
}

// uprobeHits reads an event's hit count from uprobe_profile.
func uprobeHits(t *testing.T, fs *tracefs.FS, event string) int {
	t.Helper()
	b, err := fs.ReadFile("uprobe_profile")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[1] == event {
			n, _ := strconv.Atoi(f[2])
			return n
		}
	}
	t.Fatalf("%s not in uprobe_profile:\n%s", event, b)
	return 0
}

// Without a vmlinux, -F lists the running kernel's kallsyms as perf does
// (its map of the kernel loaded from kallsyms).
func TestPerfDiffKallsymsFuncs(t *testing.T) {
	perf := testenv.RequirePerf(t)
	if v, _ := targetVmlinux(); v != "" {
		t.Skipf("a vmlinux of the running kernel is installed (%s): -F answers from it", v)
	}
	runningText(t) // kallsyms shows addresses
	stats := &diffStats{}
	for _, args := range [][]string{{"-F"}, {"-F", "*"}, {"-F", "vfs_*"}, {"-F", "!*"}, {"-F", "*_open|*_close"}, {"-F", "_*"}} {
		p, g := perf.Live(args...), runGprobe(args...)
		if !same(p, g) {
			t.Errorf("gprobe %s differs from perf probe (%d and %d lines)", strings.Join(args, " "), strings.Count(p.Stdout, "\n"), strings.Count(g.Stdout, "\n"))
			continue
		}
		if args[len(args)-1] != "!*" && p.Stdout == "" {
			t.Errorf("%q: nothing listed", args)
		}
		stats.add(&stats.same, "")
	}
	stats.report(t)
}
