package debuginfod

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

// Interoperation with elfutils' own client, debuginfod-find (Debian's
// elfutils 0.188): one cache, files, misses and sources alike.

// debuginfodFind runs debuginfod-find with the cache and servers given.
func debuginfodFind(t *testing.T, cache, urls string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(testenv.Tool(t, "debuginfod-find"), args...)
	cmd.Env = append(os.Environ(), "DEBUGINFOD_CACHE_PATH="+cache, "DEBUGINFOD_URLS="+urls, "DEBUGINFOD_PROGRESS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		err = errors.New(strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), err
}

const otherID = "88465abd0d48756ce17aea6e15c1c03a65059850"

func TestElfutilsReadsGprobesCache(t *testing.T) {
	srv := &files{content: map[string][]byte{
		"/buildid/" + testID + "/debuginfo":              elfOfSize(testID, 512),
		"/buildid/" + testID + "/source/usr/src/a%23b.c": []byte("int a;\n"),
	}}
	s := serve(t, srv)
	cache := t.TempDir()
	c := client(cache, s.URL)
	ctx := context.Background()
	dbg, err := c.Debuginfo(ctx, testID)
	if err != nil {
		t.Fatal(err)
	}
	src, err := c.Source(ctx, testID, "/usr/src/a#b.c")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Debuginfo(ctx, otherID); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	hits := srv.hits.Load()
	// elfutils finds both files without asking the server, and believes
	// the miss gprobe recorded.
	if got, err := debuginfodFind(t, cache, s.URL, "debuginfo", testID); err != nil || got != dbg {
		t.Errorf("debuginfod-find debuginfo: %q, %v; want %s", got, err, dbg)
	}
	if got, err := debuginfodFind(t, cache, s.URL, "source", testID, "/usr/src/a#b.c"); err != nil || got != src {
		t.Errorf("debuginfod-find source: %q, %v; want %s", got, err, src)
	}
	srv.mu.Lock()
	srv.content["/buildid/"+otherID+"/debuginfo"] = elfOfSize(otherID, 512)
	srv.mu.Unlock()
	if got, err := debuginfodFind(t, cache, s.URL, "debuginfo", otherID); err == nil {
		t.Errorf("debuginfod-find ignored gprobe's cached miss: %s", got)
	}
	if srv.hits.Load() != hits {
		t.Errorf("debuginfod-find asked the server %d times", srv.hits.Load()-hits)
	}
}

func TestGprobeReadsElfutilsCache(t *testing.T) {
	srv := &files{content: map[string][]byte{
		"/buildid/" + testID + "/debuginfo":              elfOfSize(testID, 512),
		"/buildid/" + testID + "/source/usr/src/a%23b.c": []byte("int a;\n"),
	}}
	s := serve(t, srv)
	cache := t.TempDir()
	dbg, err := debuginfodFind(t, cache, s.URL, "debuginfo", testID)
	if err != nil {
		t.Fatal(err)
	}
	src, err := debuginfodFind(t, cache, s.URL, "source", testID, "/usr/src/a#b.c")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := debuginfodFind(t, cache, s.URL, "debuginfo", otherID); err == nil {
		t.Fatal("debuginfod-find found a missing file")
	}
	hits := srv.hits.Load()
	srv.mu.Lock()
	srv.content["/buildid/"+otherID+"/debuginfo"] = elfOfSize(otherID, 512)
	srv.mu.Unlock()
	c := client(cache, s.URL)
	ctx := context.Background()
	if got, err := c.Debuginfo(ctx, testID); err != nil || got != dbg {
		t.Errorf("Debuginfo: %q, %v; want %s", got, err, dbg)
	}
	if got, err := c.Source(ctx, testID, "/usr/src/a#b.c"); err != nil || got != src {
		t.Errorf("Source: %q, %v; want %s", got, err, src)
	}
	if got, err := c.Debuginfo(ctx, otherID); !errors.Is(err, ErrNotFound) {
		t.Errorf("gprobe ignored elfutils' cached miss: %q, %v", got, err)
	}
	if srv.hits.Load() != hits {
		t.Errorf("gprobe asked the server %d times", srv.hits.Load()-hits)
	}
}

// TestDebianServer fetches from Debian's debuginfod serving Debian's
// libc6-dbg package: what gprobe downloads is the package's file, byte for
// byte, and the file debuginfod-find downloads.
func TestDebianServer(t *testing.T) {
	deb := testenv.DebianDeb(t, "libc6-dbg")
	member := firstDebugFile(t, deb)
	id := strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(member, "./usr/lib/debug/.build-id/"), ".debug"), "/", "")
	want, err := exec.Command("sh", "-c", `dpkg-deb --fsys-tarfile "$1" | tar -xO "$2"`, "sh", deb, member).Output()
	if err != nil || len(want) == 0 {
		t.Fatalf("extracting %s from %s: %v", member, deb, err)
	}
	srv := testenv.StartDebuginfod(t, []string{deb})
	missing := serve(t, &files{})
	cache := t.TempDir()
	c := client(cache, missing.URL, srv.URL)
	p, err := c.Debuginfo(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, want) {
		t.Errorf("%s: %d bytes differ from the package's %s (%d bytes)", p, len(got), member, len(want))
	}
	other := t.TempDir()
	q, err := debuginfodFind(t, other, srv.URL, "debuginfo", id)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(q); !bytes.Equal(got, want) {
		t.Errorf("debuginfod-find's copy differs")
	}
	if rel, _ := filepath.Rel(other, q); rel != filepath.Join(id, "debuginfo") {
		t.Errorf("debuginfod-find's cache path %s, gprobe's %s", q, p)
	}
	// The package has no executables: the one-line error names both servers.
	_, err = c.Executable(context.Background(), id)
	want2 := "debuginfod: no executable for build-id " + id + ": " + missing.URL + ": 404 Not Found; " + srv.URL + ": 404 Not Found"
	if err == nil || err.Error() != want2 {
		t.Errorf("error\n%v\nwant\n%s", err, want2)
	}
}

// firstDebugFile is the first build-id debug file listed in deb.
func firstDebugFile(t *testing.T, deb string) string {
	t.Helper()
	out, err := exec.Command("sh", "-c", `dpkg-deb --fsys-tarfile "$1" | tar -t`, "sh", deb).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "./usr/lib/debug/.build-id/") && strings.HasSuffix(l, ".debug") {
			return l
		}
	}
	t.Fatalf("%s has no build-id debug file", deb)
	return ""
}
