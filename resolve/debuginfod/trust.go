package debuginfod

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// What gprobe takes from a server, and what it refuses (docs/security.md):
//
//   - redirects go to http or https URLs only, never from https to http;
//     a redirect to another host does not carry DEBUGINFOD_HEADERS_FILE's
//     headers;
//   - a file:// server is a directory read by its own code, never a
//     protocol of the HTTP client (which a redirect could reach), and a
//     source path cannot lead out of it;
//   - a debuginfo or executable file must be ELF with the GNU build-id it
//     was asked for, checked before it is moved into the cache and again
//     whenever the cache answers;
//   - a transfer stops at MaxSize bytes and MaxTime, by default
//     DefaultMaxSize and DefaultMaxTime.

// Default bounds of a download when DEBUGINFOD_MAXSIZE and
// DEBUGINFOD_MAXTIME are not set: far above any kernel's debug file
// (Debian's 6.1 and 6.12 vmlinux are under 700 MB; the largest debug
// files distributions serve, LLVM's, about 3 GB) and above what a slow
// link takes for them, so that only a server that sends without end, or
// drips, is stopped.
const (
	DefaultMaxSize = 4 << 30
	DefaultMaxTime = time.Hour
)

// The bounds in force when none is set (variables for the tests).
var (
	defaultMaxSize int64 = DefaultMaxSize
	defaultMaxTime       = DefaultMaxTime
)

// ErrWrongBuildID: a server sent a file that is not ELF, or not the one of
// the build-id asked for.
var ErrWrongBuildID = errors.New("the file has another build-id")

// maxRedirects is how many redirects one request follows (libcurl's
// default in elfutils' client is unlimited; Go's is 10).
const maxRedirects = 10

// checkRedirect is the policy for every redirect a server answers.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	switch req.URL.Scheme {
	case "http", "https":
	default:
		return fmt.Errorf("refused a redirect to a %s: URL (only http and https are followed)", req.URL.Scheme)
	}
	for _, v := range via {
		if v.URL.Scheme == "https" && req.URL.Scheme == "http" {
			return fmt.Errorf("refused a redirect from https to http (%s)", req.URL.Redacted())
		}
	}
	if req.URL.Host != via[0].URL.Host {
		for k := range c.Header {
			req.Header.Del(k)
		}
	}
	return nil
}

var defaultHTTP = sync.OnceValue(func() *http.Client {
	return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
})

// httpClient is the client requests go through: c.HTTP's transport (or
// Go's default one), with gprobe's redirect policy.
func (c *Client) httpClient() *http.Client {
	base := defaultHTTP()
	if c.HTTP != nil {
		base = c.HTTP
	}
	hc := *base
	hc.CheckRedirect = c.checkRedirect
	return &hc
}

// getFile answers a file:// URL from the directory it names, as a server
// would: 200 with the file, 404 when it is not there. The path is cleaned
// and must stay inside the server's buildid directory (a source path with
// ".." components cannot leave it).
func getFile(base, u string) (*http.Response, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	if pu.Host != "" && pu.Host != "localhost" {
		return nil, fmt.Errorf("file URL names host %q (only local files are read)", pu.Host)
	}
	bu, err := url.Parse(strings.TrimSuffix(base, "/") + "/buildid")
	if err != nil {
		return nil, err
	}
	root := path.Clean(bu.Path) + "/"
	p := path.Clean(pu.Path)
	if !strings.HasPrefix(p, root) {
		return nil, fmt.Errorf("%s leads out of the server's directory %s", pu.Path, root)
	}
	notFound := func() (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusNotFound, Status: "404 Not Found", Body: http.NoBody,
			Header: http.Header{}, ContentLength: 0}, nil
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return notFound()
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return notFound()
	}
	h := http.Header{}
	h.Set("Last-Modified", st.ModTime().UTC().Format(http.TimeFormat))
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Body: f, Header: h, ContentLength: st.Size()}, nil
}

// isELFArtifact reports whether kind is checked against its build-id.
func isELFArtifact(kind string) bool { return kind == "debuginfo" || kind == "executable" }

// checkBuildID reports (an error wrapping ErrWrongBuildID, which says
// what r is instead) whether r is ELF with build-id id.
func checkBuildID(r io.ReaderAt, id string) error {
	got, err := dwarfinfo.ReaderBuildID(r)
	switch {
	case err != nil:
		return &wrongFile{"a file that is not ELF"}
	case got == "":
		return &wrongFile{"an ELF file without a build-id"}
	case got != id:
		return &wrongFile{"the file of build-id " + got}
	}
	return nil
}

// wrongFile is a file that is not the one asked for: what it is.
type wrongFile struct{ is string }

func (e *wrongFile) Error() string { return fmt.Sprintf("%v: %s", ErrWrongBuildID, e.is) }
func (e *wrongFile) Unwrap() error { return ErrWrongBuildID }

// what says what a file that failed checkBuildID is.
func what(err error) string {
	var w *wrongFile
	if errors.As(err, &w) {
		return w.is
	}
	return err.Error()
}

func (c *Client) warn(s string) {
	if c.Warn != nil {
		c.Warn(s)
	}
}
