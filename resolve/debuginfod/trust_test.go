package debuginfod

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gprobe/gprobe/internal/testenv"
)

// The attacks of a hostile server or of another user on the cache, each
// of which must fail safely: refused with one line, or the right file;
// never a wrong file, a file read from elsewhere or one left behind.

// warnings collects what a client warns about.
type warnings struct {
	mu    sync.Mutex
	lines []string
}

func (w *warnings) add(s string) {
	w.mu.Lock()
	w.lines = append(w.lines, s)
	w.mu.Unlock()
}

func (w *warnings) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines...)
}

// noEntry fails t when the cache holds an entry (or a miss) for kind.
func noEntry(t *testing.T, cache, id, kind string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(cache, id, kind)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cache entry %s/%s left: %v", id, kind, err)
	}
}

func newTLS(t *testing.T, h http.Handler) *httptest.Server {
	s := httptest.NewTLSServer(h)
	t.Cleanup(s.Close)
	return s
}

func redirectTo(target string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusFound)
	})
}

// A server that redirects to a file: URL gets nothing read: the local file
// is neither stored nor returned, and the server that has the file is
// used instead.
func TestRedirectToFileRefused(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, elfOfSize(testID, 700), 0o600) // even the right bytes are not read from there
	for _, target := range []string{"file://" + secret, "file:" + secret, "FILE://localhost" + secret, "gopher://127.0.0.1:1/x"} {
		t.Run(target, func(t *testing.T) {
			evil := serve(t, redirectTo(target))
			cache := t.TempDir()
			_, err := client(cache, evil.URL).Debuginfo(context.Background(), testID)
			if err == nil || !strings.Contains(err.Error(), "refused a redirect to a ") || !strings.Contains(err.Error(), "(only http and https are followed)") {
				t.Fatalf("%v, want the redirect refused", err)
			}
			if strings.Count(err.Error(), "\n") != 0 {
				t.Errorf("more than one line: %q", err)
			}
			noEntry(t, cache, testID, "debuginfo")
			noTemp(t, cache)

			good := serve(t, &files{content: map[string][]byte{"/buildid/" + testID + "/debuginfo": elfOfSize(testID, 900)}})
			p, err := client(cache, evil.URL, good.URL).Debuginfo(context.Background(), testID)
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(p); len(b) != 900 {
				t.Errorf("got %d bytes, want the good server's 900", len(b))
			}
		})
	}
}

// An https server may not send gprobe to plain http.
func TestRedirectHTTPSToHTTPRefused(t *testing.T) {
	plain := serve(t, &files{content: map[string][]byte{"/buildid/" + testID + "/debuginfo": elfOfSize(testID, 512)}})
	s := newTLS(t, redirectTo(plain.URL+"/buildid/"+testID+"/debuginfo"))
	c := client(t.TempDir(), s.URL)
	c.HTTP = s.Client()
	_, err := c.Debuginfo(context.Background(), testID)
	if err == nil || !strings.Contains(err.Error(), "refused a redirect from https to http") {
		t.Fatalf("%v, want the downgrade refused", err)
	}
	// https to https is followed.
	s2 := newTLS(t, &files{content: map[string][]byte{"/buildid/" + testID + "/debuginfo": elfOfSize(testID, 512)}})
	s3 := newTLS(t, redirectTo(s2.URL+"/buildid/"+testID+"/debuginfo"))
	c = client(t.TempDir(), s3.URL)
	c.HTTP = s2.Client() // one test certificate for all test servers
	if _, err := c.Debuginfo(context.Background(), testID); err != nil {
		t.Errorf("https to https: %v", err)
	}
}

// A redirect to another host is followed (elfutils follows them), over
// http or https only, without the headers DEBUGINFOD_HEADERS_FILE adds.
func TestRedirectToAnotherHostDropsHeaders(t *testing.T) {
	other := &files{content: map[string][]byte{"/elsewhere": elfOfSize(testID, 512)}}
	so := serve(t, other)
	first := &files{}
	sf := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first.mu.Lock()
		first.headers = append(first.headers, r.Header.Clone())
		first.mu.Unlock()
		http.Redirect(w, r, so.URL+"/elsewhere", http.StatusFound)
	}))
	c := client(t.TempDir(), sf.URL)
	c.Header = http.Header{"Authorization": {"Bearer secret"}, "X-Api-Key": {"k"}}
	if _, err := c.Debuginfo(context.Background(), testID); err != nil {
		t.Fatal(err)
	}
	if got := first.headers[0].Get("X-Api-Key"); got != "k" {
		t.Errorf("the server named in DEBUGINFOD_URLS did not get the headers: %q", got)
	}
	h := other.headers[0]
	if h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" {
		t.Errorf("the other host got the headers file's headers: %v", h)
	}
}

// A server that sends another build-id's file, or a page that is not ELF,
// with 200: the file is thrown away with one line, the other servers are
// asked, and nothing wrong stays in the cache.
func TestWrongBuildIDFromServer(t *testing.T) {
	for name, body := range map[string][]byte{
		"other build-id": elfOfSize(otherID, 4096),
		"not ELF":        []byte("<html>rate limited</html>"),
	} {
		t.Run(name, func(t *testing.T) {
			evil := serve(t, &files{content: map[string][]byte{"/buildid/" + testID + "/debuginfo": body}})
			cache := t.TempDir()
			var w warnings
			c := client(cache, evil.URL)
			c.Warn = w.add
			_, err := c.Debuginfo(context.Background(), testID)
			if !errors.Is(err, ErrWrongBuildID) {
				t.Fatalf("%v, want ErrWrongBuildID", err)
			}
			want := "the file of build-id " + otherID
			if name == "not ELF" {
				want = "a file that is not ELF"
			}
			if !strings.HasSuffix(err.Error(), evil.URL+": sent "+want) {
				t.Errorf("error %q does not say %q", err, want)
			}
			if l := w.get(); len(l) != 1 || !strings.Contains(l[0], evil.URL+" sent "+want+" when asked for the debuginfo of build-id "+testID) {
				t.Errorf("warnings %q", l)
			}
			noEntry(t, cache, testID, "debuginfo") // neither the file nor a miss
			noTemp(t, cache)

			// With a server that has the right file, whichever answers
			// first, the right file is kept.
			good := elfOfSize(testID, 5000)
			sg := serve(t, &files{content: map[string][]byte{"/buildid/" + testID + "/debuginfo": good}})
			for _, order := range [][]string{{evil.URL, sg.URL}, {sg.URL, evil.URL}} {
				cache := t.TempDir()
				p, err := client(cache, order...).Debuginfo(context.Background(), testID)
				if err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(p); !bytes.Equal(b, good) {
					t.Errorf("kept %d bytes, want the right file", len(b))
				}
			}
		})
	}
	// Sources are not ELF: they are not checked.
	src := serve(t, &files{content: map[string][]byte{"/buildid/" + testID + "/source/a.c": []byte("int a;\n")}})
	if _, err := client(t.TempDir(), src.URL).Source(context.Background(), testID, "/a.c"); err != nil {
		t.Errorf("source: %v", err)
	}
}

// A cache entry that is not the file of its build-id (planted, or from an
// older gprobe) is removed with one line and fetched again.
func TestWrongBuildIDInCache(t *testing.T) {
	for name, planted := range map[string][]byte{
		"other build-id": elfOfSize(otherID, 1024),
		"not ELF":        []byte("not ELF"),
	} {
		t.Run(name, func(t *testing.T) {
			cache := t.TempDir()
			os.Mkdir(filepath.Join(cache, testID), 0o700)
			os.WriteFile(filepath.Join(cache, testID, "executable"), planted, 0o400)
			good := elfOfSize(testID, 2048)
			srv := &files{content: map[string][]byte{"/buildid/" + testID + "/executable": good}}
			var w warnings
			c := client(cache, serve(t, srv).URL)
			c.Warn = w.add
			p, err := c.Executable(context.Background(), testID)
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(p); !bytes.Equal(b, good) {
				t.Error("the planted file was returned")
			}
			if l := w.get(); len(l) != 1 || !strings.HasPrefix(l[0], "debuginfod: removed "+p+" from the cache: ") ||
				!strings.HasSuffix(l[0], ", not of build-id "+testID) {
				t.Errorf("warnings %q", l)
			}
			if srv.hits.Load() != 1 {
				t.Errorf("%d requests, want 1", srv.hits.Load())
			}
		})
	}
}

// An endless body stops at DEBUGINFOD_MAXSIZE (here small), with a
// message naming it; without the variable gprobe's default bound holds
// and says how to change it.
func TestEndlessBody(t *testing.T) {
	var sent sync.Map
	endless := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 64<<10)
		n := 0
		for r.Context().Err() == nil {
			if _, err := w.Write(buf); err != nil {
				break
			}
			n += len(buf)
		}
		sent.Store(r.URL.Path, n)
	}))
	cache := t.TempDir()
	t.Setenv("DEBUGINFOD_URLS", endless.URL)
	t.Setenv("DEBUGINFOD_CACHE_PATH", cache)
	t.Setenv("DEBUGINFOD_MAXSIZE", "1000000")
	start := time.Now()
	_, err := FromEnv().Debuginfo(context.Background(), testID)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "bytes, over DEBUGINFOD_MAXSIZE=1000000") {
		t.Fatalf("%v, want ErrTooLarge", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
	noEntry(t, cache, testID, "debuginfo")
	noTemp(t, cache)

	// The default bound (made small here).
	defer func(n int64) { defaultMaxSize = n }(defaultMaxSize)
	defaultMaxSize = 2000000
	os.Unsetenv("DEBUGINFOD_MAXSIZE")
	_, err = FromEnv().Debuginfo(context.Background(), testID)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "bytes, over gprobe's default bound of 2000000 (DEBUGINFOD_MAXSIZE=BYTES sets another, 0 none)") {
		t.Fatalf("%v, want the default bound", err)
	}
	// A server that announces more than the bound is refused before its
	// body.
	huge := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.FormatInt(5<<30, 10))
		w.WriteHeader(200)
	}))
	_, err = client(cache, huge.URL).Debuginfo(context.Background(), testID)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), ": 5368709120 bytes, over gprobe's default bound") {
		t.Errorf("%v", err)
	}
	// DEBUGINFOD_MAXSIZE=0 is no bound, as in elfutils, and the real
	// default is larger than any kernel's debug file.
	t.Setenv("DEBUGINFOD_MAXSIZE", "0")
	if max, _ := FromEnv().maxSize(); max != 0 {
		t.Errorf("DEBUGINFOD_MAXSIZE=0: bound %d", max)
	}
	if DefaultMaxSize < 2<<30 {
		t.Errorf("DefaultMaxSize %d is not above any vmlinux", int64(DefaultMaxSize))
	}
}

// A server that drips (fast enough not to count as stalled) is stopped
// at DEBUGINFOD_MAXTIME, or by default at gprobe's bound.
func TestSlowDrip(t *testing.T) {
	drip := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000000")
		for r.Context().Err() == nil {
			if _, err := w.Write(make([]byte, 20<<10)); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond) // 200 KiB/s: above the 100 KiB/s stall limit
		}
	}))
	cache := t.TempDir()
	t.Setenv("DEBUGINFOD_URLS", drip.URL)
	t.Setenv("DEBUGINFOD_CACHE_PATH", cache)
	t.Setenv("DEBUGINFOD_MAXTIME", "1")
	t.Setenv("DEBUGINFOD_TIMEOUT", "1")
	start := time.Now()
	_, err := FromEnv().Debuginfo(context.Background(), testID)
	if err == nil || !strings.Contains(err.Error(), "gave up after 1s (DEBUGINFOD_MAXTIME)") {
		t.Fatalf("%v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
	noTemp(t, cache)
	defer func(d time.Duration) { defaultMaxTime = d }(defaultMaxTime)
	defaultMaxTime = 1500 * time.Millisecond
	os.Unsetenv("DEBUGINFOD_MAXTIME")
	_, err = FromEnv().Debuginfo(context.Background(), testID)
	if err == nil || !strings.Contains(err.Error(), "gave up after 1.5s (gprobe's default bound; DEBUGINFOD_MAXTIME=SECONDS sets another, 0 none)") {
		t.Fatalf("%v", err)
	}
	noTemp(t, cache)
}

// A file:// server is read by its own code: it answers from its
// directory only (a source path with ".." cannot leave it), and the HTTP
// client has no file protocol a redirect could reach.
func TestFileServerConfined(t *testing.T) {
	root := t.TempDir()
	srv := filepath.Join(root, "srv")
	os.MkdirAll(filepath.Join(srv, "buildid", testID, "source", "src"), 0o755)
	os.WriteFile(filepath.Join(srv, "buildid", testID, "source", "src", "a.c"), []byte("int a;\n"), 0o644)
	os.WriteFile(filepath.Join(root, "secret"), []byte("secret\n"), 0o600)
	c := client(t.TempDir(), "file://"+srv)
	if p, err := c.Source(context.Background(), testID, "/src/a.c"); err != nil {
		t.Fatal(err)
	} else if b, _ := os.ReadFile(p); string(b) != "int a;\n" {
		t.Errorf("%q", b)
	}
	_, err := c.Source(context.Background(), testID, "/../../../../secret")
	if err == nil || !strings.Contains(err.Error(), "leads out of the server's directory") {
		t.Errorf("%v, want the path refused", err)
	}
	if defaultHTTP().Transport.(*http.Transport).Clone() == nil {
		t.Fatal("no transport")
	}
	req, _ := http.NewRequest("GET", "file:///etc/hostname", nil)
	if _, err := defaultHTTP().Transport.RoundTrip(req); err == nil {
		t.Error("the HTTP transport reads file: URLs")
	}
}

// A cache directory another user owns or can write, or under a directory
// another user owns, is refused with one line naming it; nothing in it is
// read, and nothing is written.
func TestUnsafeCacheRefused(t *testing.T) {
	uid, gid := testenv.Nobody(t)
	srv := serve(t, &files{content: map[string][]byte{"/buildid/" + testID + "/debuginfo": elfOfSize(testID, 512)}})
	// plant makes a cache with a planted debuginfo entry.
	plant := func(cache string) {
		os.MkdirAll(filepath.Join(cache, testID), 0o700)
		os.WriteFile(filepath.Join(cache, testID, "debuginfo"), elfOfSize(testID, 4096), 0o444)
	}
	cases := []struct {
		name   string
		setup  func(base string) (cache, culprit string)
		reason string
	}{
		{"root owned by nobody", func(base string) (string, string) {
			c := filepath.Join(base, "cache")
			plant(c)
			os.Chown(c, uid, gid)
			return c, c
		}, fmt.Sprintf("owned by uid %d (gprobe runs as uid 0)", uid)},
		{"root writable by everyone", func(base string) (string, string) {
			c := filepath.Join(base, "cache")
			plant(c)
			os.Chmod(c, 0o777)
			return c, c
		}, "writable by everyone"},
		{"root writable by another group", func(base string) (string, string) {
			c := filepath.Join(base, "cache")
			plant(c)
			os.Chown(c, 0, gid)
			os.Chmod(c, 0o775)
			return c, c
		}, fmt.Sprintf("writable by group %d", gid)},
		{"home of nobody (sudo keeping HOME)", func(base string) (string, string) {
			home := filepath.Join(base, "home")
			c := filepath.Join(home, ".cache", "debuginfod_client")
			plant(c)
			os.Chown(home, uid, gid)
			return c, c
		}, fmt.Sprintf("%s above it is owned by uid %d", "HOME", uid)},
		{"build-id directory owned by nobody", func(base string) (string, string) {
			c := filepath.Join(base, "cache")
			plant(c)
			os.Chown(filepath.Join(c, testID), uid, gid)
			return c, filepath.Join(c, testID)
		}, fmt.Sprintf("owned by uid %d", uid)},
		{"build-id directory a link", func(base string) (string, string) {
			c := filepath.Join(base, "cache")
			plant(filepath.Join(base, "elsewhere"))
			os.MkdirAll(c, 0o755)
			os.Symlink(filepath.Join(base, "elsewhere", testID), filepath.Join(c, testID))
			return c, filepath.Join(c, testID)
		}, "it is a symbolic link"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			cache, culprit := tc.setup(base)
			reason := strings.ReplaceAll(tc.reason, "HOME", filepath.Join(base, "home"))
			before := listing(t, base)
			c := client(cache, srv.URL)
			if tc.name == "home of nobody (sudo keeping HOME)" {
				c.Cache = ""
				t.Setenv("HOME", filepath.Join(base, "home"))
				t.Setenv("XDG_CACHE_HOME", "")
				t.Setenv("DEBUGINFOD_CACHE_PATH", "")
			}
			p, err := c.Debuginfo(context.Background(), testID)
			if !errors.Is(err, ErrUnsafeCache) || p != "" {
				t.Fatalf("%q, %v; want ErrUnsafeCache", p, err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, culprit+": another user could change it") || !strings.Contains(msg, reason) {
				t.Errorf("error %q should name %s and say %q", msg, culprit, reason)
			}
			if _, err := os.Lstat(filepath.Join(cache, cleanIntervalFile)); culprit == cache && err == nil {
				t.Error("a settings file was written in the refused cache")
			}
			if after := listing(t, base); after != before {
				t.Errorf("the cache changed:\nbefore\n%s\nafter\n%s", before, after)
			}
		})
	}
}

// listing is every path under dir with its mode and owner, but the
// cache's settings files (written in a cache gprobe may use).
func listing(t *testing.T, dir string) string {
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !strings.HasPrefix(fi.Name(), "cache_") {
			st := fi.Sys().(*syscall.Stat_t)
			fmt.Fprintf(&b, "%s %v %d %d\n", p, fi.Mode(), st.Uid, fi.Size())
		}
		return nil
	})
	return b.String()
}

// Links planted in a cache gprobe owns (left from a time it was shared,
// or by a program of the user's) are not followed: an entry that is a link
// is removed with one line and fetched again, and the settings files are
// not written through one.
func TestPlantedLinks(t *testing.T) {
	base := t.TempDir()
	secret := filepath.Join(base, "secret")
	os.WriteFile(secret, []byte("root:secret\n"), 0o600)
	rightELF := filepath.Join(base, "right")
	os.WriteFile(rightELF, elfOfSize(testID, 512), 0o600)
	cache := filepath.Join(base, "cache")
	os.MkdirAll(filepath.Join(cache, testID), 0o700)
	srcEntry := filepath.Join(cache, testID, "source##src##a.c")
	os.Symlink(secret, srcEntry)
	os.Symlink(rightELF, filepath.Join(cache, testID, "debuginfo")) // even the right file: not through a link
	victim := filepath.Join(base, "victim")
	os.Symlink(victim, filepath.Join(cache, cleanIntervalFile))
	os.Symlink(victim+"2", filepath.Join(cache, cacheMissFile))

	srv := &files{content: map[string][]byte{
		"/buildid/" + testID + "/source/src/a.c": []byte("int a;\n"),
		"/buildid/" + testID + "/debuginfo":      elfOfSize(testID, 700),
	}}
	var w warnings
	c := client(cache, serve(t, srv).URL)
	c.Warn = w.add
	p, err := c.Source(context.Background(), testID, "/src/a.c")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "int a;\n" {
		t.Errorf("source %q, want the server's", b)
	}
	p, err = c.Debuginfo(context.Background(), testID)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() || st.Size() != 700 {
		t.Errorf("debuginfo entry %v, %v; want the server's file", st, err)
	}
	if l := w.get(); len(l) != 2 || !strings.Contains(l[0], srcEntry+" from the cache: a symbolic link") {
		t.Errorf("warnings %q", l)
	}
	for _, v := range []string{victim, victim + "2"} {
		if _, err := os.Lstat(v); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a settings file was written through a link: %s exists", v)
		}
	}
	if b, _ := os.ReadFile(secret); string(b) != "root:secret\n" {
		t.Error("the link's target changed")
	}
}

// A download killed with SIGKILL leaves its temporary file; the next
// fetch of that build-id, or the cache's cleaning, removes it, but never
// the file of a download still running.
func TestKilledDownloadLeavesNoTemp(t *testing.T) {
	if os.Getenv("GPROBE_TEST_DOWNLOAD") != "" {
		c := client(os.Getenv("GPROBE_TEST_CACHE"), os.Getenv("GPROBE_TEST_DOWNLOAD"))
		c.Timeout = time.Minute
		c.Debuginfo(context.Background(), testID)
		return
	}
	started := make(chan struct{}, 1)
	drip := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10000000")
		w.Write(make([]byte, 1<<20))
		w.(http.Flusher).Flush()
		select {
		case started <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	cache := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledDownloadLeavesNoTemp$")
	cmd.Env = append(os.Environ(), "GPROBE_TEST_DOWNLOAD="+drip.URL, "GPROBE_TEST_CACHE="+cache)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the download did not start")
	}
	temps := func() []string {
		m, _ := filepath.Glob(filepath.Join(cache, testID, tmpPrefix+"*"))
		return m
	}
	// Wait for the megabyte to reach the file, then kill.
	for i := 0; i < 100; i++ {
		if m := temps(); len(m) == 1 {
			if st, _ := os.Stat(m[0]); st != nil && st.Size() > 0 {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	left := temps()
	if len(left) != 1 {
		t.Fatalf("after SIGKILL: temporary files %v, want the one the download left", left)
	}
	// Too fresh to tell from a download just created: kept.
	c := client(cache, serve(t, &files{content: map[string][]byte{"/buildid/" + testID + "/debuginfo": elfOfSize(testID, 512)}}).URL)
	if _, err := c.Debuginfo(context.Background(), otherID); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	os.Chtimes(left[0], old, old)
	// A running download's file (locked) is never removed.
	running, err := os.CreateTemp(filepath.Join(cache, testID), tmpPrefix)
	if err != nil {
		t.Fatal(err)
	}
	defer running.Close()
	syscall.Flock(int(running.Fd()), syscall.LOCK_EX)
	os.Chtimes(running.Name(), old, old)
	// The cleaning (due here) removes the dead one.
	os.Chtimes(filepath.Join(cache, cleanIntervalFile), time.Now().Add(-48*time.Hour), time.Now().Add(-48*time.Hour))
	if _, err := c.Debuginfo(context.Background(), otherID); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if m := temps(); len(m) != 1 || m[0] != running.Name() {
		t.Errorf("after cleaning: %v, want only the running download's %s", m, running.Name())
	}
	// A fetch of that build-id removes it too (without the cleaning).
	running.Close()
	if _, err := c.Debuginfo(context.Background(), testID); err != nil {
		t.Fatal(err)
	}
	if m := temps(); len(m) != 0 {
		t.Errorf("after a fetch: %v", m)
	}
}

func TestMaxEnvSemantics(t *testing.T) {
	t.Setenv("DEBUGINFOD_URLS", "http://x")
	for _, tc := range []struct {
		set        bool
		v          string
		size       int64
		time       time.Duration
		defaultsOn bool
	}{
		{false, "", DefaultMaxSize, DefaultMaxTime, true},
		{true, "0", 0, 0, false},
		{true, "", 0, 0, false},
		{true, "junk", 0, 0, false},
		{true, "-5", 0, 0, false},
		{true, "12", 12, 12 * time.Second, false},
	} {
		if tc.set {
			t.Setenv("DEBUGINFOD_MAXSIZE", tc.v)
			t.Setenv("DEBUGINFOD_MAXTIME", tc.v)
		} else {
			os.Unsetenv("DEBUGINFOD_MAXSIZE")
			os.Unsetenv("DEBUGINFOD_MAXTIME")
		}
		c := FromEnv()
		s, d1 := c.maxSize()
		m, d2 := c.maxTime()
		if s != tc.size || m != tc.time || d1 != tc.defaultsOn || d2 != tc.defaultsOn {
			t.Errorf("%v %q: size %d %v, time %s %v", tc.set, tc.v, s, d1, m, d2)
		}
	}
}
