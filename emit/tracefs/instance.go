package tracefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Instance is a tracefs instance (instances/NAME): ring buffers, event
// enables, options, clock and pid filters of its own, so a recording leaves
// the top-level buffer and its other users alone. The embedded FS is rooted
// in the instance directory: Path, ReadFile, WriteFile, Enable and Enabled
// act inside the instance. Probe events are defined at the top level only
// (kprobe_events is not in an instance) and show up in every instance.
type Instance struct {
	FS
	Name   string
	parent *FS
}

// NewInstance creates instances/NAME. A name already taken fails wrapping
// ErrExist; the caller owns the instance and removes it with Remove.
func (t *FS) NewInstance(name string) (*Instance, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\n") {
		return nil, fmt.Errorf("%w: instance name %q", ErrInvalid, name)
	}
	p := t.Path(filepath.Join("instances", name))
	if err := os.Mkdir(p, 0o750); err != nil {
		switch {
		case errors.Is(err, fs.ErrExist):
			return nil, fmt.Errorf("tracefs instance %s: %w", name, ErrExist)
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%s does not exist (kernel without tracefs instances): %w", t.Path("instances"), ErrNotFound)
		case errors.Is(err, fs.ErrPermission):
			return nil, t.fileErr(err, "instances")
		}
		return nil, fmt.Errorf("create tracefs instance %s: %w", p, err)
	}
	return &Instance{FS: FS{Root: p}, Name: name, parent: t}, nil
}

// NewUniqueInstance creates instances/PREFIX, or PREFIX-1, PREFIX-2, ...
// when the name is taken (by an instance of an earlier run, or of another
// user of this tracefs, which it leaves alone).
func (t *FS) NewUniqueInstance(prefix string) (*Instance, error) {
	const tries = 100
	for i := 0; i < tries; i++ {
		name := prefix
		if i > 0 {
			name += "-" + strconv.Itoa(i)
		}
		in, err := t.NewInstance(name)
		if !errors.Is(err, ErrExist) {
			return in, err
		}
	}
	return nil, fmt.Errorf("tracefs instances %s to %s-%d: %w", prefix, prefix, tries-1, ErrExist)
}

// Remove removes the instance and its buffers. The kernel refuses (ErrBusy)
// while a file of the instance is open or one of its events is in use.
func (in *Instance) Remove() error {
	if err := os.Remove(in.Root); err != nil {
		var no syscall.Errno
		if errors.As(err, &no) {
			return fmt.Errorf("remove tracefs instance %s: %w (%w)", in.Name, sentinel(no), no)
		}
		return fmt.Errorf("remove tracefs instance %s: %w", in.Name, err)
	}
	return nil
}

// Parent is the tracefs the instance lives in.
func (in *Instance) Parent() *FS { return in.parent }

// Instances lists the names of the instances in t.
func (t *FS) Instances() ([]string, error) {
	ents, err := os.ReadDir(t.Path("instances"))
	if err != nil {
		return nil, t.fileErr(err, "instances")
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// BusyReason says why the kernel may refuse to delete the event
// GROUP:EVENT (EBUSY): enabled in an instance (which one), a trigger on it
// (top level or an instance), an event probe (e:) on it; else it is in use
// outside every instance (perf or BPF has it open, or the top-level enable
// could not be cleared).
func (t *FS) BusyReason(group, event string) string {
	var reasons []string
	dirs := []string{""}
	if ents, err := os.ReadDir(t.Path("instances")); err == nil {
		for _, e := range ents {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join("instances", e.Name()))
			}
		}
	}
	for _, d := range dirs {
		ev := filepath.Join(t.Root, d, "events", group, event)
		where := "at the top level"
		if d != "" {
			where = fmt.Sprintf("in instance %q", filepath.Base(d))
		}
		if b, err := os.ReadFile(filepath.Join(ev, "enable")); err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "1") {
			reasons = append(reasons, "enabled "+where)
		}
		if b, err := os.ReadFile(filepath.Join(ev, "trigger")); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
					reasons = append(reasons, fmt.Sprintf("a trigger %s (%s)", where, l))
					break
				}
			}
		}
	}
	if b, err := os.ReadFile(t.Path("dynamic_events")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) >= 2 && strings.HasPrefix(f[0], "e:") && (f[1] == group+"."+event || f[1] == group+"/"+event) {
				reasons = append(reasons, "the event probe "+strings.TrimPrefix(f[0], "e:")+" on it")
			}
		}
	}
	if len(reasons) == 0 {
		return "in use outside every tracefs instance (perf or BPF has it open)"
	}
	return strings.Join(reasons, ", ")
}
