package objtrace

import (
	"errors"
	"testing"
)

func TestParseAddr(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Addr
		err  string
	}{
		{"0xffff888012345678", Addr{Addr: 0xffff888012345678}, ""},
		{"ffff888012345678", Addr{Addr: 0xffff888012345678}, ""},
		{"0X10", Addr{Addr: 0x10}, ""},
		{"4242:0x55d1c2a4b2a0", Addr{Proc: 4242, Addr: 0x55d1c2a4b2a0}, ""},
		{"4242:55d1c2a4b2a0", Addr{Proc: 4242, Addr: 0x55d1c2a4b2a0}, ""},
		{"", Addr{}, `bad object address "": want ADDR or PID:ADDR, ADDR in hex`},
		{"0x", Addr{}, `bad object address "0x": want ADDR or PID:ADDR, ADDR in hex`},
		{"0x0", Addr{}, `bad object address "0x0": address 0 is no object`},
		{"zz", Addr{}, `bad object address "zz": want ADDR or PID:ADDR, ADDR in hex`},
		{"0x1ffffffffffffffff", Addr{}, `bad object address "0x1ffffffffffffffff": want ADDR or PID:ADDR, ADDR in hex`},
		{":0x10", Addr{}, `bad object address ":0x10": PID "" is not a process id`},
		{"0:0x10", Addr{}, `bad object address "0:0x10": PID "0" is not a process id`},
		{"-1:0x10", Addr{}, `bad object address "-1:0x10": PID "-1" is not a process id`},
		{"1:2:3", Addr{}, `bad object address "1:2:3": want ADDR or PID:ADDR, ADDR in hex`},
		{"12:", Addr{}, `bad object address "12:": want ADDR or PID:ADDR, ADDR in hex`},
		{"+10", Addr{}, `bad object address "+10": want ADDR or PID:ADDR, ADDR in hex`},
	} {
		got, err := ParseAddr(c.in)
		switch {
		case c.err != "" && (err == nil || err.Error() != c.err || !errors.Is(err, ErrAddr)):
			t.Errorf("ParseAddr(%q) = %v, %v; want error %q", c.in, got, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("ParseAddr(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

// FuzzParseAddr: never a panic; what it accepts prints back to itself.
func FuzzParseAddr(f *testing.F) {
	for _, s := range []string{"0xffff888012345678", "4242:0x55d1c2a4b2a0", "10", "1:2:3", ":", "0x", "9999999999:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAddr(s)
		if err != nil {
			if !errors.Is(err, ErrAddr) {
				t.Fatalf("ParseAddr(%q): %v does not wrap ErrAddr", s, err)
			}
			return
		}
		if a.Addr == 0 || a.Proc < 0 {
			t.Fatalf("ParseAddr(%q) = %+v", s, a)
		}
		b, err := ParseAddr(a.String())
		if err != nil || b != a {
			t.Fatalf("ParseAddr(%q) = %+v, printed %q reads %+v, %v", s, a, a.String(), b, err)
		}
	})
}
