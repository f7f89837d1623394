package clikit

import "testing"

func TestSwitches(t *testing.T) {
	s := Switches{
		Value:     map[string]bool{"k": true, "vmlinux": true, "D": true, "definition": true, "L": true},
		Exclusive: map[string]string{"D": "D", "definition": "D", "L": "L", "l": "l"},
		Short:     map[string]string{"vmlinux": "k"},
		Command:   func(s string) bool { return s == "add" },
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gprobe", "-D", "x", "-L", "y"}, "switch `L' cannot be used with switch `D'"},
		{[]string{"gprobe", "--definition=x", "-l"}, "switch `l' cannot be used with switch `D'"},
		{[]string{"gprobe", "-Dx", "-D", "y"}, ""},
		{[]string{"gprobe", "-k"}, "switch `k' requires a value"},
		{[]string{"gprobe", "--vmlinux"}, "switch `k' requires a value"},
		{[]string{"gprobe", "-kvmlinux", "-D", "x"}, ""},
		{[]string{"gprobe", "-lk"}, "switch `k' requires a value"},
		{[]string{"gprobe", "add", "-D", "x", "-L", "y"}, ""},
		{[]string{"gprobe", "--", "-D", "x", "-L", "y"}, "switch `L' cannot be used with switch `D'"},
	} {
		if got := s.Check(c.args); got != c.want {
			t.Errorf("Check(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}
