// Package btfinfo is gprobe's BTF back end, used when a kernel has no DWARF.
//
// From BTF alone it answers:
//   - a function's parameters: names, types and the ABI argument register
//     each one lives in at function entry (Spec.Func, Spec.ParamRegs; the
//     registers come from arch.Arch);
//   - struct->field chains: the byte offset of every dereference level and,
//     for bitfields, the kprobe b<width>@<offset>/<container> numbers
//     (Spec.Resolve);
//   - the kprobe fetch type of a BTF type, perf's way (FetchType) or the
//     kernel's (KprobeType).
//
// It wraps github.com/cilium/ebpf/btf. Types are returned as btf.Type
// (aliased as Type here), so callers can type-switch on *btf.Struct etc.
package btfinfo

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// Sentinel errors. Every error returned by this package that falls in one of
// these classes wraps the sentinel (test with errors.Is).
var (
	// ErrNotFound: a function, type or member does not exist (or is ambiguous).
	ErrNotFound = errors.New("not found in BTF")
	// ErrNoBTF: the file holds no BTF (ELF without .BTF, or not BTF at all).
	ErrNoBTF = errors.New("no BTF")
	// ErrNotPointer: "->" (or [N] on a non-array) used on a non-pointer.
	ErrNotPointer = errors.New("not a pointer")
	// ErrNotStruct: a member access on something that is not a struct/union,
	// or "." used on a pointer.
	ErrNotStruct = errors.New("not a struct or union")
	// ErrUnsupported: valid BTF, but not something gprobe can express
	// (unknown arch, struct passed by value accessed with ".", void * deref...).
	ErrUnsupported = errors.New("unsupported")
)

// Type is a BTF type as decoded by cilium/ebpf.
type Type = btf.Type

// Spec is a loaded BTF blob (vmlinux, fixture, or module split BTF).
type Spec struct {
	spec *btf.Spec
	// Base is the vmlinux spec for a module's split BTF (nil otherwise).
	Base *Spec
}

// BTF returns the underlying cilium/ebpf spec.
func (s *Spec) BTF() *btf.Spec { return s.spec }

// btfMagic is the BTF header magic (0xeB9F) in either byte order.
func isBTFMagic(b []byte) bool {
	if len(b) < 2 {
		return false
	}
	return binary.LittleEndian.Uint16(b) == 0xeB9F || binary.BigEndian.Uint16(b) == 0xeB9F
}

// IsRawBTF reports whether path is a raw BTF blob (such as a copy of
// /sys/kernel/btf/vmlinux) rather than an ELF file or anything else.
func IsRawBTF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [2]byte
	n, _ := io.ReadFull(f, magic[:])
	return isBTFMagic(magic[:n])
}

// Load reads BTF from path: an ELF file with a .BTF section (a vmlinux or a
// gprobe fixture) or a raw BTF blob (such as a copy of /sys/kernel/btf/vmlinux).
// It returns an error wrapping ErrNoBTF if the file has no BTF.
func Load(path string) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return LoadReader(f, path)
}

// LoadReader is Load on an io.ReaderAt; name is used in error messages.
func LoadReader(r io.ReaderAt, name string) (s *Spec, err error) {
	defer func() {
		if p := recover(); p != nil {
			s, err = nil, fmt.Errorf("%s: corrupt BTF (decoder panic: %v)", name, p)
		}
	}()
	var magic [4]byte
	n, _ := r.ReadAt(magic[:], 0)
	isELF := n == 4 && string(magic[:]) == elf.ELFMAG
	if !isELF && !isBTFMagic(magic[:n]) {
		return nil, fmt.Errorf("%s: neither ELF nor raw BTF: %w", name, ErrNoBTF)
	}
	spec, err := btf.LoadSpecFromReader(r)
	if err != nil {
		if errors.Is(err, btf.ErrNotFound) {
			return nil, fmt.Errorf("%s: %w (no .BTF section)", name, ErrNoBTF)
		}
		return nil, fmt.Errorf("%s: load BTF: %w", name, err)
	}
	return &Spec{spec: spec}, nil
}

// KernelBTFPath is where the running kernel exposes its BTF.
const KernelBTFPath = "/sys/kernel/btf/vmlinux"

// LoadKernel loads the running kernel's BTF from /sys/kernel/btf/vmlinux.
func LoadKernel() (*Spec, error) {
	if _, err := os.Stat(KernelBTFPath); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", KernelBTFPath, ErrNoBTF, err)
	}
	return Load(KernelBTFPath)
}

// LoadSplit loads a kernel module's split BTF (raw, e.g. /sys/kernel/btf/ext4,
// or the .BTF section of a .ko) on top of base (the vmlinux spec).
func LoadSplit(path string, base *Spec) (s *Spec, err error) {
	if base == nil {
		return nil, fmt.Errorf("%s: split BTF needs a base vmlinux spec: %w", path, ErrNoBTF)
	}
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	var magic [4]byte
	n, _ := fd.ReadAt(magic[:], 0)
	var data []byte
	if n == 4 && string(magic[:]) == elf.ELFMAG {
		// Read only the .BTF section: a debug .ko is tens of megabytes.
		ef, err := elf.NewFile(fd)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		sec := ef.Section(".BTF")
		if sec == nil {
			return nil, fmt.Errorf("%s: %w (no .BTF section)", path, ErrNoBTF)
		}
		if data, err = sec.Data(); err != nil {
			return nil, fmt.Errorf("%s: .BTF: %w", path, err)
		}
	} else if data, err = io.ReadAll(fd); err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			s, err = nil, fmt.Errorf("%s: corrupt BTF (decoder panic: %v)", path, p)
		}
	}()
	spec, err := btf.LoadSplitSpecFromReader(bytes.NewReader(data), base.spec)
	if err != nil {
		return nil, fmt.Errorf("%s: load split BTF: %w", path, err)
	}
	return &Spec{spec: spec, Base: base}, nil
}

// typesByName returns the types called name, in this spec and (for split
// specs) its base. Panics in lazy decoding become errors.
func (s *Spec) typesByName(name string) (ts []Type, err error) {
	defer func() {
		if p := recover(); p != nil {
			ts, err = nil, fmt.Errorf("corrupt BTF while looking up %q: %v", name, p)
		}
	}()
	ts, err = s.spec.AnyTypesByName(name)
	if err != nil && !errors.Is(err, btf.ErrNotFound) {
		return nil, err
	}
	if s.Base != nil {
		bt, err := s.Base.typesByName(name)
		if err != nil {
			return nil, err
		}
		// A split spec may already return base types; dedupe by identity.
		seen := make(map[Type]bool, len(ts))
		for _, t := range ts {
			seen[t] = true
		}
		for _, t := range bt {
			if !seen[t] {
				ts = append(ts, t)
			}
		}
	}
	return ts, nil
}

// StructByName returns the struct or union called name. When BTF holds
// several with that name (the kernel has two "struct console"), the first one
// is returned if they all have the same layout, else an ErrNotFound error
// listing the ambiguity.
func (s *Spec) StructByName(name string) (Type, error) {
	ts, err := s.typesByName(name)
	if err != nil {
		return nil, err
	}
	var cands []Type
	for _, t := range ts {
		switch t.(type) {
		case *btf.Struct, *btf.Union:
			cands = append(cands, t)
		}
	}
	switch len(cands) {
	case 0:
		return nil, fmt.Errorf("struct/union %s: %w", name, ErrNotFound)
	case 1:
		return cands[0], nil
	}
	for _, c := range cands[1:] {
		if TypeString(c, 2) != TypeString(cands[0], 2) {
			return nil, fmt.Errorf("struct/union %s: %d different definitions in BTF: %w", name, len(cands), ErrNotFound)
		}
	}
	return cands[0], nil
}

// TypeString renders t roughly as C declares it ("struct file *",
// "const char *", "unsigned int"). depth > 0 also lists struct/union members
// (depth levels deep); it is used to compare duplicate definitions.
func TypeString(t Type, depth int) string {
	var b strings.Builder
	writeType(&b, t, depth, 0)
	return b.String()
}

// maxTypeString bounds TypeString output (corrupt BTF can nest anonymous
// types exponentially).
const maxTypeString = 1 << 16

func writeType(b *strings.Builder, t Type, depth, guard int) {
	if guard > 32 || b.Len() > maxTypeString {
		b.WriteString("...")
		return
	}
	switch v := t.(type) {
	case nil:
		b.WriteString("void")
	case *btf.Void:
		b.WriteString("void")
	case *btf.Int:
		b.WriteString(v.Name)
	case *btf.Float:
		b.WriteString(v.Name)
	case *btf.Pointer:
		writeType(b, v.Target, 0, guard+1)
		b.WriteString(" *")
	case *btf.Const:
		b.WriteString("const ")
		writeType(b, v.Type, depth, guard+1)
	case *btf.Volatile:
		b.WriteString("volatile ")
		writeType(b, v.Type, depth, guard+1)
	case *btf.Restrict:
		writeType(b, v.Type, depth, guard+1)
		b.WriteString(" restrict")
	case *btf.TypeTag:
		writeType(b, v.Type, depth, guard+1)
	case *btf.Typedef:
		b.WriteString(v.Name)
	case *btf.Array:
		writeType(b, v.Type, depth, guard+1)
		fmt.Fprintf(b, "[%d]", v.Nelems)
	case *btf.Enum:
		fmt.Fprintf(b, "enum %s", v.Name)
	case *btf.Fwd:
		fmt.Fprintf(b, "%s %s", v.Kind, v.Name)
	case *btf.Struct:
		writeComposite(b, "struct", v.Name, v.Size, v.Members, depth, guard)
	case *btf.Union:
		writeComposite(b, "union", v.Name, v.Size, v.Members, depth, guard)
	case *btf.FuncProto:
		writeType(b, v.Return, 0, guard+1)
		b.WriteString(" (")
		for i, p := range v.Params {
			if i > 0 {
				b.WriteString(", ")
			}
			if _, ok := p.Type.(*btf.Void); ok {
				b.WriteString("...")
				continue
			}
			writeType(b, p.Type, 0, guard+1)
			if p.Name != "" {
				b.WriteString(" " + p.Name)
			}
		}
		b.WriteString(")")
	default:
		fmt.Fprintf(b, "%v", t)
	}
}

func writeComposite(b *strings.Builder, kw, name string, size uint32, ms []btf.Member, depth, guard int) {
	b.WriteString(kw)
	if name != "" {
		b.WriteString(" " + name)
	}
	// Anonymous composites are expanded a few levels further: they have no
	// name to compare.
	if depth <= 0 && (name != "" || depth <= -4) {
		return
	}
	fmt.Fprintf(b, " /*%d*/ {", size)
	for _, m := range ms {
		writeType(b, m.Type, depth-1, guard+1)
		fmt.Fprintf(b, " %s@%d", m.Name, m.Offset)
		if m.BitfieldSize > 0 {
			fmt.Fprintf(b, ":%d", m.BitfieldSize)
		}
		b.WriteString("; ")
	}
	b.WriteString("}")
}
