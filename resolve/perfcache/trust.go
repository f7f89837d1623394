package perfcache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gprobe/gprobe/internal/safedir"
)

// ErrUntrusted is wrapped by the errors of the checks: another user than
// the one gprobe runs as (or root) could have written what was about to
// be read. It is internal/safedir's ErrUnsafe: the rules are that
// package's (CheckTree for the cache, CheckBelow and CheckOwner for what
// is in it, ReadFile for the probe cache files).
var ErrUntrusted = safedir.ErrUnsafe

// Trusted reports (nil, or an error wrapping ErrUntrusted or naming what
// is missing) whether the cache directory can be read: it and every
// directory above it belong to the effective user or root and no one else
// can write them, except that a directory above may be sticky (/tmp).
func (c *Cache) Trusted() error { return safedir.CheckTree(c.Root) }

// entryDir is the directory the build-id's link points to, checked: the
// link lies in checked directories, and its target inside the cache.
func (c *Cache) entryDir(bid string) (string, error) {
	if err := c.Trusted(); err != nil {
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
	if err := safedir.OwnedBy(link, st); err != nil {
		return "", err
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
	return safedir.ReadFile(filepath.Join(dir, name), maxProbesFile)
}

// maxProbesFile bounds a probe cache file (libjvm.so's 532 markers make
// 100 KiB).
const maxProbesFile = 64 << 20

// EntryFile is the path of the file name of build-id bid's entry ("elf":
// the binary perf copied, "debug": its debug information, as `perf
// buildid-cache --add` keeps them), once the checks pass: the cache and
// the entry's directories as for every read, and the file itself a
// regular file, not a link, that safedir.CheckOwner accepts. A missing
// file wraps ErrNotCached.
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
	if err := safedir.CheckOwner(p, st); err != nil {
		return "", err
	}
	return p, nil
}

// checkBelow checks every component of path below the cache root (which
// Trusted checked), as safedir.CheckBelow does.
func (c *Cache) checkBelow(path string) error { return safedir.CheckBelow(c.Root, path) }
