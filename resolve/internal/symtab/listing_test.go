package symtab

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/resolve/dwarfindex"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// TestListingRoundTrip: EncodeListing's bytes decode to the same names,
// and any damage (a flipped byte anywhere, a cut) is refused.
func TestListingRoundTrip(t *testing.T) {
	names := []string{"", "a", "ns::Klass::method", "operator delete@plt", strings.Repeat("x", 300)}
	b := EncodeListing(names)
	l, ok := DecodeListing(b)
	if !ok || l.Len() != len(names) {
		t.Fatalf("decode: ok %v, %d names", ok, l.Len())
	}
	var got []string
	l.Each(func(string) bool { return true }, func(n string) bool { got = append(got, strings.Clone(n)); return true })
	if !slices.Equal(got, names) {
		t.Fatalf("names %q, want %q", got, names)
	}
	got = got[:0]
	l.Each(func(n string) bool { return strings.HasPrefix(n, "ns") || n == "a" }, func(n string) bool { got = append(got, n); return len(got) < 1 })
	if !slices.Equal(got, []string{"a"}) {
		t.Fatalf("filtered, stopped after one: %q", got)
	}
	for i := range b {
		d := slices.Clone(b)
		d[i] ^= 0x40
		if _, ok := DecodeListing(d); ok {
			t.Fatalf("a flipped byte %d decodes", i)
		}
	}
	for n := 0; n < len(b); n++ {
		if _, ok := DecodeListing(b[:n]); ok {
			t.Fatalf("%d of %d bytes decode", n, len(b))
		}
	}
}

// FuzzDecodeListing: any bytes decode or are refused, without a panic,
// and what decodes can be walked.
func FuzzDecodeListing(f *testing.F) {
	f.Add(EncodeListing([]string{"a", "bc"}))
	f.Add([]byte("gpfns\x00\x00\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if l, ok := DecodeListing(b); ok {
			n := 0
			l.Each(func(string) bool { return true }, func(string) bool { n++; return true })
			if n != l.Len() {
				t.Fatalf("walked %d of %d", n, l.Len())
			}
		}
	})
}

// TestDSOFunctionsCached: -F's listing of libstdc++, demangled, is the
// same computed, read back from the index cache, and recomputed when the
// cached copy is damaged (with C++ parameters too, but under -short);
// without demangling nothing is kept.
func TestDSOFunctionsCached(t *testing.T) {
	const lib = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
	if _, err := os.Stat(lib); err != nil {
		t.Skipf("%s: %v", lib, err)
	}
	c := dwarfindex.New(t.TempDir())
	list := func(n Naming) []string {
		f, err := dwarfinfo.OpenWith(lib, dwarfinfo.Options{Cache: c})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var out []string
		err = DSOFunctions(f, true, n, func(s string) bool { return !strings.HasPrefix(s, "_") }, func(s string) bool {
			out = append(out, strings.Clone(s))
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	namings := []Naming{{Demangle: true}, {Demangle: true, Params: true}}
	if testing.Short() {
		namings = namings[:1]
	}
	for _, n := range namings {
		computed := list(n)
		if len(computed) < 1000 {
			t.Fatalf("%+v: %d names", n, len(computed))
		}
		if cached := list(n); !slices.Equal(cached, computed) {
			t.Fatalf("%+v: the cached listing differs", n)
		}
		f, err := dwarfinfo.OpenWith(lib, dwarfinfo.Options{Cache: c})
		if err != nil {
			t.Fatal(err)
		}
		data, ok := f.LoadDerived(listingName(true, n))
		if !ok {
			t.Fatalf("%+v: nothing kept", n)
		}
		damaged := slices.Clone(data)
		damaged[len(damaged)/2] ^= 1
		f.StoreDerived(listingName(true, n), damaged)
		f.Close()
		if again := list(n); !slices.Equal(again, computed) {
			t.Fatalf("%+v: a damaged copy changed the listing", n)
		}
	}
	c = dwarfindex.New(t.TempDir())
	plain := list(Naming{})
	f, err := dwarfinfo.OpenWith(lib, dwarfinfo.Options{Cache: c})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := f.LoadDerived(listingName(true, Naming{Demangle: true})); ok || len(plain) == 0 {
		t.Fatalf("without demangling: %d names, kept %v", len(plain), ok)
	}
}
