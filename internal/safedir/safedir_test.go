package safedir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := mk("ok", 0o755)
	everyone := mk("everyone", 0o777)
	sticky := mk("sticky", os.ModeSticky|0o777)
	inSticky := mk("sticky/mine", 0o700)
	underEveryone := mk("everyone/mine", 0o700)
	groupMine := mk("groupmine", 0o770) // the effective group's: allowed
	link := filepath.Join(base, "link")
	os.Symlink(ok, link)
	for _, c := range []struct {
		dir, unsafe string
	}{
		{ok, ""},
		{everyone, everyone + ": another user could change it: writable by everyone"},
		{sticky, sticky + ": another user could change it: writable by everyone"}, // sticky does not make the cache itself safe
		{inSticky, ""},
		{underEveryone, "above it is writable by everyone"},
		{groupMine, ""},
		{link, ""},
	} {
		err := Check(c.dir)
		if c.unsafe == "" && err != nil || c.unsafe != "" && (!errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), c.unsafe)) {
			t.Errorf("Check(%s) = %v, want %q", c.dir, err, c.unsafe)
		}
	}
	if err := CheckEntry(link); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("CheckEntry(link) = %v", err)
	}
	if err := CheckEntry(ok); err != nil {
		t.Errorf("CheckEntry(ok) = %v", err)
	}
	if err := Check(filepath.Join(base, "missing")); err == nil || errors.Is(err, ErrUnsafe) {
		t.Errorf("missing directory: %v", err)
	}
}

func TestTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	live, err := CreateTemp(dir, ".tmp-")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	dead, _ := CreateTemp(dir, ".tmp-")
	dead.Close() // its writer is gone: the lock with it
	fresh, _ := CreateTemp(dir, ".tmp-")
	fresh.Close()
	other := filepath.Join(dir, "keep")
	os.WriteFile(other, nil, 0o600)
	old := time.Now().Add(-time.Minute)
	for _, p := range []string{live.Name(), dead.Name(), other} {
		os.Chtimes(p, old, old)
	}
	if n := RemoveStale(dir, ".tmp-"); n != 1 {
		t.Errorf("removed %d, want 1", n)
	}
	for p, want := range map[string]bool{live.Name(): true, dead.Name(): false, fresh.Name(): true, other: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", p, err == nil, want)
		}
	}
}

func TestStampAndNoFollow(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("x"), 0o600)
	f, err := OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 11, 16, 10, 17, 0, 0, time.UTC)
	if err := Stamp(f, 0o400, when); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o400 || !st.ModTime().Equal(when) {
		t.Errorf("mode %v time %v", st.Mode(), st.ModTime())
	}
	l := filepath.Join(dir, "l")
	os.Symlink(p, l)
	if _, err := Open(l); !IsLink(err) {
		t.Errorf("Open(link) = %v, want a link refused", err)
	}
}
