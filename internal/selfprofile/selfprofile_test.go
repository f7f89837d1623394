package selfprofile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRun: the status is run's, and each profile asked for is written:
// the allocation profile only in a memprofile build.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu"), filepath.Join(dir, "mem")
	t.Setenv("GPROBE_CPUPROFILE", cpu)
	t.Setenv("GPROBE_MEMPROFILE", mem)
	if st := Run(func() int { _ = make([]byte, 1<<20); return 3 }); st != 3 {
		t.Fatalf("status %d, want 3", st)
	}
	want := []string{cpu}
	if MemProfile {
		want = append(want, mem)
	} else if _, err := os.Stat(mem); err == nil {
		t.Errorf("%s written by a build without the memprofile tag", mem)
	}
	for _, p := range want {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
}
