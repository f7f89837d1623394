package target

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gprobe/gprobe/internal/safedir"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// The search for an image's separate debug information, when the image
// has no DWARF of its own (a stripped binary, a distribution's vmlinux).
//
// perf probe 6.1 (debuginfo__new) tries the distributions' places first —
// /usr/lib/debug/PATH.debug, /usr/lib/debug/PATH, DIR/.debug/BASE,
// /usr/lib/debug/.build-id/XX/REST.debug and, for /usr/lib/..., Ubuntu's
// /usr/lib/debug/lib/... — each under --symfs, then lets libdwfl look at
// the image itself: the build-id directory again, then the file its
// .gnu_debuglink names. libdwfl is given no file name there, so it looks
// for that file in the working directory and its .debug/ only (perf finds
// a debuglink target only when run from the binary's directory). gprobe
// looks where gdb and the GNU tools put it: the binary's directory, its
// .debug/ subdirectory, and /usr/lib/debug followed by the binary's
// directory.
//
// Nothing found is used unchecked: a candidate must have the image's GNU
// build-id (perf and libdwfl take a distribution's file on its name alone,
// so a stale -dbg file gives wrong answers), or, for an image without
// one, the CRC-32 its .gnu_debuglink records; it must belong to root, to
// the user gprobe runs as or to the image's owner and be writable by no
// one else (internal/safedir's rule); and it must have DWARF.

// debugLink is an image's .gnu_debuglink: the debug file's name and the
// CRC-32 of its contents.
type debugLink struct {
	name string
	crc  uint32
}

// readDebugLink reads f's .gnu_debuglink (ok false without one).
func readDebugLink(f *dwarfinfo.File) (debugLink, bool) {
	return parseDebugLink(f.Section(".gnu_debuglink"), f.Order)
}

// parseDebugLink parses a .gnu_debuglink section (ok false when it is not
// one): the name, NUL-terminated and padded to 4 bytes, then the CRC in
// the file's byte order.
func parseDebugLink(b []byte, order binary.ByteOrder) (debugLink, bool) {
	nul := bytes.IndexByte(b, 0)
	if nul <= 0 {
		return debugLink{}, false
	}
	at := (nul + 4) &^ 3
	if at+4 > len(b) {
		return debugLink{}, false
	}
	name := string(b[:nul])
	if strings.Contains(name, "/") || name == "." || name == ".." {
		return debugLink{}, false // a name, not a path (gdb and libdwfl join it to directories)
	}
	return debugLink{name: name, crc: order.Uint32(b[at:])}, true
}

// candidate is one place the debug file may be.
type candidate struct {
	path string // in the root
	// crc, when checkCRC, is the CRC-32 the file must have (an image
	// without a build-id, found through its .gnu_debuglink).
	crc      uint32
	checkCRC bool
}

// debugCandidatesIn lists the places of the separate debug file of the
// image at path (within root r; f is the image), in the order they are
// tried (see above); each path is listed once.
func debugCandidatesIn(r root, path string, f *dwarfinfo.File) []candidate {
	dir, base := filepath.Dir(path), filepath.Base(path)
	id := f.BuildID()
	var out []candidate
	seen := map[string]bool{}
	add := func(c candidate) {
		if !seen[c.path] {
			seen[c.path] = true
			out = append(out, c)
		}
	}
	dbg := host.debugRoot
	add(candidate{path: dbg + path + ".debug"})
	add(candidate{path: dbg + path})
	add(candidate{path: filepath.Join(dir, ".debug", base)})
	if len(id) > 2 {
		add(candidate{path: dbg + "/.build-id/" + id[:2] + "/" + id[2:] + ".debug"})
	}
	if strings.HasPrefix(path, "/usr/lib/") {
		add(candidate{path: dbg + path[len("/usr"):]})
	}
	link, ok := readDebugLink(f)
	if !ok {
		// libdwfl's name for a debug file without a debuglink (then
		// checked by build-id only).
		link = debugLink{name: base + ".debug"}
	}
	check := ok && id == ""
	for _, d := range []string{dir, filepath.Join(dir, ".debug"), dbg + dir} {
		add(candidate{path: filepath.Join(d, link.name), crc: link.crc, checkCRC: check})
	}
	return out
}

// Why a candidate is not used.
var (
	errOtherBuild   = errors.New("has another build-id")
	errNoBuildID    = errors.New("the image has no build-id and no .gnu_debuglink to check it by")
	errCRC          = errors.New("its CRC-32 is not the one .gnu_debuglink records")
	errNoDWARF      = errors.New("has no DWARF")
	errSameAsBinary = errors.New("is the image itself")
)

// findSeparate returns the first candidate of the image at path (within
// root r; f is the image, read from file) that passes the checks, opened
// with the image's file offsets and code, and the file read; nil when
// none does. trace, when set, hears about every candidate that exists but
// is not used.
func findSeparate(r root, path, file string, f *dwarfinfo.File, trace func(string)) (*dwarfinfo.File, string) {
	img, err := os.Stat(file)
	if err != nil {
		return nil, ""
	}
	for _, c := range debugCandidatesIn(r, path, f) {
		p := r.file(c.path)
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		d, err := openChecked(p, file, img, st, f.BuildID(), c)
		if err != nil {
			if trace != nil {
				trace(fmt.Sprintf("%s: not used as the debug information of %s: %v", c.path, path, err))
			}
			continue
		}
		if trace != nil {
			trace(fmt.Sprintf("%s: the debug information of %s", c.path, path))
		}
		return d, p
	}
	return nil, ""
}

// openChecked opens the candidate p (its stat st) for the image file
// (img; build-id id) after the checks.
func openChecked(p, file string, img, st fs.FileInfo, id string, c candidate) (*dwarfinfo.File, error) {
	if os.SameFile(img, st) {
		return nil, errSameAsBinary
	}
	if err := trusted(p, st, img); err != nil {
		return nil, err
	}
	if id == "" && !c.checkCRC {
		return nil, errNoBuildID
	}
	if c.checkCRC {
		sum, err := fileCRC(p)
		if err != nil {
			return nil, err
		}
		if sum != c.crc {
			return nil, fmt.Errorf("%w (0x%08x, not 0x%08x)", errCRC, sum, c.crc)
		}
	}
	d, err := dwarfinfo.OpenSeparate(p, file)
	if err != nil {
		return nil, err
	}
	if got := d.BuildID(); id != "" && got != id {
		d.Close()
		if got == "" {
			got = "none"
		}
		return nil, fmt.Errorf("%w (%s, the image's is %s)", errOtherBuild, got, id)
	}
	if !d.HasDWARF() {
		d.Close()
		return nil, errNoDWARF
	}
	return d, nil
}

// trusted reports whether a debug file (p, its stat st) may be read for
// the image (img): internal/safedir's rule for what gprobe reads, with the
// image's owner trusted beside root and the user gprobe runs as.
func trusted(p string, st, img fs.FileInfo) error {
	i, ok := img.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: %w: no owner", p, safedir.ErrUnsafe)
	}
	return safedir.CheckOwner(p, st, int(i.Uid))
}

// fileCRC is the CRC-32 .gnu_debuglink records: IEEE, as zlib's crc32.
func fileCRC(p string) (uint32, error) {
	fd, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer fd.Close()
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, fd); err != nil {
		return 0, err
	}
	return h.Sum32(), nil
}
