// Package perfcache reads and writes perf's build-id cache, the directory
// (~/.debug) where perf keeps a copy of every binary it has seen, keyed by
// its GNU build-id, and the probe cache beside each copy — the SDT markers
// perf found in it and the probes added with `perf probe --cache`:
//
//	~/.debug/.build-id/57/1d98e0...a0 -> ../../usr/bin/python3.11/571d98e0...a0
//	~/.debug/usr/bin/python3.11/571d98e0...a0/elf      the binary (a hard link, or a copy)
//	~/.debug/usr/bin/python3.11/571d98e0...a0/probes   its probe cache
//
// The layout and formats are perf 6.1's (tools/perf/util/build-id.c,
// util/probe-file.c), so that gprobe and perf share one cache: a binary
// added by `perf buildid-cache --add` or `perf probe -x` is known to
// gprobe, and one gprobe added is known to perf.
//
// gprobe runs as root, and a cache another user can write would let that
// user choose what root reads: every file and directory read from the
// cache must belong to the user gprobe runs as (or root) and be writable
// by no one else, the directories above the cache included (the rules
// of internal/safedir, gprobe's one place for them); an entry failing the
// checks is skipped (Trusted explains why), a cache root failing them is
// not used at all. A build-id is valid only while the
// file the cache names for it has that build-id.
package perfcache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// Errors.
var (
	// ErrNotCached: the cache has no entry for the build-id.
	ErrNotCached = errors.New("not in perf's build-id cache")
	// ErrNoBuildID: the binary has no GNU build-id, which the cache is
	// keyed by.
	ErrNoBuildID = errors.New("no GNU build-id")
)

// Cache is a build-id cache directory.
type Cache struct {
	// Root is the cache directory: perf's buildid_dir, ~/.debug unless
	// perf's configuration says otherwise.
	Root string
}

// Default is the cache perf uses by default: $HOME/.debug (perf's
// DEBUG_CACHE_DIR under HOME, or ".debug" in the working directory when
// HOME is not set).
func Default() *Cache {
	if h := os.Getenv("HOME"); h != "" {
		return &Cache{Root: filepath.Join(h, ".debug")}
	}
	return &Cache{Root: ".debug"}
}

// Kallsyms is the name perf caches the kernel's symbols under.
const Kallsyms = "[kernel.kallsyms]"

// LinkName is the build-id's link: ROOT/.build-id/XX/REST.
func (c *Cache) LinkName(bid string) string {
	if len(bid) < 2 {
		return filepath.Join(c.Root, ".build-id", bid)
	}
	return filepath.Join(c.Root, ".build-id", bid[:2], bid[2:])
}

// Dir is the directory of the build-id's files for the binary at path (an
// absolute path without links, as perf's realpath makes it):
// ROOT/PATH/BUILDID.
func (c *Cache) Dir(path, bid string) string {
	return c.Root + path + "/" + bid
}

// OrigName is the path of the binary the cache holds for build-id bid, as
// the link names it ("/usr/bin/python3.11", or "[kernel.kallsyms]"): perf's
// build_id_cache__origname.
func (c *Cache) OrigName(bid string) (string, error) {
	target, err := os.Readlink(c.LinkName(bid))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: %w", bid, ErrNotCached)
		}
		return "", err
	}
	return origName(target)
}

// origName reads a link's target "../..<origpath>/<build-id>".
func origName(target string) (string, error) {
	const up = "../.."
	slash := strings.LastIndexByte(target, '/')
	if !strings.HasPrefix(target, up) || slash <= len(up) {
		return "", fmt.Errorf("build-id link %q is not perf's ../..PATH/BUILDID", target)
	}
	name := target[len(up):slash]
	if strings.HasPrefix(name, "/[") {
		name = name[1:] // [kernel.kallsyms], [vdso]: no leading '/'
	}
	return name, nil
}

// List returns the build-ids the cache has a link for, sorted: perf's
// build_id_cache__list_all(false) (two hex digits of directory, then
// 38 to 62 more).
func (c *Cache) List() ([]string, error) {
	top, err := os.ReadDir(filepath.Join(c.Root, ".build-id"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, d := range top {
		if len(d.Name()) != 2 || !isHex(d.Name()) {
			continue
		}
		sub, err := os.ReadDir(filepath.Join(c.Root, ".build-id", d.Name()))
		if err != nil {
			return nil, err
		}
		for _, e := range sub {
			if n := e.Name(); len(n) >= 38 && len(n) <= 62 && isHex(n) {
				ids = append(ids, d.Name()+n)
			}
		}
	}
	slices.Sort(ids)
	return ids, nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// Valid reports whether build-id bid is valid on this system, as perf's
// build_id_cache__valid_id decides: the file the cache names for it has
// that build-id now. It returns that file's path. The kernel's cache
// ([kernel.kallsyms]) is valid when the running kernel's build-id is bid.
//
// The link must lie in directories that pass the checks (see the package
// documentation): another user's link is not followed to a file.
func (c *Cache) Valid(bid string) (string, bool) {
	if c.checkBelow(filepath.Dir(c.LinkName(bid))) != nil {
		return "", false
	}
	name, err := c.OrigName(bid)
	if err != nil {
		return "", false
	}
	var real string
	switch {
	case name == Kallsyms:
		real, err = kernelBuildID()
	case strings.HasPrefix(name, "/"):
		real, err = FileBuildID(name)
	default:
		return "", false
	}
	return name, err == nil && real == bid
}

// ValidList is List without the build-ids that are not Valid: perf's
// build_id_cache__list_all(true).
func (c *Cache) ValidList() ([]string, error) {
	ids, err := c.List()
	if err != nil {
		return nil, err
	}
	var valid []string
	for _, id := range ids {
		if _, ok := c.Valid(id); ok {
			valid = append(valid, id)
		}
	}
	return valid, nil
}

// Complement returns the one valid build-id starting with prefix (hex
// digits, shorter than a build-id), or "" when none or several do:
// perf's build_id_cache__complement, which lets `%sdt_x:y@571d98` name a
// cached binary.
func (c *Cache) Complement(prefix string) string {
	if len(prefix) >= 2*64+1 || !isHex(prefix) {
		return ""
	}
	ids, err := c.ValidList()
	if err != nil {
		return ""
	}
	found := ""
	for _, id := range ids {
		if strings.HasPrefix(id, prefix) {
			if found != "" {
				return ""
			}
			found = id
		}
	}
	return found
}

// FileBuildID is the hex GNU build-id of the ELF file at path (its note
// sections, else its PT_NOTE segments), or an error wrapping ErrNoBuildID.
func FileBuildID(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	id, err := dwarfinfo.ReaderBuildID(f)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if id == "" {
		return "", fmt.Errorf("%s: %w", path, ErrNoBuildID)
	}
	return id, nil
}

// kernelBuildID is the running kernel's build-id (/sys/kernel/notes).
func kernelBuildID() (string, error) {
	b, err := os.ReadFile("/sys/kernel/notes")
	if err != nil {
		return "", err
	}
	if id := dwarfinfo.NoteBuildID(b, binary.NativeEndian); id != "" {
		return id, nil
	}
	return "", fmt.Errorf("/sys/kernel/notes: %w", ErrNoBuildID)
}
