package testenv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Debuginfod is a running debuginfod (Debian's elfutils server) serving
// Debian packages.
type Debuginfod struct {
	// URL is the server's base URL (http://127.0.0.1:PORT), what
	// DEBUGINFOD_URLS names.
	URL string
}

// DebianDeb returns the .deb of package name that scripts/provision.sh
// keeps in CacheDir()/debs (the newest when there are several), or ends tb
// with Missing.
func DebianDeb(tb testing.TB, name string) string {
	tb.Helper()
	m, _ := filepath.Glob(filepath.Join(CacheDir(), "debs", name+"_*.deb"))
	if len(m) == 0 {
		MissingKernel(tb, "%s in %s", name, filepath.Join(CacheDir(), "debs"))
	}
	return m[len(m)-1]
}

// StartDebuginfod starts debuginfod on 127.0.0.1 and a free port, serving
// the .deb files debs (-U; debuginfod runs bsdtar on them) with the extra
// command-line arguments args, and stops it when tb ends. Indexing a -dbg kernel package takes minutes, so the index
// of a set of packages is built once and kept under
// CacheDir()/test/debuginfod, keyed by debuginfod's version and the
// packages' contents, beside hard links to the packages (the index names
// them by path and time); each server starts from a private copy of it
// and is ready at once.
func StartDebuginfod(tb testing.TB, debs []string, args ...string) *Debuginfod {
	tb.Helper()
	Heavy(tb, "tests against a real debuginfod")
	Tools(tb, "debuginfod", "bsdtar")
	ver, err := exec.Command("debuginfod", "--version").Output()
	if err != nil {
		tb.Fatalf("debuginfod --version: %v", err)
	}
	parts := []string{"debuginfod-v1", string(ver)}
	for _, d := range debs {
		id := pathIdentity(d)
		if id == "" {
			tb.Fatalf("debuginfod: no package %s", d)
		}
		parts = append(parts, filepath.Base(d), id)
	}
	key := hashStrings(parts...)[:32]
	root := Scratch("debuginfod")
	if root == "" {
		root = tb.TempDir()
	}
	dir := filepath.Join(root, key)
	index := filepath.Join(dir, "index.sqlite")
	if _, err := os.Stat(index); err != nil {
		if err := buildIndex(tb, dir, debs); err != nil {
			tb.Fatalf("debuginfod index of %s: %v", strings.Join(debs, ", "), err)
		}
	}
	db := filepath.Join(tb.TempDir(), "index.sqlite")
	if err := copyDB(index, db); err != nil {
		tb.Fatal(err)
	}
	s, err := runDebuginfod(tb, filepath.Join(dir, "debs"), db, args...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.stop)
	return &Debuginfod{URL: s.url}
}

// buildIndex makes dir/debs (links to debs) and dir/index.sqlite, the
// index a server built of them, once among concurrent test processes.
func buildIndex(tb testing.TB, dir string, debs []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lock, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	index := filepath.Join(dir, "index.sqlite")
	if _, err := os.Stat(index); err == nil {
		return nil // another process built it meanwhile
	}
	served := filepath.Join(dir, "debs")
	if err := os.MkdirAll(served, 0o755); err != nil {
		return err
	}
	for _, d := range debs {
		p := filepath.Join(served, filepath.Base(d))
		if _, err := os.Stat(p); err == nil {
			continue
		}
		if err := os.Link(d, p); err != nil {
			if err := copyFile(d, p); err != nil {
				return err
			}
		}
	}
	tmp := filepath.Join(tb.TempDir(), "index.sqlite")
	start := time.Now()
	s, err := runDebuginfod(tb, served, tmp)
	if err != nil {
		return err
	}
	s.stop()
	tb.Logf("debuginfod indexed %s in %s (kept in %s)", strings.Join(debs, ", "), time.Since(start).Round(time.Second), dir)
	if err := copyDB(tmp, index+".tmp"); err != nil {
		return err
	}
	if err := os.Rename(index+".tmp-wal", index+"-wal"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.Rename(index+".tmp", index)
}

// copyDB copies an SQLite database with its write-ahead log, if any.
func copyDB(src, dst string) error {
	if err := copyFile(src+"-wal", dst+"-wal"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return copyFile(src, dst)
}

// server is one debuginfod process.
type server struct {
	url  string
	cmd  *exec.Cmd
	done chan error
}

// runDebuginfod starts debuginfod over dir with database db and waits
// until its scan is over.
func runDebuginfod(tb testing.TB, dir, db string, args ...string) (*server, error) {
	tmp := tb.TempDir() // its extracted-file cache
	logPath := filepath.Join(tmp, "debuginfod.log")
	var lastErr error
	for range 3 { // another process may take the free port first
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		log, err := os.Create(logPath)
		if err != nil {
			return nil, err
		}
		cmd := exec.Command("debuginfod", append(append([]string{"-U", "-d", db, "-p", strconv.Itoa(port),
			"-t", "0", "-g", "0"}, args...), dir)...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			log.Close()
			return nil, err
		}
		s := &server{url: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, done: make(chan error, 1)}
		go func() { s.done <- cmd.Wait(); log.Close() }()
		if lastErr = s.waitScanned(); lastErr == nil {
			return s, nil
		}
		s.stop()
		b, _ := os.ReadFile(logPath)
		lastErr = fmt.Errorf("%v\n%s", lastErr, tail(string(b), 2000))
	}
	return nil, fmt.Errorf("debuginfod did not start: %w", lastErr)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitScanned polls /metrics until the server has walked its directory
// once and scanned everything it found.
func (s *server) waitScanned() error {
	want := map[string]func(float64) bool{
		`thread_work_total{role="traverse"}`: func(v float64) bool { return v >= 1 },
		`thread_work_pending{role="scan"}`:   func(v float64) bool { return v == 0 },
		`thread_busy{role="scan"}`:           func(v float64) bool { return v == 0 },
	}
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("debuginfod exited: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get(s.url + "/metrics")
		if err != nil {
			continue
		}
		ok := 0
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			name, value, found := strings.Cut(sc.Text(), " ")
			if check, in := want[name]; in && found {
				if v, err := strconv.ParseFloat(value, 64); err == nil && check(v) {
					ok++
				}
			}
		}
		resp.Body.Close()
		if ok == len(want) {
			return nil
		}
	}
	return errors.New("debuginfod: scan not over after 10 minutes")
}

// stop ends the server (SIGTERM, then SIGKILL after 10 s).
func (s *server) stop() {
	select {
	case err := <-s.done:
		s.done <- err
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.done <- err
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		s.done <- <-s.done
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
