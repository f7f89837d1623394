package btfinfo

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// Step is one element of a field chain.
type Step struct {
	Name  string // member name ("->name" or ".name"); unused when IsIndex
	Arrow bool   // "->name": dereference a pointer first; false: ".name"
	// IsIndex: "[Index]". On an array (in memory) it adds Index*elemsize to
	// the current offset; on a pointer it dereferences it (a new level at
	// Index*elemsize).
	IsIndex bool
	Index   int64
}

func (st Step) String() string {
	switch {
	case st.IsIndex:
		return fmt.Sprintf("[%d]", st.Index)
	case st.Arrow:
		return "->" + st.Name
	}
	return "." + st.Name
}

// ParseChain parses "->a.b[3]->c" (or "a->b" with the leading variable
// stripped by the caller) into steps. It accepts "->", "." and "[N]".
func ParseChain(s string) ([]Step, error) {
	var steps []Step
	for s != "" {
		var st Step
		switch {
		case strings.HasPrefix(s, "->"):
			st.Arrow, s = true, s[2:]
		case s[0] == '.':
			s = s[1:]
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return nil, fmt.Errorf("missing ']' in %q: %w", s, ErrUnsupported)
			}
			if _, err := fmt.Sscan(s[1:end], &st.Index); err != nil {
				return nil, fmt.Errorf("bad array index %q: %w", s[1:end], ErrUnsupported)
			}
			st.IsIndex = true
			steps, s = append(steps, st), s[end+1:]
			continue
		default:
			return nil, fmt.Errorf("bad field chain at %q: %w", s, ErrUnsupported)
		}
		n := 0
		for n < len(s) && (s[n] == '_' || s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z' || n > 0 && s[n] >= '0' && s[n] <= '9') {
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("missing member name at %q: %w", s, ErrUnsupported)
		}
		st.Name, s = s[:n], s[n:]
		steps = append(steps, st)
	}
	return steps, nil
}

// Access is the result of resolving a chain.
//
// The kprobe fetch arg for base value B (a register such as %di) is
// Derefs[n-1](...Derefs[1](Derefs[0](B))) written as +OFF(...), see Fetch.
// An empty Derefs means the value is B itself.
type Access struct {
	// Derefs holds one byte offset per dereference level, innermost first.
	// For a bitfield the last offset is that of the storage unit
	// (container), aligned down to the container size.
	Derefs []int64
	Final  Type // type of the final member/element (with qualifiers)
	// Bitfield (BitSize > 0 only): BitSize bits starting BitOffset bits
	// above the least significant bit of the ContainerBits-wide little-endian
	// unit at the last Derefs offset: the kprobe type is
	// b<BitSize>@<BitOffset>/<ContainerBits> (see BitfieldType).
	BitSize, BitOffset int
	ContainerBits      int
}

// IsBitfield reports whether the final member is a bitfield.
func (a *Access) IsBitfield() bool { return a.BitSize > 0 }

// BitfieldType returns the kprobe type "b<w>@<o>/<c>", or "" if the final
// member is not a bitfield.
func (a *Access) BitfieldType() string {
	if a.BitSize <= 0 {
		return ""
	}
	return fmt.Sprintf("b%d@%d/%d", a.BitSize, a.BitOffset, a.ContainerBits)
}

// Fetch renders the dereference chain around base, e.g. Fetch("%di") gives
// "+40(+24(%di))". Offsets are signed decimal, as perf prints them.
func (a *Access) Fetch(base string) string {
	s := base
	for _, off := range a.Derefs {
		s = fmt.Sprintf("%+d(%s)", off, s)
	}
	return s
}

// ResolveStruct resolves chain on the object at an address whose type is
// the struct/union t: the first step may be ".name" (or "->name"), and the
// first level's offset is that member's.
// It is Resolve(pointer to t, chain with the first step made an arrow).
func (s *Spec) ResolveStruct(t Type, chain []Step) (*Access, error) {
	if len(chain) > 0 && !chain[0].IsIndex {
		c := append([]Step(nil), chain...)
		c[0].Arrow = true
		chain = c
	}
	return s.Resolve(&btf.Pointer{Target: t}, chain)
}

// Resolve follows chain from a value of type start (a parameter, or the
// $retval) and returns the dereference offsets.
//
//   - "->name": the current type, after peeling typedefs and qualifiers,
//     must be a pointer to a struct/union: starts a new dereference level
//     at the member's offset.
//   - ".name": the current type must be a struct/union in memory (reached
//     through "->"): adds the member's offset to the current level.
//   - "[N]": on an array adds N*elemsize; on a pointer dereferences it.
//
// Members of anonymous structs/unions are found through them (offsets
// summed). Errors name the member and the type searched and wrap
// ErrNotFound, ErrNotPointer, ErrNotStruct or ErrUnsupported.
func (s *Spec) Resolve(start Type, chain []Step) (acc *Access, err error) {
	defer func() {
		if p := recover(); p != nil {
			acc, err = nil, fmt.Errorf("corrupt BTF while resolving: %v", p)
		}
	}()
	a := &Access{Final: start}
	var offBits int64 // bit offset within the current (last) level
	cur := start
	for i, st := range chain {
		if a.BitSize > 0 {
			return nil, fmt.Errorf("%s: bitfield %s has no members: %w", st, chain[i-1].Name, ErrNotStruct)
		}
		u := btf.UnderlyingType(cur)
		if st.IsIndex {
			switch v := u.(type) {
			case *btf.Array:
				if len(a.Derefs) == 0 {
					return nil, fmt.Errorf("%s: array %s is not in memory: %w", st, TypeString(cur, 0), ErrUnsupported)
				}
				es, err := btf.Sizeof(v.Type)
				if err != nil {
					return nil, fmt.Errorf("%s: element size of %s: %v: %w", st, TypeString(cur, 0), err, ErrUnsupported)
				}
				offBits += st.Index * int64(es) * 8
				cur = v.Type
			case *btf.Pointer:
				es, err := pointeeSize(v)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", st, err)
				}
				a.Derefs = append(a.Derefs, 0)
				offBits = st.Index * int64(es) * 8
				cur = v.Target
			default:
				return nil, fmt.Errorf("%s: %s is neither an array nor a pointer: %w", st, TypeString(cur, 0), ErrNotPointer)
			}
			a.Derefs[len(a.Derefs)-1] = offBits / 8
			continue
		}

		var comp Type
		if st.Arrow {
			ptr, ok := u.(*btf.Pointer)
			if !ok {
				if isComposite(u) {
					return nil, fmt.Errorf("Semantic error: %s must be referred by '.' (%s is not a pointer): %w", st.Name, TypeString(cur, 0), ErrNotPointer)
				}
				return nil, fmt.Errorf("%s: %s is not a pointer: %w", st, TypeString(cur, 0), ErrNotPointer)
			}
			comp = btf.UnderlyingType(ptr.Target)
			if !isComposite(comp) {
				if fwd, ok := comp.(*btf.Fwd); ok {
					return nil, fmt.Errorf("%s: %s %s is only declared in BTF: %w", st, fwd.Kind, fwd.Name, ErrNotFound)
				}
				return nil, fmt.Errorf("%s: %s is not a pointer to a struct or union: %w", st, TypeString(cur, 0), ErrNotStruct)
			}
		} else {
			if _, ok := u.(*btf.Pointer); ok {
				return nil, fmt.Errorf("Semantic error: %s must be referred by '->' (%s is a pointer): %w", st.Name, TypeString(cur, 0), ErrNotStruct)
			}
			if !isComposite(u) {
				return nil, fmt.Errorf("%s: %s is not a struct or union: %w", st, TypeString(cur, 0), ErrNotStruct)
			}
			if len(a.Derefs) == 0 {
				return nil, fmt.Errorf("%s: %s is passed by value, not in memory: %w", st, TypeString(cur, 0), ErrUnsupported)
			}
			comp = u
		}
		m, mbits, ok := findMember(comp, st.Name, 0)
		if !ok {
			return nil, fmt.Errorf("member %s not found in %s: %w", st.Name, TypeString(comp, 0), ErrNotFound)
		}
		if st.Arrow {
			a.Derefs = append(a.Derefs, 0)
			offBits = 0
		}
		offBits += mbits
		cur = m.Type
		if m.BitfieldSize > 0 {
			w := int64(m.BitfieldSize)
			cs, err := btf.Sizeof(m.Type)
			if err != nil || cs <= 0 {
				return nil, fmt.Errorf("%s: bitfield container size: %v: %w", st, err, ErrUnsupported)
			}
			c := int64(cs) * 8
			start := offBits / c * c
			if offBits-start+w > c {
				// Straddles an aligned unit (packed struct): use the byte
				// holding the first bit instead.
				start = offBits / 8 * 8
				if offBits-start+w > c {
					return nil, fmt.Errorf("%s: bitfield of %d bits at bit %d does not fit a %d-bit unit: %w", st, w, offBits, c, ErrUnsupported)
				}
			}
			a.BitSize, a.BitOffset, a.ContainerBits = int(w), int(offBits-start), int(c)
			a.Derefs[len(a.Derefs)-1] = start / 8
			continue
		}
		if offBits%8 != 0 {
			return nil, fmt.Errorf("%s: member at bit offset %d is not byte aligned: %w", st, offBits, ErrUnsupported)
		}
		a.Derefs[len(a.Derefs)-1] = offBits / 8
	}
	a.Final = cur
	return a, nil
}

func pointeeSize(p *btf.Pointer) (int, error) {
	t := btf.UnderlyingType(p.Target)
	if _, ok := t.(*btf.Void); ok {
		return 0, fmt.Errorf("cannot index a void pointer: %w", ErrUnsupported)
	}
	n, err := btf.Sizeof(t)
	if err != nil {
		return 0, fmt.Errorf("size of %s: %v: %w", TypeString(p.Target, 0), err, ErrUnsupported)
	}
	return n, nil
}

func isComposite(t Type) bool {
	switch t.(type) {
	case *btf.Struct, *btf.Union:
		return true
	}
	return false
}

func members(t Type) []btf.Member {
	switch v := t.(type) {
	case *btf.Struct:
		return v.Members
	case *btf.Union:
		return v.Members
	}
	return nil
}

// findMember looks name up in the struct/union t, recursing into anonymous
// struct/union members. It returns the member and its bit offset from the
// start of t.
func findMember(t Type, name string, depth int) (btf.Member, int64, bool) {
	if depth > 32 {
		return btf.Member{}, 0, false
	}
	ms := members(t)
	for _, m := range ms {
		if m.Name == name {
			return m, int64(m.Offset), true
		}
	}
	for _, m := range ms {
		if m.Name != "" {
			continue
		}
		sub := btf.UnderlyingType(m.Type)
		if !isComposite(sub) {
			continue
		}
		if fm, off, ok := findMember(sub, name, depth+1); ok {
			return fm, int64(m.Offset) + off, true
		}
	}
	return btf.Member{}, 0, false
}

// Member returns the member name of struct/union t (typedefs and qualifiers
// peeled), searching anonymous members, with its bit offset from the start
// of t.
func Member(t Type, name string) (btf.Member, int64, error) {
	u := btf.UnderlyingType(t)
	if !isComposite(u) {
		return btf.Member{}, 0, fmt.Errorf("%s is not a struct or union: %w", TypeString(t, 0), ErrNotStruct)
	}
	m, off, ok := findMember(u, name, 0)
	if !ok {
		return btf.Member{}, 0, fmt.Errorf("member %s not found in %s: %w", name, TypeString(u, 0), ErrNotFound)
	}
	return m, off, nil
}

// maxFetchBits is the widest kprobe fetch type (perf's MAX_BASIC_TYPE_BITS).
const maxFetchBits = 64

// FetchType returns the kprobe fetch type perf gives a variable of type t
// (convert_variable_type), so that BTF and DWARF give the same definition:
// signed integers sN, everything else with a size (unsigned integers, bool,
// enums, pointers, structs, unions, floats) xN when hex is true (the
// kernel's tracing README lists the x types) and uN otherwise. cast is the
// argument's ":u", ":s" or ":x" ("" for none), which picks the prefix
// instead; ":x" without hex gives u. bits is the size of t in bits; a type
// wider than 64 bits is typed as its first 64 (u64, s64, x64) and the caller
// decides whether to refuse it. A type without a size (void, a function,
// an array) gives "" and 0: the caller leaves the type out.
func FetchType(t Type, hex bool, cast string) (typ string, bits int) {
	signed := false
	var size uint32
	switch x := btf.UnderlyingType(t).(type) {
	case *btf.Int:
		signed, size = x.Encoding&btf.Signed != 0, x.Size
	case *btf.Enum:
		size = x.Size
	case *btf.Pointer:
		size = 8
	case *btf.Struct, *btf.Union, *btf.Float:
		s, err := btf.Sizeof(x)
		if err != nil {
			return "", 0
		}
		size = uint32(s)
	default:
		return "", 0
	}
	prefix := byte('u')
	switch {
	case cast == "u":
	case cast == "s":
		prefix = 's'
	case cast == "x" && hex:
		prefix = 'x'
	case signed:
		prefix = 's'
	case hex:
		prefix = 'x'
	}
	bits = int(size) * 8
	if bits == 0 {
		return "", 0
	}
	return fmt.Sprintf("%c%d", prefix, min(bits, maxFetchBits)), bits
}

// KprobeType returns the kprobe type suffix for a value of type t the way
// the kernel derives it from BTF (fetch_type_from_btf_type), which differs
// from FetchType (perf's way) in two respects: enums are s32 (8-byte enums
// s64), and only integers of 8 to 64 bits and pointers have a type. So:
// signed integers s8..s64, unsigned integers and bool u8..u64 (x8..x64
// when hex is true), pointers u64/x64. char arrays and char * are not
// turned into "string": callers add ":string" explicitly. Types with no
// kernel type (struct, union, array, float, void, __int128 and other odd
// sizes) give "" and a nil error: the caller leaves the type out.
func KprobeType(t Type, hex bool) (string, error) {
	if t == nil {
		return "", fmt.Errorf("nil type: %w", ErrUnsupported)
	}
	switch v := btf.UnderlyingType(t).(type) {
	case *btf.Enum:
		// The kernel takes an enum for an int.
		if v.Size == 8 {
			return "s64", nil
		}
		return "s32", nil
	case *btf.Int, *btf.Pointer:
		switch typ, bits := FetchType(t, hex, ""); bits {
		case 8, 16, 32, 64:
			return typ, nil
		}
	}
	return "", nil
}
