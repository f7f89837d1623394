package dwarfindex

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var testKey = Key{BuildID: "0123456789abcdef0123456789abcdef01234567", Size: 4096}

// sample returns an index with every part.
func sample() *Index {
	var funcs, files NamesBuilder
	funcs.Add([]byte("vfs_read"), Ref{Unit: 3, Off: 0x500})
	funcs.Add([]byte("vfs_read"), Ref{Unit: 1, Off: 0x90})
	funcs.Add([]byte("vfs_read"), Ref{Unit: 3, Off: 0x480})
	funcs.Add([]byte("vfs_read"), Ref{Unit: 3, Off: 0x480}) // name and linkage name
	funcs.Add([]byte("kmalloc"), Ref{Unit: 0, Off: 0x20})
	funcs.Add([]byte(""), Ref{Unit: 2, Off: 1 << 40})
	files.Add([]byte("fs/read_write.c"), Ref{Unit: 3})
	files.Add([]byte("include/linux/slab.h"), Ref{Unit: 0})
	files.Add([]byte("include/linux/slab.h"), Ref{Unit: 3})
	var frames FDEBuilder
	frames.Add(0x2000, 0x2100, 64)
	frames.Add(0x1000, 0x1010, 24)
	frames.Add(0x1000, 0x1020, 0)
	return &Index{
		Key: testKey,
		Units: []Unit{
			{Off: 0, End: 0x100, DIEOff: 0xc, AbbrevOff: 0, Version: 5, Type: 1, AddrSize: 8},
			{Off: 0x100, End: 0x400, DIEOff: 0x10c, AbbrevOff: 0x80, Version: 4, Type: 1, AddrSize: 4, Dwarf64: true},
		},
		Funcs:      funcs.Build(),
		Files:      files.Build(),
		SymOrder:   NewUint32s([]uint32{3, 1, 2}),
		DebugFrame: frames.Build(),
	}
}

// dump renders every part of x through its accessors.
func dump(x *Index) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "key %v\nunits %v\n", x.Key, x.Units)
	for _, t := range []struct {
		name string
		n    *Names
	}{{"funcs", x.Funcs}, {"files", x.Files}} {
		if t.n == nil {
			fmt.Fprintf(&b, "%s absent\n", t.name)
			continue
		}
		for i := 0; i < t.n.Len(); i++ {
			refs, err := t.n.Refs(i, nil)
			fmt.Fprintf(&b, "%s %q %v %v\n", t.name, t.n.Name(i), refs, err)
		}
	}
	if x.SymOrder != nil {
		for i := 0; i < x.SymOrder.Len(); i++ {
			fmt.Fprintf(&b, "sym %d\n", x.SymOrder.At(i))
		}
	}
	for _, t := range []*FDEs{x.EHFrame, x.DebugFrame} {
		if t == nil {
			fmt.Fprintln(&b, "frames absent")
			continue
		}
		for i := 0; i < t.Len(); i++ {
			begin, end, off := t.At(i)
			fmt.Fprintf(&b, "fde %#x-%#x @%d\n", begin, end, off)
		}
	}
	return b.String()
}

func TestRoundTrip(t *testing.T) {
	x := sample()
	y, err := Decode(x.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if a, b := dump(x), dump(y); a != b {
		t.Fatalf("decoded index differs:\n%s\nwant:\n%s", b, a)
	}
	want := `funcs "" [{2 1099511627776}] <nil>
funcs "kmalloc" [{0 32}] <nil>
funcs "vfs_read" [{1 144} {3 1152} {3 1280}] <nil>
files "fs/read_write.c" [{3 0}] <nil>
files "include/linux/slab.h" [{0 0} {3 0}] <nil>
`
	if !bytes.Contains([]byte(dump(y)), []byte(want)) {
		t.Errorf("names not sorted, refs not sorted or not deduplicated:\n%s", dump(y))
	}
	if i, ok := y.Funcs.Find([]byte("vfs_read")); !ok || string(y.Funcs.Name(i)) != "vfs_read" {
		t.Errorf("Find(vfs_read) = %d, %v", i, ok)
	}
	if _, ok := y.Funcs.Find([]byte("vfs_write")); ok {
		t.Error("Find(vfs_write) found something")
	}
	// Two FDEs start at 0x1000: they stay in the order they were added.
	for _, c := range []struct {
		addr uint64
		want int
	}{{0x1000, 0}, {0x100f, 0}, {0x1010, 1}, {0x1020, 2}, {0x20ff, 2}, {0x2100, 3}, {0xfff, 0}} {
		if got := y.DebugFrame.Find(c.addr); got != c.want {
			t.Errorf("Find(%#x) = %d, want %d", c.addr, got, c.want)
		}
	}
}

func TestDecodeRejectsDamage(t *testing.T) {
	b := sample().Encode()
	for n := 0; n < len(b); n++ {
		if _, err := Decode(b[:n]); !errors.Is(err, ErrDamaged) {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
	for i := 0; i < len(b); i++ {
		c := bytes.Clone(b)
		c[i] ^= 0x10
		if _, err := Decode(c); !errors.Is(err, ErrDamaged) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
	if _, err := Decode(append(bytes.Clone(b), 0)); !errors.Is(err, ErrDamaged) {
		t.Fatalf("a trailing byte: %v", err)
	}
}

func TestCacheStoreLoad(t *testing.T) {
	c := New(t.TempDir())
	if _, err := c.Load(testKey); !errors.Is(err, ErrNotFound) {
		t.Fatalf("empty cache: %v", err)
	}
	x := sample()
	units := &Index{Key: testKey, Units: x.Units}
	if err := c.Store(units); err != nil {
		t.Fatal(err)
	}
	// A later store with other parts keeps the units.
	rest := *x
	rest.Units = nil
	if err := c.Store(&rest); err != nil {
		t.Fatal(err)
	}
	y, err := c.Load(testKey)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if a, b := dump(x), dump(y); a != b {
		t.Fatalf("merged index:\n%s\nwant:\n%s", b, a)
	}
	// Another size is another image.
	if _, err := c.Load(Key{BuildID: testKey.BuildID, Size: 1}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other size: %v", err)
	}
	// An index that describes another image is damaged where it is.
	other := sample()
	other.Key.Size = 1
	if err := os.WriteFile(c.IndexPath(testKey), other.Encode(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(testKey); !errors.Is(err, ErrDamaged) {
		t.Fatalf("index of another image: %v", err)
	}
	for _, bad := range [][]byte{nil, []byte("garbage"), x.Encode()[:100]} {
		if err := os.WriteFile(c.IndexPath(testKey), bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Load(testKey); !errors.Is(err, ErrDamaged) {
			t.Fatalf("%d bytes of garbage: %v", len(bad), err)
		}
	}
	// A store over a damaged index replaces it.
	if err := c.Store(units); err != nil {
		t.Fatal(err)
	}
	if y, err := c.Load(testKey); err != nil || y.Funcs != nil || len(y.Units) != 2 {
		t.Fatalf("after rebuilding: %v", err)
	}
	for _, k := range []Key{{BuildID: "../x", Size: 1}, {BuildID: "", Size: 1}, {BuildID: "ABCD", Size: 1}, {BuildID: "abcd", Size: 0}} {
		if err := c.Store(&Index{Key: k}); !errors.Is(err, ErrNotFound) {
			t.Errorf("key %v accepted: %v", k, err)
		}
	}
}

// TestCacheConcurrentStores: readers never see a partial index while
// writers replace it.
func TestCacheConcurrentStores(t *testing.T) {
	c := New(t.TempDir())
	if err := c.Store(sample()); err != nil {
		t.Fatal(err)
	}
	want := dump(sample())
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := 0; w < 4; w++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if err := c.Store(sample()); err != nil {
					errs <- err
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				x, err := c.Load(testKey)
				if err != nil {
					errs <- err
					continue
				}
				if got := dump(x); got != want {
					errs <- fmt.Errorf("read a different index:\n%s", got)
				}
				x.Close()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(c.IndexPath(testKey)), ".tmp-*"))
	if len(tmps) > 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
}

// writeCopy writes data as the copy of section name of testKey, in
// pieces of odd sizes (the checksums must not depend on them).
func writeCopy(t *testing.T, c *Cache, name string, data []byte) {
	t.Helper()
	w, err := c.NewSection(testKey, name)
	if err != nil {
		t.Fatal(err)
	}
	defer w.File().Close()
	for p := data; len(p) > 0; {
		n := min(len(p), 77777)
		if _, err := w.Write(p[:n]); err != nil {
			t.Fatal(err)
		}
		p = p[n:]
	}
	if err := w.Commit(uint64(len(data))); err != nil {
		t.Fatal(err)
	}
}

func TestSectionCopies(t *testing.T) {
	c := New(t.TempDir())
	if _, err := c.Section(testKey, ".debug_info"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("empty cache: %v", err)
	}
	data := bytes.Repeat([]byte("dwarf"), 1000)
	w, err := c.NewSection(testKey, ".debug_info")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	// Not visible until committed.
	if _, err := c.Section(testKey, ".debug_info"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("before Commit: %v", err)
	}
	if err := w.Commit(uint64(len(data))); err != nil {
		t.Fatal(err)
	}
	w.File().Close()
	sc, err := c.Section(testKey, ".debug_info")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, sc.Size())
	sc.File().ReadAt(got, 0)
	if err := sc.Verify(0, sc.Size()); err != nil {
		t.Error(err)
	}
	sc.Close()
	if !bytes.Equal(got, data) {
		t.Fatal("section copy differs")
	}
	path := filepath.Join(filepath.Dir(c.IndexPath(testKey)), "debug_info-v2")
	// Another image's copy, a truncated copy, a copy under another name.
	for _, k := range []Key{{BuildID: testKey.BuildID, Size: 1}} {
		if _, err := c.Section(k, ".debug_info"); !errors.Is(err, ErrNotFound) {
			t.Errorf("key %v: %v", k, err)
		}
	}
	if err := os.Rename(path, filepath.Join(filepath.Dir(path), "debug_line-v2")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Section(testKey, ".debug_line"); !errors.Is(err, ErrDamaged) {
		t.Errorf("renamed copy: %v", err)
	}
	for _, n := range []int64{0, 10, int64(len(data)), int64(len(data)) + trailerSize - 1} {
		if err := os.Truncate(filepath.Join(filepath.Dir(path), "debug_line-v2"), n); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Section(testKey, ".debug_line"); !errors.Is(err, ErrDamaged) {
			t.Errorf("truncated to %d: %v", n, err)
		}
	}
	w, err = c.NewSection(testKey, ".debug_str")
	if err != nil {
		t.Fatal(err)
	}
	w.Abort()
	w.File().Close()
	if _, err := c.Section(testKey, ".debug_str"); !errors.Is(err, ErrNotFound) {
		t.Errorf("aborted copy: %v", err)
	}
	for _, bad := range []string{"", ".", "..", "index", "../x", "a/b"} {
		if _, err := c.NewSection(testKey, bad); err == nil {
			t.Errorf("section name %q accepted", bad)
		}
	}
	// A copy must be written whole before it is committed.
	w, _ = c.NewSection(testKey, ".debug_str")
	w.Write([]byte("abc"))
	if err := w.Commit(4); err == nil {
		t.Error("a copy missing a byte was committed")
	}
	w.File().Close()
}

// TestSectionCopyBitFlips flips bits of a copy spanning several chunks:
// in each chunk's bytes (Verify of that chunk fails, the others pass),
// and in every byte of the checksums and the trailer (Section fails).
// No flip ever lets a changed byte be read as verified.
func TestSectionCopyBitFlips(t *testing.T) {
	c := New(t.TempDir())
	data := make([]byte, 2*chunkSize+12345)
	for i := range data {
		data[i] = byte(i * 131 >> 3)
	}
	path := filepath.Join(filepath.Dir(c.IndexPath(testKey)), "debug_str-v2")
	flip := func(off int64, bit byte) {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b := []byte{0}
		f.ReadAt(b, off)
		b[0] ^= bit
		f.WriteAt(b, off)
	}
	for _, off := range []int64{0, 1, chunkSize - 1, chunkSize, chunkSize + 4096, 2 * chunkSize, int64(len(data)) - 1} {
		writeCopy(t, c, ".debug_str", data)
		flip(off, 1<<(off%8))
		sc, err := c.Section(testKey, ".debug_str")
		if err != nil {
			t.Fatalf("flip at %d: %v (the trailer is intact)", off, err)
		}
		bad := uint64(off) / chunkSize
		for i := uint64(0); i < chunks(sc.Size()); i++ {
			start, end := i*chunkSize, min((i+1)*chunkSize, sc.Size())
			err := sc.Verify(start+1, end-1)
			if (err != nil) != (i == bad) || err != nil && !errors.Is(err, ErrDamaged) {
				t.Errorf("flip at %d: chunk %d: %v", off, i, err)
			}
			if i == bad && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("at offset %#x", start))) {
				t.Errorf("flip at %d: %v does not name the chunk's offset", off, err)
			}
		}
		// A range across the bad chunk fails, every time.
		for range 2 {
			if err := sc.Verify(0, sc.Size()); !errors.Is(err, ErrDamaged) {
				t.Errorf("flip at %d: whole section: %v", off, err)
			}
		}
		sc.Close()
	}
	// A large copy is checked in parallel: the damaged chunk is found
	// all the same, and named.
	big := bytes.Repeat(data[:chunkSize], 40)
	writeCopy(t, c, ".debug_str", big)
	flip(int64(23*chunkSize+99), 4)
	sc, err := c.Section(testKey, ".debug_str")
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Verify(0, sc.Size()); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), fmt.Sprintf("at offset %#x", 23*chunkSize)) {
		t.Errorf("large copy: %v", err)
	}
	if err := sc.VerifyAll(func() bool { return false }); !errors.Is(err, ErrDamaged) {
		t.Errorf("VerifyAll: %v", err)
	}
	if err := sc.Verify(0, 23*chunkSize); err != nil {
		t.Errorf("the sound chunks: %v", err)
	}
	sc.Close()

	tail := 4*int64(chunks(uint64(len(data)))) + trailerSize
	for i := int64(0); i < tail; i++ {
		writeCopy(t, c, ".debug_str", data)
		flip(int64(len(data))+i, 1<<(i%8))
		if sc, err := c.Section(testKey, ".debug_str"); !errors.Is(err, ErrDamaged) {
			t.Errorf("flip at tail byte %d: %v", i, err)
			if err == nil {
				sc.Close()
			}
		}
	}
}

// TestSectionCopySeal: a copy checked whole is sealed and not checked
// again in this boot; a write to it (which changes its change time), a
// seal of another boot or a seal changed by hand, and a copy changed too
// recently to tell, are checked again.
func TestSectionCopySeal(t *testing.T) {
	if bootID() == "" {
		t.Skip("no boot id")
	}
	defer func(d time.Duration) { sealAge = d }(sealAge)
	sealAge = 20 * time.Millisecond
	c := New(t.TempDir())
	data := bytes.Repeat([]byte("sealed bytes "), 3*chunkSize/13)
	open := func() *SectionCopy {
		sc, err := c.Section(testKey, ".debug_line")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sc.Close() })
		return sc
	}
	writeCopy(t, c, ".debug_line", data)
	sc := open()
	if err := sc.Verify(0, sc.Size()); err != nil || sc.Sealed() {
		t.Fatalf("a copy just written: %v, sealed %v (too recent to seal)", err, sc.Sealed())
	}
	time.Sleep(30 * time.Millisecond)
	sc = open()
	if err := sc.Verify(0, sc.Size()); err != nil || !sc.Sealed() {
		t.Fatalf("checked whole: %v, sealed %v", err, sc.Sealed())
	}
	path := filepath.Join(filepath.Dir(c.IndexPath(testKey)), "debug_line-v2")
	seal, err := os.ReadFile(path + sealSuffix)
	if err != nil || !strings.Contains(string(seal), bootID()) {
		t.Fatalf("seal %q, %v", seal, err)
	}
	if !open().Sealed() {
		t.Error("the next run does not trust the seal")
	}
	// A seal of another boot, or changed, is not trusted.
	for _, bad := range []string{strings.Replace(string(seal), bootID(), "00000000-0000-0000-0000-000000000000", 1),
		strings.Replace(string(seal), " 1 ", " 2 ", 1), string(seal) + "x", ""} {
		os.WriteFile(path+sealSuffix, []byte(bad), 0o600)
		if open().Sealed() {
			t.Errorf("seal %q trusted", bad)
		}
	}
	os.WriteFile(path+sealSuffix, seal, 0o600)
	if !open().Sealed() {
		t.Fatal("the seal put back is not trusted")
	}
	// A bit flipped by a write: the change time moves, the seal no longer
	// matches and the damage is found.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{data[chunkSize+5] ^ 2}, chunkSize+5)
	f.Close()
	sc = open()
	if sc.Sealed() {
		t.Fatal("a copy written after its seal is trusted")
	}
	if err := sc.Verify(0, sc.Size()); !errors.Is(err, ErrDamaged) {
		t.Errorf("the flipped bit: %v", err)
	}
	c.RemoveSection(testKey, ".debug_line")
	if _, err := os.Stat(path + sealSuffix); !os.IsNotExist(err) {
		t.Errorf("seal left by RemoveSection: %v", err)
	}
}
