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

// separateDebug replaces t's binary, which has no DWARF, by its separate
// debug file: the distribution's (perf's order), else debuginfod's. When
// debuginfod was asked in vain, t.FetchErr says why.
func (t *Target) separateDebug(o *Options) {
	for _, c := range debugCandidates(t.Path) {
		f, err := dwarfinfo.OpenSeparate(c, t.Path)
		if err != nil {
			continue
		}
		if f.HasDWARF() {
			t.file.Close()
			t.file = f
			return
		}
		f.Close()
	}
	if o.Debuginfod == nil {
		return
	}
	f, err := openFetched(o, t.file.BuildID(), func(p string) (*dwarfinfo.File, error) {
		return dwarfinfo.OpenSeparate(p, t.Path)
	})
	if err != nil {
		t.FetchErr = err
		return
	}
	t.file.Close()
	t.file = f
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
