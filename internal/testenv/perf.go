package testenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gprobe/gprobe/internal/atomicfile"
)

// Result is what one command printed and its exit status.
type Result struct {
	Stdout, Stderr string
	Code           int
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.Code, r.Stdout, r.Stderr)
}

// Perf runs `perf probe` (Debian linux-perf 6.1), the reference answer of
// the differential tests.
//
// Answers are cached under CacheDir()/test/perf, keyed by everything that
// can change them: perf's version and binary, the running kernel's release
// and tracefs README (perf reads its features), the arguments, and the identity of every file or directory an argument names
// (content for files, names/sizes/times for directory trees). A cached
// answer is the answer perf gave for exactly that input; callers that see a
// disagreement ask again with Live, since perf 6.1 is not deterministic on
// a few specs.
type Perf struct {
	Path string
	id   string
	dir  string // cache directory, "" = uncached
	cwd  string // working directory of perf's runs ("" = the test's)
}

// At is p running in directory cwd, for questions whose answer depends on
// it (perf 6.1 looks for a .gnu_debuglink file in its working directory);
// the answers are keyed also by the directory and what it holds.
func (p *Perf) At(cwd string) *Perf {
	q := *p
	q.cwd = cwd
	return &q
}

var (
	perfOnce sync.Once
	perfVal  *Perf
	perfErr  error
)

// RequirePerf returns the shared Perf, or ends tb with Missing.
func RequirePerf(tb testing.TB) *Perf {
	tb.Helper()
	Heavy(tb, "differential tests against perf probe")
	perfOnce.Do(func() { perfVal, perfErr = newPerf() })
	if perfErr != nil {
		Missing(tb, "perf probe: %v", perfErr)
	}
	return perfVal
}

func newPerf() (*Perf, error) {
	p, err := exec.LookPath("perf")
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(p, "version").Output()
	if err != nil {
		return nil, fmt.Errorf("perf version: %w", err)
	}
	if h, err := exec.Command(p, "probe", "--help").CombinedOutput(); err != nil && !bytes.Contains(h, []byte("probe")) {
		return nil, errors.New("perf has no probe command")
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	release, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	readme, _ := os.ReadFile("/sys/kernel/tracing/README")
	id := hashStrings("perf-v2", string(out), fmt.Sprint(st.Size(), st.ModTime().UnixNano()), string(release), string(readme))
	return &Perf{Path: p, id: id, dir: Scratch("perf")}, nil
}

// Probe returns perf probe's answer for args, from the cache when perf
// answered the same question before.
func (p *Perf) Probe(args ...string) Result {
	key := p.key(args)
	if key != "" {
		if b, err := os.ReadFile(filepath.Join(p.dir, key+".json")); err == nil {
			var c cachedResult
			if json.Unmarshal(b, &c) == nil {
				return Result{Stdout: string(c.Stdout), Stderr: string(c.Stderr), Code: c.Code}
			}
		}
	}
	r := p.Live(args...)
	if key != "" {
		if b, err := json.Marshal(cachedResult{[]byte(r.Stdout), []byte(r.Stderr), r.Code}); err == nil {
			_ = atomicfile.Write(filepath.Join(p.dir, key+".json"), b)
		}
	}
	return r
}

// cachedResult keeps the output as bytes: perf may print bytes that are
// not UTF-8 (a spec quoted back), which JSON strings would not keep.
type cachedResult struct {
	Stdout, Stderr []byte
	Code           int
}

// Live runs perf probe now, bypassing the cache.
func (p *Perf) Live(args ...string) Result { return p.run("", append([]string{"probe"}, args...)) }

// ProbeIn is Probe with HOME set to home, so that perf's build-id cache
// (its SDT markers and probe caches) is home/.debug. The answer is cached
// keyed also by the state of home/.debug (see homeIdentity); a cached
// answer does not change home, so a test must not rely on what perf
// writes there.
func (p *Perf) ProbeIn(home string, args ...string) Result {
	if p.dir == "" {
		return p.LiveIn(home, args...)
	}
	key := p.key(append([]string{"HOME=" + homeIdentity(home)}, args...))
	if b, err := os.ReadFile(filepath.Join(p.dir, key+".json")); err == nil {
		var c cachedResult
		if json.Unmarshal(b, &c) == nil && !transient(string(c.Stderr)) {
			return Result{Stdout: string(c.Stdout), Stderr: string(c.Stderr), Code: c.Code}
		}
	}
	r := p.LiveIn(home, args...)
	if transient(r.Stderr) {
		return r
	}
	if b, err := json.Marshal(cachedResult{[]byte(r.Stdout), []byte(r.Stderr), r.Code}); err == nil {
		_ = atomicfile.Write(filepath.Join(p.dir, key+".json"), b)
	}
	return r
}

// transient reports an answer of perf's that depends on the events in
// tracefs at that moment (even -n refuses an event name another test's
// probe holds), which the cache's key does not hold: it is never cached,
// nor used when an older version of the cache kept it.
func transient(stderr string) bool {
	return strings.Contains(stderr, "already exists")
}

// LiveIn runs perf probe now with HOME set to home.
func (p *Perf) LiveIn(home string, args ...string) Result {
	return p.run(home, append([]string{"probe"}, args...))
}

// CommandIn runs another perf command now ("buildid-cache", "list") with
// HOME set to home.
func (p *Perf) CommandIn(home string, args ...string) Result { return p.run(home, args) }

// Home returns an empty directory (mode 0755, as a home directory is) for
// HOME, so that perf's build-id cache (HOME/.debug) is the test's own and
// starts empty; gprobe reads and writes the same one.
func Home(tb testing.TB) string {
	tb.Helper()
	h := tb.TempDir()
	if err := os.Chmod(h, 0o755); err != nil {
		tb.Fatal(err)
	}
	return h
}

// homeIdentity identifies the state of perf's build-id cache under home:
// its paths, link targets and file sizes, and the content of its probe
// caches (the binaries are named by their build-ids in the paths).
func homeIdentity(home string) string {
	parts := []string{"perf-home-v1"} // not the path: tests use fresh temporary homes
	root := filepath.Join(home, ".debug")
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel := strings.TrimPrefix(p, root)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			parts = append(parts, rel+" -> "+t)
		case d.Type().IsRegular() && d.Name() == "probes":
			b, _ := os.ReadFile(p)
			parts = append(parts, rel, string(b))
		case d.Type().IsRegular():
			info, _ := d.Info()
			if info != nil {
				parts = append(parts, fmt.Sprint(rel, " ", info.Size(), " ", info.Mode()))
			}
		default:
			parts = append(parts, rel+"/")
		}
		return nil
	})
	return hashStrings(parts...)
}

// run runs perf with args, HOME set to home unless it is "".
func (p *Perf) run(home string, args []string) Result {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Path, args...)
	cmd.Env = append(os.Environ(), "PAGER=cat", "PERF_PAGER=cat", "LC_ALL=C")
	cmd.Dir = p.cwd
	if home != "" {
		cmd.Env = append(cmd.Env, "HOME="+home)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
		if code < 0 {
			code = 128 + 11 // killed by a signal: perf 6.1 segfaults on a few specs
		}
	case err != nil:
		code = -1
	}
	return Result{out.String(), errb.String(), code}
}

// key identifies one question, or "" when it cannot be cached.
func (p *Perf) key(args []string) string {
	if p.dir == "" {
		return ""
	}
	// The working directory is not part of the key: a relative path
	// argument is identified by what it names, and perf prints paths as
	// they were given.
	parts := []string{p.id}
	if p.cwd != "" {
		parts = append(parts, "cwd", p.cwd, pathIdentity(p.cwd))
	}
	for _, a := range args {
		parts = append(parts, a)
		if id := pathIdentity(a); id != "" {
			parts = append(parts, id)
		}
	}
	return hashStrings(parts...)
}

var identities sync.Map // path -> identity string

// pathIdentity identifies what an argument names on disk: a file by its
// size, time and content hash; a directory tree by its files' names, sizes
// and times; "" when the argument names nothing.
func pathIdentity(arg string) string {
	// -k=PATH style values are not used by the tests; plain words only.
	st, err := os.Stat(arg)
	if err != nil {
		return ""
	}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return ""
	}
	stamp := fmt.Sprint(abs, st.Size(), st.ModTime().UnixNano())
	if v, ok := identities.Load(stamp); ok {
		return v.(string)
	}
	var id string
	if st.IsDir() {
		id = treeIdentity(abs)
	} else {
		id = fileIdentity(abs)
	}
	identities.Store(stamp, id)
	return id
}

func fileIdentity(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unreadable"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unreadable"
	}
	return hex.EncodeToString(h.Sum(nil))
}

// treeIdentity hashes the contents of a tree up to 64 MiB (a fresh clone
// has new file times but the same bytes); a larger tree (a kernel source
// subset) is identified by its files' names, sizes and times.
func treeIdentity(root string) string {
	type file struct {
		rel  string
		size int64
		time int64
	}
	var files []file
	var total int64
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
			files = append(files, file{strings.TrimPrefix(p, root), info.Size(), info.ModTime().UnixNano()})
			total += info.Size()
		}
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	var parts []string
	for _, f := range files {
		if total <= 64<<20 {
			parts = append(parts, f.rel, fileIdentity(filepath.Join(root, f.rel)))
		} else {
			parts = append(parts, fmt.Sprint(f.rel, f.size, f.time))
		}
	}
	return hashStrings(parts...)
}
