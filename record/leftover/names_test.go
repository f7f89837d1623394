package leftover

import "testing"

func TestNamedPID(t *testing.T) {
	for _, c := range []struct {
		name, prefix string
		sep          byte
		want         int
	}{
		{"gprobe-123", "gprobe-", '-', 123},
		{"gprobe-123-2", "gprobe-", '-', 123},
		{"gprobe-latency-77", "gprobe-", '-', 0},
		{"gprobe-latency-77", "gprobe-latency-", '-', 77},
		{"gprobe-latency-77-3", "gprobe-latency-", '-', 77},
		{"gprobe_latency_9_1", "gprobe_latency_", '_', 9},
		{"gprobe_latency_9x", "gprobe_latency_", '_', 0},
		{"gprobe-12-", "gprobe-", '-', 0},
		{"gprobe-", "gprobe-", '-', 0},
		{"gprobe-1-2-3", "gprobe-", '-', 0},
		{"other-12", "gprobe-", '-', 0},
	} {
		if got := namedPID(c.name, c.prefix, c.sep); got != c.want {
			t.Errorf("namedPID(%q, %q) = %d, want %d", c.name, c.prefix, got, c.want)
		}
	}
}
