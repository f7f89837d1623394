package arch

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

// renderArch prints everything Arch knows about a, one fact a line, for
// review against the kernel and perf sources named in the golden files.
func renderArch(a Arch) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name %s\n", a)
	fmt.Fprintf(&b, "machine %v\n", a.Machine())
	fmt.Fprintf(&b, "goarch %s\n", arches[a].goarch)
	for reg := 0; ; reg++ {
		name, err := KprobeRegister(a, reg)
		if err != nil {
			fmt.Fprintf(&b, "dwarf %d: %v\n", reg, err)
			break
		}
		fmt.Fprintf(&b, "dwarf %d %s\n", reg, name)
	}
	fmt.Fprintf(&b, "args %s\n", strings.Join(a.ArgRegisters(), " "))
	fmt.Fprintf(&b, "return %s\n", a.ReturnRegister())
	fmt.Fprintf(&b, "stack %s\n", a.StackPointer())
	fmt.Fprintf(&b, "fetch %s\n", strings.Join(a.FetchRegisters(), " "))
	fmt.Fprintf(&b, "go ints %s\n", strings.Join(a.GoIntRegisters(), " "))
	fmt.Fprintf(&b, "go floats %s\n", strings.Join(a.GoFloatRegisters(), " "))
	fmt.Fprintf(&b, "go g %s\n", a.GoGRegister())
	var vec []string
	for reg := 0; reg < 128; reg++ {
		if name, ok := VectorRegister(a, reg); ok {
			vec = append(vec, fmt.Sprintf("%d=%s", reg, name))
		}
	}
	fmt.Fprintf(&b, "vector %s\n", strings.Join(vec, " "))
	return b.String()
}

// TestArchGolden pins each architecture's table to testdata/arch_NAME.golden,
// whose header says where each fact comes from (go test -update rewrites
// everything after the header).
func TestArchGolden(t *testing.T) {
	for a := AMD64; int(a) < len(arches); a++ {
		path := filepath.Join("testdata", "arch_"+a.String()+".golden")
		got := renderArch(a)
		old, err := os.ReadFile(path)
		if err != nil && !*testenv.Update {
			t.Fatal(err)
		}
		header, want, _ := strings.Cut(string(old), "\n\n")
		if *testenv.Update {
			if err := os.WriteFile(path, []byte(header+"\n\n"+got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if got != want {
			t.Errorf("%v: got\n%s\nwant (%s)\n%s", a, got, path, want)
		}
		if m, err := ForMachine(a.Machine()); m != a || err != nil {
			t.Errorf("%v: ForMachine(%v) = %v, %v", a, a.Machine(), m, err)
		}
	}
}

func TestArchInvalid(t *testing.T) {
	for _, a := range []Arch{0, 3, -1} {
		if a.Machine() != elf.EM_NONE || a.ArgRegisters() != nil || a.FetchRegisters() != nil ||
			a.ReturnRegister() != "" || a.StackPointer() != "" {
			t.Errorf("%v: not empty", a)
		}
	}
}

func TestHost(t *testing.T) {
	a, err := Host()
	switch runtime.GOARCH {
	case "amd64":
		if a != AMD64 || err != nil {
			t.Errorf("Host() = %v, %v; want x86_64", a, err)
		}
	case "arm64":
		if a != ARM64 || err != nil {
			t.Errorf("Host() = %v, %v; want arm64", a, err)
		}
	default:
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("Host() = %v, %v; want ErrUnsupported", a, err)
		}
	}
}

func TestOrHost(t *testing.T) {
	host, hostErr := Host()
	if a, err := Arch(0).OrHost(); a != host || (err == nil) != (hostErr == nil) {
		t.Errorf("Arch(0).OrHost() = %v, %v; want %v, %v", a, err, host, hostErr)
	}
	if a, err := ARM64.OrHost(); a != ARM64 || err != nil {
		t.Errorf("ARM64.OrHost() = %v, %v", a, err)
	}
	if a, err := Arch(3).OrHost(); a != 0 || !errors.Is(err, ErrUnsupported) {
		t.Errorf("Arch(3).OrHost() = %v, %v", a, err)
	}
}

// TestArchSlicesAreCopies: callers may change the slices they get.
func TestArchSlicesAreCopies(t *testing.T) {
	AMD64.ArgRegisters()[0] = "x"
	AMD64.FetchRegisters()[0] = "x"
	if AMD64.ArgRegisters()[0] != "di" || AMD64.FetchRegisters()[0] != "r15" {
		t.Error("Arch tables changed through a returned slice")
	}
}

// TestPrintedRegistersAreAccepted: every register name gprobe prints for a
// DWARF register is one the kernel accepts in a fetch argument (arm64's
// "lr" once was not).
func TestPrintedRegistersAreAccepted(t *testing.T) {
	for _, a := range []Arch{AMD64, ARM64} {
		for n := 0; ; n++ {
			name, err := KprobeRegister(a, n)
			if err != nil {
				break
			}
			if !slices.Contains(a.FetchRegisters(), name) {
				t.Errorf("%v: DWARF register %d prints as %%%s, which the kernel refuses", a, n, name)
			}
		}
	}
}

func TestArch(t *testing.T) {
	if AMD64.String() != "x86_64" || ARM64.String() != "arm64" || Arch(0).String() != "Arch(0)" {
		t.Errorf("String: %v %v %v", AMD64, ARM64, Arch(0))
	}
	for m, want := range map[elf.Machine]Arch{elf.EM_X86_64: AMD64, elf.EM_AARCH64: ARM64} {
		if got, err := ForMachine(m); got != want || err != nil {
			t.Errorf("ForMachine(%v) = %v, %v", m, got, err)
		}
	}
	for _, m := range []elf.Machine{elf.EM_386, elf.EM_ARM, elf.EM_RISCV, elf.EM_NONE} {
		if _, err := ForMachine(m); !errors.Is(err, ErrUnsupported) {
			t.Errorf("ForMachine(%v) error = %v", m, err)
		}
	}
	for _, a := range []Arch{0, 3, -1} {
		if _, err := KprobeRegister(a, 0); !errors.Is(err, ErrUnsupported) {
			t.Errorf("KprobeRegister(%v) error = %v", a, err)
		}
	}
}

func TestKprobeRegister(t *testing.T) {
	x86 := []string{"ax", "dx", "cx", "bx", "si", "di", "bp", "sp",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}
	var arm []string
	for i := 0; i <= 29; i++ {
		arm = append(arm, fmt.Sprintf("x%d", i))
	}
	arm = append(arm, "lr", "sp")

	for _, tc := range []struct {
		arch Arch
		want []string
	}{{AMD64, x86}, {ARM64, arm}} {
		for reg := -2; reg < 130; reg++ {
			got, err := KprobeRegister(tc.arch, reg)
			if reg >= 0 && reg < len(tc.want) {
				if err != nil || got != tc.want[reg] {
					t.Errorf("%v: KprobeRegister(%d) = %q, %v; want %q", tc.arch, reg, got, err, tc.want[reg])
				}
				continue
			}
			var re *RegisterError
			if got != "" || !errors.Is(err, ErrUnknownRegister) || !errors.As(err, &re) || re.Reg != reg || re.Arch != tc.arch {
				t.Errorf("%v: KprobeRegister(%d) = %q, %v; want RegisterError", tc.arch, reg, got, err)
				continue
			}
			want := fmt.Sprintf("Mapping for the register number %d missing on this architecture.", reg)
			if err.Error() != want {
				t.Errorf("%v: KprobeRegister(%d) error %q, want %q", tc.arch, reg, err, want)
			}
		}
	}
}

// TestForFile reads the machine from ELF headers: the test binary is the
// host's, a hand-made big- and little-endian header names its machine,
// and anything else is refused.
func TestForFile(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	host, _ := Host()
	if a, err := ForFile(exe); err != nil || a != host {
		t.Errorf("ForFile(test binary) = %v, %v; want %v", a, err, host)
	}
	dir := t.TempDir()
	header := func(name string, data elf.Data, m elf.Machine) string {
		h := make([]byte, 64)
		copy(h, elf.ELFMAG)
		h[elf.EI_CLASS], h[elf.EI_DATA] = byte(elf.ELFCLASS64), byte(data)
		if data == elf.ELFDATA2MSB {
			binary.BigEndian.PutUint16(h[18:], uint16(m))
		} else {
			binary.LittleEndian.PutUint16(h[18:], uint16(m))
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, h, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if a, err := ForFile(header("arm64", elf.ELFDATA2LSB, elf.EM_AARCH64)); err != nil || a != ARM64 {
		t.Errorf("little-endian EM_AARCH64: %v, %v", a, err)
	}
	if a, err := ForFile(header("x86be", elf.ELFDATA2MSB, elf.EM_X86_64)); err != nil || a != AMD64 {
		t.Errorf("big-endian EM_X86_64: %v, %v", a, err)
	}
	if _, err := ForFile(header("s390", elf.ELFDATA2MSB, elf.EM_S390)); !errors.Is(err, ErrUnsupported) {
		t.Errorf("EM_S390: %v, want ErrUnsupported", err)
	}
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("\x7fEL"), 0o644)
	notELF := filepath.Join(dir, "script")
	os.WriteFile(notELF, []byte("#!/bin/sh\necho not an ELF file at all\n"), 0o644)
	for _, p := range []string{short, notELF} {
		if _, err := ForFile(p); !errors.Is(err, ErrUnsupported) {
			t.Errorf("ForFile(%s): %v, want ErrUnsupported", filepath.Base(p), err)
		}
	}
	if _, err := ForFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestIsFetchRegister: IsFetchRegister is membership in FetchRegisters.
func TestIsFetchRegister(t *testing.T) {
	for _, a := range []Arch{AMD64, ARM64, Arch(0)} {
		for _, name := range []string{"ax", "r15", "x0", "lr", "sp", "ip", "pc", "", "eax", "x31"} {
			if got, want := a.IsFetchRegister(name), slices.Contains(a.FetchRegisters(), name); got != want {
				t.Errorf("%v.IsFetchRegister(%q) = %v, want %v", a, name, got, want)
			}
		}
	}
}

// TestFiles: Files.Of is OfFile, and reads each path once: an arm64
// binary removed after the first ask keeps its answer (OfFile would now
// give the host's).
func TestFiles(t *testing.T) {
	p := filepath.Join(t.TempDir(), "arm64")
	h := make([]byte, 64)
	copy(h, elf.ELFMAG)
	h[elf.EI_CLASS], h[elf.EI_DATA] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB)
	binary.LittleEndian.PutUint16(h[18:], uint16(elf.EM_AARCH64))
	if err := os.WriteFile(p, h, 0o644); err != nil {
		t.Fatal(err)
	}
	fs := Files{}
	if got := fs.Of(p); got != ARM64 || OfFile(p) != ARM64 {
		t.Fatalf("Of = %v, OfFile = %v, want arm64", got, OfFile(p))
	}
	os.Remove(p)
	if got := fs.Of(p); got != ARM64 {
		t.Errorf("Of after the file went = %v, want the remembered arm64", got)
	}
}
