package debuginfod

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const testID = "3b43fad5034874490492495d552c0af6a5fab235"

// files is a debuginfod server over a map of paths to contents, counting
// the requests it gets.
type files struct {
	mu      sync.Mutex
	content map[string][]byte
	hits    atomic.Int32
	headers []http.Header
}

func (f *files) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.hits.Add(1)
	f.mu.Lock()
	f.headers = append(f.headers, r.Header.Clone())
	b, ok := f.content[r.URL.EscapedPath()]
	f.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Last-Modified", "Mon, 16 Nov 2026 10:17:00 GMT")
	w.Write(b)
}

func serve(t *testing.T, h http.Handler) *httptest.Server {
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func client(cache string, servers ...string) *Client {
	return &Client{Servers: servers, Cache: cache, Timeout: 5 * time.Second, RetryLimit: 2}
}

// noTemp fails t when a download left a temporary file in the cache.
func noTemp(t *testing.T, cache string) {
	t.Helper()
	filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(filepath.Base(p), ".") && !strings.HasSuffix(p, "_s") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

func TestFetchIntoElfutilsLayout(t *testing.T) {
	body := elfOfSize(testID, 500000)
	srv := &files{content: map[string][]byte{"/buildid/" + testID + "/debuginfo": body}}
	s := serve(t, srv)
	cache := filepath.Join(t.TempDir(), "cache")
	c := client(cache, s.URL)
	p, err := c.Debuginfo(context.Background(), testID)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, testID, "debuginfo"); p != want {
		t.Errorf("path %s, want %s", p, want)
	}
	got, _ := os.ReadFile(p)
	if !bytes.Equal(got, body) {
		t.Errorf("content differs: %d bytes, want %d", len(got), len(body))
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o400 {
		t.Errorf("file mode %v, want 0400", st.Mode().Perm())
	}
	if want := time.Date(2026, 11, 16, 10, 17, 0, 0, time.UTC); !st.ModTime().Equal(want) {
		t.Errorf("file time %v, want the server's Last-Modified %v", st.ModTime(), want)
	}
	dst, _ := os.Stat(filepath.Dir(p))
	if dst.Mode().Perm() != 0o700 {
		t.Errorf("build-id directory mode %v, want 0700", dst.Mode().Perm())
	}
	if b, err := os.ReadFile(filepath.Join(cache, "cache_clean_interval_s")); err != nil || string(b) != "86400" {
		t.Errorf("cache_clean_interval_s = %q, %v; want 86400", b, err)
	}
	noTemp(t, cache)

	// A second fetch is a cache hit: the server is not asked.
	s.Close()
	hits := srv.hits.Load()
	if p2, err := c.Debuginfo(context.Background(), testID); err != nil || p2 != p {
		t.Errorf("cache hit: %q, %v", p2, err)
	}
	if srv.hits.Load() != hits {
		t.Error("the server was asked again for a cached file")
	}
}

func TestSourcePathEscaping(t *testing.T) {
	srv := &files{content: map[string][]byte{
		"/buildid/" + testID + "/source/usr/src/a%23b/c%20d%2B%2B.c": []byte("int main;\n"),
	}}
	s := serve(t, srv)
	cache := t.TempDir()
	p, err := client(cache, s.URL+"/").Source(context.Background(), testID, "/usr/src/a#b/c d++.c")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, testID, "source##usr##src##a#_b##c d++.c"); p != want {
		t.Errorf("path %s, want %s", p, want)
	}
	_, err = client(cache, s.URL).Source(context.Background(), testID, "src/a.c")
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("relative source path: %v, want ErrInvalid", err)
	}
	_, err = client(cache, s.URL).Debuginfo(context.Background(), "3B43")
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("upper-case build-id: %v, want ErrInvalid", err)
	}
}

func TestNotFoundEverywhere(t *testing.T) {
	a, b := &files{}, &files{}
	sa, sb := serve(t, a), serve(t, b)
	cache := t.TempDir()
	c := client(cache, sa.URL, sb.URL, sa.URL) // a duplicate is asked once
	_, err := c.Debuginfo(context.Background(), testID)
	want := fmt.Sprintf("debuginfod: no debuginfo for build-id %s: %s: 404 Not Found; %s: 404 Not Found", testID, sa.URL, sb.URL)
	if err == nil || err.Error() != want {
		t.Fatalf("error\n%v\nwant\n%s", err, want)
	}
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("%v is not ErrNotFound", err)
	}
	if a.hits.Load() != 1 || b.hits.Load() != 1 {
		t.Errorf("requests: %d and %d, want one each (404 is not retried)", a.hits.Load(), b.hits.Load())
	}
	// The miss is recorded as elfutils records it, and believed.
	st, err := os.Stat(filepath.Join(cache, testID, "debuginfo"))
	if err != nil || st.Size() != 0 {
		t.Fatalf("negative cache entry: %v, %v", st, err)
	}
	_, err = c.Debuginfo(context.Background(), testID)
	if !errors.Is(err, ErrNotFound) || !strings.HasSuffix(err.Error(), "records the miss for 600s, "+filepath.Join(cache, "cache_miss_s")+")") {
		t.Errorf("second fetch: %v, want a cached miss", err)
	}
	if a.hits.Load() != 1 || b.hits.Load() != 1 {
		t.Error("a cached miss asked the servers again")
	}
	// Once cache_miss_s has passed, the servers are asked again.
	old := time.Now().Add(-601 * time.Second)
	os.Chtimes(filepath.Join(cache, testID, "debuginfo"), old, old)
	c.Debuginfo(context.Background(), testID)
	if a.hits.Load() != 2 {
		t.Errorf("expired miss: %d requests, want 2", a.hits.Load())
	}
}

// A file:// server is a directory laid out as a server's URLs.
func TestFileURL(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "buildid", testID), 0o755)
	body := elfOfSize(testID, 1000)
	os.WriteFile(filepath.Join(dir, "buildid", testID, "debuginfo"), body, 0o644)
	c := client(t.TempDir(), "file://"+dir)
	p, err := c.Debuginfo(context.Background(), testID)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, body) {
		t.Errorf("%q", got)
	}
	_, err = c.Executable(context.Background(), testID)
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("missing file: %v", err)
	}
}

func TestFallsBackToTheServerThatHasIt(t *testing.T) {
	body := elfOfSize(testID, 600)
	sa := serve(t, &files{})
	sb := serve(t, &files{content: map[string][]byte{"/buildid/" + testID + "/executable": body}})
	cache := t.TempDir()
	p, err := client(cache, sa.URL, sb.URL).Executable(context.Background(), testID)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, body) || filepath.Base(p) != "executable" {
		t.Errorf("%s: %q", p, got)
	}
}

// stall answers with headers and part of the body, then sends nothing
// until the client gives up.
func stall(sent *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		w.Header().Set("Content-Length", "1000000")
		w.Write(make([]byte, 1000))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
}

func TestStalledServerTimesOut(t *testing.T) {
	var sent atomic.Int32
	s := serve(t, stall(&sent))
	cache := t.TempDir()
	c := client(cache, s.URL)
	c.Timeout, c.RetryLimit = time.Second, 1
	start := time.Now()
	_, err := c.Debuginfo(context.Background(), testID)
	took := time.Since(start)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("%v, want ErrUnavailable", err)
	}
	want := fmt.Sprintf("debuginfod: no debuginfo for build-id %s: %s: timed out (under 100 KiB/s for 1s, DEBUGINFOD_TIMEOUT) after 1000 of 1000000 bytes (2 tries)", testID, s.URL)
	if err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
	if sent.Load() != 2 {
		t.Errorf("%d requests, want 2 (one retry)", sent.Load())
	}
	if took < 2*time.Second || took > 10*time.Second {
		t.Errorf("took %s, want about 2 s", took)
	}
	if _, err := os.Stat(filepath.Join(cache, testID, "debuginfo")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a timed-out download left a cache entry: %v", err)
	}
	noTemp(t, cache)
}

func TestServerThatNeverAnswersTimesOut(t *testing.T) {
	s := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	c := client(t.TempDir(), s.URL)
	c.Timeout, c.RetryLimit = time.Second, 0
	_, err := c.Debuginfo(context.Background(), testID)
	if err == nil || !strings.HasSuffix(err.Error(), s.URL+": timed out (under 100 KiB/s for 1s, DEBUGINFOD_TIMEOUT)") {
		t.Errorf("%v", err)
	}
}

// truncating announces n bytes and sends half, cutting the connection,
// the first failures times; then it sends everything.
func truncating(body []byte, failures int32, tries *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		if tries.Add(1) > failures {
			w.Write(body)
			return
		}
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	})
}

func TestTruncatedDownloadIsNotTrusted(t *testing.T) {
	body := elfOfSize(testID, 200000)
	var tries atomic.Int32
	s := serve(t, truncating(body, 99, &tries))
	cache := t.TempDir()
	_, err := client(cache, s.URL).Debuginfo(context.Background(), testID)
	want := fmt.Sprintf("debuginfod: no debuginfo for build-id %s: %s: truncated: received 100000 of 200000 bytes (3 tries)", testID, s.URL)
	if err == nil || err.Error() != want {
		t.Fatalf("error\n%v\nwant\n%s", err, want)
	}
	if _, err := os.Stat(filepath.Join(cache, testID, "debuginfo")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a truncated download left a cache entry: %v", err)
	}
	noTemp(t, cache)

	// A retry that completes is kept.
	tries.Store(0)
	s2 := serve(t, truncating(body, 1, &tries))
	p, err := client(cache, s2.URL).Debuginfo(context.Background(), testID)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, body) {
		t.Errorf("kept %d bytes, want %d", len(got), len(body))
	}
	noTemp(t, cache)
}

func TestRetriesServerErrors(t *testing.T) {
	var n atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write(elfOfSize(testID, 512))
	})
	s := serve(t, h)
	c := client(t.TempDir(), s.URL)
	c.RetryLimit = 1
	_, err := c.Debuginfo(context.Background(), testID)
	if err == nil || !strings.HasSuffix(err.Error(), ": 503 Service Unavailable (2 tries)") || !errors.Is(err, ErrUnavailable) {
		t.Errorf("RetryLimit 1: %v", err)
	}
	n.Store(0)
	c = client(t.TempDir(), s.URL) // RetryLimit 2
	if _, err := c.Debuginfo(context.Background(), testID); err != nil {
		t.Errorf("RetryLimit 2: %v", err)
	}
}

func TestMaxSize(t *testing.T) {
	body := make([]byte, 5000)
	srv := &files{content: map[string][]byte{"/buildid/" + testID + "/debuginfo": body}}
	s := serve(t, srv)
	cache := t.TempDir()
	c := client(cache, s.URL)
	c.MaxSize = 4096
	_, err := c.Debuginfo(context.Background(), testID)
	if !errors.Is(err, ErrTooLarge) || !strings.HasSuffix(err.Error(), ": 5000 bytes, over DEBUGINFOD_MAXSIZE=4096") {
		t.Errorf("%v", err)
	}
	if got := srv.headers[0].Get("X-Debuginfod-Maxsize"); got != "4096" {
		t.Errorf("X-DEBUGINFOD-MAXSIZE sent: %q", got)
	}
	if srv.hits.Load() != 1 {
		t.Errorf("%d requests; too large is an answer, not retried", srv.hits.Load())
	}
	// A server that refuses by the header (406) is as final.
	s406 := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "too big", http.StatusNotAcceptable)
	}))
	_, err = client(cache, s406.URL).Debuginfo(context.Background(), testID)
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("406: %v", err)
	}
	// Neither is remembered as a miss.
	if _, err := os.Stat(filepath.Join(cache, testID, "debuginfo")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cache entry after a refusal: %v", err)
	}
}

func TestMaxTime(t *testing.T) {
	var sent atomic.Int32
	s := serve(t, stall(&sent))
	c := client(t.TempDir(), s.URL)
	c.MaxTime = time.Second
	_, err := c.Debuginfo(context.Background(), testID)
	if err == nil || !strings.Contains(err.Error(), "gave up after 1s (DEBUGINFOD_MAXTIME)") {
		t.Errorf("%v", err)
	}
}

func TestUnreachableServer(t *testing.T) {
	s := serve(t, &files{})
	url := s.URL
	s.Close()
	c := client(t.TempDir(), url)
	c.RetryLimit = 0
	_, err := c.Debuginfo(context.Background(), testID)
	if err == nil || !strings.Contains(err.Error(), url+": dial tcp") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("%v", err)
	}
}

// Concurrent fetches of one file, as from several gprobe runs, download it
// once; every caller gets the complete file.
func TestConcurrentFetchesDownloadOnce(t *testing.T) {
	body := elfOfSize(testID, 3<<20)
	var n atomic.Int32
	s := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		time.Sleep(200 * time.Millisecond)
		w.Write(body)
	}))
	cache := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := client(cache, s.URL).Debuginfo(context.Background(), testID)
			if err == nil {
				if got, _ := os.ReadFile(p); !bytes.Equal(got, body) {
					err = fmt.Errorf("read %d bytes", len(got))
				}
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n.Load() != 1 {
		t.Errorf("%d downloads, want 1", n.Load())
	}
}

func TestProgress(t *testing.T) {
	body := elfOfSize(testID, 300<<10)
	s := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		for i := 0; i < 3; i++ {
			w.Write(body[i*100<<10 : (i+1)*100<<10])
			w.(http.Flusher).Flush()
			time.Sleep(300 * time.Millisecond)
		}
	}))
	var got []Progress
	c := client(t.TempDir(), s.URL)
	c.Progress = func(p Progress) { got = append(got, p) }
	if _, err := c.Debuginfo(context.Background(), testID); err != nil {
		t.Fatal(err)
	}
	if len(got) < 3 {
		t.Fatalf("%d progress calls", len(got))
	}
	last := got[len(got)-1]
	if !last.Done || last.Err != nil || last.Received != int64(len(body)) || last.Total != int64(len(body)) || last.Server != s.URL {
		t.Errorf("last progress %+v", last)
	}
	for _, p := range got[:len(got)-1] {
		if p.Done || p.Servers != 1 || p.Server != "" && (p.Total != int64(len(body)) || p.Received > int64(len(body))) {
			t.Errorf("progress %+v", p)
		}
	}
	var line strings.Builder
	show := ProgressLine(&line)
	show(Progress{BuildID: testID, Artifact: "debuginfo", Server: "http://127.0.0.1:8002", Received: 222711234, Total: 589914456, Elapsed: 4 * time.Second})
	show(Progress{BuildID: testID, Artifact: "debuginfo", Server: "http://127.0.0.1:8002", Received: 589914456, Total: 589914456, Elapsed: 12340 * time.Millisecond, Done: true})
	show(Progress{BuildID: testID, Artifact: "debuginfo", Servers: 2, Elapsed: 2600 * time.Millisecond, Total: -1, Done: true, Err: ErrNotFound})
	want := "\r\x1b[Kdebuginfod: debuginfo 3b43fad5 from 127.0.0.1:8002: 212.4 MiB of 562.6 MiB, 53.1 MiB/s" +
		"\r\x1b[Kdebuginfod: debuginfo 3b43fad5 from 127.0.0.1:8002: 562.6 MiB of 562.6 MiB, 45.6 MiB/s in 12.3s\n" +
		"\r\x1b[Kdebuginfod: debuginfo 3b43fad5: asking 2 servers, 3s, failed\n"
	if line.String() != want {
		t.Errorf("progress line\n%q\nwant\n%q", line.String(), want)
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv("DEBUGINFOD_URLS", "")
	if FromEnv() != nil {
		t.Error("no servers: want nil")
	}
	headers := filepath.Join(t.TempDir(), "h")
	os.WriteFile(headers, []byte("Authorization: Bearer x\n\nbad header\nX-A:  b \n"), 0o644)
	t.Setenv("DEBUGINFOD_URLS", "  http://a:8002 https://b/  ")
	t.Setenv("DEBUGINFOD_TIMEOUT", "30s")
	t.Setenv("DEBUGINFOD_RETRY_LIMIT", "x")
	t.Setenv("DEBUGINFOD_MAXSIZE", "1000")
	t.Setenv("DEBUGINFOD_MAXTIME", "")
	t.Setenv("DEBUGINFOD_CACHE_PATH", "/tmp/c")
	t.Setenv("DEBUGINFOD_HEADERS_FILE", headers)
	c := FromEnv()
	if got := strings.Join(c.Servers, ","); got != "http://a:8002,https://b/" {
		t.Errorf("servers %q", got)
	}
	// MAXTIME set but empty is elfutils' 0: no bound.
	if c.Timeout != 30*time.Second || c.RetryLimit != 0 || c.MaxSize != 1000 || c.MaxTime != -1 || c.Cache != "/tmp/c" {
		t.Errorf("%+v", c)
	}
	if c.Header.Get("Authorization") != "Bearer x" || c.Header.Get("X-A") != "b" || len(c.Header) != 2 {
		t.Errorf("headers %v", c.Header)
	}
	os.Unsetenv("DEBUGINFOD_TIMEOUT")
	os.Unsetenv("DEBUGINFOD_RETRY_LIMIT")
	if c := FromEnv(); c.Timeout != 90*time.Second || c.RetryLimit != 2 {
		t.Errorf("defaults: %+v", c)
	}
	if got := (&Client{Servers: []string{"http://a:8002", "https://b/", "http://a:8002/"}}).servers(testID, "debuginfo", ""); len(got) != 2 ||
		got[0].url != "http://a:8002/buildid/"+testID+"/debuginfo" || got[1].url != "https://b/buildid/"+testID+"/debuginfo" {
		t.Errorf("server URLs %+v %+v", got[0], got[1])
	}
}

func TestCacheDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("DEBUGINFOD_CACHE_PATH", "")
	t.Setenv("XDG_CACHE_HOME", "")
	if got := CacheDir(); got != home+"/.cache/debuginfod_client" {
		t.Errorf("default: %s", got)
	}
	t.Setenv("XDG_CACHE_HOME", home+"/xdg")
	if got := CacheDir(); got != home+"/xdg/debuginfod_client" {
		t.Errorf("XDG: %s", got)
	}
	os.Mkdir(home+"/.debuginfod_client_cache", 0o700)
	if got := CacheDir(); got != home+"/.debuginfod_client_cache" {
		t.Errorf("old cache: %s", got)
	}
	t.Setenv("DEBUGINFOD_CACHE_PATH", "/elsewhere")
	if got := CacheDir(); got != "/elsewhere" {
		t.Errorf("DEBUGINFOD_CACHE_PATH: %s", got)
	}
}

func TestClean(t *testing.T) {
	root := t.TempDir()
	ch := &cache{root: root}
	old := time.Now().Add(-8 * 24 * time.Hour)
	mk := func(p string, t time.Time) {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o700)
		os.WriteFile(filepath.Join(root, p), []byte("x"), 0o400)
		os.Chtimes(filepath.Join(root, p), t, t)
	}
	mk("aa11/debuginfo", old)
	mk("bb22/debuginfo", time.Now())
	mk("bb22/source##a.c", old)
	mk("cc33/debuginfo.Xy12", old) // not elfutils' to clean
	os.Chtimes(filepath.Join(root, "aa11"), old, old)
	ch.clean(time.Now()) // creates cache_clean_interval_s: no cleaning yet
	if !exists(filepath.Join(root, "aa11/debuginfo")) {
		t.Fatal("cleaned before the interval passed")
	}
	os.Chtimes(filepath.Join(root, cleanIntervalFile), old, old)
	ch.clean(time.Now())
	for p, want := range map[string]bool{"aa11/debuginfo": false, "aa11": true, "bb22/debuginfo": true,
		"bb22/source##a.c": false, "cc33/debuginfo.Xy12": true} {
		if exists(filepath.Join(root, p)) != want {
			t.Errorf("%s exists: %v, want %v", p, !want, want)
		}
	}
	// The emptied directory goes at a later cleaning (its time changed).
	os.Chtimes(filepath.Join(root, "aa11"), old, old)
	os.Chtimes(filepath.Join(root, cleanIntervalFile), old, old)
	ch.clean(time.Now())
	if exists(filepath.Join(root, "aa11")) {
		t.Error("empty old build-id directory kept")
	}
}

func TestAtoi(t *testing.T) {
	for in, want := range map[string]int64{"": 0, "12": 12, " 7x": 7, "-3": -3, "+4": 4, "abc": 0} {
		if got := atoi(in); got != want {
			t.Errorf("atoi(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestFromEnvTo: nil without servers; the progress line only when asked.
func TestFromEnvTo(t *testing.T) {
	t.Setenv("DEBUGINFOD_URLS", "")
	if FromEnvTo(io.Discard, true, nil) != nil {
		t.Error("no servers: want nil")
	}
	t.Setenv("DEBUGINFOD_URLS", "http://a:8002")
	var warned []string
	warn := func(s string) { warned = append(warned, s) }
	if c := FromEnvTo(io.Discard, false, warn); c == nil || c.Progress != nil || c.Warn == nil {
		t.Errorf("without progress: %+v", c)
	} else if c.Warn("w"); len(warned) != 1 {
		t.Error("Warn is not warn")
	}
	if c := FromEnvTo(io.Discard, true, nil); c == nil || c.Progress == nil {
		t.Errorf("with progress: %+v", c)
	}
}
