package dwarfexpr

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-delve/delve/pkg/dwarf/frame"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/internal/testenv"
)

const fixtureDir = "../../../testdata/vmlinux-fixtures"

type fixture struct {
	path string
	f    *elf.File
	d    *dwarf.Data
	arch arch.Arch
	fdes frame.FrameDescriptionEntries
}

func openFixture(t *testing.T, name string) *fixture {
	t.Helper()
	path := filepath.Join(fixtureDir, name)
	f, err := elf.Open(path)
	if err != nil {
		t.Skipf("fixture %s: %v", name, err)
	}
	t.Cleanup(func() { f.Close() })
	d, err := f.DWARF()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	isa, err := arch.ForMachine(f.Machine)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	fx := &fixture{path: path, f: f, d: d, arch: isa}
	if s := f.Section(".debug_frame"); s != nil {
		data, err := s.Data()
		if err != nil {
			t.Fatalf("%s .debug_frame: %v", name, err)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Logf("%s: delve frame.Parse panicked: %v", name, r)
				}
			}()
			fx.fdes, err = frame.Parse(data, f.ByteOrder, 0, 8, 0)
		}()
		if err != nil {
			t.Logf("%s: .debug_frame: %v", name, err)
		}
	}
	return fx
}

// cfaAt resolves the CFA at pc through .debug_frame, the way perf's
// dwarf_cfi_addrframe + dwarf_frame_cfa do.
func (fx *fixture) cfaAt(pc uint64) (FrameBase, error) {
	fde, err := fx.fdes.FDEForPC(pc)
	if err != nil {
		return FrameBase{}, err
	}
	fc, err := fde.EstablishFrame(pc)
	if err != nil {
		return FrameBase{}, err
	}
	if fc.CFA.Rule != frame.RuleCFA {
		return FrameBase{}, fmt.Errorf("CFA rule %d at %#x", fc.CFA.Rule, pc)
	}
	return FrameBase{Kind: FrameBaseCFA, Reg: int(fc.CFA.Reg), Offset: fc.CFA.Offset}, nil
}

func spReg(a arch.Arch) int {
	if a == arch.ARM64 {
		return 31
	}
	return 7
}

// TestRealDWARF translates every exprloc DW_AT_location of every parameter
// and variable in the fixtures with its function's frame base (CFA stand-in
// sp+16): no panic, and either a fetch or a sentinel error.
func TestRealDWARF(t *testing.T) {
	names, _ := filepath.Glob(filepath.Join(fixtureDir, "*.elf"))
	if len(names) == 0 {
		t.Skip("no fixtures")
	}
	for _, path := range names {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			fx := openFixture(t, name)
			r := fx.d.Reader()
			type level struct{ fb []byte }
			var stack []level
			addrSize := 8
			counts := map[string]int{}
			total := 0
			for {
				e, err := r.Next()
				if err != nil {
					t.Fatal(err)
				}
				if e == nil {
					break
				}
				if e.Tag == 0 {
					if len(stack) > 0 {
						stack = stack[:len(stack)-1]
					}
					continue
				}
				var fb []byte
				if len(stack) > 0 {
					fb = stack[len(stack)-1].fb
				}
				if e.Tag == dwarf.TagCompileUnit {
					addrSize = r.AddressSize()
					fb = nil
				}
				if e.Tag == dwarf.TagSubprogram {
					fb = nil
					if v, ok := e.Val(dwarf.AttrFrameBase).([]byte); ok {
						fb = v
					}
				}
				if (e.Tag == dwarf.TagFormalParameter || e.Tag == dwarf.TagVariable) && e.AttrField(dwarf.AttrLocation) != nil &&
					e.AttrField(dwarf.AttrLocation).Class == dwarf.ClassExprLoc {
					expr := e.Val(dwarf.AttrLocation).([]byte)
					var base FrameBase
					if fb != nil {
						b, needCFA, err := ParseFrameBase(fb, addrSize)
						if err == nil {
							base = b
							if needCFA {
								base = FrameBase{Kind: FrameBaseCFA, Reg: spReg(fx.arch), Offset: 16}
							}
						}
					}
					loc, err := Translate(expr, fx.arch, base, addrSize)
					total++
					switch {
					case err == nil && loc != nil && loc.Fetch != nil:
						counts[fmt.Sprintf("%T", loc.Fetch)]++
					case err != nil && loc == nil &&
						(errors.Is(err, ErrUnsupported) || errors.Is(err, ErrOptimizedOut)):
						counts["error: "+err.Error()]++
					default:
						t.Errorf("%s %v at %#x: expr %x fb %x: loc=%+v err=%v", name, e.Tag, e.Offset, expr, fb, loc, err)
					}
				}
				if e.Children {
					stack = append(stack, level{fb: fb})
				}
			}
			t.Logf("%d exprloc locations: %v", total, counts)
			if strings.Contains(name, "O0") && total < 50 {
				t.Errorf("only %d exprloc locations in an -O0 fixture", total)
			}
		})
	}
}

// perfCase is one `perf probe -k FIXTURE -D 'FUNC+OFF VAR...'` run and the
// definition line perf 6.1 printed for it (recorded; re-checked against the
// live perf when it is on PATH).
type perfCase struct {
	fixture, spec, want string
}

var perfCases = []perfCase{
	{"x86_64-dwarf5-O0.elf", "vfs_read+0 file count", "p:probe/vfs_read vfs_read+0 file=-32(%sp):x64 count=-48(%sp):x64"},
	{"x86_64-dwarf5-O0.elf", "vfs_read+5 file buf", "p:probe/vfs_read vfs_read+5 file=-32(%sp):x64 buf=-40(%sp):x64"},
	{"x86_64-dwarf5-O0.elf", "vfs_read+6 file pos", "p:probe/vfs_read vfs_read+6 file=-24(%sp):x64 pos=-48(%sp):x64"},
	{"x86_64-dwarf5-O0.elf", "vfs_read+9 file count ret", "p:probe/vfs_read vfs_read+9 file=-24(%bp):x64 count=-40(%bp):x64 ret=-8(%bp):s64"},
	{"x86_64-dwarf5-O0.elf", "vfs_read+13 buf pos ret", "p:probe/vfs_read vfs_read+13 buf=-32(%bp):x64 pos=-48(%bp):x64 ret=-8(%bp):s64"},
	{"x86_64-dwarf5-O0.elf", "do_mmap+20 file addr len pgoff populate", "p:probe/do_mmap do_mmap+20 file=-24(%bp):x64 addr=-32(%bp):x64 len=-40(%bp):x64 pgoff=+16(%bp):x64 populate=+24(%bp):x64"},
	{"x86_64-dwarf5-O0.elf", "ksys_read+30 fd buf count", "p:probe/ksys_read ksys_read+30 fd=-52(%bp):x32 buf=-64(%bp):x64 count=-72(%bp):x64"},
	{"x86_64-dwarf5-O2.elf", "null_write file buf count ppos", "p:probe/null_write null_write+0 file=%di:x64 buf=%si:x64 count=%dx:x64 ppos=%cx:x64"},
	{"x86_64-dwarf5-O2.elf", "do_mmap pgoff populate", "p:probe/do_mmap do_mmap+0 pgoff=+8(%sp):x64 populate=+16(%sp):x64"},
	{"x86_64-dwarf5-O2.elf", "build_open_flags how", "p:probe/build_open_flags build_open_flags+0 how=%di:x64"},
	{"arm64-dwarf5-O2.elf", "null_write buf count ppos", "p:probe/null_write null_write+0 buf=%x1:x64 count=%x2:x64 ppos=%x3:x64"},
	{"arm64-dwarf5-O2.elf", "do_mmap pgoff populate", "p:probe/do_mmap do_mmap+0 pgoff=%x6:x64 populate=%x7:x64"},
	{"arm64-dwarf5-O0.elf", "vfs_read+0 file count", "p:probe/vfs_read vfs_read+0 file=-24(%sp):x64 count=-40(%sp):x64"},
	{"arm64-dwarf5-O0.elf", "vfs_read+4 file buf", "p:probe/vfs_read vfs_read+4 file=+40(%sp):x64 buf=+32(%sp):x64"},
	{"arm64-dwarf5-O0.elf", "vfs_read+8 file pos ret", "p:probe/vfs_read vfs_read+8 file=+40(%sp):x64 pos=+16(%sp):x64 ret=+56(%sp):s64"},
	{"arm64-dwarf5-O0.elf", "do_mmap+20 file addr len pgoff populate", "p:probe/do_mmap do_mmap+20 file=+72(%sp):x64 addr=+64(%sp):x64 len=+56(%sp):x64 pgoff=+24(%sp):x64 populate=+16(%sp):x64"},
}

// fetchParts maps arg name → fetch text (the part before ":TYPE") of a
// definition line.
func fetchParts(line string) map[string]string {
	m := map[string]string{}
	for _, f := range strings.Fields(line)[2:] {
		name, rest, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		if i := strings.LastIndexByte(rest, ':'); i >= 0 {
			rest = rest[:i]
		}
		m[name] = rest
	}
	return m
}

func (fx *fixture) symbol(t *testing.T, name string) uint64 {
	syms, err := fx.f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			return s.Value
		}
	}
	t.Fatalf("%s: no symbol %s", fx.path, name)
	return 0
}

// varsAt finds the subprogram starting at low and returns its frame base
// expression and the exprloc locations of the parameters and variables in
// scope at pc, by name.
func (fx *fixture) varsAt(t *testing.T, low, pc uint64) (fb []byte, addrSize int, vars map[string][]byte) {
	r := fx.d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			t.Fatalf("%s: no subprogram at %#x (%v)", fx.path, low, err)
		}
		if e.Tag == dwarf.TagCompileUnit {
			addrSize = r.AddressSize()
		}
		if e.Tag != dwarf.TagSubprogram {
			continue
		}
		if lp, ok := e.Val(dwarf.AttrLowpc).(uint64); !ok || lp != low {
			continue
		}
		fb, _ = e.Val(dwarf.AttrFrameBase).([]byte)
		vars = map[string][]byte{}
		depth := 1
		skipDepth := 0 // >0: inside a block not containing pc
		for depth > 0 {
			c, err := r.Next()
			if err != nil || c == nil {
				t.Fatal(err)
			}
			if c.Tag == 0 {
				if skipDepth == depth {
					skipDepth = 0
				}
				depth--
				continue
			}
			if skipDepth == 0 {
				if c.Tag == dwarf.TagLexDwarfBlock {
					rs, _ := fx.d.Ranges(c)
					in := false
					for _, rg := range rs {
						in = in || (pc >= rg[0] && pc < rg[1])
					}
					if !in && c.Children {
						skipDepth = depth + 1
					}
				}
				if c.Tag == dwarf.TagFormalParameter || c.Tag == dwarf.TagVariable {
					if f := c.AttrField(dwarf.AttrLocation); f != nil && f.Class == dwarf.ClassExprLoc {
						name := fx.nameOf(c)
						if _, dup := vars[name]; !dup {
							vars[name] = f.Val.([]byte)
						}
					}
				}
			}
			if c.Children {
				depth++
			}
		}
		return fb, addrSize, vars
	}
}

// ours computes the fetch text gprobe's translation gives for each variable
// in spec ("FUNC+OFF VAR...").
func ours(t *testing.T, fx *fixture, spec string) map[string]string {
	fields := strings.Fields(spec)
	fn, offText, _ := strings.Cut(fields[0], "+")
	var off uint64
	if offText != "" {
		fmt.Sscan(offText, &off)
	}
	low := fx.symbol(t, fn)
	pc := low + off
	fbExpr, addrSize, vars := fx.varsAt(t, low, pc)
	fb, needCFA, err := ParseFrameBase(fbExpr, addrSize)
	if err != nil {
		t.Fatalf("%s: frame base %x: %v", spec, fbExpr, err)
	}
	if needCFA {
		if fb, err = fx.cfaAt(pc); err != nil {
			t.Fatalf("%s: CFA: %v", spec, err)
		}
	}
	got := map[string]string{}
	for _, v := range fields[1:] {
		expr, ok := vars[v]
		if !ok {
			t.Fatalf("%s: variable %s not found", spec, v)
		}
		loc, err := Translate(expr, fx.arch, fb, addrSize)
		if err != nil {
			got[v] = "error: " + err.Error()
			continue
		}
		got[v] = probe.FetchArg{Expr: loc.Fetch}.String()
	}
	return got
}

func compareFetches(t *testing.T, spec, line string, got map[string]string) {
	want := fetchParts(line)
	for v, g := range got {
		if want[v] != g {
			t.Errorf("%s: %s: gprobe %q, perf %q (line %q)", spec, v, g, want[v], line)
		}
	}
	if len(want) != len(got) {
		t.Errorf("%s: perf printed %d args, we translated %d", spec, len(want), len(got))
	}
}

// TestPerfRecorded compares against perf 6.1 output recorded in perfCases.
func TestPerfRecorded(t *testing.T) {
	for _, c := range perfCases {
		fx := openFixture(t, c.fixture)
		compareFetches(t, c.fixture+" "+c.spec, c.want, ours(t, fx, c.spec))
	}
}

// TestPerfLive runs perf probe -D on the fixtures (its answers cached by
// testenv.Perf) and checks the recorded lines are still perf's.
func TestPerfLive(t *testing.T) {
	perf := testenv.RequirePerf(t)
	if testing.Short() {
		t.Skip("short")
	}
	for _, c := range perfCases {
		fx := openFixture(t, c.fixture)
		r := perf.Probe("-k", fx.path, "-D", c.spec)
		out := r.Stdout + r.Stderr
		var line string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "p:") {
				line = l
			}
		}
		if line == "" {
			t.Errorf("%s %s: perf printed no definition:\n%s", c.fixture, c.spec, out)
			continue
		}
		if line != c.want {
			t.Errorf("%s %s: recorded line is stale:\n\tperf     %s\n\trecorded %s", c.fixture, c.spec, line, c.want)
		}
		compareFetches(t, c.fixture+" "+c.spec, line, ours(t, fx, c.spec))
	}
}

// nameOf is the DIE's name, following DW_AT_abstract_origin (concrete
// instances of inline functions carry their names there).
func (fx *fixture) nameOf(e *dwarf.Entry) string {
	for i := 0; i < 4 && e != nil; i++ {
		if n, ok := e.Val(dwarf.AttrName).(string); ok {
			return n
		}
		off, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			return ""
		}
		r := fx.d.Reader()
		r.Seek(off)
		e, _ = r.Next()
	}
	return ""
}
