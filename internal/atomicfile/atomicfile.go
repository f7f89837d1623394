// Package atomicfile writes whole files so that a concurrent reader sees
// the old content or the new, never a part.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to path through a temporary file in the same directory
// and a rename; on error nothing is left behind and path is unchanged.
func Write(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
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
