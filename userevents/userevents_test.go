package userevents

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/gprobe/gprobe/emit/probedef"
)

// TestLayout: the structs the ioctls take are the kernel's packed
// struct user_reg and struct user_unreg.
func TestLayout(t *testing.T) {
	var r userReg
	if unsafe.Offsetof(r.enableAddr) != 8 || unsafe.Offsetof(r.nameArgs) != 16 || unsafe.Offsetof(r.writeIndex) != 24 || unsafe.Offsetof(r.flags) != 6 {
		t.Errorf("struct user_reg layout: %d %d %d", unsafe.Offsetof(r.enableAddr), unsafe.Offsetof(r.nameArgs), unsafe.Offsetof(r.writeIndex))
	}
	var u userUnreg
	if unsafe.Sizeof(u) != 16 || unsafe.Offsetof(u.disableAddr) != 8 {
		t.Errorf("struct user_unreg layout")
	}
	if iocReg != 0xc0082a00 || iocUnreg != 0x40082a02 {
		t.Errorf("ioctl numbers %#x %#x", iocReg, iocUnreg)
	}
}

// TestRegisterRefuses: a definition the kernel would refuse never reaches
// it.
func TestRegisterRefuses(t *testing.T) {
	for _, def := range []string{"bad name u32 x", "ev long x", "ev u32 a; u32 a", "ev:flag u32 a"} {
		if _, err := Register(def, 0); !errors.Is(err, probedef.ErrSyntax) {
			t.Errorf("%q: %v", def, err)
		}
	}
}

func TestEncoding(t *testing.T) {
	if b := Chars("hello", 4); string(b) != "hel\x00" {
		t.Errorf("Chars: %q", b)
	}
	if len(U32(1)) != 4 || len(U64(1)) != 8 || len(U16(1)) != 2 {
		t.Error("sizes")
	}
}
