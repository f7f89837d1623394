package target

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/perfcache"
)

// Debug information that is not in the probed file: a binary's separate
// debug file where distributions install it, and, with Options.Debuginfod,
// what a debuginfod server has for the GNU build-id of the running kernel
// (/sys/kernel/notes), of a module (its .ko, or /sys/module/NAME/notes when
// it is loaded but not on disk) or of a binary, and source files for -L.

// host is where the running system describes itself; tests point it at
// fixtures.
var host = struct {
	sysfs     string // the kernel's and loaded modules' notes (build-ids)
	debugRoot string // distributions' separate debug files
}{"/sys", "/usr/lib/debug"}

func (o *Options) context() context.Context {
	if o.Context != nil {
		return o.Context
	}
	return context.Background()
}

// kernelBuildID is the running kernel's GNU build-id.
func kernelBuildID() (string, error) {
	return notesBuildID(filepath.Join(host.sysfs, "kernel", "notes"))
}

// moduleBuildID is the GNU build-id of the loaded module name.
func moduleBuildID(name string) (string, error) {
	return notesBuildID(filepath.Join(host.sysfs, "module", ModuleFileName(name), "notes", ".note.gnu.build-id"))
}

func notesBuildID(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if id := dwarfinfo.NoteBuildID(b, binary.NativeEndian); id != "" {
		return id, nil
	}
	return "", fmt.Errorf("%s: no GNU build-id note", path)
}

// fetchKernel fetches the running kernel's vmlinux by its build-id.
func fetchKernel(o *Options) (string, error) {
	id, err := kernelBuildID()
	if err != nil {
		return "", fmt.Errorf("debuginfod: the running kernel's build-id: %w", err)
	}
	return o.Debuginfod.Debuginfo(o.context(), id)
}

// openFetched opens what debuginfod has for build-id id, when it has DWARF.
func openFetched(o *Options, id string, open func(string) (*dwarfinfo.File, error)) (*dwarfinfo.File, error) {
	if id == "" {
		return nil, errors.New("debuginfod: the file has no GNU build-id")
	}
	p, err := o.Debuginfod.Debuginfo(o.context(), id)
	if err != nil {
		return nil, err
	}
	f, err := open(p)
	if err != nil {
		return nil, fmt.Errorf("debuginfod: %s: %w", p, err)
	}
	if !f.HasDWARF() {
		f.Close()
		return nil, fmt.Errorf("debuginfod: %s: %w", p, dwarfinfo.ErrNoDWARF)
	}
	return f, nil
}

// separateDebug replaces t's image, which has no DWARF, by its separate
// debug file (findSeparate: the distribution's places in perf's order, the
// build-id directory, .gnu_debuglink), else the one perf's build-id cache
// keeps, else debuginfod's. file is the image read (within root r). When
// debuginfod was asked in vain, t.FetchErr says why. An image left without
// DWARF and without a symbol table takes its symbols from the copy perf's
// cache keeps, as perf does.
func (t *Target) separateDebug(o *Options, r root, file string) {
	if f, p := findSeparate(r, t.Path, file, t.file, o.Trace); f != nil {
		t.replace(f, p)
		return
	}
	id := t.file.BuildID()
	if f, p := fromPerfCache(o, id, "debug", t.Path, file); f != nil && f.HasDWARF() {
		t.replace(f, p)
		return
	} else if f != nil {
		f.Close()
	}
	if o.Debuginfod != nil {
		var fetched string
		f, err := openFetched(o, id, func(p string) (*dwarfinfo.File, error) {
			fetched = p
			return dwarfinfo.OpenSeparate(p, file)
		})
		if err == nil {
			t.replace(f, fetched)
			return
		}
		t.FetchErr = err
	}
	if t.User && t.file.ELF.Section(".symtab") == nil {
		if f, p := fromPerfCache(o, id, "elf", t.Path, file); f != nil && f.ELF.Section(".symtab") != nil {
			t.replace(f, p)
		} else if f != nil {
			f.Close()
		}
	}
}

// replace makes f, read from the file debug, the target's image.
func (t *Target) replace(f *dwarfinfo.File, debug string) {
	t.file.Close()
	f.Path = t.Path
	t.file, t.DebugPath = f, debug
}

// fromPerfCache opens the file name ("debug", "elf") perf's build-id cache
// keeps for build-id id, as the debug information of the image at path
// (read from file), after the cache's checks and the build-id's; nil when
// there is none; and the file read.
func fromPerfCache(o *Options, id, name, path, file string) (*dwarfinfo.File, string) {
	if o.PerfCache == nil || id == "" {
		return nil, ""
	}
	p, err := o.PerfCache.EntryFile(id, name)
	if err != nil {
		if o.Trace != nil && !errors.Is(err, perfcache.ErrNotCached) {
			o.Trace(fmt.Sprintf("perf's build-id cache: not used for %s: %v", path, err))
		}
		return nil, ""
	}
	f, err := dwarfinfo.OpenSeparate(p, file)
	if err == nil && f.BuildID() != id {
		f.Close()
		err = errOtherBuild
	}
	if err != nil {
		if o.Trace != nil {
			o.Trace(fmt.Sprintf("%s: not used for %s: %v", p, path, err))
		}
		return nil, ""
	}
	if o.Trace != nil {
		o.Trace(fmt.Sprintf("%s: perf's build-id cache copy used for %s", p, path))
	}
	return f, p
}

// SourcePath finds the source file of a -L listing: where perf looks for
// it (lines.SourcePath: the -s prefix, the compilation directory), else,
// with Options.Debuginfod, the server's copy for the image's build-id
// (ctx cancels the download).
func (t *Target) SourcePath(ctx context.Context, l *lines.Listing, prefix string) (string, error) {
	p, err := lines.SourcePath(l.Path, l.CompDir, prefix)
	if err == nil || t.opts.Debuginfod == nil || t.file == nil {
		return p, err
	}
	abs := l.Path
	if !strings.HasPrefix(abs, "/") {
		if l.CompDir == "" {
			return "", err
		}
		abs = l.CompDir + "/" + abs
	}
	p, ferr := t.opts.Debuginfod.Source(ctx, t.file.BuildID(), abs)
	if ferr != nil {
		return "", fmt.Errorf("%w\n%w", err, ferr)
	}
	return p, nil
}
