package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// File is a file written in a stream, under a temporary name in the
// directory of its path: Commit puts it in place whole, Abort removes it.
// A reader of path never sees it partly written, and a failed writer
// leaves nothing behind.
type File struct {
	f    *os.File
	path string
	perm fs.FileMode
	done bool
}

// Create starts the file that Commit will put at path with mode perm. An
// error names path (not the temporary name).
func Create(path string, perm fs.FileMode) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		if pe, ok := err.(*fs.PathError); ok {
			err = pe.Err
		}
		return nil, &fs.PathError{Op: "create", Path: path, Err: err}
	}
	return &File{f: f, path: path, perm: perm}, nil
}

// Write writes to the temporary file.
func (f *File) Write(p []byte) (int, error) { return f.f.Write(p) }

// Name is the temporary file's name, for a tool that writes the file
// itself (Commit then puts what it wrote in place).
func (f *File) Name() string { return f.f.Name() }

// Commit closes the file and renames it to its path, replacing what was
// there. On an error the temporary file is removed and path is unchanged.
func (f *File) Commit() error {
	if f.done {
		return fs.ErrClosed
	}
	f.done = true
	err := f.f.Close()
	if err == nil {
		err = os.Chmod(f.f.Name(), f.perm)
	}
	if err == nil {
		err = os.Rename(f.f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.f.Name())
	}
	return err
}

// Abort closes and removes the temporary file; after Commit it does
// nothing.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.f.Close()
	os.Remove(f.f.Name())
}
