package debuginfod

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gprobe/gprobe/internal/safedir"
	"github.com/gprobe/gprobe/internal/xdg"
)

// The cache is elfutils' (debuginfod-client.c, 0.188), file for file:
//
//	CACHE/BUILDID/debuginfo
//	CACHE/BUILDID/executable
//	CACHE/BUILDID/source##usr##src##a.c    (the path, '/' as "##", '#' as "#_")
//	CACHE/BUILDID/.gprobe-tmp-NNNN         a download in progress (elfutils': debuginfo.XXXXXX)
//	CACHE/cache_clean_interval_s           seconds between cleanings (86400)
//	CACHE/max_unused_age_s                 a file unread this long goes (604800)
//	CACHE/cache_miss_s                     how long "not found" is believed (600)
//
// Build-id directories are 0700, files 0400 with the server's
// Last-Modified time; an empty file records that no server had it.
//
// gprobe refuses a cache directory or build-id directory another user
// could change (safedir.Check: the cache, every directory above it and
// each build-id directory owned by the effective user or root and
// writable by no one else), opens entries without following links, and
// sets modes and times through open files.

const (
	cleanIntervalFile    = "cache_clean_interval_s"
	cleanIntervalDefault = 86400
	maxUnusedAgeFile     = "max_unused_age_s"
	maxUnusedAgeDefault  = 604800
	cacheMissFile        = "cache_miss_s"
	cacheMissDefault     = 600
)

// CacheDir is where elfutils keeps downloads: $DEBUGINFOD_CACHE_PATH, else
// $HOME/.debuginfod_client_cache if it exists (older clients), else
// $XDG_CACHE_HOME/debuginfod_client, else $HOME/.cache/debuginfod_client.
func CacheDir() string {
	root, _ := cacheLocation()
	return root
}

// cacheLocation is CacheDir, and the XDG cache directory to create (0700)
// when the cache goes there.
func cacheLocation() (root, xdgHome string) {
	if p := os.Getenv("DEBUGINFOD_CACHE_PATH"); p != "" {
		return p, ""
	}
	home := os.Getenv("HOME")
	if home == "" {
		home = "/"
	}
	if old := filepath.Join(home, ".debuginfod_client_cache"); exists(old) {
		return old, ""
	}
	xdgHome, err := xdg.CacheHome()
	if err != nil {
		xdgHome = filepath.Join(home, ".cache")
	}
	return filepath.Join(xdgHome, "debuginfod_client"), xdgHome
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// escapePath is elfutils' path_escape: '/' becomes "##" and '#' "#_", so a
// source path is one file name.
func escapePath(p string) string {
	return strings.NewReplacer("/", "##", "#", "#_").Replace(p)
}

// cache is one cache directory.
type cache struct {
	root string
	warn func(string)
}

// cacheSentinel is the sentinel of a cache error: ErrUnsafeCache when the
// cache could be changed by another user, else ErrUnavailable.
func cacheSentinel(err error) error {
	if errors.Is(err, safedir.ErrUnsafe) {
		return ErrUnsafeCache
	}
	return ErrUnavailable
}

// openCache makes sure the cache directory exists, as elfutils does (the
// XDG parent 0700, the cache itself with the umask's permissions), and
// cleans it when its interval has passed.
func (c *Client) openCache() (*cache, error) {
	root := c.Cache
	if root == "" {
		var xdgHome string
		root, xdgHome = cacheLocation()
		if xdgHome != "" {
			if err := os.Mkdir(xdgHome, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return nil, err
			}
		}
	}
	if err := os.Mkdir(root, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	if err := safedir.Check(root); err != nil {
		return nil, err
	}
	ch := &cache{root: root, warn: c.warn}
	ch.clean(time.Now())
	return ch, nil
}

// entry is the cache path of an artifact.
func (ch *cache) entry(id, kind, srcPath string) string {
	name := kind
	if srcPath != "" {
		name += escapePath(srcPath)
	}
	return filepath.Join(ch.root, id, name)
}

// config reads one of the cache's settings files, creating it with def
// when it is missing or empty (elfutils' debuginfod_config_cache). It also
// returns the file's modification time from before any write.
func (ch *cache) config(name string, def int64) (int64, time.Time) {
	f, err := safedir.OpenFile(filepath.Join(ch.root, name), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return def, time.Time{}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return def, time.Time{}
	}
	if st.Size() == 0 {
		f.WriteString(strconv.FormatInt(def, 10))
		return def, st.ModTime()
	}
	buf := make([]byte, 64)
	n, _ := f.Read(buf)
	fields := strings.Fields(string(buf[:n]))
	if len(fields) == 0 {
		return def, st.ModTime()
	}
	v, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return def, st.ModTime()
	}
	return v, st.ModTime()
}

// cleanable are the paths elfutils' cleaner considers.
var cleanable = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`.*/[a-f0-9]+(/debuginfo|/executable|/source.*|)$`) })

// elfutilsTemp are the temporary files of elfutils' clients' downloads
// (mkstemp's six characters after the artifact's name), which elfutils'
// cleaner does not match.
var elfutilsTemp = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`.*/[a-f0-9]+/(debuginfo|executable)\.[A-Za-z0-9]{6}$`)
})

// clean is elfutils' debuginfod_clean_cache: once per cache_clean_interval_s
// it deletes the entries not read for max_unused_age_s, and the build-id
// directories left empty that long. It also deletes what killed
// downloads left: gprobe's temporary files that no download holds, and
// elfutils' not modified for max_unused_age_s.
func (ch *cache) clean(now time.Time) {
	interval, last := ch.config(cleanIntervalFile, cleanIntervalDefault)
	if last.IsZero() || now.Sub(last) < time.Duration(interval)*time.Second {
		return
	}
	// Mark the cleaning first, so concurrent clients do not all clean.
	if f, err := safedir.OpenFile(filepath.Join(ch.root, cleanIntervalFile), os.O_RDONLY, 0); err == nil {
		safedir.Touch(f, now)
		f.Close()
	}
	age, _ := ch.config(maxUnusedAgeFile, maxUnusedAgeDefault)
	maxAge := time.Duration(age) * time.Second
	var dirs []string
	filepath.WalkDir(ch.root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && elfutilsTemp().MatchString(p) {
			if st, err := os.Lstat(p); err == nil && now.Sub(st.ModTime()) >= maxAge {
				os.Remove(p)
			}
			return nil
		}
		if err != nil || !cleanable().MatchString(p) {
			return nil
		}
		if d.IsDir() {
			if p != ch.root {
				safedir.RemoveStale(p, tmpPrefix)
			}
			dirs = append(dirs, p)
			return nil
		}
		if st, err := os.Lstat(p); err == nil && now.Sub(atime(st)) >= maxAge {
			os.Remove(p)
		}
		return nil
	})
	// Deepest first, as fts's post-order visit: a directory emptied above
	// goes too, once old enough.
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && now.Sub(st.ModTime()) >= maxAge {
			syscall.Rmdir(d)
		}
	}
}

func atime(st fs.FileInfo) time.Time {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return time.Unix(s.Atim.Unix())
	}
	return st.ModTime()
}

// lookup says whether path, the cache entry of kind for build-id id,
// holds a complete file (hit), or records a recent miss (an empty file
// younger than cache_miss_s). A stale miss or an unreadable entry
// (elfutils' old 000 markers) is removed; so are, with a line to Warn, a
// symbolic link and a debuginfo or executable that is not ELF with
// build-id id. The build-id directory must be safe (safedir.CheckEntry).
func (ch *cache) lookup(path, id, kind string) (hit, miss bool, err error) {
	if err := safedir.CheckEntry(filepath.Dir(path)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, false, nil
		}
		return false, false, err
	}
	f, err := safedir.Open(path)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrPermission):
			os.Remove(path)
			return false, false, nil
		case errors.Is(err, fs.ErrNotExist):
			return false, false, nil
		case safedir.IsLink(err):
			ch.warn(fmt.Sprintf("debuginfod: removed %s from the cache: a symbolic link, not a file", path))
			os.Remove(path)
			return false, false, nil
		}
		return false, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, false, err
	}
	if !st.Mode().IsRegular() {
		return false, false, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > 0 {
		if isELFArtifact(kind) {
			if err := checkBuildID(f, id); err != nil {
				ch.warn(fmt.Sprintf("debuginfod: removed %s from the cache: %s, not of build-id %s", path, what(err), id))
				os.Remove(path)
				return false, false, nil
			}
		}
		return true, false, nil
	}
	keep, _ := ch.config(cacheMissFile, cacheMissDefault)
	if time.Since(st.ModTime()) <= time.Duration(keep)*time.Second {
		return false, true, nil
	}
	os.Remove(path)
	return false, false, nil
}

// recordMiss leaves the empty file that tells later clients, gprobe's and
// elfutils', that no server had path.
func (ch *cache) recordMiss(path string) {
	if f, err := safedir.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666); err == nil {
		f.Close()
	}
}

// lockDir takes an exclusive lock on the build-id directory dir (created
// 0700 if needed; refused when it is not safe), so that gprobe runs
// fetching the same build-id wait for the first one instead of
// downloading the file again. Elfutils' clients do not lock; they and
// gprobe still never see a partial file, since files are renamed into
// place complete. Once locked, the temporary files that killed downloads
// left in dir are removed.
func lockDir(ctx context.Context, dir string) (unlock func(), err error) {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	d, err := safedir.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if safedir.IsLink(err) {
		return nil, fmt.Errorf("%s: %w: it is a symbolic link", dir, safedir.ErrUnsafe)
	}
	if err != nil {
		return nil, err
	}
	if err := safedir.CheckFile(d); err != nil {
		d.Close()
		return nil, err
	}
	for {
		err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			safedir.RemoveStale(dir, tmpPrefix)
			return func() { d.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			d.Close()
			return nil, fmt.Errorf("lock %s: %w", dir, err)
		}
		select {
		case <-ctx.Done():
			d.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
