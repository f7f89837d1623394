package dwarfinfo

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/lines"
)

// TestNonCUnits decodes every unit of the C++ and Rust programs (each of
// testenv.NamesBuilds) with the fast scanner and with debug/dwarf, and
// checks what EachFuncs finds against a walk of debug/dwarf's entries
// written after libdw's dwarf_getfuncs: in a unit that is not C's, the
// function definitions inside namespaces, classes and structures too, in
// DIE order. Rust puts every function in its crate's namespace, beside a
// namespace of the same name for a function's closures: "work" must be
// the function.
func TestNonCUnits(t *testing.T) {
	testenv.Heavy(t, "C++ and Rust builds")
	for _, b := range testenv.NamesBuilds() {
		t.Run(b.Name, func(t *testing.T) {
			path := b.Build(t)
			f := open(t, path)
			// The tree's shape: the oracle integrates names only
			// through origins that are scopes of the unit, and these
			// programs name functions through class declarations
			// and other units (checked below through EachFuncs).
			matchStdlib(t, f, dumpShape)
			want := getfuncs(t, path)
			for _, name := range []string{"work", "size", "bump", "main", "method", "smethod", "scale", "hidden", "cfunc", "plain_c"} {
				var got []string
				err := f.EachFuncs(ExactName(name), func(refs []FuncRef) (bool, error) {
					for _, r := range refs {
						got = append(got, fmt.Sprintf("%d:%#x", r.Unit, r.Offset))
					}
					return false, nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if g, w := strings.Join(got, " "), strings.Join(want[name], " "); g != w {
					t.Errorf("%s: EachFuncs finds %q, dwarf_getfuncs %q", name, g, w)
				}
			}
			if b.Rust() {
				if len(want["work"]) != 1 || len(want["size"]) < 3 {
					t.Errorf("%s: work defined %d times, size %d: not the program's DWARF", filepath.Base(path), len(want["work"]), len(want["size"]))
				}
			}
		})
	}
}

// dumpShape is dumpUnit without what is integrated from origins.
func dumpShape(u *lines.Unit) string {
	var b strings.Builder
	var dump func(s *lines.Scope, depth int)
	dump = func(s *lines.Scope, depth int) {
		fmt.Fprintf(&b, "%*s%d %#x call %d:%d origin %#x decl=%v inline=%v entry=%v:%#x ranges=%v %x high %#x\n",
			depth*2, "", s.Kind, s.Offset, s.CallFile, s.CallLine, s.Origin, s.Declaration, s.HasInline,
			s.HasEntryPC, s.EntryPC, s.HasRanges, s.Ranges, s.HighPC)
		for _, c := range s.Children {
			dump(c, depth+1)
		}
	}
	for _, f := range u.Funcs {
		dump(f, 0)
	}
	return b.String()
}

// getfuncs lists, by DW_AT_name, each unit's subprogram definitions as
// libdw's dwarf_getfuncs visits them (function definitions at unit level,
// and in a unit that is not C's inside namespaces, classes, structures and
// modules), as "UNIT:OFFSET", read with debug/dwarf.
func getfuncs(t *testing.T, path string) map[string][]string {
	t.Helper()
	d := stdlibDWARF(t, path)
	out := map[string][]string{}
	r := d.Reader()
	unit := -1
	nonC := false
	// depth of nesting below the unit DIE, and whether each level is
	// transparent (a namespace, class or structure at unit level).
	var open []bool
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			return out
		}
		if e.Tag == 0 {
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
			continue
		}
		if e.Tag == dwarf.TagCompileUnit {
			unit++
			open = open[:0]
			lang, _ := e.Val(dwarf.AttrLanguage).(int64)
			nonC = lang != 0x01 && lang != 0x02 && lang != 0x0c && lang != 0x1d
			if e.Children {
				open = append(open, true)
			}
			continue
		}
		unitLevel := len(open) > 0 && open[len(open)-1]
		if e.Tag == dwarf.TagSubprogram && unitLevel {
			decl, _ := e.Val(dwarf.AttrDeclaration).(bool)
			_, inline := e.Val(dwarf.AttrInline).(int64)
			_, low := e.Val(dwarf.AttrLowpc).(uint64)
			_, ranges := e.Val(dwarf.AttrRanges).(int64)
			if !decl && (inline || low || ranges) {
				for _, n := range names(d, e) {
					out[n] = append(out[n], fmt.Sprintf("%d:%#x", unit, e.Offset))
				}
			}
		}
		if e.Children {
			transparent := false
			switch e.Tag {
			case dwarf.TagNamespace, dwarf.TagClassType, dwarf.TagStructType, dwarf.TagModule:
				transparent = unitLevel && nonC
			}
			open = append(open, transparent)
		}
	}
}

// names are the DW_AT_name and DW_AT_linkage_name of e, through its
// specification or abstract origin as dwarf_attr_integrate finds them.
func names(d *dwarf.Data, e *dwarf.Entry) []string {
	var out []string
	seen := map[string]bool{}
	for depth := 0; e != nil && depth < 16; depth++ {
		for _, a := range []dwarf.Attr{dwarf.AttrName, dwarf.AttrLinkageName} {
			if n, ok := e.Val(a).(string); ok && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
		o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			o, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
		}
		if !ok {
			break
		}
		r := d.Reader()
		r.Seek(o)
		e, _ = r.Next()
	}
	return out
}

// TestUnitCoveringClang: the unit UnitCovering finds for each function
// symbol's address is the one debug/dwarf's SeekPC finds (from the units'
// own ranges), on a clang build of a C program without .debug_aranges
// (where UnitForAddr finds none) and a GCC build with them (where both
// agree), in DWARF 4 and 5.
func TestUnitCoveringClang(t *testing.T) {
	for _, b := range []struct{ cc, dwarf string }{{"gcc", "-gdwarf-4"}, {"clang", "-gdwarf-4"}, {"clang", "-gdwarf-5"}} {
		img := testenv.BuildC(t, b.cc, "../../../cmd/gprobe/testdata/uprobe/prog.c", "prog-"+b.cc+b.dwarf, "-O2", b.dwarf)
		f := open(t, img)
		units, err := f.unitHeaders()
		if err != nil {
			t.Fatal(err)
		}
		d, err := f.ELF.DWARF()
		if err != nil {
			t.Fatal(err)
		}
		syms, err := f.ELF.Symbols()
		if err != nil {
			t.Fatal(err)
		}
		aranges := f.ELF.Section(".debug_aranges") != nil
		checked := 0
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 {
				continue
			}
			e, err := d.Reader().SeekPC(s.Value)
			want := -1
			if err == nil {
				for i := range units {
					if units[i].dieOff == uint64(e.Offset) {
						want = i
					}
				}
			}
			got, err := f.UnitCovering(s.Value)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s: UnitCovering(%s=%#x) = %d, debug/dwarf finds unit %d", img, s.Name, s.Value, got, want)
			}
			byAranges, _ := f.UnitForAddr(s.Value)
			if aranges && byAranges != got || !aranges && byAranges != -1 {
				t.Errorf("%s: UnitForAddr(%s) = %d, UnitCovering %d (.debug_aranges: %v)", img, s.Name, byAranges, got, aranges)
			}
			if want >= 0 {
				checked++
			}
		}
		if checked < 5 {
			t.Errorf("%s: only %d functions in a unit", img, checked)
		}
		f.Close()
	}
}
