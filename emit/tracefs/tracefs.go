// Package tracefs is gprobe's client for the kernel's dynamic probe events:
// it finds (or mounts) tracefs, reads the features the kernel advertises in
// README, writes and deletes kprobe_events / uprobe_events lines, enables and
// disables events, lists what is installed, creates and removes instances
// (private ring buffers) with their control files, and turns a refused write
// into the kernel's own reason read back from error_log.
//
// Every failure wraps one of the sentinel errors below with %w, so callers
// test with errors.Is and print err.Error() as a one-line message.
package tracefs

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/internal/tracefmt/eventfmt"
)

// Sentinel errors. Kernel write errors carry the errno as well
// (errors.Is(err, syscall.EINVAL) also holds).
var (
	// ErrNoTracefs: tracefs is neither mounted nor mountable.
	ErrNoTracefs = errors.New("tracefs is not available")
	// ErrNoKprobes: the kernel has no kprobe_events (built without CONFIG_KPROBE_EVENTS).
	ErrNoKprobes = errors.New("this kernel was built without CONFIG_KPROBE_EVENTS: kernel probes cannot be installed here")
	// ErrNoUprobes: the kernel has no uprobe_events (built without CONFIG_UPROBE_EVENTS).
	ErrNoUprobes = errors.New("this kernel was built without CONFIG_UPROBE_EVENTS: user-space probes cannot be installed here")
	// ErrNoKind: the kernel does not offer a kind of dynamic event (its
	// README does not list fprobes, tracepoint probes or eprobes).
	ErrNoKind = errors.New("this kernel does not offer that kind of probe event")
	// ErrPermission: tracefs files cannot be read or written by this user.
	ErrPermission = errors.New("no permission")
	// ErrInvalid (EINVAL): the kernel rejected the definition.
	ErrInvalid = errors.New("invalid probe definition")
	// ErrNotBoundary (EILSEQ): the probe address is not an instruction boundary.
	ErrNotBoundary = errors.New("probe point is not an instruction boundary")
	// ErrNotFound (ENOENT): no such symbol, file or event.
	ErrNotFound = errors.New("not found")
	// ErrExist (EEXIST): an event of that name already exists.
	ErrExist = errors.New("event already exists")
	// ErrBusy (EBUSY): the event is enabled or in use.
	ErrBusy = errors.New("event is busy (enabled or in use)")
)

// Standard places, in perf's order of preference.
var mountPoints = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// FS is a tracefs mount.
type FS struct {
	Root string // e.g. /sys/kernel/tracing
	// Enter, when set, runs each write of Append (the write(2) itself;
	// the file is opened before): the kernel resolves a uprobe's path with
	// the root of the process writing it, and perf probe --target-ns
	// writes from the target's mount namespace (internal/mountns.Do).
	Enter func(write func() error) error
}

// At returns an FS rooted at dir without checking it.
func At(dir string) *FS { return &FS{Root: dir} }

// Open finds a mounted tracefs (looking at /sys/kernel/tracing, the
// debugfs location and /proc/mounts) and, as perf does, mounts tracefs on
// /sys/kernel/tracing when nothing is there. It fails with ErrNoTracefs or
// ErrPermission.
func Open() (*FS, error) {
	if fs, err := find(); err == nil {
		return fs, nil
	}
	// Mounted but closed to this user (tracefs is mode 0700 by default).
	for _, d := range mountPoints {
		if _, err := os.Stat(filepath.Join(d, "README")); errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("%w to read tracefs at %s: run this command again as root (or remount it with mode=755 to read)", ErrPermission, d)
		}
	}
	// perf mounts tracefs itself before it reads README.
	mountErr := syscall.Mount("nodev", mountPoints[0], "tracefs", 0, "")
	if fs, err := find(); err == nil {
		return fs, nil
	}
	if errors.Is(mountErr, syscall.EPERM) || errors.Is(mountErr, syscall.EACCES) {
		return nil, fmt.Errorf("%w to mount tracefs on %s: run as root, or mount it: mount -t tracefs nodev %s", ErrPermission, mountPoints[0], mountPoints[0])
	}
	return nil, fmt.Errorf("%w: nothing is mounted on %s and mounting tracefs failed (%v)", ErrNoTracefs, mountPoints[0], mountErr)
}

func find() (*FS, error) {
	for _, d := range mountPoints {
		if _, err := os.Stat(filepath.Join(d, "README")); err == nil {
			return &FS{Root: d}, nil
		}
	}
	f, err := os.Open("/proc/mounts")
	if err != nil {
		return nil, ErrNoTracefs
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) >= 3 && fl[2] == "tracefs" {
			if _, err := os.Stat(filepath.Join(fl[1], "README")); err == nil {
				return &FS{Root: fl[1]}, nil
			}
		}
	}
	return nil, ErrNoTracefs
}

// Path returns the absolute path of a tracefs file.
func (t *FS) Path(name string) string { return filepath.Join(t.Root, name) }

// README returns the kernel's tracefs README text.
func (t *FS) README() (string, error) {
	b, err := os.ReadFile(t.Path("README"))
	if err != nil {
		return "", t.fileErr(err, "README")
	}
	return string(b), nil
}

// Features reads README and returns what it advertises (zero Features if
// README cannot be read, as perf then assumes nothing).
func (t *FS) Features() probedef.Features {
	s, err := t.README()
	if err != nil {
		return probedef.Features{}
	}
	return probedef.ParseFeatures(s)
}

// RunningFeatures are the probe-event features of the running kernel, read
// as perf reads them (mounting tracefs first when nothing is mounted);
// known is false when tracefs cannot be read, and then no feature is set,
// as in perf. The README is read once a process: a command asks in
// several stages, and the running kernel's answer does not change.
func RunningFeatures() (f probedef.Features, known bool) {
	return runningFeatures()
}

var runningFeatures = sync.OnceValues(func() (probedef.Features, bool) {
	fs, err := Open()
	if err != nil {
		return probedef.Features{}, false
	}
	return fs.Features(), true
})

// Has reports whether the kernel provides kind k: its events file, and for
// the kinds of dynamic_events, README's word for them.
func (t *FS) Has(k probe.Kind) bool { return t.Check(k) == nil }

// Check returns an error wrapping ErrNoKprobes/ErrNoUprobes when the kernel
// lacks the events file of kind k ("/sys/kernel/tracing/kprobe_events does
// not exist: this kernel was built without CONFIG_KPROBE_EVENTS: ..."), or
// ErrNoKind when its README does not offer fprobes, tprobes or eprobes.
func (t *FS) Check(k probe.Kind) error {
	_, err := os.Stat(t.Path(k.File()))
	if err == nil && k == probe.UserEvent && !t.Exists("user_events_data") {
		return fmt.Errorf("%s has no user_events_data: %s: %w", t.Root, probedef.KindRequirement(k), ErrNoKind)
	}
	if err == nil {
		if f := t.Features(); k.Dynamic() && !f.Offers(k) {
			return fmt.Errorf("%s (this kernel's tracefs README does not offer them): %w", probedef.KindRequirement(k), ErrNoKind)
		}
		if k == probe.Eprobe && t.Root == mountPoints[0] && runningConfigOff()["CONFIG_EPROBE_EVENTS"] {
			// Linux 6.18 lists e: in README either way.
			return fmt.Errorf("this kernel was built without CONFIG_EPROBE_EVENTS (%s): %w", configProc, ErrNoKind)
		}
		return nil
	}
	if k.Dynamic() && errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s does not exist: %s: %w", t.Path(k.File()), probedef.KindRequirement(k), ErrNoKind)
	}
	if errors.Is(err, fs.ErrNotExist) {
		missing := ErrNoKprobes
		if k == probe.Uprobe {
			missing = ErrNoUprobes
		}
		return fmt.Errorf("%s does not exist: %w", t.Path(k.File()), missing)
	}
	return t.fileErr(err, k.File())
}

func (t *FS) fileErr(err error, name string) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%w to access %s (tracefs needs root or a tracing group; check its mode and mount options)", ErrPermission, t.Path(name))
	}
	return err
}

// ReadFile reads the tracefs file name (relative to t's root).
func (t *FS) ReadFile(name string) ([]byte, error) {
	b, err := os.ReadFile(t.Path(name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", t.Path(name), ErrNotFound)
		}
		return nil, t.fileErr(err, name)
	}
	return b, nil
}

// Exists reports whether the tracefs file or directory name exists.
func (t *FS) Exists(name string) bool {
	_, err := os.Stat(t.Path(name))
	return err == nil
}

// EventFormat returns events/GROUP/EVENT/format, the record layout of an
// event, which trace.dat readers need to decode it.
func (t *FS) EventFormat(group, event string) ([]byte, error) {
	return t.ReadFile(filepath.Join("events", group, event, "format"))
}

// EventFields lists the fields of the trace event e that an eprobe can
// read ($NAME): its own fields, without the common_* header; ok is false
// when the kernel has no such event.
func (t *FS) EventFields(e probe.EventID) (fields []string, ok bool) {
	b, err := t.EventFormat(e.System, e.Name)
	if err != nil {
		return nil, false
	}
	f, err := eventfmt.Parse(e.System, string(b))
	if err != nil {
		return nil, true
	}
	for _, fl := range f.Fields {
		if !fl.Common {
			fields = append(fields, fl.Name)
		}
	}
	return fields, true
}

// RunningBlacklist is the running kernel's kprobe blacklist (Blacklist
// of the tracefs Open finds), nil when it cannot be read.
func RunningBlacklist() *probedef.Blacklist {
	fs, err := Open()
	if err != nil {
		return nil
	}
	bl, _ := fs.Blacklist()
	return bl
}

// Blacklist reads the running kernel's kprobe blacklist from debugfs
// (kprobes/blacklist, as perf's kprobe_blacklist__load): where debugfs is
// mounted (/proc/mounts), or the directory above this tracefs when it is
// debugfs's tracing directory. It returns nil and no error when debugfs is
// not mounted or the kernel has no kprobes (perf then checks nothing).
func (t *FS) Blacklist() (*probedef.Blacklist, error) {
	dirs := []string{filepath.Dir(t.Root)}
	if f, err := os.Open("/proc/mounts"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if fl := strings.Fields(sc.Text()); len(fl) >= 3 && fl[2] == "debugfs" {
				dirs = append([]string{fl[1]}, dirs...)
			}
		}
		f.Close()
	}
	for _, d := range dirs {
		p := filepath.Join(d, "kprobes", "blacklist")
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		defer f.Close()
		return probedef.ParseBlacklist(f, p)
	}
	return nil, nil
}
