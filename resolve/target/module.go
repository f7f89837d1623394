package target

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gprobe/gprobe/internal/safedir"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
)

// Kernel modules (-m MODULE|PATH.ko).
//
// A path is used as given (made absolute, as perf does); its debug
// information may live in a separate file where distributions put it
// (perf's distro_dwarf_types order). A bare module name is looked up in
// modules.dep of /lib/modules/$(uname -r) and in
// /usr/lib/debug/lib/modules/$(uname -r) (perf requires the module to be
// loaded instead); GPROBE_MODULES (directories separated by ':') replaces
// those two directories, for offline trees. With debuginfod, a module
// without debug information on disk is fetched by the build-id of its .ko,
// or of the loaded module (sysfs) when it is not on disk at all.

// openModule opens the module named by -m: the file with its debug
// information when one is found (on disk, else from debuginfod by the
// module's build-id), else the module itself.
func openModule(o *Options, m string) (*Target, error) {
	do := o.dwarf()
	var cands []string
	name := m
	if strings.Contains(m, "/") {
		abs, err := filepath.Abs(m)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return nil, fmt.Errorf("Failed to get the absolute path of %s: %v", m, pathErr(err))
		}
		name = abs
		cands = []string{abs}
	} else {
		dirs := moduleDirs()
		cands = findModule(dirs, m)
		if len(cands) == 0 {
			err := fmt.Errorf("Module %s is not found in %s; please specify its full path name.", m, strings.Join(dirs, " or "))
			if o.Debuginfod == nil {
				return nil, err
			}
			// Loaded but not on disk: its build-id is in sysfs.
			id, ierr := moduleBuildID(m)
			if ierr != nil {
				return nil, err
			}
			f, ferr := openFetched(o, id, dwarfinfo.Open)
			if ferr != nil {
				return nil, fmt.Errorf("%w\n%w", err, ferr)
			}
			return &Target{file: f, Path: name, Module: name}, nil
		}
	}
	// perf prefers the distribution's separate debug file of a module.
	var all []string
	debugOf := map[string]string{} // a debug candidate -> its module file
	for _, c := range cands {
		for _, d := range debugCandidates(c) {
			debugOf[d] = c
			all = append(all, d)
		}
		all = append(all, c)
	}
	var fallback *dwarfinfo.File
	for _, p := range all {
		if ko, ok := debugOf[p]; ok {
			if err := checkModuleDebug(p, ko); err != nil {
				if !errors.Is(err, fs.ErrNotExist) && o.Trace != nil {
					o.Trace(fmt.Sprintf("%s: not used as the debug information of %s: %v", p, ko, err))
				}
				continue
			}
		}
		f, err := openKO(p, do)
		if err != nil {
			if p == cands[0] && fallback == nil {
				if errors.Is(err, dwarfinfo.ErrNotELF) {
					return nil, fmt.Errorf("Failed to load symbols from %s\nPlease ensure the file is not stripped.", name)
				}
				if !errors.Is(err, fs.ErrNotExist) {
					return nil, fmt.Errorf("Failed to open %s: %w", p, err)
				}
			}
			continue
		}
		if f.HasDWARF() {
			if fallback != nil {
				fallback.Close()
			}
			return &Target{file: f, Path: name, Module: name}, nil
		}
		if fallback == nil && p == cands[0] {
			fallback = f
			continue
		}
		f.Close()
	}
	if fallback == nil {
		return nil, fmt.Errorf("Failed to load symbols from %s\nPlease ensure the file is not stripped.", name)
	}
	t := &Target{file: fallback, Path: name, Module: name}
	if o.Debuginfod != nil {
		if f, err := openFetched(o, fallback.BuildID(), dwarfinfo.Open); err != nil {
			t.FetchErr = err
		} else {
			fallback.Close()
			t.file = f
		}
	}
	return t, nil
}

func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, fs.ErrNotExist) {
			return errors.New("No such file or directory")
		}
		return pe.Err
	}
	return err
}

// moduleDirs lists the directories a module name is looked up in.
func moduleDirs() []string {
	if env := os.Getenv("GPROBE_MODULES"); env != "" {
		return filepath.SplitList(env)
	}
	rel := KernelRelease()
	return []string{"/lib/modules/" + rel, "/usr/lib/debug/lib/modules/" + rel}
}

// findModule returns the files in dirs that hold module name (with '-' and
// '_' equivalent, as the kernel treats them): modules.dep entries first,
// else a walk of the directory.
func findModule(dirs []string, name string) []string {
	want := ModuleFileName(name)
	var out []string
	for _, dir := range dirs {
		if p := fromModulesDep(dir, want); p != "" {
			out = append(out, p)
			continue
		}
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if !d.IsDir() && isKO(p) && ModuleFileName(p) == want {
				out = append(out, p)
				return filepath.SkipAll
			}
			return nil
		})
	}
	return out
}

func isKO(p string) bool {
	for _, ext := range []string{".ko", ".ko.xz", ".ko.zst", ".ko.gz"} {
		if strings.HasSuffix(p, ext) {
			return true
		}
	}
	return false
}

// fromModulesDep finds want in dir/modules.dep ("kernel/a/b/NAME.ko: deps").
func fromModulesDep(dir, want string) string {
	fd, err := os.Open(filepath.Join(dir, "modules.dep"))
	if err != nil {
		return ""
	}
	defer fd.Close()
	sc := bufio.NewScanner(fd)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.IndexByte(line, ':')
		if i <= 0 {
			continue
		}
		if rel := line[:i]; ModuleFileName(rel) == want {
			if filepath.IsAbs(rel) {
				return rel
			}
			return filepath.Join(dir, rel)
		}
	}
	return ""
}

// debugCandidates is perf's distro_dwarf_types order for a module path:
// Fedora (/usr/lib/debug/PATH.debug), Ubuntu and Debian
// (/usr/lib/debug/PATH), OpenEmbedded (DIR/.debug/BASE) and the build-id
// link.
func debugCandidates(p string) []string {
	out := []string{
		host.debugRoot + p + ".debug",
		host.debugRoot + p,
		filepath.Join(filepath.Dir(p), ".debug", filepath.Base(p)),
	}
	if f, err := dwarfinfo.Open(p); err == nil {
		if id := f.BuildID(); len(id) > 2 {
			out = append(out, host.debugRoot+"/.build-id/"+id[:2]+"/"+id[2:]+".debug")
		}
		f.Close()
	}
	return out
}

// openKO opens a module file, decompressing .ko.gz, .ko.xz and .ko.zst
// into an unlinked temporary file first (the reader maps files).
func openKO(p string, do dwarfinfo.Options) (*dwarfinfo.File, error) {
	var cmd []string
	switch {
	case strings.HasSuffix(p, ".xz"):
		cmd = []string{"xz", "-dc"}
	case strings.HasSuffix(p, ".zst"):
		cmd = []string{"zstd", "-dcq"}
	case strings.HasSuffix(p, ".gz"):
	default:
		return dwarfinfo.OpenWith(p, do)
	}
	src, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	tmp, err := os.CreateTemp("", "gprobe-module-*.ko")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if cmd == nil {
		zr, err := gzip.NewReader(src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if _, err := io.Copy(tmp, zr); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	} else {
		var stderr strings.Builder
		c := exec.Command(cmd[0], cmd[1:]...)
		c.Stdin, c.Stdout, c.Stderr = src, tmp, &stderr
		if err := c.Run(); err != nil {
			if msg := strings.TrimSpace(stderr.String()); msg != "" {
				err = errors.New(msg)
			}
			return nil, fmt.Errorf("%s: %s: %w", p, cmd[0], err)
		}
	}
	f, err := dwarfinfo.OpenWith(tmp.Name(), do)
	if err != nil {
		return nil, err
	}
	f.Path = p
	return f, nil
}

// ModuleName returns the name a module's .gnu.linkonce.this_module
// section (its struct module) carries, as perf's find_module_name reads
// it: at offset 24 (12 on 32-bit), after the state and the list head.
func ModuleName(f *dwarfinfo.File) (string, bool) {
	b := f.Section(".gnu.linkonce.this_module")
	off := 24
	if f.ELF.Class == elf.ELFCLASS32 {
		off = 12
	}
	if len(b) <= off {
		return "", false
	}
	b = b[off:]
	const moduleNameLen = 64 - 8 // MODULE_NAME_LEN on 64-bit
	if len(b) > moduleNameLen {
		b = b[:moduleNameLen]
	}
	i := bytes.IndexByte(b, 0)
	if i <= 0 {
		return "", false
	}
	return string(b[:i]), true
}

// ModuleFileName is the module name a .ko path implies when the file
// cannot be read: the base name without .ko and compression suffixes,
// with '-' as '_' (as kmod normalises names).
func ModuleFileName(path string) string {
	b := filepath.Base(path)
	for _, ext := range []string{".xz", ".zst", ".gz"} {
		b = strings.TrimSuffix(b, ext)
	}
	b = strings.TrimSuffix(b, ".ko")
	return strings.ReplaceAll(b, "-", "_")
}

// checkModuleDebug checks the separate debug file p found for the module
// file ko before it is read (perf takes it on its name alone): owned as
// internal/safedir requires (root, gprobe's user or the module's owner,
// writable by no one else), and of the module's build (its GNU build-id,
// when the module has one). A file that does not exist gives an error
// wrapping fs.ErrNotExist.
func checkModuleDebug(p, ko string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	img, err := os.Stat(ko)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w: not a regular file", safedir.ErrUnsafe)
	}
	if err := trusted(p, st, img); err != nil {
		return err
	}
	want := fileBuildID(ko)
	if want == "" {
		return nil
	}
	if got := fileBuildID(p); got != want {
		if got == "" {
			got = "none"
		}
		return fmt.Errorf("%w (%s, the module's is %s)", errOtherBuild, got, want)
	}
	return nil
}

// fileBuildID is the GNU build-id of the ELF file p ("" when it has none
// or cannot be read); a compressed module is read through openKO.
func fileBuildID(p string) string {
	f, err := openKO(p, dwarfinfo.Options{})
	if err != nil {
		return ""
	}
	defer f.Close()
	return f.BuildID()
}
