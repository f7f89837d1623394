package perfcache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrUntrusted is wrapped by the errors of the checks: another user than
// the one gprobe runs as (or root) could have written what was about to
// be read.
var ErrUntrusted = errors.New("another user could have written it")

// euid is who gprobe runs as (a variable for the tests).
var euid = os.Geteuid

// owned reports (an error wrapping ErrUntrusted) whether st belongs to the
// effective user or root and no one else can write it.
func owned(name string, st fs.FileInfo) error {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: %w: no owner", name, ErrUntrusted)
	}
	switch {
	case int(s.Uid) != euid() && s.Uid != 0:
		return fmt.Errorf("%s: %w: owned by uid %d (gprobe runs as uid %d)", name, ErrUntrusted, s.Uid, euid())
	case st.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s: %w: writable by its group or others (mode %#o)", name, ErrUntrusted, st.Mode().Perm())
	}
	return nil
}

// checkRoot checks the cache directory and every directory above it: each
// belongs to the effective user or root and is writable by no one else,
// except that a directory above may be sticky (/tmp).
func (c *Cache) checkRoot() error {
	abs, err := filepath.Abs(c.Root)
	if err != nil {
		return err
	}
	st, err := os.Lstat(abs)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: %w: not a directory", c.Root, ErrUntrusted)
	}
	if err := owned(c.Root, st); err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return err
	}
	for p := filepath.Dir(real); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if st.Mode()&os.ModeSticky == 0 {
			if err := owned(p, st); err != nil {
				return fmt.Errorf("%s: %w", c.Root, err)
			}
		} else if s := st.Sys().(*syscall.Stat_t); int(s.Uid) != euid() && s.Uid != 0 {
			return fmt.Errorf("%s: %w: %s above it is owned by uid %d", c.Root, ErrUntrusted, p, s.Uid)
		}
		if p == "/" || p == "." {
			return nil
		}
	}
}

// Trusted reports (nil, or an error wrapping ErrUntrusted or naming what
// is missing) whether the cache directory can be read.
func (c *Cache) Trusted() error { return c.checkRoot() }

// checkBelow checks every component of path below the cache root (which
// checkRoot checked): directories and, last, the file itself, none a
// symbolic link, each owned as owned requires.
func (c *Cache) checkBelow(path string) error {
	root := filepath.Clean(c.Root)
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return fmt.Errorf("%s: %w: outside the cache %s", path, ErrUntrusted, c.Root)
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
			return fmt.Errorf("%s: %w: a symbolic link", p, ErrUntrusted)
		}
		if err := owned(p, st); err != nil {
			return err
		}
	}
	return nil
}

// entryDir is the directory the build-id's link points to, checked: the
// link lies in checked directories, and its target inside the cache.
func (c *Cache) entryDir(bid string) (string, error) {
	if err := c.checkRoot(); err != nil {
		return "", err
	}
	link := c.LinkName(bid)
	if err := c.checkBelow(filepath.Dir(link)); err != nil {
		return "", err
	}
	st, err := os.Lstat(link)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: %w", bid, ErrNotCached)
		}
		return "", err
	}
	if st.Mode()&fs.ModeSymlink == 0 {
		// perf's old layout: the link is the file itself.
		return "", fmt.Errorf("%s: an old-style build-id cache entry", link)
	}
	// A link's mode is always 0777: only its owner counts.
	if s := st.Sys().(*syscall.Stat_t); int(s.Uid) != euid() && s.Uid != 0 {
		return "", fmt.Errorf("%s: %w: owned by uid %d (gprobe runs as uid %d)", link, ErrUntrusted, s.Uid, euid())
	}
	target, err := os.Readlink(link)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(filepath.Dir(link), target)
	if err := c.checkBelow(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// readTrusted reads the file name in the checked directory dir without
// following a link, and checks the file as it was opened.
func readTrusted(dir, name string) ([]byte, error) {
	p := filepath.Join(dir, name)
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%s: %w: a symbolic link", p, ErrUntrusted)
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file", p, ErrUntrusted)
	}
	if err := owned(p, st); err != nil {
		return nil, err
	}
	if st.Size() > maxProbesFile {
		return nil, fmt.Errorf("%s: %d bytes, more than a probe cache holds", p, st.Size())
	}
	b := make([]byte, st.Size())
	n, err := f.ReadAt(b, 0)
	if err != nil && n != len(b) {
		return nil, err
	}
	return b[:n], nil
}

// maxProbesFile bounds a probe cache file (libjvm.so's 532 markers make
// 100 KiB).
const maxProbesFile = 64 << 20

// EntryFile is the path of the file name of build-id bid's entry ("elf":
// the binary perf copied, "debug": its debug information, as `perf
// buildid-cache --add` keeps them), once the checks pass: the cache and
// the entry's directories as for every read, and the file itself a
// regular file, not a link, owned by the user gprobe runs as or root and
// writable by no one else. A missing file wraps ErrNotCached.
func (c *Cache) EntryFile(bid, name string) (string, error) {
	dir, err := c.entryDir(bid)
	if errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrNotCached) {
		return "", fmt.Errorf("%s: %w (%v)", bid, ErrNotCached, err)
	}
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	st, err := os.Lstat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: %w", p, ErrNotCached)
		}
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s: %w: not a regular file", p, ErrUntrusted)
	}
	if err := owned(p, st); err != nil {
		return "", err
	}
	return p, nil
}
