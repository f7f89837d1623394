// Package safedir holds gprobe's one set of rules for what files it may
// trust: whether a directory gprobe keeps files in (the debuginfod cache,
// the index cache) or reads from (perf's build-id cache), or a file it
// reads (a cache entry, a separate debug file), can be changed by anyone
// but the user gprobe runs as or root; and it opens and stamps the files
// without following links. gprobe often runs as root, and a file another
// user can write would let that user choose what root reads, prints or
// creates.
//
// A directory is safe when it is owned by the effective user and writable
// by no one else (not by others, not by a group other than the effective
// group), and every directory above it, links resolved, is owned by root
// or the effective user and writable by no one else either, unless it is
// sticky (/tmp: others may add entries there but not rename or remove
// ours). This is OpenSSH's rule for the files it trusts. A directory or
// file gprobe only reads may belong to root as well (CheckTree,
// CheckOwner), and a separate debug file to the owner of the image it
// describes.
package safedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrUnsafe is wrapped by the errors of every check.
var ErrUnsafe = errors.New("another user could change it")

// owner is who gprobe runs as (variables for the tests).
var (
	euid = os.Geteuid
	egid = os.Getegid
)

// Check reports (an error wrapping ErrUnsafe, naming the directory at
// fault) whether dir is safe to keep files in. dir must exist.
func Check(dir string) error {
	real, err := resolve(dir)
	if err != nil {
		return err
	}
	if err := checkOwn(dir, real); err != nil {
		return err
	}
	return checkAbove(dir, real)
}

// CheckTree reports (an error wrapping ErrUnsafe) whether dir, a directory
// gprobe only reads (perf's build-id cache), can be trusted: dir as
// CheckOwner requires (root may own it too), every directory above it as
// Check requires.
func CheckTree(dir string) error {
	real, err := resolve(dir)
	if err != nil {
		return err
	}
	st, err := os.Lstat(real)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: %w: not a directory", dir, ErrUnsafe)
	}
	if err := CheckOwner(dir, st); err != nil {
		return err
	}
	return checkAbove(dir, real)
}

func resolve(dir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	return filepath.Abs(real)
}

// checkAbove checks the directories above dir (found at real): owned by
// root or the effective user, writable by no one else unless sticky.
func checkAbove(dir, real string) error {
	for p := filepath.Dir(real); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		s := st.Sys().(*syscall.Stat_t)
		switch {
		case s.Uid != 0 && int(s.Uid) != euid():
			return fmt.Errorf("%s: %w: %s above it is owned by uid %d (gprobe runs as uid %d)", dir, ErrUnsafe, p, s.Uid, euid())
		case st.Mode()&os.ModeSticky == 0 && writableByOthers(st):
			return fmt.Errorf("%s: %w: %s above it is writable by %s", dir, ErrUnsafe, p, who(st))
		}
		if p == "/" || p == "." {
			return nil
		}
	}
}

// CheckOwner reports (an error wrapping ErrUnsafe, naming name) whether
// a file or directory gprobe reads (st, found at name) can be trusted: it
// belongs to root, to the effective user or to one of the users also
// names, and no one else can write it (not others; its group only when it
// is the effective group).
func CheckOwner(name string, st fs.FileInfo, also ...int) error {
	if err := OwnedBy(name, st, also...); err != nil {
		return err
	}
	if writableByOthers(st) {
		return fmt.Errorf("%s: %w: writable by %s", name, ErrUnsafe, who(st))
	}
	return nil
}

// OwnedBy is CheckOwner's owner rule alone (for a symbolic link, whose
// mode is always 0777).
func OwnedBy(name string, st fs.FileInfo, also ...int) error {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: %w: no owner", name, ErrUnsafe)
	}
	if s.Uid == 0 || int(s.Uid) == euid() || slices.Contains(also, int(s.Uid)) {
		return nil
	}
	return fmt.Errorf("%s: %w: owned by uid %d (gprobe runs as uid %d)", name, ErrUnsafe, s.Uid, euid())
}

// CheckBelow reports whether every component of path below root (a
// directory CheckTree or Check accepted) is neither a symbolic link nor
// something CheckOwner refuses: the path stays inside root and no one
// else could have changed what it leads to.
func CheckBelow(root, path string) error {
	root = filepath.Clean(root)
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return fmt.Errorf("%s: %w: outside %s", path, ErrUnsafe, root)
	}
	p := root
	for _, part := range strings.Split(rel, "/") {
		if part == "." {
			continue
		}
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s: %w: a symbolic link", p, ErrUnsafe)
		}
		if err := CheckOwner(p, st); err != nil {
			return err
		}
	}
	return nil
}

// ErrTooLarge is wrapped by ReadFile's error for a file over its bound.
var ErrTooLarge = errors.New("larger than expected")

// ReadFile reads the regular file at path, of at most max bytes, opened
// without following a link in its last component and checked, as opened,
// by CheckOwner.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		if IsLink(err) {
			return nil, fmt.Errorf("%s: %w: a symbolic link", path, ErrUnsafe)
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file", path, ErrUnsafe)
	}
	if err := CheckOwner(path, st); err != nil {
		return nil, err
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s: %w: %d bytes, more than %d", path, ErrTooLarge, st.Size(), max)
	}
	b := make([]byte, st.Size())
	n, err := f.ReadAt(b, 0)
	if err != nil && n != len(b) {
		return nil, err
	}
	return b[:n], nil
}

// CheckEntry reports whether dir, a directory inside a safe one, is safe
// itself: a directory (not a link) owned by the effective user and
// writable by no one else.
func CheckEntry(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s: %w: it is a symbolic link", dir, ErrUnsafe)
	}
	return checkOwn(dir, dir)
}

// checkOwn checks the directory itself (named name, found at real).
func checkOwn(name, real string) error {
	st, err := os.Lstat(real)
	if err != nil {
		return err
	}
	return checkInfo(name, st)
}

func checkInfo(name string, st fs.FileInfo) error {
	s := st.Sys().(*syscall.Stat_t)
	switch {
	case !st.IsDir():
		return fmt.Errorf("%s: %w: not a directory", name, ErrUnsafe)
	case int(s.Uid) != euid():
		return fmt.Errorf("%s: %w: owned by uid %d (gprobe runs as uid %d)", name, ErrUnsafe, s.Uid, euid())
	case writableByOthers(st):
		return fmt.Errorf("%s: %w: writable by %s", name, ErrUnsafe, who(st))
	}
	return nil
}

// CheckFile checks an open directory (f) as CheckEntry checks a path.
func CheckFile(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return checkInfo(f.Name(), st)
}

func writableByOthers(st fs.FileInfo) bool {
	m := st.Mode().Perm()
	return m&0o002 != 0 || m&0o020 != 0 && int(st.Sys().(*syscall.Stat_t).Gid) != egid()
}

func who(st fs.FileInfo) string {
	if st.Mode().Perm()&0o002 != 0 {
		return "everyone"
	}
	return fmt.Sprintf("group %d", st.Sys().(*syscall.Stat_t).Gid)
}

// MkdirAll creates dir with perm where missing (as os.MkdirAll) and
// Checks it.
func MkdirAll(dir string, perm fs.FileMode) error {
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	return Check(dir)
}

// Open opens a file for reading without following a link in its last
// component: a link there fails with an error satisfying IsLink.
func Open(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
}

// OpenFile is os.OpenFile with O_NOFOLLOW added.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|unix.O_NOFOLLOW, perm)
}

// IsLink reports whether err is an open refused because the file is a
// symbolic link (ELOOP under O_NOFOLLOW).
func IsLink(err error) bool { return errors.Is(err, unix.ELOOP) }

// Stamp sets an open file's mode and its access and modification times
// (mtime; the zero time leaves the times alone) through its descriptor,
// never by path, so that a name swapped meanwhile cannot redirect them.
func Stamp(f *os.File, mode fs.FileMode, mtime time.Time) error {
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if mtime.IsZero() {
		return nil
	}
	return Touch(f, mtime)
}

// Touch sets an open file's access and modification times.
func Touch(f *os.File, t time.Time) error {
	tv := unix.NsecToTimeval(t.UnixNano())
	return unix.Futimes(int(f.Fd()), []unix.Timeval{tv, tv})
}

// CreateTemp creates a new file in dir named prefix and a random
// suffix, mode 0600, and locks it (flock) for as long as it stays open,
// so that RemoveStale can tell it from the file of a writer that died.
func CreateTemp(dir, prefix string) (*os.File, error) {
	f, err := os.CreateTemp(dir, prefix+"*")
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// staleAge is how old an unlocked temporary file must be to be removed:
// it only covers the moment between CreateTemp's create and its lock.
const staleAge = 10 * time.Second

// RemoveStale removes the regular files of dir named prefix* that no
// process holds locked (CreateTemp's lock): the temporary files of
// writers killed before they could remove them. It returns how many it
// removed.
func RemoveStale(dir, prefix string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if !e.Type().IsRegular() || len(e.Name()) < len(prefix) || e.Name()[:len(prefix)] != prefix {
			continue
		}
		p := filepath.Join(dir, e.Name())
		f, err := Open(p)
		if err != nil {
			continue
		}
		st, err := f.Stat()
		if err == nil && st.Mode().IsRegular() && time.Since(st.ModTime()) > staleAge &&
			unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil && os.Remove(p) == nil {
			n++
		}
		f.Close()
	}
	return n
}
