package sdt

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

// note builds one .note.stapsdt note, as <sys/sdt.h> assembles it.
func note(order binary.ByteOrder, class elf.Class, pc, base, sem uint64, strs ...string) []byte {
	var desc bytes.Buffer
	for _, a := range []uint64{pc, base, sem} {
		if class == elf.ELFCLASS32 {
			binary.Write(&desc, order, uint32(a))
		} else {
			binary.Write(&desc, order, a)
		}
	}
	for _, s := range strs {
		desc.WriteString(s + "\x00")
	}
	var b bytes.Buffer
	binary.Write(&b, order, uint32(8))
	binary.Write(&b, order, uint32(desc.Len()))
	binary.Write(&b, order, uint32(noteType))
	b.WriteString("stapsdt\x00")
	b.Write(desc.Bytes())
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
	return b.Bytes()
}

func TestParseSection(t *testing.T) {
	le := binary.LittleEndian
	data := append(note(le, elf.ELFCLASS64, 0x4f20a1, 0x8cc5a0, 0xa84260, "python", "function__entry", "8@%rbp 8@%r12 -4@%eax"),
		note(le, elf.ELFCLASS64, 0x1000, 0x2000, 0, "p", "noargs", "")...)
	data = append(data, note(le, elf.ELFCLASS64, 0x1004, 0x2000, 0, "p", "colon", ":junk")...)
	notes, err := parseSection(data, elf.ELFCLASS64, le, 4)
	if err != nil || len(notes) != 3 {
		t.Fatalf("%+v %v", notes, err)
	}
	n := notes[0]
	if n.Provider != "python" || n.Name != "function__entry" || n.Args != "8@%rbp 8@%r12 -4@%eax" ||
		n.PC != 0x4f20a1 || n.Base != 0x8cc5a0 || n.Semaphore != 0xa84260 {
		t.Errorf("%+v", n)
	}
	if notes[1].Args != "" || notes[2].Args != "" {
		t.Errorf("no arguments: %q %q", notes[1].Args, notes[2].Args)
	}
	// 32-bit, big-endian.
	be := binary.BigEndian
	notes, err = parseSection(note(be, elf.ELFCLASS32, 0x10, 0x20, 0x30, "a", "b", "4@%eax"), elf.ELFCLASS32, be, 4)
	if err != nil || len(notes) != 1 || notes[0].PC != 0x10 || notes[0].Semaphore != 0x30 || notes[0].Args != "4@%eax" {
		t.Errorf("32-bit: %+v %v", notes, err)
	}
	// A note of another type ends the list; other owners are skipped.
	other := note(le, elf.ELFCLASS64, 1, 2, 3, "x", "y", "")
	other[8] = 4
	gnu := note(le, elf.ELFCLASS64, 1, 2, 3, "x", "y", "")
	copy(gnu[12:], "stapsdX")
	notes, err = parseSection(append(append(gnu, data[:len(data)/3]...), other...), elf.ELFCLASS64, le, 4)
	if err != nil || len(notes) != 1 {
		t.Errorf("owners and types: %+v %v", notes, err)
	}
	// A descriptor too short for its addresses, or a provider without its
	// terminator, is malformed.
	short := note(le, elf.ELFCLASS64, 1, 2, 3)
	if _, err := parseSection(short, elf.ELFCLASS64, le, 4); !errors.Is(err, ErrMalformed) {
		t.Errorf("short note: %v", err)
	}
	bad := note(le, elf.ELFCLASS64, 1, 2, 3, "")
	bad = bytes.TrimRight(bad, "\x00")
	for len(bad)%4 != 0 {
		bad = append(bad, 'x')
	}
	binaryPatchDesc(bad, le)
	if _, err := parseSection(bad, elf.ELFCLASS64, le, 4); !errors.Is(err, ErrMalformed) {
		t.Errorf("unterminated provider: %v", err)
	}
}

// binaryPatchDesc sets a single note's descriptor size to the rest of it.
func binaryPatchDesc(b []byte, order binary.ByteOrder) {
	order.PutUint32(b[4:], uint32(len(b)-12-8))
}

// FuzzNotes: any note section gives notes or ErrMalformed, never a panic
// or a read outside the section.
func FuzzNotes(f *testing.F) {
	le := binary.LittleEndian
	f.Add(note(le, elf.ELFCLASS64, 0x4f20a1, 0x8cc5a0, 0xa84260, "python", "line", "8@%r14 8@%rax -4@%ebp"), false)
	f.Add(note(le, elf.ELFCLASS32, 0x10, 0x20, 0, "a", "b", ""), true)
	f.Add(note(le, elf.ELFCLASS64, 1, 2, 3), false)
	f.Fuzz(func(t *testing.T, data []byte, is32 bool) {
		class := elf.ELFCLASS64
		if is32 {
			class = elf.ELFCLASS32
		}
		for _, align := range []uint64{4, 8} {
			notes, err := parseSection(data, class, le, align)
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatal(err)
			}
			for _, n := range notes {
				if len(n.Provider)+len(n.Name)+len(n.Args) > len(data) {
					t.Fatalf("note larger than the section: %+v", n)
				}
				if _, err := Operands(elf.EM_X86_64, n.Args, Options{}); err != nil && !errors.Is(err, ErrSize) {
					t.Fatal(err)
				}
			}
		}
	})
}

// system binaries with markers (Debian's; see scripts/provision.sh).
const (
	python    = "/usr/bin/python3.11"
	libstdcxx = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
	libjvm    = "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"
)

func need(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		testenv.Missing(t, "%s (scripts/provision.sh installs it): %v", path, err)
	}
}

// TestPython: Debian's python3.11 has 8 markers, each with a semaphore;
// function__entry is the example.
func TestPython(t *testing.T) {
	need(t, python)
	f, err := Open(python)
	if err != nil {
		t.Fatal(err)
	}
	if f.Machine != elf.EM_X86_64 || len(f.Notes) != 8 {
		t.Fatalf("%v, %d markers", f.Machine, len(f.Notes))
	}
	for _, n := range f.Notes {
		if n.RefCtr == 0 || n.Provider != "python" {
			t.Errorf("%+v: want a python marker with a semaphore", n)
		}
		if n.Name != "function__entry" {
			continue
		}
		want := "p:sdt_python/function__entry /usr/bin/python3.11:0xf20a1(0x683260) arg1=%bp:u64 arg2=%r12:u64 arg3=%ax:s32"
		if got, err := n.PerfLine(python, f.Machine); err != nil || got != want {
			t.Errorf("perf's line %q %v, want %q", got, err, want)
		}
		p, dropped, err := n.Probe(python, f.Machine, Options{Immediates: true})
		if err != nil || p.String() != want || len(dropped) != 0 {
			t.Errorf("gprobe's probe %q %v %v, want %q", p.String(), dropped, err, want)
		}
	}
}

// TestNoMarkers: a binary without .note.stapsdt has none.
func TestNoMarkers(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(exe); !errors.Is(err, ErrNoNotes) {
		t.Errorf("the test binary: %v, want ErrNoNotes", err)
	}
	if _, err := Open("/nonexistent"); err == nil || errors.Is(err, ErrNoNotes) {
		t.Errorf("a missing file: %v", err)
	}
}

// TestTestProgram reads the markers of testdata/sdtprog built for x86-64
// and arm64: the twice-written marker is one event of two probes, the
// semaphore is a file offset inside .probes, and perf's and gprobe's
// offsets agree for binaries laid out by the linker.
func TestTestProgram(t *testing.T) {
	for _, b := range testPrograms(t) {
		f, err := Open(b.path)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := f.Events(b.path)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range evs {
			names = append(names, e.Name)
			if e.Name == "twice" && len(e.Notes) != 2 {
				t.Errorf("%s: twice has %d markers", b.name, len(e.Notes))
			}
		}
		if got := strings.Join(names, " "); got != "tick consts mem twice noargs global" && got != "consts mem twice noargs global tick" {
			t.Errorf("%s: events %s", b.name, got)
		}
		for _, n := range f.Notes {
			if n.Offset != n.perfOffset || n.RefCtr != n.perfRefCtr {
				t.Errorf("%s %s: offsets %#x(%#x), perf's %#x(%#x)", b.name, n.Name, n.Offset, n.RefCtr, n.perfOffset, n.perfRefCtr)
			}
			if (n.Name == "tick") != (n.RefCtr != 0) {
				t.Errorf("%s %s: semaphore %#x", b.name, n.Name, n.RefCtr)
			}
		}
	}
}

type testProgram struct{ name, path string }

// testPrograms builds testdata/sdtprog.c and sdtsem.c for x86-64 and arm64
// at -O0 and -O2 (cached: see testenv.BuildCSources).
func testPrograms(t *testing.T) []testProgram {
	t.Helper()
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/sys/sdt.h"); err != nil {
		testenv.Missing(t, "<sys/sdt.h> (Debian's systemtap-sdt-dev, scripts/provision.sh)")
	}
	srcs := []string{"testdata/sdtprog.c", "testdata/sdtsem.c"}
	var out []testProgram
	for _, o := range []string{"-O0", "-O2"} {
		out = append(out, testProgram{"x86-64 " + o, testenv.BuildCSources(t, "gcc", srcs, "sdtprog", "-g", o)})
		// The cross compiler finds the (architecture-neutral) <sys/sdt.h>
		// after its own headers.
		out = append(out, testProgram{"arm64 " + o, testenv.BuildCSources(t, "aarch64-linux-gnu-gcc", srcs, "sdtprog",
			"-g", o, "-idirafter", "/usr/include/x86_64-linux-gnu")})
	}
	return out
}
