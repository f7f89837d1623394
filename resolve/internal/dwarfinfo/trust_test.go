package dwarfinfo

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/dwarfindex"
)

// everything is all a run can learn from f: the index's answers, every
// unit's lines and every debug section's bytes.
func everything(t *testing.T, f *File) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(answers(t, f, []string{"vfs_read", "do_sys_open", "main"}, []string{"fs/open.c"}))
	units, err := f.unitHeaders()
	if err != nil {
		t.Fatal(err)
	}
	for i := range units {
		u, err := f.Unit(i)
		if err != nil {
			fmt.Fprintf(&b, "unit %d: %v\n", i, err)
			continue
		}
		b.WriteString(dumpUnit(u.Lines))
	}
	var names []string
	for _, s := range f.ELF.Sections {
		names = append(names, strings.Replace(s.Name, ".zdebug_", ".debug_", 1))
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "%s %x\n", n, sha256.Sum256(f.Section(n)))
	}
	return b.String()
}

// syncWarn collects warnings from concurrent inflations.
type syncWarn struct {
	mu sync.Mutex
	l  []string
}

func (w *syncWarn) add(s string) { w.mu.Lock(); w.l = append(w.l, s); w.mu.Unlock() }
func (w *syncWarn) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.l)
}

// TestEveryCacheFileBitFlip: one bit flipped in any file of an image's
// cache (the index, each inflated section copy: in its bytes, its
// checksums or its trailer) is reported in one line naming the file, the
// run's answers are a run's without the cache, and the file is rebuilt so
// that the next run reads it again.
func TestEveryCacheFileBitFlip(t *testing.T) {
	img := testenv.Compressed(t, fixtures(t)[0], "zstd")
	want := everything(t, open(t, img))
	c := dwarfindex.New(t.TempDir())
	f := openCached(t, img, c, func(s string) { t.Error(s) })
	if got := everything(t, f); got != want {
		t.Fatalf("first cached run:\n%s", firstDiff(got, want))
	}
	f.Close()
	dir := filepath.Dir(c.IndexPath(f.key))
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	pristine := map[string][]byte{}
	var names []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		pristine[e.Name()] = b
		names = append(names, e.Name())
	}
	slices.Sort(names)
	if len(names) < 5 || names[len(names)-1] != filepath.Base(c.IndexPath(f.key)) {
		t.Fatalf("cache files %v: want the index and the section copies", names)
	}
	restore := func() {
		for n, b := range pristine {
			p := filepath.Join(dir, n)
			os.Remove(p)
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	kinds := map[string]bool{}
	for _, name := range names {
		b := pristine[name]
		// The first byte, the middle, the last bytes (for a section copy:
		// its checksums and trailer).
		for _, off := range []int{0, len(b) / 2, len(b) - 40, len(b) - 1} {
			if off < 0 {
				continue
			}
			t.Run(fmt.Sprintf("%s@%d", name, off), func(t *testing.T) {
				restore()
				bad := slices.Clone(b)
				bad[off] ^= 1 << (off % 8)
				p := filepath.Join(dir, name)
				os.WriteFile(p, bad, 0o600)
				var w syncWarn
				f := openCached(t, img, c, w.add)
				if got := everything(t, f); got != want {
					t.Fatalf("with a bit flipped:\n%s", firstDiff(got, want))
				}
				f.Close()
				if l := w.get(); len(l) != 1 || !strings.Contains(l[0], p) {
					t.Errorf("warnings %q, want one line naming %s", l, p)
				}
				// Rebuilt: the next run warns of nothing and reads the
				// copy from the cache.
				f = openCached(t, img, c, func(s string) { t.Errorf("after the rebuild: %s", s) })
				if got := everything(t, f); got != want {
					t.Fatalf("after the rebuild:\n%s", firstDiff(got, want))
				}
				if strings.HasPrefix(name, "index") {
					if x, err := c.Load(f.key); err != nil {
						t.Errorf("the index was not rebuilt: %v", err)
					} else {
						x.Close()
					}
				} else {
					sec := "." + strings.TrimSuffix(name, "-v2")
					if in := f.inflations[sec]; in == nil || in.copy == nil {
						t.Errorf("%s was not read from the rebuilt copy", sec)
					}
				}
				kinds[strings.TrimSuffix(name, "-v2")] = true
			})
		}
	}
	t.Logf("flipped bits in %d kinds of file: %v", len(kinds), names)
}

// TestPlantedIndexCache: an index cache another user owns, or an image
// directory in it another user owns, is refused in one line (once for the
// cache, however many images are opened) and left untouched; links in the
// cache are not followed. The answers are those of a run without a cache.
func TestPlantedIndexCache(t *testing.T) {
	uid, gid := testenv.Nobody(t)
	img := testenv.Compressed(t, fixtures(t)[0], "zlib")
	want := everything(t, open(t, img))
	key := openCached(t, img, dwarfindex.New(t.TempDir()), nil).key

	// A planted cache: another image's index and made-up section copies
	// under this image's key.
	plant := func(root string) string {
		other := openCached(t, fixtures(t)[1], dwarfindex.New(root), nil)
		everything(t, other)
		other.Close()
		odir := filepath.Dir(dwarfindex.New(root).IndexPath(other.key))
		dir := filepath.Dir(dwarfindex.New(root).IndexPath(key))
		os.MkdirAll(filepath.Dir(dir), 0o755)
		if err := os.Rename(odir, dir); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	check := func(t *testing.T, root string, refusal string) {
		before := snapshot(root)
		var w syncWarn
		for range 2 { // two images (the same twice): one line
			f := openCached(t, img, dwarfindex.New(root), w.add)
			if f.cache != nil && refusal != "" && strings.Contains(refusal, "index cache refused") {
				t.Error("the refused cache is used")
			}
			if got := everything(t, f); got != want {
				t.Fatalf("with a planted cache:\n%s", firstDiff(got, want))
			}
			f.Close()
			if refusal == "" {
				break
			}
		}
		l := w.get()
		if refusal != "" && (len(l) != 2 && len(l) != 1 || !strings.Contains(l[0], refusal)) {
			t.Errorf("warnings %q, want %q", l, refusal)
		}
		if refusal != "" && snapshot(root) != before {
			t.Errorf("the refused cache changed:\n%s\nwas\n%s", snapshot(root), before)
		}
	}
	t.Run("root owned by nobody", func(t *testing.T) {
		root := t.TempDir()
		plant(root)
		os.Chown(root, uid, gid)
		check(t, root, fmt.Sprintf("index cache refused: %s: another user could change it: owned by uid %d", root, uid))
	})
	t.Run("root writable by everyone", func(t *testing.T) {
		root := t.TempDir()
		plant(root)
		os.Chmod(root, 0o777)
		check(t, root, fmt.Sprintf("index cache refused: %s: another user could change it: writable by everyone", root))
	})
	t.Run("image directory owned by nobody", func(t *testing.T) {
		root := t.TempDir()
		dir := plant(root)
		os.Chown(dir, uid, gid)
		check(t, root, fmt.Sprintf("index cache refused: %s: another user could change it: owned by uid %d", dir, uid))
	})
	t.Run("links", func(t *testing.T) {
		root := t.TempDir()
		dir := plant(root)
		elsewhere := t.TempDir()
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			q := filepath.Join(elsewhere, e.Name())
			os.Rename(p, q)
			os.Symlink(q, p)
		}
		snap := snapshot(elsewhere)
		var w syncWarn
		f := openCached(t, img, dwarfindex.New(root), w.add)
		if got := everything(t, f); got != want {
			t.Fatalf("with planted links:\n%s", firstDiff(got, want))
		}
		f.Close()
		for _, l := range w.get() {
			if !strings.Contains(l, "symbolic link") {
				t.Errorf("warning %q", l)
			}
		}
		if len(w.get()) == 0 {
			t.Error("no warning about the links")
		}
		if snapshot(elsewhere) != snap {
			t.Error("files were written through the links")
		}
		// Replaced by files of gprobe's.
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type()&fs.ModeSymlink != 0 {
				t.Errorf("%s is still a link", p)
			}
			return nil
		})
	})
}

// snapshot lists the files under dir with their sizes, modes, owners and
// contents' hashes.
func snapshot(dir string) string {
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, _ := d.Info()
		fmt.Fprintf(&b, "%s %v %d", p, fi.Mode(), fi.Size())
		if fi.Mode().IsRegular() {
			c, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %x", sha256.Sum256(c))
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}

// TestSealedCopyBitFlip: copies checked whole in an earlier run are sealed
// and not checked again; a bit flipped in one afterwards (a write, which
// moves its change time) is found all the same, with one line, and the
// answers are a run's without the cache.
func TestSealedCopyBitFlip(t *testing.T) {
	img := testenv.Compressed(t, fixtures(t)[1], "zlib")
	want := everything(t, open(t, img))
	c := dwarfindex.New(t.TempDir())
	f := openCached(t, img, c, func(s string) { t.Error(s) })
	everything(t, f)
	f.Close()
	time.Sleep(1100 * time.Millisecond) // older than a copy must be to be sealed
	f = openCached(t, img, c, func(s string) { t.Error(s) })
	everything(t, f)
	f.Close()
	f = openCached(t, img, c, func(s string) { t.Error(s) })
	for name, cs := range f.compressed {
		if in := f.inflation(name, cs); in.copy == nil || name != ".debug_info" && !in.copy.Sealed() {
			t.Errorf("%s: not read from a sealed copy", name)
		}
	}
	f.Close()
	p := filepath.Join(filepath.Dir(c.IndexPath(f.key)), "debug_str-v2")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteAt([]byte{b[len(b)/3] ^ 0x10}, int64(len(b)/3))
	w.Close()
	var warn syncWarn
	f = openCached(t, img, c, warn.add)
	if got := everything(t, f); got != want {
		t.Fatalf("with a bit flipped in a sealed copy:\n%s", firstDiff(got, want))
	}
	if l := warn.get(); len(l) != 1 || !strings.Contains(l[0], p) {
		t.Errorf("warnings %q, want one line naming %s", l, p)
	}
}

// TestDerivedBitFlip: derived data (-F's sorted names) kept in the cache
// is checksummed as a section copy is: a bit flipped on disk is reported
// in one line naming the file and the copy removed, never returned, and
// the next StoreDerived keeps it anew.
func TestDerivedBitFlip(t *testing.T) {
	img := fixtures(t)[0]
	c := dwarfindex.New(t.TempDir())
	data := []byte(strings.Repeat("derived names\x00", 40000)) // over two 256 KiB chunks
	f := openCached(t, img, c, func(s string) { t.Error(s) })
	f.StoreDerived("testlist", data)
	if got, ok := f.LoadDerived("testlist"); !ok || string(got) != string(data) {
		t.Fatalf("kept: ok %v, %d bytes", ok, len(got))
	}
	p := filepath.Join(filepath.Dir(c.IndexPath(f.key)), "testlist-v2")
	f.Close()
	for _, at := range []int64{0, int64(len(data)) / 2, int64(len(data)) - 1} {
		w, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		b := []byte{0}
		w.ReadAt(b, at)
		b[0] ^= 0x10
		w.WriteAt(b, at)
		w.Close()
		var warns syncWarn
		g := openCached(t, img, c, warns.add)
		if got, ok := g.LoadDerived("testlist"); ok {
			t.Fatalf("flip at %d: returned %d bytes", at, len(got))
		}
		if w := warns.get(); len(w) != 1 || !strings.Contains(w[0], p) || strings.Contains(w[0], "\n") {
			t.Errorf("flip at %d: warnings %q", at, w)
		}
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("flip at %d: the damaged copy was kept: %v", at, err)
		}
		g.StoreDerived("testlist", data)
		if got, ok := g.LoadDerived("testlist"); !ok || string(got) != string(data) {
			t.Fatalf("flip at %d: stored again: ok %v", at, ok)
		}
		g.Close()
	}
}
