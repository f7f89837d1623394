package debuginfod

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gprobe/gprobe/internal/safedir"
)

// fetch returns the cache path of an artifact, downloading it first when
// the cache has neither it nor a recent miss.
func (c *Client) fetch(ctx context.Context, id, kind, srcPath string) (string, error) {
	artifact := kind
	if srcPath != "" {
		artifact += " " + srcPath
	}
	fail := func(sentinel error, format string, args ...any) error {
		return &Error{BuildID: id, Artifact: artifact, Reason: fmt.Sprintf(format, args...), Err: sentinel}
	}
	if len(id) > maxBuildIDLen || !buildIDRe().MatchString(id) {
		return "", fail(ErrInvalid, "not a build-id (lower-case hexadecimal, at most %d digits)", maxBuildIDLen)
	}
	if kind == "source" && !strings.HasPrefix(srcPath, "/") {
		return "", fail(ErrInvalid, "source paths are asked for absolute")
	}
	servers := c.servers(id, kind, srcPath)
	if len(servers) == 0 {
		return "", fail(ErrUnavailable, "no server given (DEBUGINFOD_URLS)")
	}
	ch, err := c.openCache()
	if err != nil {
		return "", fail(cacheSentinel(err), "cache: %v", err)
	}
	path := ch.entry(id, kind, srcPath)
	// cached answers from the cache: the file, a recent miss, or (done
	// false) that the servers are to be asked.
	cached := func() (done bool, err error) {
		hit, miss, err := ch.lookup(path, id, kind)
		switch {
		case hit:
			return true, nil
		case miss:
			keep, _ := ch.config(cacheMissFile, cacheMissDefault)
			return true, fail(ErrNotFound, "no server had it when last asked (%s records the miss for %ds, %s)",
				path, keep, filepath.Join(ch.root, cacheMissFile))
		case err != nil:
			return true, fail(cacheSentinel(err), "cache: %v", err)
		}
		return false, nil
	}
	if done, err := cached(); done {
		if err != nil {
			return "", err
		}
		return path, nil
	}
	unlock, err := lockDir(ctx, filepath.Dir(path))
	if err != nil {
		return "", fail(cacheSentinel(err), "cache: %v", err)
	}
	defer unlock()
	// Another gprobe may have fetched it while this one waited.
	if done, err := cached(); done {
		if err != nil {
			return "", err
		}
		return path, nil
	}
	if maxTime, _ := c.maxTime(); maxTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, maxTime)
		defer cancel()
	}
	d := &download{c: c, id: id, kind: kind, artifact: artifact, path: path, servers: servers}
	if err := d.run(ctx); err != nil {
		if errors.Is(err, ErrNotFound) {
			ch.recordMiss(path)
		}
		return "", err
	}
	return path, nil
}

// server is one server's part in a download.
type server struct {
	base  string // as given in Servers
	url   string
	said  string
	tries int
	// final: the server answered (not found, too large); it is not asked
	// again.
	final    bool
	notFound bool
	tooLarge bool
	wrongID  bool // sent a file that is not the one asked for
}

// servers are the distinct servers and the URL of the artifact on each
// (elfutils appends "/buildid", or "buildid" after a '/').
func (c *Client) servers(id, kind, srcPath string) []*server {
	var out []*server
	seen := map[string]bool{}
	for _, base := range c.Servers {
		b := strings.TrimSuffix(base, "/") + "/buildid"
		if base == "" || seen[b] {
			continue
		}
		seen[b] = true
		u := b + "/" + id + "/" + kind
		if srcPath != "" {
			u += "/" + escapeURLPath(srcPath[1:])
		}
		out = append(out, &server{base: base, url: u})
	}
	return out
}

// escapeURLPath is what elfutils sends for a source path: curl_easy_escape
// (every byte but A-Z a-z 0-9 - . _ ~ as %XX) with the slashes kept.
func escapeURLPath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		ch := p[i]
		switch {
		case ch >= 'A' && ch <= 'Z', ch >= 'a' && ch <= 'z', ch >= '0' && ch <= '9',
			ch == '-', ch == '.', ch == '_', ch == '~', ch == '/':
			b.WriteByte(ch)
		default:
			fmt.Fprintf(&b, "%%%02X", ch)
		}
	}
	return b.String()
}

// download is one fetch from the servers into the cache.
type download struct {
	c            *Client
	id, artifact string
	kind         string
	path         string
	servers      []*server
	tmp          *os.File
	// sending is the answer being received, nil while the servers are
	// asked (for Progress).
	sending atomic.Pointer[transfer]
}

// transfer is an answer being received.
type transfer struct {
	r     *reply
	total int64
	start time.Time
}

// errOtherServer cancels the servers still asking once one has the file.
var errOtherServer = errors.New("another server answered first")

// stallError cancels an attempt that moved too slowly for too long.
type stallError struct{ d time.Duration }

func (e *stallError) Error() string {
	return fmt.Sprintf("timed out (under 100 KiB/s for %s, DEBUGINFOD_TIMEOUT)", e.d)
}

// run asks the servers in parallel, in rounds: the first to answer 200
// has its file received; a server that answers "not found" is not asked
// again; one that fails otherwise is asked again, up to RetryLimit more
// times.
func (d *download) run(ctx context.Context) (err error) {
	done := d.report()
	defer func() { done(err) }()
	if d.tmp, err = createTemp(d.path); err != nil {
		return &Error{BuildID: d.id, Artifact: d.artifact, Reason: fmt.Sprintf("cache: %v", err), Err: cacheSentinel(err)}
	}
	defer func() {
		if d.tmp != nil {
			d.tmp.Close()
			os.Remove(d.tmp.Name())
		}
	}()
	for {
		var ask []*server
		for _, s := range d.servers {
			if !s.final && s.tries <= max(d.c.RetryLimit, 0) {
				ask = append(ask, s)
			}
		}
		if len(ask) == 0 || ctx.Err() != nil {
			break
		}
		if resp, s := d.round(ctx, ask); resp != nil {
			if err := d.keep(resp); err != nil {
				return &Error{BuildID: d.id, Artifact: d.artifact, Reason: fmt.Sprintf("%s: %v", s.base, err), Err: ErrUnavailable}
			}
			return nil
		}
	}
	e := &Error{BuildID: d.id, Artifact: d.artifact, Err: ErrNotFound}
	for _, s := range d.servers {
		said := s.said
		if said == "" {
			said = "not asked"
		}
		e.Servers = append(e.Servers, Answer{Server: s.base, Said: said, Tries: s.tries})
		switch {
		case s.tooLarge:
			e.Err = ErrTooLarge
		case s.wrongID && e.Err != ErrTooLarge:
			e.Err = ErrWrongBuildID
		case !s.notFound && e.Err == ErrNotFound:
			e.Err = ErrUnavailable
		}
	}
	if ctx.Err() != nil && e.Err != ErrTooLarge {
		e.Err = ErrUnavailable
		e.Reason = d.stopped(ctx) + "; "
	}
	return e
}

// stopped says why ctx ended a download.
func (d *download) stopped(ctx context.Context) string {
	if maxTime, def := d.c.maxTime(); errors.Is(ctx.Err(), context.DeadlineExceeded) && maxTime > 0 {
		if def {
			return fmt.Sprintf("gave up after %s (gprobe's default bound; DEBUGINFOD_MAXTIME=SECONDS sets another, 0 none)", maxTime)
		}
		return fmt.Sprintf("gave up after %s (DEBUGINFOD_MAXTIME)", maxTime)
	}
	return ctx.Err().Error()
}

// tmpPrefix names the temporary files of downloads (locked while written,
// see safedir.CreateTemp), which elfutils' cleaner never matches: gprobe
// removes those a killed download left (lockDir, clean).
const tmpPrefix = ".gprobe-tmp-"

// createTemp makes the temporary file a download goes to, beside its
// cache entry; like elfutils it tries twice, since a cache cleaner may
// remove the empty build-id directory in between.
func createTemp(path string) (f *os.File, err error) {
	for range 2 {
		if err = os.Mkdir(filepath.Dir(path), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			continue
		}
		if f, err = safedir.CreateTemp(filepath.Dir(path), tmpPrefix); err == nil {
			return f, nil
		}
	}
	return nil, err
}

// reply is one request to one server.
type reply struct {
	s      *server
	resp   *http.Response
	err    error
	ctx    context.Context
	cancel context.CancelCauseFunc
	meter  *meter
}

// round asks every server of ask once, at the same time, and receives the
// file from the first that answers 200 into d.tmp; the others are
// cancelled, which does not count as a try. It returns the response of
// the server whose file is complete, nil when none.
func (d *download) round(ctx context.Context, ask []*server) (*http.Response, *server) {
	replies := make(chan *reply, len(ask))
	var pending []*reply
	for _, s := range ask {
		rctx, cancel := context.WithCancelCause(ctx)
		r := &reply{s: s, ctx: rctx, cancel: cancel, meter: startMeter(d.c.Timeout, cancel)}
		pending = append(pending, r)
		go func() {
			r.resp, r.err = d.c.get(rctx, s.base, s.url)
			replies <- r
		}()
	}
	defer func() {
		for _, r := range pending {
			r.cancel(nil)
		}
	}()
	committed := false
	var won *http.Response
	var winner *server
	for range ask {
		r := <-replies
		s := r.s
		func() {
			defer r.meter.stop()
			if r.resp != nil {
				defer r.resp.Body.Close()
			}
			if r.err != nil && errors.Is(context.Cause(r.ctx), errOtherServer) ||
				r.err == nil && r.resp.StatusCode == http.StatusOK && committed {
				return
			}
			s.tries++
			switch {
			case r.err != nil:
				s.said = describe(r.ctx, r.err)
			case r.resp.StatusCode != http.StatusOK:
				s.said = r.resp.Status
				// 4xx is an answer (406: over X-DEBUGINFOD-MAXSIZE);
				// 5xx may pass.
				s.final = r.resp.StatusCode < 500
				s.tooLarge = r.resp.StatusCode == http.StatusNotAcceptable
				s.notFound = s.final && !s.tooLarge
			default:
				committed = true
				for _, o := range pending {
					if o != r {
						o.cancel(errOtherServer)
					}
				}
				if err := d.receive(r); err != nil {
					s.said = err.Error()
					var tl *tooLargeError
					s.tooLarge = errors.As(err, &tl)
					s.final = s.tooLarge
					return
				}
				if err := d.verify(); err != nil {
					// Thrown away; the other servers are asked in the
					// next round (their cancelling here was no try).
					d.sending.Store(nil)
					s.said = "sent " + what(err)
					s.final, s.wrongID = true, true
					d.c.warn(fmt.Sprintf("debuginfod: %s sent %s when asked for the %s of build-id %s; thrown away",
						s.base, what(err), d.artifact, d.id))
					return
				}
				won, winner = r.resp, s
			}
		}()
	}
	return won, winner
}

// describe says why a request failed: the stall or the network error.
func describe(ctx context.Context, err error) string {
	var stall *stallError
	if errors.As(context.Cause(ctx), &stall) {
		return stall.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// tooLargeError is a file over MaxSize (def: gprobe's default).
type tooLargeError struct {
	size, max int64
	def       bool
}

func (e *tooLargeError) Error() string {
	if e.def {
		return fmt.Sprintf("%d bytes, over gprobe's default bound of %d (DEBUGINFOD_MAXSIZE=BYTES sets another, 0 none)", e.size, e.max)
	}
	return fmt.Sprintf("%d bytes, over DEBUGINFOD_MAXSIZE=%d", e.size, e.max)
}

// maxSize is the size bound in force (0: none) and whether it is the
// default.
func (c *Client) maxSize() (int64, bool) {
	switch {
	case c.MaxSize == 0:
		return defaultMaxSize, true
	case c.MaxSize < 0:
		return 0, false
	}
	return c.MaxSize, false
}

// maxTime is the time bound in force (0: none) and whether it is the
// default.
func (c *Client) maxTime() (time.Duration, bool) {
	switch {
	case c.MaxTime == 0:
		return defaultMaxTime, true
	case c.MaxTime < 0:
		return 0, false
	}
	return c.MaxTime, false
}

// verify checks the received file: a debuginfo or an executable must be
// ELF with the build-id asked for (ErrWrongBuildID).
func (d *download) verify() error {
	if !isELFArtifact(d.kind) {
		return nil
	}
	return checkBuildID(d.tmp, d.id)
}

// get sends one request (base is the server's URL), or reads a file://
// server's directory.
func (c *Client) get(ctx context.Context, base, u string) (*http.Response, error) {
	if strings.HasPrefix(u, "file:") {
		return getFile(base, u)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "gprobe,"+runtime.GOOS+"/"+runtime.GOARCH)
	if max, _ := c.maxSize(); max > 0 {
		req.Header.Set("X-DEBUGINFOD-MAXSIZE", strconv.FormatInt(max, 10))
	}
	return c.httpClient().Do(req)
}

// expectedSize is the size the server announced: Content-Length, else
// (behind a compressing proxy) X-Debuginfod-Size; -1 when neither.
func expectedSize(resp *http.Response) int64 {
	if resp.ContentLength >= 0 && !resp.Uncompressed {
		return resp.ContentLength
	}
	if n, err := strconv.ParseInt(resp.Header.Get("X-Debuginfod-Size"), 10, 64); err == nil && n >= 0 {
		return n
	}
	return -1
}

// receive copies r's body into d.tmp and checks it is all there.
func (d *download) receive(r *reply) error {
	total := expectedSize(r.resp)
	max, def := d.c.maxSize()
	if max > 0 && total > max {
		return &tooLargeError{total, max, def}
	}
	if err := d.tmp.Truncate(0); err != nil {
		return err
	}
	if _, err := d.tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	d.sending.Store(&transfer{r: r, total: total, start: time.Now()})
	body := &meteredReader{r: r.resp.Body, m: r.meter, max: max, def: def}
	n, err := io.CopyBuffer(onlyWriter{d.tmp}, body, make([]byte, 1<<20))
	switch {
	case err != nil:
		var stall *stallError
		var tl *tooLargeError
		switch {
		case errors.As(context.Cause(r.ctx), &stall):
			err = fmt.Errorf("%v after %d of %s bytes", stall, n, sizeText(total))
		case errors.As(err, &tl):
		case errors.Is(err, io.ErrUnexpectedEOF):
			err = fmt.Errorf("truncated: received %d of %s bytes", n, sizeText(total))
		default:
			err = fmt.Errorf("transfer failed after %d of %s bytes: %v", n, sizeText(total), err)
		}
	case total >= 0 && n != total:
		err = fmt.Errorf("truncated: received %d of %d bytes", n, total)
	}
	if err != nil {
		d.sending.Store(nil) // the servers are asked again
	}
	return err
}

func sizeText(n int64) string {
	if n < 0 {
		return "?"
	}
	return strconv.FormatInt(n, 10)
}

// onlyWriter hides *os.File's ReadFrom, so io.CopyBuffer reads through the
// metered reader in its own buffer.
type onlyWriter struct{ w io.Writer }

func (o onlyWriter) Write(p []byte) (int, error) { return o.w.Write(p) }

// meteredReader counts what it reads into m and refuses more than max
// bytes (max > 0).
type meteredReader struct {
	r   io.Reader
	m   *meter
	max int64
	def bool
}

func (mr *meteredReader) Read(p []byte) (int, error) {
	n, err := mr.r.Read(p)
	total := mr.m.n.Add(int64(n))
	if mr.max > 0 && total > mr.max {
		return n, &tooLargeError{total, mr.max, mr.def}
	}
	return n, err
}

// report calls Progress four times a second from now on; the returned
// function ends the reports with the download's outcome.
func (d *download) report() func(error) {
	if d.c.Progress == nil {
		return func(error) {}
	}
	start := time.Now()
	state := func() Progress {
		p := Progress{BuildID: d.id, Artifact: d.artifact, Servers: len(d.servers), Elapsed: time.Since(start), Total: -1}
		if t := d.sending.Load(); t != nil {
			p.Server, p.Received, p.Total, p.Elapsed = t.r.s.base, t.r.meter.n.Load(), t.total, time.Since(t.start)
		}
		return p
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				d.c.Progress(state())
			}
		}
	}()
	return func(err error) {
		close(stop)
		<-stopped
		p := state()
		p.Done, p.Err = true, err
		d.c.Progress(p)
	}
}

// keep moves the complete file into the cache as elfutils does: read-only,
// dated by the server's Last-Modified (both set on the open file, never by
// path), renamed into place.
func (d *download) keep(resp *http.Response) error {
	mtime := time.Now()
	if t, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		mtime = t
	}
	name := d.tmp.Name()
	err := safedir.Stamp(d.tmp, 0o400, mtime)
	if cerr := d.tmp.Close(); err == nil {
		err = cerr
	}
	d.tmp = nil
	if err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, d.path); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

// meter watches one attempt: it counts the bytes received and cancels the
// attempt when, for timeout, fewer than 100 KiB arrive per second
// (libcurl's low-speed limit, which elfutils sets from
// DEBUGINFOD_TIMEOUT); waiting for the answer counts as slow.
type meter struct {
	n    atomic.Int64
	quit chan struct{}
	once sync.Once
}

func startMeter(timeout time.Duration, cancel context.CancelCauseFunc) *meter {
	m := &meter{quit: make(chan struct{})}
	if timeout <= 0 {
		return m
	}
	tick := min(time.Second, timeout)
	go func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		var last int64
		var slowSince time.Time
		for {
			select {
			case <-m.quit:
				return
			case now := <-t.C:
				n := m.n.Load()
				if float64(n-last) < lowSpeedLimit*tick.Seconds() {
					if slowSince.IsZero() {
						slowSince = now.Add(-tick)
					}
					if now.Sub(slowSince) >= timeout {
						cancel(&stallError{timeout})
						return
					}
				} else {
					slowSince = time.Time{}
				}
				last = n
			}
		}
	}()
	return m
}

func (m *meter) stop() { m.once.Do(func() { close(m.quit) }) }
