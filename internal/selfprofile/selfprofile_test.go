package selfprofile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRun: the status is run's, and each profile asked for is written.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu"), filepath.Join(dir, "mem")
	t.Setenv("GPROBE_CPUPROFILE", cpu)
	t.Setenv("GPROBE_MEMPROFILE", mem)
	if st := Run(func() int { _ = make([]byte, 1<<20); return 3 }); st != 3 {
		t.Fatalf("status %d, want 3", st)
	}
	for _, p := range []string{cpu, mem} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
}
