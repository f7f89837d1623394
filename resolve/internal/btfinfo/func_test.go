package btfinfo

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/gprobe/gprobe/disasm/arch"
)

type dParam struct {
	name   string
	origin dwarf.Offset
	loc    any // []byte (exprloc) or int64 (loclist offset)
}

type dSub struct {
	name     string
	origin   dwarf.Offset
	lowpc    uint64
	hasLow   bool
	decl     bool
	params   []dParam
	cuBase   uint64
	addrBase int64
}

type dwarfFuncs struct {
	subs        map[dwarf.Offset]*dSub
	order       []dwarf.Offset
	paramNames  map[dwarf.Offset]string
	loc, loclst []byte
	addr        []byte
	dwarf5      bool
}

func readFuncs(t *testing.T, ef *elf.File, d *dwarf.Data) *dwarfFuncs {
	t.Helper()
	df := &dwarfFuncs{subs: map[dwarf.Offset]*dSub{}, paramNames: map[dwarf.Offset]string{}}
	sec := func(name string) []byte {
		s := ef.Section(name)
		if s == nil {
			return nil
		}
		b, err := s.Data()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	df.loc, df.loclst, df.addr = sec(".debug_loc"), sec(".debug_loclists"), sec(".debug_addr")
	r := d.Reader()
	var cuBase uint64
	var addrBase int64
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		switch e.Tag {
		case dwarf.TagCompileUnit:
			cuBase, _ = e.Val(dwarf.AttrLowpc).(uint64)
			addrBase, _ = e.Val(dwarf.AttrAddrBase).(int64)
			continue
		case dwarf.TagSubprogram:
		default:
			continue
		}
		s := &dSub{cuBase: cuBase, addrBase: addrBase}
		s.name, _ = e.Val(dwarf.AttrName).(string)
		s.origin, _ = e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if s.origin == 0 {
			s.origin, _ = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
		}
		s.lowpc, s.hasLow = e.Val(dwarf.AttrLowpc).(uint64)
		s.decl, _ = e.Val(dwarf.AttrDeclaration).(bool)
		df.subs[e.Offset] = s
		df.order = append(df.order, e.Offset)
		if !e.Children {
			continue
		}
		for {
			c, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if c == nil || c.Tag == 0 {
				break
			}
			if c.Tag == dwarf.TagFormalParameter {
				p := dParam{}
				p.name, _ = c.Val(dwarf.AttrName).(string)
				p.origin, _ = c.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
				if f := c.AttrField(dwarf.AttrLocation); f != nil {
					p.loc = f.Val
				}
				if p.name != "" {
					df.paramNames[c.Offset] = p.name
				}
				s.params = append(s.params, p)
			}
			if c.Children {
				r.SkipChildren()
			}
		}
	}
	return df
}

func (df *dwarfFuncs) subName(s *dSub) string {
	for i := 0; s != nil && i < 4; i++ {
		if s.name != "" {
			return s.name
		}
		s = df.subs[s.origin]
	}
	return ""
}

func (df *dwarfFuncs) paramName(p dParam) string {
	if p.name != "" {
		return p.name
	}
	return df.paramNames[p.origin]
}

func uleb(b []byte, i *int) uint64 {
	var v uint64
	var shift uint
	for *i < len(b) {
		c := b[*i]
		*i++
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			break
		}
		shift += 7
	}
	return v
}

// entryExpr returns the location expression valid at pc from a location
// list (DWARF 4 .debug_loc or DWARF 5 .debug_loclists), or nil.
func (df *dwarfFuncs) entryExpr(s *dSub, loc any, pc uint64) []byte {
	switch v := loc.(type) {
	case []byte:
		return v
	case int64:
		if df.loclst != nil {
			return df.loclistsExpr(s, v, pc)
		}
		return df.locExpr(s, v, pc)
	}
	return nil
}

func (df *dwarfFuncs) locExpr(s *dSub, off int64, pc uint64) []byte {
	b, base, le := df.loc, s.cuBase, binary.LittleEndian
	for i := int(off); i+16 <= len(b); {
		lo, hi := le.Uint64(b[i:]), le.Uint64(b[i+8:])
		i += 16
		if lo == 0 && hi == 0 {
			return nil
		}
		if lo == ^uint64(0) {
			base = hi
			continue
		}
		n := int(le.Uint16(b[i:]))
		i += 2
		if base+lo <= pc && pc < base+hi {
			return b[i : i+n]
		}
		i += n
	}
	return nil
}

func (df *dwarfFuncs) addrx(s *dSub, idx uint64) uint64 {
	o := int(s.addrBase) + 8*int(idx)
	if o+8 > len(df.addr) {
		return 0
	}
	return binary.LittleEndian.Uint64(df.addr[o:])
}

func (df *dwarfFuncs) loclistsExpr(s *dSub, off int64, pc uint64) []byte {
	b, base, le := df.loclst, s.cuBase, binary.LittleEndian
	for i := int(off); i < len(b); {
		kind := b[i]
		i++
		var lo, hi uint64
		switch kind {
		case 0: // end_of_list
			return nil
		case 1: // base_addressx
			base = df.addrx(s, uleb(b, &i))
			continue
		case 6: // base_address
			base = le.Uint64(b[i:])
			i += 8
			continue
		case 9: // view_pair
			uleb(b, &i)
			uleb(b, &i)
			continue
		case 2: // startx_endx
			lo, hi = df.addrx(s, uleb(b, &i)), 0
			hi = df.addrx(s, uleb(b, &i))
		case 3: // startx_length
			lo = df.addrx(s, uleb(b, &i))
			hi = lo + uleb(b, &i)
		case 4: // offset_pair
			lo = base + uleb(b, &i)
			hi = base + uleb(b, &i)
		case 5: // default_location
			lo, hi = 0, ^uint64(0)
		case 7: // start_end
			lo, hi = le.Uint64(b[i:]), le.Uint64(b[i+8:])
			i += 16
		case 8: // start_length
			lo = le.Uint64(b[i:])
			i += 8
			hi = lo + uleb(b, &i)
		default:
			return nil
		}
		n := int(uleb(b, &i))
		if lo <= pc && pc < hi {
			return b[i : i+n]
		}
		i += n
	}
	return nil
}

// dwarfRegName maps a location expression that is just DW_OP_regN to the
// kprobe register name.
func dwarfRegName(isa arch.Arch, expr []byte) (string, bool) {
	if len(expr) != 1 || expr[0] < 0x50 || expr[0] > 0x6f {
		return "", false
	}
	n := int(expr[0] - 0x50)
	if isa == arch.ARM64 {
		return fmt.Sprintf("x%d", n), true
	}
	x86 := []string{"ax", "dx", "cx", "bx", "si", "di", "bp", "sp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}
	if n < len(x86) {
		return x86[n], true
	}
	return "", false
}

// TestFuncParamsVsDWARF compares, for every BTF function of every fixture,
// the parameter names and count with DWARF's DW_TAG_formal_parameter
// children, and the registers ParamRegs assigns with the register DWARF
// says the parameter lives in at the function's first instruction (where
// the location is a plain DW_OP_regN there). Functions present on only one
// side, and out-of-line clones (the ELF symbol at low_pc is not the plain
// name, e.g. foo.isra.0), are skipped.
func TestFuncParamsVsDWARF(t *testing.T) {
	var totFuncs, totParams, totRegs int
	for _, path := range fixtures(t) {
		name := filepath.Base(path)
		isa := fixtureArch(path)
		t.Run(name, func(t *testing.T) {
			s, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			ef, di := loadDWARF(t, path)
			df := readFuncs(t, ef, di.d)
			syms, _ := ef.Symbols()
			symByName := map[string][]elf.Symbol{}
			for _, sy := range syms {
				if elf.ST_TYPE(sy.Info) == elf.STT_FUNC {
					symByName[sy.Name] = append(symByName[sy.Name], sy)
				}
			}
			byName := map[string][]*dSub{}
			for _, off := range df.order {
				sub := df.subs[off]
				if n := df.subName(sub); n != "" {
					byName[n] = append(byName[n], sub)
				}
			}
			names, err := s.FuncNames()
			if err != nil {
				t.Fatal(err)
			}
			count := map[string]int{}
			for _, n := range names {
				count[n]++
			}
			var nFuncs, nParams, nRegs, skipped int
			for _, fname := range names {
				if count[fname] > 1 {
					skipped++
					continue
				}
				f, err := s.FuncArch(fname, isa)
				if err != nil {
					t.Errorf("%s: Func(%s): %v", name, fname, err)
					continue
				}
				subs := byName[fname]
				if len(subs) == 0 {
					skipped++
					continue
				}
				// Names: from a DIE that names its parameters itself.
				var dnames []string
				found := false
				for _, sub := range subs {
					if sub.name == "" || (len(sub.params) > 0 && sub.params[0].name == "") {
						continue
					}
					dnames = dnames[:0]
					for _, p := range sub.params {
						dnames = append(dnames, p.name)
					}
					found = true
					break
				}
				if !found {
					skipped++
					continue
				}
				var bnames []string
				for _, p := range f.Params {
					bnames = append(bnames, p.Name)
				}
				if strings.Join(bnames, ",") != strings.Join(dnames, ",") {
					t.Errorf("%s: %s: BTF params %v, DWARF %v", name, fname, bnames, dnames)
					continue
				}
				nFuncs++
				nParams += len(bnames)
				// Registers: every concrete out-of-line instance at the plain symbol.
				for _, sub := range subs {
					// low_pc must lie in the plain symbol (with patchable
					// entries/BTI, low_pc is a few bytes past the symbol).
					inSym := false
					for _, sy := range symByName[fname] {
						inSym = inSym || sy.Value <= sub.lowpc && sub.lowpc < sy.Value+max(sy.Size, 1)
					}
					if !sub.hasLow || !inSym {
						continue
					}
					for _, p := range sub.params {
						pn := df.paramName(p)
						idx := -1
						for i, bp := range f.Params {
							if bp.Name == pn {
								idx = i
							}
						}
						if idx < 0 {
							t.Errorf("%s: %s: DWARF parameter %q not in BTF", name, fname, pn)
							continue
						}
						reg, ok := dwarfRegName(isa, df.entryExpr(sub, p.loc, sub.lowpc))
						if !ok {
							continue
						}
						nRegs++
						if got := f.Params[idx].Reg; got != reg {
							t.Errorf("%s: %s param %d %s: ParamRegs %q, DWARF at entry %q", name, fname, idx, pn, got, reg)
						}
					}
				}
				// And the plain ABI table, by index.
				regs := isa.ArgRegisters()
				for i, p := range f.Params {
					sz, _ := btf.Sizeof(p.Type)
					j := i
					if f.SretReg == "di" {
						j++
					}
					if sz <= 8 && j < len(regs) && !isFloat(p.Type) && allScalar(f.Params[:i]) && p.Reg != regs[j] {
						t.Errorf("%s: %s param %d: Reg %q, want %q", name, fname, i, p.Reg, regs[j])
					}
				}
			}
			t.Logf("%s: %d functions, %d params compared by name; %d registers checked against DWARF entry locations; %d skipped",
				name, nFuncs, nParams, nRegs, skipped)
			if nFuncs < 20 {
				t.Errorf("only %d functions compared", nFuncs)
			}
			if strings.Contains(name, "-O2") && nRegs < 10 {
				t.Errorf("only %d registers checked", nRegs)
			}
			totFuncs += nFuncs
			totParams += nParams
			totRegs += nRegs
		})
	}
	t.Logf("total: %d functions, %d params, %d registers vs DWARF", totFuncs, totParams, totRegs)
}

func isFloat(t Type) bool {
	_, ok := btf.UnderlyingType(t).(*btf.Float)
	return ok
}

func allScalar(ps []Param) bool {
	for _, p := range ps {
		sz, err := btf.Sizeof(p.Type)
		if err != nil || sz > 8 || isFloat(p.Type) {
			return false
		}
	}
	return true
}
