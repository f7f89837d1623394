package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNoTracefs reports that no mounted tracefs was found.
var ErrNoTracefs = errors.New("tracefs not mounted")

// tracefsRoots are the usual mount points, newest first.
var tracefsRoots = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// findTracefs returns the first tracefs mount point that holds events.
func findTracefs() (string, error) {
	for _, r := range tracefsRoots {
		if _, err := os.Stat(filepath.Join(r, "events", "header_page")); err == nil {
			return r, nil
		}
	}
	return "", fmt.Errorf("%w (looked in %s)", ErrNoTracefs, strings.Join(tracefsRoots, ", "))
}

// dir is a tracefs directory: the root or an instance.
type dir string

func (d dir) path(rel string) string { return filepath.Join(string(d), rel) }

func (d dir) read(rel string) ([]byte, error) { return os.ReadFile(d.path(rel)) }

// write writes val to a tracefs control file. tracefs reports bad values
// only through the write's error, so the file name goes into it.
func (d dir) write(rel, val string) error {
	f, err := os.OpenFile(d.path(rel), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(val))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %q to %s: %w", strings.TrimSpace(val), d.path(rel), err)
	}
	return nil
}

// exists tells whether rel exists under d.
func (d dir) exists(rel string) bool {
	_, err := os.Stat(d.path(rel))
	return err == nil
}

// unsafeLongSize is the size of a C long here, the "long size" trace.dat
// records for user space.
const unsafeLongSize = 4 << (^uintptr(0) >> 63)
