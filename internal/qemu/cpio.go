package qemu

import (
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// cpio mode bits (from <sys/stat.h>), as the newc format stores them.
const (
	modeDir     = 0o040000
	modeRegular = 0o100000
	modeSymlink = 0o120000
	modeChar    = 0o020000
)

// entry is one member of an initramfs.
type entry struct {
	name       string // relative, no leading "/"
	mode       uint32 // type and permission bits
	data       []byte // file contents or symlink target
	rmaj, rmin uint32 // device numbers of a character device
}

// archive collects initramfs members; parents are added as directories.
type archive struct {
	entries map[string]entry
}

func newArchive() *archive { return &archive{entries: map[string]entry{}} }

// add stores e under its cleaned name, creating parent directories. A later
// add of the same name replaces the earlier one.
func (a *archive) add(e entry) {
	e.name = strings.TrimPrefix(path.Clean("/"+e.name), "/")
	for dir := path.Dir(e.name); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if _, ok := a.entries[dir]; !ok {
			a.entries[dir] = entry{name: dir, mode: modeDir | 0o755}
		}
	}
	a.entries[e.name] = e
}

// writeTo writes the archive in the kernel's "newc" cpio format
// (Documentation/driver-api/early-userspace/buffer-format.rst), parents
// before children, ending with the TRAILER!!! member.
func (a *archive) writeTo(w io.Writer) error {
	names := make([]string, 0, len(a.entries))
	for n := range a.entries {
		names = append(names, n)
	}
	sort.Strings(names) // a parent sorts before its children
	ino := uint32(1)
	for _, n := range names {
		if err := writeEntry(w, a.entries[n], ino); err != nil {
			return err
		}
		ino++
	}
	return writeEntry(w, entry{name: "TRAILER!!!"}, 0)
}

func writeEntry(w io.Writer, e entry, ino uint32) error {
	nlink := uint32(1)
	if e.mode&0o170000 == modeDir {
		nlink = 2
	}
	name := e.name + "\x00"
	hdr := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		ino, e.mode, 0, 0, nlink, 0, len(e.data), 0, 0, e.rmaj, e.rmin, len(name), 0)
	buf := make([]byte, 0, len(hdr)+len(name)+3)
	buf = append(buf, hdr...)
	buf = append(buf, name...)
	buf = pad4(buf)
	if _, err := w.Write(buf); err != nil {
		return err
	}
	if _, err := w.Write(e.data); err != nil {
		return err
	}
	_, err := w.Write(make([]byte, (4-len(e.data)%4)%4))
	return err
}

func pad4(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}
