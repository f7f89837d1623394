package resolver

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/internal/btfinfo"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/spec"
)

// The BTF back end must give the same fetch arguments as DWARF for the same
// function entry on the same image: the same registers, the same offsets
// through every dereference, the same bitfield layouts and types. Checked on
// the optimized fixtures (where DWARF puts parameters in their ABI
// registers at the entry) and on Debian's real 6.1 vmlinux, whose .BTF was
// made by pahole from the same DWARF.

var baseRegRE = regexp.MustCompile(`%[a-z0-9]+`)

// btfSpecsFor generates entry-probe argument specs from BTF prototypes.
func btfSpecsFor(t *testing.T, s *btfinfo.Spec, max int) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	err := s.Each(func(typ btf.Type) bool {
		fn, ok := typ.(*btf.Func)
		if !ok || seen[fn.Name] || len(out) >= max {
			return len(out) < max
		}
		seen[fn.Name] = true
		proto, ok := fn.Type.(*btf.FuncProto)
		if !ok {
			return true
		}
		out = append(out, fn.Name+" $params")
		for _, p := range proto.Params {
			ptr, ok := btf.UnderlyingType(p.Type).(*btf.Pointer)
			if !ok || p.Name == "" {
				continue
			}
			st, ok := btf.UnderlyingType(ptr.Target).(*btf.Struct)
			if !ok {
				continue
			}
			n := 0
			for _, m := range st.Members {
				if m.Name == "" || n >= 4 {
					continue
				}
				n++
				arg := p.Name + "->" + m.Name
				out = append(out, fn.Name+" "+arg)
				if inner, ok := btf.UnderlyingType(m.Type).(*btf.Pointer); ok {
					if ist, ok := btf.UnderlyingType(inner.Target).(*btf.Struct); ok && len(ist.Members) > 0 && ist.Members[0].Name != "" {
						out = append(out, fn.Name+" "+arg+"->"+ist.Members[0].Name)
					}
				}
			}
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func argsText(ps []probe.Probe) string {
	if len(ps) == 0 {
		return ""
	}
	var b strings.Builder
	for _, a := range ps[0].Args {
		b.WriteString(" " + a.String())
	}
	return b.String()
}

// compareBackends resolves each spec through DWARF and through BTF alone.
func compareBackends(t *testing.T, path string, max int) {
	t.Helper()
	f, err := dwarfinfo.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bs, err := btfinfo.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	feat := probedef.Features{HexTypes: true, Immediates: true, MultiProbe: true}
	dw, err := testNew(f, false, testOpts{Features: feat})
	if err != nil {
		t.Fatal(err)
	}
	bt, err := testNew(nil, false, testOpts{Features: feat, BTF: bs, Arch: dw.Arch()})
	if err != nil {
		t.Fatal(err)
	}
	same, skipped := 0, 0
	for _, s := range btfSpecsFor(t, bs, max) {
		p, err := spec.ParseProbe(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		dps, derr := dw.Probes(p)
		bps, berr := bt.Probes(p)
		if derr != nil || berr != nil || len(dps) != 1 {
			// Optimized out, a clone, a parameter on the stack, an
			// inlined-only function: nothing to compare.
			skipped++
			continue
		}
		d, b := argsText(dps), argsText(bps)
		if d == b {
			same++
			continue
		}
		// DWARF may say a parameter lives elsewhere than its ABI register
		// at the entry (perf's entry fuzz moves to the first address with a
		// location); then the bases differ and the comparison says nothing.
		if strings.Join(baseRegRE.FindAllString(d, -1), ",") != strings.Join(baseRegRE.FindAllString(b, -1), ",") || strings.Contains(d, `\`) {
			skipped++
			continue
		}
		t.Errorf("%s: %q\n DWARF:%s\n BTF:  %s", filepath.Base(path), s, d, b)
	}
	t.Logf("%s: %d specs identical through DWARF and BTF, %d not comparable", filepath.Base(path), same, skipped)
	if same == 0 {
		t.Errorf("%s: no spec compared", path)
	}
}

func TestBTFMatchesDWARFFixtures(t *testing.T) {
	for _, name := range []string{"x86_64-dwarf5-O2.elf", "x86_64-dwarf4-O2.elf", "x86_64-dwarf5-O2-ibt.elf", "arm64-dwarf5-O2.elf", "arm64-dwarf4-O2.elf"} {
		t.Run(name, func(t *testing.T) {
			compareBackends(t, filepath.Join("..", "..", "..", "testdata", "vmlinux-fixtures", name), 1000)
		})
	}
}

func TestBTFMatchesDWARFDebianVmlinux(t *testing.T) {
	path, _ := testenv.RequireVmlinux(t, testenv.Linux61)
	compareBackends(t, path, 60)
}

// TestBTFOnlyErrors: what BTF cannot answer is refused with the reason.
func TestBTFOnlyErrors(t *testing.T) {
	path := filepath.Join("..", "..", "..", "testdata", "vmlinux-fixtures", "x86_64-dwarf5-O2.elf")
	bs, err := btfinfo.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := testNew(nil, false, testOpts{BTF: bs, Arch: arch.AMD64, Features: probedef.Features{HexTypes: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ spec, want string }{
		{"vfs_read:3 count", "a source line needs DWARF"},
		{"vfs_read+4 count", "parameters are known only at the entry"},
		{"vfs_read nosuch", "'nosuch' is not a parameter of vfs_read (parameters: file, buf, count, pos)"},
		{"vfs_read file->nosuch", "nosuch"},
		{"vfs_read count->x", "count->x"},
		{"vfs_read.isra.0 count", "compiler-made clone"},
		{"vfs_read file:string", "not (unsigned) char"},
	} {
		p, err := spec.ParseProbe(c.spec)
		if err != nil {
			t.Fatalf("%q: %v", c.spec, err)
		}
		_, err = r.Probes(p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.spec, err, c.want)
		}
	}
	// -L without an image: refused, not a crash.
	lr, _ := spec.ParseLineRange("vfs_read")
	if _, err := r.LineRange(lr); !errors.Is(err, core.ErrNeedsDWARF) {
		t.Errorf("-L vfs_read on BTF alone: %v", err)
	}
	p, _ := spec.ParseProbe("vfs_read file->f_pos buf:string count:u32 n=pos")
	ps, err := r.Probes(p)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ps[0].String(), "p:probe/vfs_read vfs_read+0 f_pos=+32(%di):s64 buf_string=+0(%si):string count_u32=%dx:u32 n=%cx:x64"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestBTFOnlyPattern: without an image, a function pattern is every
// function BTF describes that it matches, each with its arguments from its
// prototype; a function the kprobe blacklist names, or whose prototype
// lacks an argument, is skipped with a warning; nothing left is perf's
// silent "not found".
func TestBTFOnlyPattern(t *testing.T) {
	path := filepath.Join("..", "..", "..", "testdata", "vmlinux-fixtures", "x86_64-dwarf5-O2.elf")
	bs, err := btfinfo.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	bl, err := probedef.ParseBlacklist(strings.NewReader("0x0000000000000000-0x0000000000000000\tvfs_write\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		spec      string
		blacklist *probedef.Blacklist
		want      string // the definitions, "|"-separated
		warnings  string
		err       bool
	}{
		{spec: "vfs_* count", want: "p:probe/vfs_read vfs_read+0 count=%dx:x64|p:probe/vfs_write vfs_write+0 count=%dx:x64"},
		{spec: "vfs_*", blacklist: bl, want: "p:probe/vfs_read vfs_read+0", warnings: "vfs_write is blacklisted function, skip it."},
		{spec: "vfs_write", blacklist: bl, warnings: "vfs_write is blacklisted function, skip it.", err: true},
		{spec: "vfs_*%return $retval", want: "r:probe/vfs_read__return vfs_read+0 $retval|r:probe/vfs_write__return vfs_write+0 $retval"},
		{spec: "vfs_* buf count", blacklist: bl, want: "p:probe/vfs_read vfs_read+0 buf=%si:x64 count=%dx:x64", warnings: "vfs_write is blacklisted function, skip it."},
		{spec: "nosuch_*", err: true},
	} {
		warnings = nil
		r, err := testNew(nil, false, testOpts{BTF: bs, Arch: arch.AMD64, Features: probedef.Features{HexTypes: true},
			Blacklist: c.blacklist, Warn: func(s string) { warnings = append(warnings, s) }})
		if err != nil {
			t.Fatal(err)
		}
		p, err := spec.ParseProbe(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := r.Probes(p)
		var got []string
		for _, pr := range ps {
			got = append(got, pr.String())
		}
		if (err != nil) != c.err || strings.Join(got, "|") != c.want || strings.Join(warnings, "|") != c.warnings {
			t.Errorf("%q: %q, %v, warnings %q\nwant %q, warnings %q", c.spec, got, err, warnings, c.want, c.warnings)
		}
	}
}
