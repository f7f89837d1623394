// Package target finds and opens what gprobe probes: a user binary (-x,
// with its separate debug file), a vmlinux (-k, or the running kernel's
// debuginfo where distributions put it, in perf's order; or a saved copy of
// a kernel's BTF), a kernel module (-m, by path or by name, with its
// separate debug file), or, when there is no vmlinux with DWARF, the
// running kernel's BTF; debug information that is not on disk comes from
// debuginfod servers when Options.Debuginfod is set.
//
// Errors carry perf's wording ("Failed to open ...", "Invalid file: ..."),
// since the CLI prints them as they are.
package target

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/internal/kallsyms"
	"github.com/gprobe/gprobe/internal/mountns"
	"github.com/gprobe/gprobe/internal/xdg"
	"github.com/gprobe/gprobe/resolve/debuginfod"
	"github.com/gprobe/gprobe/resolve/dwarfindex"
	"github.com/gprobe/gprobe/resolve/internal/btfinfo"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/perfcache"
)

// Options say what to open; at most one of Exec, Module and Vmlinux is
// used, in that order. With none, the running kernel's debuginfo is looked
// for (FindKernelDebuginfo).
type Options struct {
	Vmlinux string // -k: a vmlinux, or a raw BTF file (a saved /sys/kernel/btf/vmlinux)
	Exec    string // -x
	// ExecAsGiven uses Exec's path as given in the uprobe definitions
	// instead of its real path: perf's "perf probe /PATH FUNC" form does
	// not resolve links.
	ExecAsGiven bool
	Module      string // -m: a .ko path or a module name
	// BTF lets the running kernel's BTF (/sys/kernel/btf/vmlinux) stand in
	// when none of the above is given and no vmlinux with debug information
	// is found: function entry probes and their arguments still resolve.
	BTF bool
	// Kallsyms lets the running kernel's /proc/kallsyms stand in when none
	// of the above is given, no vmlinux with debug information is found and
	// BTF does not stand in: perf's map of the kernel loaded from kallsyms
	// (-F lists it).
	Kallsyms bool
	// Debuginfod, when set, fetches by GNU build-id the debug information
	// that is not on disk: the running kernel's vmlinux, a module's debug
	// .ko, a binary's debuginfo, and source files (Target.SourcePath).
	Debuginfod *debuginfod.Client
	// PerfCache, when set, is perf's build-id cache (~/.debug): after the
	// places on disk, a stripped binary's debug file kept there ("debug")
	// is used, and a binary left without DWARF and without a symbol table
	// takes its symbols from the copy perf keeps ("elf"), as perf does.
	PerfCache *perfcache.Cache
	// Context cancels a debuginfod download during Open (nil: never).
	Context context.Context
	// NoCache turns off the index cache (resolve/dwarfindex, in
	// $XDG_CACHE_HOME/gprobe): every run then reads the image afresh.
	NoCache bool
	// Warn receives one line when a cache file is damaged (and rebuilt).
	Warn func(string)
	// Trace, when set, hears what the search for separate debug
	// information looked at and why it did not use a file it found (-v).
	Trace func(string)
	// Symfs is --symfs: the probed system's files are under this
	// directory. -x's binary is read from there (from this system when the
	// directory lacks it, as perf does), and its separate debug
	// information is looked for there; uprobe_events names the path
	// within the directory.
	Symfs string
	// MountNS is --target-ns: the process whose mount namespace -x's path
	// and its separate debug information are looked up in (0: gprobe's
	// own, -1: a value that is not a process id); uprobe_events names the
	// path as that namespace sees it.
	MountNS int
	// ProcessExec, with MountNS and no Exec, Module or Vmlinux, probes
	// that process's executable (--target).
	ProcessExec bool
}

// dwarf returns how images are opened: with the index cache unless
// NoCache (or when there is no cache directory).
func (o Options) dwarf() dwarfinfo.Options {
	do := dwarfinfo.Options{Warn: o.Warn}
	if !o.NoCache {
		if dir, err := xdg.GprobeCache(); err == nil {
			do.Cache = dwarfindex.New(dir)
		}
	}
	return do
}

// Target is an opened image, or the running kernel's BTF alone.
type Target struct {
	// Path is the file probed: the binary's real path, the vmlinux, the
	// module's path or name, or the BTF file.
	Path string
	// User is set for -x targets (uprobes).
	User bool
	// Module is the -m module's path or name.
	Module string
	// NoDebuginfo says why no vmlinux was opened when BTF stands in for it.
	NoDebuginfo error
	// FetchErr says why debuginfod did not supply the debug information
	// of a binary or module that opened without it (symbols only).
	FetchErr error
	// DebugPath is the file the DWARF is read from when it is not Path
	// (a separate debug file, or debuginfod's copy).
	DebugPath string
	// MountNS is the process whose mount namespace Path is in, when it
	// is not gprobe's (--target-ns): uprobe definitions naming Path must
	// be written from that namespace (internal/mountns).
	MountNS int

	file *dwarfinfo.File
	btf  *btfinfo.Spec
	opts Options

	ksOnce sync.Once
	ks     *kallsyms.List
}

// Open opens what o names. See Options.
func Open(o Options) (*Target, error) {
	if o.MountNS < 0 {
		return nil, errors.New("--target-ns: not a process id")
	}
	if o.ProcessExec && o.Exec == "" && o.Module == "" && o.Vmlinux == "" {
		if o.MountNS == 0 {
			return nil, errors.New("--target: no process")
		}
		exe, err := mountns.Exe(o.MountNS)
		if err != nil {
			return nil, fmt.Errorf("--target: %w", err)
		}
		o.Exec = exe
	}
	if o.MountNS != 0 {
		same, err := mountns.Same(o.MountNS)
		if err != nil {
			return nil, fmt.Errorf("--target-ns: %w", err)
		}
		if same {
			o.MountNS = 0 // nothing to enter, as perf decides
		}
	}
	t, err := open(&o)
	if err == nil {
		t.MountNS = o.MountNS
	}
	if err == nil {
		t.opts = o
	}
	if err == nil || !o.BTF && !o.Kallsyms || o.Vmlinux != "" || o.Exec != "" || o.Module != "" {
		return t, err
	}
	if o.BTF {
		if spec, berr := btfinfo.LoadKernel(); berr == nil {
			return &Target{btf: spec, Path: btfinfo.KernelBTFPath, NoDebuginfo: err, opts: o}, nil
		}
	}
	if o.Kallsyms {
		if ks := kallsyms.Running(); ks != nil {
			t := &Target{Path: kallsymsPath, NoDebuginfo: err, opts: o}
			t.ksOnce.Do(func() { t.ks = ks })
			return t, nil
		}
	}
	return nil, err
}

const kallsymsPath = "/proc/kallsyms"

// Kallsyms is the running kernel's symbol list when the target is the
// running kernel without an image (BTF or kallsyms standing in for a
// vmlinux), read on first use; nil for any other target, or when
// /proc/kallsyms cannot be read.
func (t *Target) Kallsyms() *kallsyms.List {
	if t.file != nil || t.User || t.Module != "" || t.Path != kallsymsPath && t.Path != btfinfo.KernelBTFPath {
		return nil
	}
	t.ksOnce.Do(func() { t.ks = kallsyms.Running() })
	return t.ks
}

func open(o *Options) (*Target, error) {
	if x := o.Exec; x != "" {
		r := rootFor(o)
		path, file, err := locate(r, o, x)
		if err != nil {
			return nil, err
		}
		f, err := dwarfinfo.OpenWith(file, o.dwarf())
		if err != nil {
			return nil, fmt.Errorf("Failed to open %s: %w", path, err)
		}
		f.Path = path
		t := &Target{file: f, User: true, Path: path}
		if !f.HasDWARF() {
			t.separateDebug(o, r, file)
		}
		return t, nil
	}
	if m := o.Module; m != "" {
		return openModule(o, m)
	}
	path := o.Vmlinux
	if path == "" {
		var tried []string
		path, tried = FindKernelDebuginfo()
		if path == "" {
			err := fmt.Errorf("Failed to find the path for the kernel: No such file or directory (tried %s)", strings.Join(tried, ", "))
			if o.Debuginfod == nil {
				return nil, err
			}
			var ferr error
			if path, ferr = fetchKernel(o); ferr != nil {
				return nil, fmt.Errorf("%w\n%w", err, ferr)
			}
		}
	}
	if btfinfo.IsRawBTF(path) {
		// A saved /sys/kernel/btf/vmlinux: function entry probes and their
		// arguments resolve from it, as from the running kernel's.
		spec, err := btfinfo.Load(path)
		if err != nil {
			return nil, fmt.Errorf("Invalid file: %s: %w", path, err)
		}
		return &Target{btf: spec, Path: path}, nil
	}
	f, err := dwarfinfo.OpenWith(path, o.dwarf())
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("Invalid file: %s", path)
		}
		return nil, fmt.Errorf("Invalid file: %s: %w", path, err)
	}
	t := &Target{file: f, Path: path}
	if !f.HasDWARF() {
		// A vmlinux without DWARF (a distribution's stripped image): its
		// debug file on disk, else from debuginfod by its build-id.
		t.separateDebug(o, "", path)
	}
	return t, nil
}

// locate finds the -x binary x: its path in the probed system (what
// uprobe_events names: the real path, or x as given with ExecAsGiven) and
// the file to read (within root r). With --symfs, a binary the directory
// does not have is read from this system, as perf does.
func locate(r root, o *Options, x string) (path, file string, err error) {
	if r != "" {
		abs := x
		if !filepath.IsAbs(abs) && o.MountNS == 0 {
			abs, _ = filepath.Abs(x)
		}
		real, err := r.realpath(abs)
		switch {
		case err == nil && o.ExecAsGiven:
			return filepath.Clean("/" + abs), r.file(real), nil
		case err == nil:
			return real, r.file(real), nil
		case o.MountNS > 0:
			return "", "", fmt.Errorf("Failed to open %s in the mount namespace of process %d: %w", x, o.MountNS, err)
		}
	}
	// perf names the binary by its real path in uprobe_events (as given
	// in the PATH-first form).
	if o.ExecAsGiven {
		return x, x, nil
	}
	x = RealPath(x)
	return x, x, nil
}

// RealPath is the absolute path with symlinks resolved, as perf records a
// binary's path (p itself when that fails).
func RealPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// HasDWARF reports whether the target has DWARF: source lines, locals and
// inline instances resolve only then (else symbols and BTF answer).
func (t *Target) HasDWARF() bool { return t.file != nil && t.file.HasDWARF() }

// HasSymbols reports whether the target is an image with a symbol table
// (BTF alone names functions, not the symbols that hold them).
func (t *Target) HasSymbols() bool { return t.file != nil }

// Close releases the image.
func (t *Target) Close() {
	if t.file != nil {
		t.file.Close()
	}
}

// File is the opened image (nil for BTF alone), for the resolver; it is
// closed by Close.
func (t *Target) File() *dwarfinfo.File { return t.file }

// BTF is the kernel's BTF when it stands in for an image (nil otherwise).
func (t *Target) BTF() *btfinfo.Spec { return t.btf }

// FindKernelDebuginfo is perf's vmlinux_path search for the running
// kernel: the first candidate with DWARF, and every path tried.
func FindKernelDebuginfo() (string, []string) {
	rel := KernelRelease()
	cands := []string{"vmlinux", "/boot/vmlinux"}
	if rel != "" {
		cands = append(cands,
			"/boot/vmlinux-"+rel,
			host.debugRoot+"/boot/vmlinux-"+rel,
			"/lib/modules/"+rel+"/build/vmlinux",
			host.debugRoot+"/lib/modules/"+rel+"/vmlinux",
			host.debugRoot+"/boot/vmlinux-"+rel+".debug")
	}
	for _, p := range cands {
		f, err := dwarfinfo.Open(p)
		if err != nil {
			continue
		}
		ok := f.HasDWARF()
		f.Close()
		if ok {
			return p, cands
		}
	}
	return "", cands
}

// RunningBTF is the running kernel's BTF for checking the BTF arguments of
// definition lines (a probedef.BTF, loaded when first asked).
func RunningBTF() probedef.BTF { return btfinfo.RunningProbeBTF() }

// KernelRelease is the running kernel's release (uname -r), "" if unknown.
func KernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Features are the probe-event features of the kernel t is (the tracefs
// README text a vmlinux carries in .rodata, which is what its tracefs
// shows); ok is false for targets that are not a kernel image with one
// (user binaries, modules, BTF alone: the running kernel's README applies).
func (t *Target) Features() (f probedef.Features, ok bool) {
	if t.file == nil || t.User || t.Module != "" {
		return f, false
	}
	readme := embeddedREADME(t.file.Section(".rodata"))
	if readme == "" {
		return f, false
	}
	return probedef.ParseFeatures(readme), true
}

// embeddedREADME finds the kernel's tracefs README (kernel/trace/trace.c's
// readme_msg, one string) in rodata.
func embeddedREADME(rodata []byte) string {
	i := bytes.Index(rodata, []byte("tracing mini-HOWTO:"))
	if i < 0 {
		return ""
	}
	end := bytes.IndexByte(rodata[i:], 0)
	if end < 0 {
		return ""
	}
	return string(rodata[i : i+end])
}
