package tracefmt

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// fleetFile is a v7 file whose event formats (a system of 3,000, about
// 1 MB) are those of a fleet's kernel; changed alters one of them.
func fleetFile(t *testing.T, comp string, changed bool) *File {
	t.Helper()
	c := testFile(t, [][]byte{page(5_000_000_000, 1234, []uint64{1}, 0)})
	c.Version, c.Compression = 7, comp
	var fmts [][]byte
	for i := range 3000 {
		f := strings.Replace(helloFormat, "name: hello\nID: 4242", fmt.Sprintf("name: filler%d\nID: %d", i, 10000+i), 1)
		if changed && i == 2999 {
			f = strings.Replace(f, "value=%lu", "value=%lx", 1)
		}
		fmts = append(fmts, []byte(f))
	}
	c.Systems = append(c.Systems, System{Name: "fleet", Formats: fmts})
	data, err := os.ReadFile(writeFile(t, c))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestSharedSections: two recordings with the same compressed event
// formats share the inflated bytes; a recording whose formats differ in
// one character gets its own, and reads its own text.
func TestSharedSections(t *testing.T) {
	for _, comp := range []string{"zstd", "zlib"} {
		t.Run(comp, func(t *testing.T) {
			a, b := fleetFile(t, comp, false), fleetFile(t, comp, false)
			ra, _ := a.rawFmts.get(12999)
			rb, _ := b.rawFmts.get(12999)
			if unsafe.SliceData(ra.text) != unsafe.SliceData(rb.text) {
				t.Errorf("the same section was inflated twice")
			}
			c := fleetFile(t, comp, true)
			rc, _ := c.rawFmts.get(12999)
			if unsafe.SliceData(rc.text) == unsafe.SliceData(ra.text) {
				t.Fatalf("a different section shares the first one's bytes")
			}
			if !bytes.Contains(rc.text, []byte("value=%lx")) || bytes.Contains(ra.text, []byte("value=%lx")) {
				t.Errorf("wrong format text:\n%s\n%s", rc.text, ra.text)
			}
			if ef, err := a.Format(4242); err != nil || ef.Name != "hello" {
				t.Errorf("Format(4242) = %v, %v", ef, err)
			}
		})
	}
}

// TestRawFormats: IDs an event can carry and IDs none can (negative,
// past 16 bits) are kept, replaced and listed in order.
func TestRawFormats(t *testing.T) {
	var r rawFormats
	for _, id := range []int{70000, 7, -3, 0, 65535, 7} {
		r.set(id, rawFormat{system: fmt.Sprint(id), text: []byte("x")})
	}
	r.set(12, rawFormat{system: "empty"}) // no text is still a format
	if got, want := fmt.Sprint(r.ids()), "[-3 0 7 12 65535 70000]"; got != want {
		t.Errorf("ids %s, want %s", got, want)
	}
	for _, id := range []int{-3, 0, 7, 12, 65535, 70000} {
		if f, ok := r.get(id); !ok || (f.system != fmt.Sprint(id) && f.system != "empty") {
			t.Errorf("get(%d) = %v, %v", id, f, ok)
		}
	}
	for _, id := range []int{1, 8, 13, 65534, 65536, -1} {
		if _, ok := r.get(id); ok {
			t.Errorf("get(%d) found a format never stored", id)
		}
	}
}
