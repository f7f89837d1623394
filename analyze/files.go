package analyze

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/gprobe/gprobe/internal/tracefmt"
)

// Inputs lists the recordings args name: a file as given; for a directory,
// every regular file (or link to one) in it or below that starts with
// trace.dat's magic,
// in name order (text recordings are named one by one).
func Inputs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			regular := d.Type().IsRegular()
			if d.Type()&fs.ModeSymlink != 0 {
				st, err := os.Stat(p)
				regular = err == nil && st.Mode().IsRegular()
			}
			if regular && isTraceDat(p) {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: %w: no trace.dat file in the directory", a, ErrUnknownFormat)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

func isTraceDat(path string) bool {
	fh, err := os.Open(path)
	if err != nil {
		return false
	}
	defer fh.Close()
	head := make([]byte, len(tracefmt.Magic))
	_, err = io.ReadFull(fh, head)
	return err == nil && bytes.Equal(head, tracefmt.Magic)
}

// RunFiles analyses the recordings one after the other, each in one
// streaming pass (its CPU streams merged by timestamp), and calls each
// with every analysis as soon as it is complete; the analysis is dropped
// afterwards, so memory holds one recording's live state at a time, not
// one per file. It returns the total over all of them.
func RunFiles(paths []string, cfg Config, each func(*Analysis) error) (*Total, error) {
	total := NewTotal(cfg)
	for _, p := range paths {
		rec, err := Open(p)
		if err != nil {
			return total, err
		}
		a, err := Analyze(rec, cfg)
		rec.Close()
		if err != nil {
			return total, fmt.Errorf("%s: %w", p, err)
		}
		a.File = p
		total.Add(a)
		if err := each(a); err != nil {
			return total, err
		}
	}
	return total, nil
}
