package testenv

import "testing"

func TestMissingOption(t *testing.T) {
	config := "#\n# CONFIG_ACPI is not set\nCONFIG_KPROBES=y\nCONFIG_LOG_BUF_SHIFT=17\nCONFIG_DEBUG_INFO_NONE=y\n"
	for _, c := range []struct{ fragment, want string }{
		{"# comment\n\nCONFIG_KPROBES=y\nCONFIG_ACPI=n\n", ""},
		{"CONFIG_LOG_BUF_SHIFT=17\n", ""},
		{"CONFIG_KPROBES=y\nCONFIG_USER_EVENTS=y\n", "CONFIG_USER_EVENTS=y"},
		{"CONFIG_DEBUG_INFO_NONE=n\n", "CONFIG_DEBUG_INFO_NONE=n"},
		{"CONFIG_LOG_BUF_SHIFT=18\n", "CONFIG_LOG_BUF_SHIFT=18"},
		{"CONFIG_KPROBES=m\n", "CONFIG_KPROBES=m"},
	} {
		if got := missingOption(c.fragment, config); got != c.want {
			t.Errorf("missingOption(%q) = %q, want %q", c.fragment, got, c.want)
		}
	}
}
