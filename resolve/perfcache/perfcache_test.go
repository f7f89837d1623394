package perfcache

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/resolve/spec"
)

// sample is a binary every Debian system has, with a GNU build-id.
const sample = "/usr/bin/true"

func newCache(t *testing.T) *Cache {
	t.Helper()
	return &Cache{Root: filepath.Join(testenv.Home(t), ".debug")}
}

// TestAdd: Add lays the binary out as perf's build_id_cache__add does, and
// the cache then names it by its build-id.
func TestAdd(t *testing.T) {
	c := newCache(t)
	bid, real, err := c.Add(sample)
	if err != nil {
		t.Fatal(err)
	}
	want, err := FileBuildID(sample)
	if err != nil || bid != want || len(bid) != 40 {
		t.Fatalf("build-id %q, want %q (%v)", bid, want, err)
	}
	link, err := os.Readlink(c.LinkName(bid))
	if err != nil || link != "../.."+real+"/"+bid {
		t.Errorf("link %q %v", link, err)
	}
	a, _ := os.Stat(real)
	b, err := os.Stat(filepath.Join(c.Dir(real, bid), "elf"))
	if err != nil || a.Size() != b.Size() {
		t.Errorf("elf: %v", err)
	}
	if name, err := c.OrigName(bid); err != nil || name != real {
		t.Errorf("OrigName %q %v", name, err)
	}
	if ids, err := c.List(); err != nil || len(ids) != 1 || ids[0] != bid {
		t.Errorf("List %v %v", ids, err)
	}
	if p, ok := c.Valid(bid); !ok || p != real {
		t.Errorf("Valid %q %v", p, ok)
	}
	if got := c.Complement(bid[:6]); got != bid {
		t.Errorf("Complement %q", got)
	}
	if got := c.Complement("zz"); got != "" {
		t.Errorf("Complement of a non-hex prefix %q", got)
	}
	// Again: nothing changes, nothing fails.
	if bid2, _, err := c.Add(sample); err != nil || bid2 != bid {
		t.Errorf("second Add: %v", err)
	}
	// An entry whose file no longer has that build-id is not valid.
	if _, ok := c.Valid("00" + bid[2:]); ok {
		t.Error("an unknown build-id is valid")
	}
}

func TestOrigName(t *testing.T) {
	for target, want := range map[string]string{
		"../../usr/bin/python3.11/571d98e01096d5c1c32420d229a6731a0a50d2a0": "/usr/bin/python3.11",
		"../../[kernel.kallsyms]/0123456789abcdef0123456789abcdef01234567":  "[kernel.kallsyms]",
		"/usr/bin/x/abc": "",
		"../..":          "",
	} {
		got, err := origName(target)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("%q: %q %v, want %q", target, got, err, want)
		}
	}
}

// TestProbesFormat: perf's own probe cache of python3.11 reads and writes
// back byte for byte.
func TestProbesFormat(t *testing.T) {
	b, err := os.ReadFile("testdata/python3.11.probes")
	if err != nil {
		t.Fatal(err)
	}
	es, err := ParseProbes(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 8 || !es[0].SDT || es[0].Group != "sdt_python" || es[0].Event != "audit" || len(es[0].Lines) != 1 {
		t.Fatalf("%+v", es)
	}
	if got := FormatProbes(es); string(got) != string(b) {
		t.Errorf("written back:\n%s\nwant:\n%s", got, b)
	}
	if e := Find(es, "", "line"); e == nil || e.Group != "sdt_python" {
		t.Errorf("Find: %+v", e)
	}
	// A user's cached probe (perf probe --cache) without a name, and one
	// with.
	es, err = ParseProbes([]byte("#vfs_read\np:probe/vfs_read vfs_read+0\n#probe:myev=func x\np:probe/myev f+0 x=%di\n"))
	if err != nil || len(es) != 2 || es[0].Event != "" || es[1].Group != "probe" || es[1].Event != "myev" || es[1].SDT {
		t.Errorf("%+v %v", es, err)
	}
	for _, bad := range []string{"p:probe/x y+0\n", "#vfs_read:\\\n", "%" + strings.Repeat("x", 5000) + "\n"} {
		if _, err := ParseProbes([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestEntryAdd(t *testing.T) {
	e := SDTEntry("sdt_x", "y")
	for _, l := range []string{"p:b 0x9", "p:a 0x10", "p:b 0x9"} {
		e.Add(l)
	}
	if strings.Join(e.Lines, "|") != "p:a 0x10|p:b 0x9" || e.Spec != "sdt_x:y=y" {
		t.Errorf("%+v", e)
	}
}

// TestTrust: what another user could have written is not read.
func TestTrust(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the checks are exercised as root (chown)")
	}
	c := newCache(t)
	bid, real, err := c.Add(sample)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetProbes(bid, []Entry{SDTEntry("sdt_x", "y")}); err != nil {
		t.Fatal(err)
	}
	if es, err := c.Probes(bid); err != nil || len(es) != 1 {
		t.Fatalf("%+v %v", es, err)
	}
	probes := filepath.Join(c.Dir(real, bid), "probes")
	untrusted := func(what string) {
		t.Helper()
		if _, err := c.Probes(bid); !errors.Is(err, ErrUntrusted) {
			t.Errorf("%s: %v, want ErrUntrusted", what, err)
		}
	}
	os.Chmod(probes, 0o664)
	if _, err := c.Probes(bid); err != nil { // internal/safedir's rule
		t.Errorf("a probe cache writable by gprobe's own group: %v", err)
	}
	os.Chown(probes, 0, 65534)
	untrusted("a probe cache writable by another group")
	os.Chmod(probes, 0o644)
	os.Chown(probes, 65534, 65534)
	untrusted("another user's probe cache")
	os.Chown(probes, 0, 0)
	os.Chmod(c.Dir(real, bid), 0o777)
	untrusted("a world-writable entry directory")
	os.Chmod(c.Dir(real, bid), 0o755)
	os.Chown(c.Root, 65534, 65534)
	if err := c.Trusted(); !errors.Is(err, ErrUntrusted) {
		t.Errorf("another user's cache: %v", err)
	}
	os.Chown(c.Root, 0, 0)
	parent := filepath.Dir(c.Root)
	os.Chmod(parent, 0o777)
	if err := c.Trusted(); !errors.Is(err, ErrUntrusted) {
		t.Errorf("a world-writable directory above: %v", err)
	}
	os.Chmod(parent, 0o777|os.ModeSticky)
	if err := c.Trusted(); err != nil {
		t.Errorf("a sticky directory above (/tmp): %v", err)
	}
	os.Chmod(parent, 0o755)
	// A probe cache that is a link, to anywhere.
	os.Rename(probes, probes+".real")
	os.Symlink("probes.real", probes)
	untrusted("a linked probe cache")
	os.Remove(probes)
	os.Rename(probes+".real", probes)
	// A build-id link leading out of the cache.
	link := c.LinkName(bid)
	os.Remove(link)
	os.Symlink("../../../../../tmp", link)
	untrusted("a link out of the cache")
	os.Remove(link)
	os.Symlink("../.."+real+"/"+bid, link)
	if _, err := c.Probes(bid); err != nil {
		t.Errorf("restored: %v", err)
	}
	// Another user's build-id link.
	if err := os.Lchown(link, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	untrusted("another user's link")
}

// TestNoBuildID: a file without a GNU build-id cannot be cached.
func TestNoBuildID(t *testing.T) {
	exe, err := os.Executable() // Go links no GNU build-id by default
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FileBuildID(exe); err == nil {
		t.Skip("this test binary has a GNU build-id")
	} else if !errors.Is(err, ErrNoBuildID) {
		t.Errorf("%v", err)
	}
	if _, _, err := newCache(t).Add(exe); !errors.Is(err, ErrNoBuildID) {
		t.Errorf("Add: %v", err)
	}
}

// TestValidChecksTheLink: a build-id link in a directory another user can
// write is not followed (the file it names would be read as root).
func TestValidChecksTheLink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the checks are exercised as root (chown)")
	}
	c := newCache(t)
	bid, _, err := c.Add(sample)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Valid(bid); !ok {
		t.Fatal("not valid as added")
	}
	dir := filepath.Dir(c.LinkName(bid))
	os.Chown(dir, 65534, 65534)
	if _, ok := c.Valid(bid); ok {
		t.Error("valid through another user's directory")
	}
	if ids, err := c.ValidList(); err != nil || len(ids) != 0 {
		t.Errorf("ValidList %v %v", ids, err)
	}
}

// EntryFile names an entry's files only once they pass the checks.
func TestEntryFile(t *testing.T) {
	c := newCache(t)
	bid, real, err := c.Add(sample)
	if err != nil {
		t.Fatal(err)
	}
	elf := filepath.Join(c.Dir(real, bid), "elf")
	if p, err := c.EntryFile(bid, "elf"); err != nil || p != elf {
		t.Fatalf("EntryFile(elf) = %q, %v", p, err)
	}
	if _, err := c.EntryFile(bid, "debug"); !errors.Is(err, ErrNotCached) {
		t.Errorf("EntryFile(debug) without one: %v", err)
	}
	if _, err := c.EntryFile("00"+bid[2:], "elf"); !errors.Is(err, ErrNotCached) {
		t.Errorf("EntryFile of an unknown build-id: %v", err)
	}
	debug := filepath.Join(c.Dir(real, bid), "debug")
	if err := os.Symlink("elf", debug); err != nil {
		t.Fatal(err)
	}
	if _, err := c.EntryFile(bid, "debug"); !errors.Is(err, ErrUntrusted) {
		t.Errorf("a debug file that is a link: %v", err)
	}
	os.Remove(debug)
	if err := os.WriteFile(debug, []byte("x"), 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(debug, 0o666)
	if _, err := c.EntryFile(bid, "debug"); !errors.Is(err, ErrUntrusted) {
		t.Errorf("a world-writable debug file: %v", err)
	}
}

// FuzzParseProbes: any probe cache file (another tool, or a damaged disk,
// may have written it) parses without a panic or fails in one line, and
// what parses is written back (FormatProbes) as a file that parses to the
// same entries and is written again byte for byte.
func FuzzParseProbes(f *testing.F) {
	if b, err := os.ReadFile("testdata/python3.11.probes"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("#vfs_read\np:probe/vfs_read vfs_read+0\n#probe:myev=func x\np:probe/myev f+0 x=%di\n"))
	f.Add([]byte("%sdt_x:y=y\n\n\np:sdt_x/y /bin/x:0x10\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := ParseProbes(b)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		out := FormatProbes(es)
		again, err := ParseProbes(out)
		if err != nil {
			t.Fatalf("%q written back as %q, which fails: %v", b, out, err)
		}
		if !reflect.DeepEqual(normal(again), normal(es)) {
			t.Fatalf("%q: %+v written back as %q reads as %+v", b, es, out, again)
		}
		if out2 := FormatProbes(again); !bytes.Equal(out2, out) {
			t.Fatalf("%q: written %q then %q", b, out, out2)
		}
	})
}

// normal makes nil and empty line lists equal.
func normal(es []Entry) []Entry {
	for i := range es {
		if len(es[i].Lines) == 0 {
			es[i].Lines = nil
		}
	}
	return es
}

// TestSDTSpec: sdtSpec, where it reads a command, reads what spec's full
// parse does; on perf's SDT commands for names of every length, odd
// characters and other shapes.
func TestSDTSpec(t *testing.T) {
	cases := []string{"sdt_python:line=line", "sdt_hotspot:class__loaded=class__loaded", "a:b=b", "_:_=_",
		"sdt_x:a=b", "sdt_x:a", "sdt_x:1a=1a", "1x:a=a", "sdt_x:a-b=a-b", "sdt_x:a=a arg", "sdt_x:a=a%return",
		"sdt_x:a.b=a.b", ":a=a", "sdt_x:=", "sdt_x:a=a=a", "sdt_x:a:b=b", "vfs_read", "ev=vfs_read", "g:ev=func:3"}
	for n := 1; n <= 70; n++ {
		name := strings.Repeat("n", n)
		cases = append(cases, "sdt_g:"+name+"="+name, name+":e=e")
	}
	read := 0
	for _, c := range cases {
		g, ev, ok := sdtSpec(c)
		if !ok {
			continue
		}
		read++
		p, err := spec.ParseProbe(c)
		if err != nil || !p.UserEvent || p.Point.Group != g || p.Point.Event != ev {
			t.Errorf("%q: sdtSpec reads %q:%q; the full parse: %+v, %v", c, g, ev, p, err)
		}
	}
	if read < 60 {
		t.Errorf("sdtSpec read only %d of the cases", read)
	}
}
