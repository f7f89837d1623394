package target

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// root is the directory the probed system's files are read under: "" for
// this system, --symfs's directory, or /proc/PID/root for --target-ns PID
// (the process's root, its mount namespace's view). Paths inside the
// probed system (what uprobe_events and the messages name) are absolute
// paths within the root; the file read is the root joined with them.
type root string

// rootFor is the root o reads files under.
func rootFor(o *Options) root {
	r := ""
	if o.MountNS > 0 {
		r = "/proc/" + strconv.Itoa(o.MountNS) + "/root"
	}
	if o.Symfs != "" {
		s := o.Symfs
		if !filepath.IsAbs(s) {
			if abs, err := filepath.Abs(s); err == nil {
				s = abs
			}
		}
		r = filepath.Join(r+"/", s)
	}
	return root(strings.TrimSuffix(r, "/"))
}

// file is the path, within the root, of the file to read.
func (r root) file(p string) string {
	if r == "" {
		return p
	}
	return string(r) + p
}

// errLoop: too many links in a path (ELOOP).
var errLoop = errors.New("too many levels of symbolic links")

// realpath is p (absolute, or relative to the root's /) with every
// symbolic link resolved as the probed system resolves it: an absolute
// link target starts again at the root, ".." stops there. The result is a
// path within the root; the file must exist.
func (r root) realpath(p string) (string, error) {
	if r == "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		return filepath.EvalSymlinks(abs)
	}
	rest := strings.Split(strings.TrimPrefix(p, "/"), "/")
	done := "/"
	for links := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, c)
		st, err := os.Lstat(r.file(next))
		if err != nil {
			return "", &fs.PathError{Op: "lstat", Path: next, Err: unwrapPath(err)}
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		if links++; links > 40 {
			return "", &fs.PathError{Op: "lstat", Path: p, Err: errLoop}
		}
		target, err := os.Readlink(r.file(next))
		if err != nil {
			return "", fmt.Errorf("%s: %w", next, err)
		}
		if strings.HasPrefix(target, "/") {
			done = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	if _, err := os.Stat(r.file(done)); err != nil {
		return "", &fs.PathError{Op: "stat", Path: done, Err: unwrapPath(err)}
	}
	return done, nil
}

// unwrapPath is the error of a *fs.PathError (the path it names is the
// host's, not the probed system's).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
