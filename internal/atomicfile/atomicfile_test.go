package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	for _, s := range []string{"first", "second, longer"} {
		if err := Write(p, []byte(s)); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != s {
			t.Fatalf("read %q, %v; want %q", b, err, s)
		}
	}
	// A directory in the way: the write fails and leaves no temporary file.
	if err := Write(filepath.Join(dir, "d", "x"), nil); err == nil {
		t.Error("write into a missing directory succeeded")
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(dir, "sub"), []byte("x")); err == nil {
		t.Error("rename over a directory succeeded")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("left behind: %v", ents)
	}
}
