package btfinfo

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/gprobe/gprobe/disasm/arch"
)

const fixtureDir = "../../../testdata/vmlinux-fixtures"

func fixtures(t testing.TB) []string {
	t.Helper()
	fs, err := filepath.Glob(filepath.Join(fixtureDir, "*.elf"))
	if err != nil || len(fs) == 0 {
		t.Fatalf("no fixtures in %s: %v", fixtureDir, err)
	}
	return fs
}

func fixtureArch(path string) arch.Arch {
	if strings.HasPrefix(filepath.Base(path), "arm64") {
		return arch.ARM64
	}
	return arch.AMD64
}

// required fixtures for the differential tests.
var required = []string{"x86_64-dwarf5-O2.elf", "x86_64-dwarf4-O2.elf", "arm64-dwarf5-O2.elf", "arm64-dwarf4-O2.elf"}

type dwarfInfo struct {
	d       *dwarf.Data
	structs map[string][]*dwarf.StructType
}

func loadDWARF(t *testing.T, path string) (*elf.File, *dwarfInfo) {
	t.Helper()
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ef.Close() })
	d, err := ef.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	di := &dwarfInfo{d: d, structs: map[string][]*dwarf.StructType{}}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagStructType && e.Tag != dwarf.TagUnionType {
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		if decl, _ := e.Val(dwarf.AttrDeclaration).(bool); decl || name == "" {
			continue
		}
		typ, err := d.Type(e.Offset)
		if err != nil {
			t.Fatalf("%s: DWARF type at %#x: %v", path, e.Offset, err)
		}
		if st, ok := typ.(*dwarf.StructType); ok {
			di.structs[name] = append(di.structs[name], st)
		}
	}
	return ef, di
}

// dwarfBitOffset is the member's bit offset from the start of its struct,
// for DWARF 5 (DW_AT_data_bit_offset) and DWARF 4 (DW_AT_bit_offset, counted
// from the MSB of the storage unit: converted for little endian).
func dwarfBitOffset(f *dwarf.StructField) int64 {
	if f.BitSize == 0 {
		return f.ByteOffset * 8
	}
	if f.ByteSize > 0 || f.BitOffset != 0 {
		size := f.ByteSize
		if size == 0 {
			size = f.Type.Size()
		}
		return f.ByteOffset*8 + size*8 - f.BitOffset - f.BitSize
	}
	return f.ByteOffset*8 + f.DataBitOffset
}

type memberStats struct{ members, bitfields, anon, structs, resolved int }

// compareComposite compares a BTF struct/union with a DWARF one, member by
// member, recursing into anonymous members. base is the bit offset of the
// composite inside the outermost struct.
func compareComposite(bt Type, dt *dwarf.StructType, st *memberStats) error {
	ms := members(bt)
	if len(ms) != len(dt.Field) {
		return fmt.Errorf("%s: %d BTF members, %d DWARF members", TypeString(bt, 0), len(ms), len(dt.Field))
	}
	for i, m := range ms {
		f := dt.Field[i]
		if m.Name != f.Name {
			return fmt.Errorf("%s member %d: BTF %q, DWARF %q", TypeString(bt, 0), i, m.Name, f.Name)
		}
		if got, want := int64(m.Offset), dwarfBitOffset(f); got != want {
			return fmt.Errorf("%s.%s: BTF bit offset %d, DWARF %d", TypeString(bt, 0), m.Name, got, want)
		}
		if int64(m.BitfieldSize) != f.BitSize {
			return fmt.Errorf("%s.%s: BTF bitfield size %d, DWARF %d", TypeString(bt, 0), m.Name, m.BitfieldSize, f.BitSize)
		}
		st.members++
		if m.BitfieldSize > 0 {
			st.bitfields++
		}
		if m.Name == "" {
			sub := btf.UnderlyingType(m.Type)
			dsub, ok := f.Type.(*dwarf.StructType)
			if !isComposite(sub) || !ok {
				return fmt.Errorf("%s: anonymous member %d is %T / %T", TypeString(bt, 0), i, sub, f.Type)
			}
			st.anon++
			if err := compareComposite(sub, dsub, st); err != nil {
				return err
			}
		}
	}
	return nil
}

// namedMembers lists the members reachable by name from t (through
// anonymous members) with their DWARF field and absolute bit offset.
type flatMember struct {
	name   string
	f      *dwarf.StructField
	bitOff int64
}

func flatten(dt *dwarf.StructType, base int64, out []flatMember) []flatMember {
	for _, f := range dt.Field {
		off := base + dwarfBitOffset(f)
		if f.Name == "" {
			if sub, ok := f.Type.(*dwarf.StructType); ok {
				out = flatten(sub, off, out)
			}
			continue
		}
		out = append(out, flatMember{f.Name, f, off})
	}
	return out
}

// TestMemberOffsetsVsDWARF is the differential test: every member of every
// named struct/union in each fixture's BTF has the same (bit) offset and
// bitfield size as stdlib debug/dwarf gives for the same struct, and
// Resolve(".member") gives DWARF's byte offset (bitfields: the kprobe
// container/bit offset matching DWARF's bit position, and for DWARF 4 the
// same storage unit as DW_AT_data_member_location/DW_AT_byte_size).
func TestMemberOffsetsVsDWARF(t *testing.T) {
	total := memberStats{}
	seen := map[string]bool{}
	for _, path := range fixtures(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			seen[name] = true
			s, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			_, di := loadDWARF(t, path)
			dwarf4 := strings.Contains(name, "dwarf4")
			var st memberStats
			skipped := 0
			err = s.Each(func(typ Type) bool {
				var tname string
				switch v := typ.(type) {
				case *btf.Struct:
					tname = v.Name
				case *btf.Union:
					tname = v.Name
				default:
					return true
				}
				if tname == "" {
					return true // anonymous: checked through their parents
				}
				cands := di.structs[tname]
				if len(cands) == 0 {
					skipped++
					return true
				}
				var errs []string
				var match *dwarf.StructType
				for _, dt := range cands {
					var cst memberStats
					if err := compareComposite(typ, dt, &cst); err != nil {
						errs = append(errs, err.Error())
						continue
					}
					match = dt
					st.members += cst.members
					st.bitfields += cst.bitfields
					st.anon += cst.anon
					st.structs++
					break
				}
				if match == nil {
					t.Errorf("%s %s: no DWARF definition matches: %s", name, tname, strings.Join(errs, "; "))
					return true
				}
				// Resolve every named (flattened) member.
				for _, fm := range flatten(match, 0, nil) {
					acc, err := s.ResolveStruct(typ, []Step{{Name: fm.name}})
					if err != nil {
						t.Errorf("%s: resolve %s.%s: %v", name, tname, fm.name, err)
						continue
					}
					st.resolved++
					if len(acc.Derefs) != 1 {
						t.Errorf("%s: %s.%s: derefs %v", name, tname, fm.name, acc.Derefs)
						continue
					}
					if fm.f.BitSize == 0 {
						if acc.Derefs[0]*8 != fm.bitOff || acc.IsBitfield() {
							t.Errorf("%s: %s.%s: resolved offset %d, DWARF bit offset %d", name, tname, fm.name, acc.Derefs[0], fm.bitOff)
						}
						continue
					}
					if !acc.IsBitfield() || int64(acc.BitSize) != fm.f.BitSize ||
						acc.Derefs[0]*8+int64(acc.BitOffset) != fm.bitOff ||
						acc.BitOffset+acc.BitSize > acc.ContainerBits ||
						int64(acc.ContainerBits) != fm.f.Type.Size()*8 {
						t.Errorf("%s: %s.%s: bitfield %+v, DWARF %+v at bit %d", name, tname, fm.name, acc, fm.f, fm.bitOff)
						continue
					}
					if dwarf4 {
						// DW_AT_data_member_location is the storage unit's
						// offset inside the innermost struct; compare when the
						// member is not inside an anonymous member.
						if direct := memberIsDirect(match, fm.name); direct &&
							(acc.Derefs[0] != fm.f.ByteOffset || int64(acc.ContainerBits) != fm.f.ByteSize*8) {
							t.Errorf("%s: %s.%s: bitfield unit +%d/%d, DWARF 4 unit +%d/%d", name, tname, fm.name,
								acc.Derefs[0], acc.ContainerBits, fm.f.ByteOffset, fm.f.ByteSize*8)
						}
					}
				}
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d structs/unions, %d members (%d bitfields, %d anonymous) compared; %d named members resolved; %d BTF structs without DWARF definition",
				name, st.structs, st.members, st.bitfields, st.anon, st.resolved, skipped)
			if st.members < 100 {
				t.Errorf("only %d members compared", st.members)
			}
			total.members += st.members
			total.bitfields += st.bitfields
			total.structs += st.structs
			total.resolved += st.resolved
		})
	}
	for _, r := range required {
		if !seen[r] {
			t.Errorf("fixture %s missing", r)
		}
	}
	t.Logf("total: %d structs, %d members (%d bitfields), %d resolutions", total.structs, total.members, total.bitfields, total.resolved)
}

func memberIsDirect(dt *dwarf.StructType, name string) bool {
	for _, f := range dt.Field {
		if f.Name == name {
			return true
		}
	}
	return false
}
