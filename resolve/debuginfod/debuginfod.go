// Package debuginfod fetches debug files by GNU build-id from debuginfod
// servers, as elfutils' client (libdebuginfod 0.188) does and into the same
// cache, so gprobe, debuginfod-find, gdb and perf share what any of them
// downloaded.
//
// The environment is elfutils': DEBUGINFOD_URLS (servers separated by
// spaces), DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT, DEBUGINFOD_RETRY_LIMIT,
// DEBUGINFOD_MAXSIZE, DEBUGINFOD_MAXTIME and DEBUGINFOD_HEADERS_FILE (see
// FromEnv). A file is downloaded into a temporary file beside its cache
// entry and renamed into place only when it is complete (its size checked
// against Content-Length) and, for debuginfo and executables, is ELF with
// the build-id asked for, so a reader never sees a partial or wrong file;
// gprobe runs fetching the same build-id wait for each other instead of
// downloading it twice. What the client refuses from servers and caches
// is in trust.go.
package debuginfod

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Sentinel errors; an *Error wraps one of them.
var (
	// ErrNotFound: every server answered that it has no such file (or
	// the cache remembers such an answer from less than cache_miss_s
	// seconds ago).
	ErrNotFound = errors.New("not found")
	// ErrTooLarge: the file is larger than DEBUGINFOD_MAXSIZE (or
	// DefaultMaxSize).
	ErrTooLarge = errors.New("larger than DEBUGINFOD_MAXSIZE")
	// ErrUnsafeCache: the cache directory, or a build-id directory in it,
	// could be changed by another user (see internal/safedir).
	ErrUnsafeCache = errors.New("cache directory not safe")
	// ErrUnavailable: no server had the file and at least one could not
	// be asked (unreachable, stalled, failed or cut the transfer short)
	// in all its tries.
	ErrUnavailable = errors.New("no server could deliver it")
	// ErrInvalid: the request cannot be made (a malformed build-id, a
	// relative source path).
	ErrInvalid = errors.New("invalid request")
)

// Elfutils' defaults.
const (
	defaultTimeout    = 90 * time.Second
	defaultRetryLimit = 2
	// lowSpeedLimit is the rate below which a transfer counts as stalled
	// (libcurl's CURLOPT_LOW_SPEED_LIMIT as elfutils sets it).
	lowSpeedLimit = 100 << 10
	maxBuildIDLen = 2 * 64
)

// Client asks debuginfod servers for files. The zero value has no servers;
// FromEnv makes one from elfutils' environment variables.
type Client struct {
	// Servers are the servers' base URLs, asked in parallel.
	Servers []string
	// Cache is the cache directory ("" is elfutils' default location,
	// see CacheDir).
	Cache string
	// Timeout aborts an attempt that moves less than 100 KiB/s for this
	// long, waiting for the answer included (DEBUGINFOD_TIMEOUT, 90 s;
	// 0 never).
	Timeout time.Duration
	// MaxTime bounds a whole fetch (DEBUGINFOD_MAXTIME; 0 is
	// DefaultMaxTime, negative never).
	MaxTime time.Duration
	// RetryLimit is how many times a server that failed other than by
	// answering "not found" is asked again (DEBUGINFOD_RETRY_LIMIT, 2).
	RetryLimit int
	// MaxSize refuses files larger than this many bytes
	// (DEBUGINFOD_MAXSIZE; 0 is DefaultMaxSize, negative no limit).
	// Servers are told it too.
	MaxSize int64
	// Header is sent with every request (DEBUGINFOD_HEADERS_FILE).
	Header http.Header
	// Progress, when set, is called four times a second while a file is
	// asked for and received, and once when the download ends.
	Progress func(Progress)
	// Warn, when set, receives one line when a server or the cache gave
	// a file with the wrong build-id (it is thrown away) or the cache
	// held a stray entry (removed).
	Warn func(string)
	// HTTP is the client requests go through (nil: Go's default
	// transport); its CheckRedirect is replaced by gprobe's policy
	// (trust.go). file:// servers are read without it.
	HTTP *http.Client
}

// FromEnv returns a client configured as elfutils configures its own from
// the environment, or nil when DEBUGINFOD_URLS names no server. Numbers
// are read as elfutils reads them (C atoi: garbage is 0); as in elfutils,
// DEBUGINFOD_MAXSIZE or DEBUGINFOD_MAXTIME set to 0 means no limit, and
// unset, unlike elfutils, gprobe's defaults (DefaultMaxSize,
// DefaultMaxTime).
func FromEnv() *Client {
	servers := strings.FieldsFunc(os.Getenv("DEBUGINFOD_URLS"), func(r rune) bool { return r == ' ' })
	if len(servers) == 0 {
		return nil
	}
	c := &Client{
		Servers:    servers,
		Cache:      os.Getenv("DEBUGINFOD_CACHE_PATH"),
		Timeout:    defaultTimeout,
		RetryLimit: defaultRetryLimit,
	}
	if v, ok := os.LookupEnv("DEBUGINFOD_TIMEOUT"); ok {
		c.Timeout = time.Duration(atoi(v)) * time.Second
	}
	if v, ok := os.LookupEnv("DEBUGINFOD_RETRY_LIMIT"); ok {
		c.RetryLimit = int(atoi(v))
	}
	if v, ok := os.LookupEnv("DEBUGINFOD_MAXSIZE"); ok {
		if c.MaxSize = atoi(v); c.MaxSize <= 0 {
			c.MaxSize = -1
		}
	}
	if v, ok := os.LookupEnv("DEBUGINFOD_MAXTIME"); ok {
		if c.MaxTime = time.Duration(atoi(v)) * time.Second; c.MaxTime <= 0 {
			c.MaxTime = -1
		}
	}
	if p := os.Getenv("DEBUGINFOD_HEADERS_FILE"); p != "" {
		c.Header = headersFromFile(p)
	}
	return c
}

// atoi is C's atoi: optional blanks and sign, then digits up to the first
// non-digit; 0 when there are none.
func atoi(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n int64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int64(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// headersFromFile reads "Name: value" lines, skipping blank and malformed
// ones, as elfutils' add_headers_from_file does.
func headersFromFile(path string) http.Header {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	h := http.Header{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		name = strings.TrimSpace(name)
		if ok && name != "" && !strings.ContainsAny(name, " \t") {
			h.Add(name, strings.TrimSpace(value))
		}
	}
	return h
}

// Debuginfo returns the path of the debug file (DWARF) of build-id id, from
// the cache or downloaded into it.
func (c *Client) Debuginfo(ctx context.Context, id string) (string, error) {
	return c.fetch(ctx, id, "debuginfo", "")
}

// Executable returns the path of the executable of build-id id.
func (c *Client) Executable(ctx context.Context, id string) (string, error) {
	return c.fetch(ctx, id, "executable", "")
}

// Source returns the path of a copy of the source file path (absolute, as
// the DWARF of build-id id names it).
func (c *Client) Source(ctx context.Context, id, path string) (string, error) {
	return c.fetch(ctx, id, "source", path)
}

var buildIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:[0-9a-f]{2})+$`) })

// Error is a fetch that failed: what was asked for and what each server
// said. It prints on one line.
type Error struct {
	BuildID string
	// Artifact is "debuginfo", "executable" or "source PATH".
	Artifact string
	// Servers are the servers asked, in DEBUGINFOD_URLS order; empty
	// when no server was asked.
	Servers []Answer
	// Reason is set instead when no server was asked (a cached miss, a
	// cache that cannot be written).
	Reason string
	Err    error // a sentinel
}

// Answer is the last thing one server said.
type Answer struct {
	Server string
	Said   string
	Tries  int
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "debuginfod: no %s for build-id %s: ", e.Artifact, e.BuildID)
	if e.Reason != "" {
		b.WriteString(e.Reason)
	}
	for i, a := range e.Servers {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", a.Server, a.Said)
		if a.Tries > 1 {
			fmt.Fprintf(&b, " (%d tries)", a.Tries)
		}
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Progress is the state of a download.
type Progress struct {
	BuildID, Artifact string
	// Servers is how many servers are asked.
	Servers int
	// Server is the server sending the file, "" while none has answered.
	Server   string
	Received int64
	Total    int64 // -1 when unknown
	// Elapsed is the time since the servers were asked, or since Server
	// began sending.
	Elapsed time.Duration
	// Done is set on the last call; Err then says whether it failed.
	Done bool
	Err  error
}
