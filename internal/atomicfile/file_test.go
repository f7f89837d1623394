package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCreate: the file appears at its path, whole and with its mode, only
// on Commit; Abort, or a Commit that fails, leaves nothing; errors name
// the path asked for.
func TestCreate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	os.WriteFile(p, []byte("old"), 0o600)
	f, err := Create(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new "))
	f.Write([]byte("content"))
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("before Commit the path holds %q", b)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if b, _ := os.ReadFile(p); err != nil || string(b) != "new content" || st.Mode().Perm() != 0o644 {
		t.Errorf("after Commit: %q, %v", b, st.Mode())
	}
	f.Abort() // after Commit: nothing
	if err := f.Commit(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("second Commit: %v", err)
	}

	g, err := Create(filepath.Join(dir, "aborted"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	g.Write([]byte("x"))
	g.Abort()
	// A directory in the way: Commit fails and removes the temporary file.
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "x"), nil, 0o644)
	h, err := Create(filepath.Join(dir, "sub"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Commit(); err == nil {
		t.Error("rename over a directory succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("left behind: %v", ents)
	}

	_, err = Create(filepath.Join(dir, "no", "out"), 0o644)
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "create "+filepath.Join(dir, "no", "out")+": ") {
		t.Errorf("in a missing directory: %v", err)
	}
}

// TestFileByName: a tool that writes the temporary file by its name (as
// objcopy writes its output) has what it wrote put in place by Commit.
func TestFileByName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	f, err := Create(path, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.Name(), []byte("written by name"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("in place before Commit")
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "written by name" {
		t.Errorf("read %q, %v", b, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, %v", st.Mode(), err)
	}
}
