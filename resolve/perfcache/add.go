package perfcache

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// debugRoot is where distributions install separate debug files by
// build-id (a variable for the tests).
var debugRoot = "/usr/lib/debug/.build-id"

// Add puts the binary at path into the cache as perf's build_id_cache__add
// does, and returns its build-id and real path (absolute, links resolved,
// as perf names it): the directory ROOT/REALPATH/BUILDID with the binary
// as "elf" (a hard link, or a copy across file systems), its separate
// debug file from /usr/lib/debug/.build-id as "debug" when there is one,
// and the link ROOT/.build-id/XX/REST to that directory. What is already
// there is kept. The cache directory is created (0755) when missing; one
// that fails the checks is not written to.
func (c *Cache) Add(path string) (bid, real string, err error) {
	real, err = RealPath(path)
	if err != nil {
		return "", "", err
	}
	bid, err = FileBuildID(real)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(c.Root, 0o755); err != nil {
		return "", "", err
	}
	if err := c.Trusted(); err != nil {
		return "", "", err
	}
	dir := c.Dir(real, bid)
	if err := c.mkdirBelow(dir); err != nil {
		return "", "", err
	}
	if err := linkOrCopy(real, filepath.Join(dir, "elf")); err != nil {
		return "", "", err
	}
	if dbg := filepath.Join(debugRoot, bid[:2], bid[2:]+".debug"); !strings.HasSuffix(real, ".ko") {
		if d, err := filepath.EvalSymlinks(dbg); err == nil && unix.Access(d, unix.R_OK) == nil {
			if err := linkOrCopy(d, filepath.Join(dir, "debug")); err != nil {
				return "", "", err
			}
		}
	}
	link := c.LinkName(bid)
	if err := c.mkdirBelow(filepath.Dir(link)); err != nil {
		return "", "", err
	}
	target := "../.." + real + "/" + bid
	if err := os.Symlink(target, link); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", "", err
	}
	return bid, real, nil
}

// RealPath is the path perf writes for the binary at path (its realpath):
// absolute, links resolved.
func RealPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// mkdirBelow creates dir and the directories above it up to the cache
// root (0755, as perf's mkdir_p), then checks them all.
func (c *Cache) mkdirBelow(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return c.checkBelow(dir)
}

// linkOrCopy makes dst the file src, a hard link when the file system
// allows one (perf's link(), then copyfile()); an existing dst is kept.
func linkOrCopy(src, dst string) error {
	if _, err := os.Lstat(dst); err == nil {
		return nil
	}
	err := os.Link(src, dst)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, in)
	if err == nil {
		err = tmp.Chmod(st.Mode().Perm() &^ 0o022)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("copying %s into the build-id cache: %w", src, err)
	}
	return nil
}
