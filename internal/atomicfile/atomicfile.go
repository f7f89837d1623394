// Package atomicfile writes whole files so that a concurrent reader sees
// the old content or the new, never a part.
package atomicfile

import (
	"os"
	"path/filepath"

	"github.com/gprobe/gprobe/internal/safedir"
)

// Write writes data to path through a temporary file in the same directory
// (".tmp-*", mode 0600, locked while written: see safedir.RemoveStale)
// and a rename; on error nothing is left behind and path is unchanged.
func Write(path string, data []byte) error {
	tmp, err := safedir.CreateTemp(filepath.Dir(path), ".tmp-")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
