package safedir_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/safedir"
	"github.com/gprobe/gprobe/internal/testenv"
)

func TestCheckOtherOwners(t *testing.T) {
	uid, gid := testenv.Nobody(t)
	u := struct{ Uid, Gid string }{strconv.Itoa(uid), strconv.Itoa(gid)}
	base := t.TempDir()
	theirs := filepath.Join(base, "theirs")
	os.MkdirAll(filepath.Join(theirs, "mine"), 0o700)
	os.Chown(theirs, uid, gid)
	group := filepath.Join(base, "group")
	os.Mkdir(group, 0o770)
	os.Chmod(group, 0o770)
	os.Chown(group, 0, gid)
	for dir, want := range map[string]string{
		theirs:                        "owned by uid " + u.Uid + " (gprobe runs as uid 0)",
		filepath.Join(theirs, "mine"): theirs + " above it is owned by uid " + u.Uid,
		group:                         "writable by group " + u.Gid,
	} {
		if err := safedir.Check(dir); !errors.Is(err, safedir.ErrUnsafe) || !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%s) = %v, want %q", dir, err, want)
		}
	}
}

// TestReadRules: what gprobe only reads (perf's build-id cache, a debug
// file) may be root's, the effective user's or a named owner's, and
// another user's file, a file another group can write, a link on the way
// or a file over its bound is refused.
func TestReadRules(t *testing.T) {
	uid, gid := testenv.Nobody(t)
	base := t.TempDir()
	mine := filepath.Join(base, "cache")
	os.MkdirAll(filepath.Join(mine, "entry"), 0o755)
	file := filepath.Join(mine, "entry", "probes")
	os.WriteFile(file, []byte("probes"), 0o644)
	if err := safedir.CheckTree(mine); err != nil {
		t.Errorf("CheckTree(root's cache): %v", err)
	}
	if err := safedir.CheckBelow(mine, file); err != nil {
		t.Errorf("CheckBelow: %v", err)
	}
	if b, err := safedir.ReadFile(file, 100); err != nil || string(b) != "probes" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	if _, err := safedir.ReadFile(file, 3); !errors.Is(err, safedir.ErrTooLarge) {
		t.Errorf("ReadFile over its bound: %v", err)
	}
	unsafe := func(what string, err error, want string) {
		t.Helper()
		if !errors.Is(err, safedir.ErrUnsafe) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", what, err, want)
		}
	}
	// A link inside the cache, even to a good file.
	link := filepath.Join(mine, "link")
	os.Symlink("entry", link)
	unsafe("CheckBelow through a link", safedir.CheckBelow(mine, filepath.Join(link, "probes")), "a symbolic link")
	unsafe("CheckBelow outside", safedir.CheckBelow(mine, base), "outside")
	os.Symlink(file, filepath.Join(mine, "entry", "l"))
	unsafe("ReadFile of a link", func() error { _, err := safedir.ReadFile(filepath.Join(mine, "entry", "l"), 100); return err }(), "a symbolic link")

	os.Chown(file, uid, gid)
	st, _ := os.Lstat(file)
	unsafe("another user's file", safedir.CheckOwner(file, st), "owned by uid "+strconv.Itoa(uid))
	if err := safedir.CheckOwner(file, st, uid); err != nil {
		t.Errorf("a file of the owner named: %v", err)
	}
	unsafe("ReadFile of another user's file", func() error { _, err := safedir.ReadFile(file, 100); return err }(), "owned by uid")
	unsafe("CheckBelow to another user's file", safedir.CheckBelow(mine, file), "owned by uid")
	os.Chown(file, 0, gid)
	os.Chmod(file, 0o664)
	st, _ = os.Lstat(file)
	unsafe("a file another group can write", safedir.CheckOwner(file, st), "writable by group "+strconv.Itoa(gid))
	os.Chown(file, 0, 0)
	st, _ = os.Lstat(file)
	if err := safedir.CheckOwner(file, st); err != nil {
		t.Errorf("a file gprobe's own group can write: %v", err)
	}
	os.Chown(mine, uid, gid)
	unsafe("CheckTree(another user's cache)", safedir.CheckTree(mine), "owned by uid")
	os.Chown(mine, 0, 0)
	os.Chmod(base, 0o777)
	unsafe("CheckTree under a directory everyone can write", safedir.CheckTree(mine), "above it is writable by everyone")
	os.Chmod(base, 0o777|os.ModeSticky)
	if err := safedir.CheckTree(mine); err != nil {
		t.Errorf("CheckTree under a sticky directory: %v", err)
	}
	os.Chmod(base, 0o755)
}
