package record

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/kallsyms"
	"github.com/gprobe/gprobe/internal/tracefmt"
	"github.com/gprobe/gprobe/internal/tracefmt/ringbuf"
	"github.com/gprobe/gprobe/record/follow"
	"github.com/gprobe/gprobe/record/leftover"
)

// ErrConfig reports contradictory or invalid session settings.
var ErrConfig = errors.New("invalid record settings")

// Config describes one recording.
type Config struct {
	// Events are -e arguments; none means every installed probe event.
	Events []string
	// Output is the trace.dat path ("trace.out" when empty).
	Output string
	// BufferSizeKB is the per-CPU ring-buffer size; 0 keeps the kernel's.
	BufferSizeKB int
	// All records every process (-a) instead of following one.
	All bool
	// PID follows an existing process and its new children (-p).
	PID int
	// Command is run and followed, with its children; recording ends
	// when it exits.
	Command []string
	// Signals stop the recording (from the CLI: SIGINT, SIGTERM, SIGHUP,
	// SIGQUIT, SIGPIPE). A still-running command then gets SIGTERM, as
	// perf record does.
	Signals <-chan os.Signal
	// Progress receives a live progress line about once a second; nil
	// for none (not a terminal).
	Progress io.Writer
	// Tracefs is the tracefs mount point; found when empty.
	Tracefs string
	// Stdin, Stdout, Stderr of the command; gprobe's own when nil.
	Stdin          io.Reader
	Stdout, Stderr io.Writer

	// lateReaders starts the readers only when recording stops, so that
	// tests can overflow the ring buffer for certain.
	lateReaders bool
}

// Result is what a recording produced.
type Result struct {
	Output string
	Events uint64 // event records written
	Bytes  int64  // size of the file
	Meta   tracefmt.Metadata
	// ExitCode is the command's exit status (128+signal when killed),
	// or 128+signal of the signal that stopped a recording without a
	// command; 0 otherwise.
	ExitCode int
	// Drain is the time from tracing off to the file written: emptying
	// the ring buffers, collecting metadata, writing trace.dat.
	Drain time.Duration
	// Unmatched are the -e patterns on user events that no event matched
	// while recording (its program may not have registered it).
	Unmatched []string
}

const clock = "mono"

// Run records: it creates a private tracefs instance, enables the events,
// follows the command (or PID, or everything), drains the per-CPU ring
// buffers into cfg.Output, and removes the instance again whatever
// happens. It never adds or removes probe events.
func Run(cfg Config) (res *Result, err error) {
	if cfg.Output == "" {
		cfg.Output = "trace.out"
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	root := tracefs.At(cfg.Tracefs)
	if cfg.Tracefs == "" {
		if root, err = tracefs.Open(); err != nil {
			return nil, err
		}
	}
	events, watches, err := selectEvents(root, cfg.Events)
	if err != nil {
		return nil, err
	}
	var cmdPath string
	if len(cfg.Command) > 0 {
		if cmdPath, err = exec.LookPath(cfg.Command[0]); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrConfig, err)
		}
	}
	outDir := filepath.Dir(cfg.Output)
	if st, err := os.Stat(outDir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%w: output directory %s does not exist", ErrConfig, outDir)
	}

	s := &session{cfg: cfg, root: root, events: events, watches: watches, tmpDir: outDir}
	defer func() {
		if cerr := s.cleanup(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err := s.setup(); err != nil {
		return nil, err
	}
	if !cfg.lateReaders {
		if err := s.startReaders(); err != nil {
			return nil, err
		}
	}
	if err := s.run(cmdPath); err != nil {
		return nil, err
	}
	return s.finish()
}

func (c *Config) check() error {
	switch {
	case c.All && c.PID != 0:
		return fmt.Errorf("%w: -a and -p exclude each other", ErrConfig)
	case c.PID != 0 && len(c.Command) > 0:
		return fmt.Errorf("%w: -p and a command exclude each other", ErrConfig)
	case c.PID < 0:
		return fmt.Errorf("%w: bad pid %d", ErrConfig, c.PID)
	case c.BufferSizeKB < 0:
		return fmt.Errorf("%w: bad buffer size %d kB", ErrConfig, c.BufferSizeKB)
	case !c.All && c.PID == 0 && len(c.Command) == 0:
		return fmt.Errorf("%w: nothing to follow: give a command, -p PID or -a", ErrConfig)
	}
	if c.PID != 0 {
		if err := unix.Kill(c.PID, 0); err != nil && !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("%w: process %d: %v", ErrConfig, c.PID, err)
		}
	}
	return nil
}

type session struct {
	cfg     Config
	root    *tracefs.FS
	inst    *tracefs.Instance
	events  []event
	enabled []event
	// watches match user events while recording (selectEvents);
	// watched holds the SYSTEM:EVENT of those found.
	watches []watch
	watched map[string]bool
	layout  ringbuf.Layout
	cpus    []int // CPU numbers with a per_cpu directory
	readers []*cpuReader
	stop    chan struct{}
	wg      sync.WaitGroup
	stopped bool
	tmpDir  string // beside the output, for the per-CPU data
	meta    tracefmt.Metadata
	started time.Time
	ledger  *leftover.Ledger // what the session created, for a later gprobe if this one is killed
}

// setup creates and configures the instance; tracing stays off.
func (s *session) setup() error {
	s.ledger = leftover.Start(s.root.Root, "record")
	inst, err := s.root.NewUniqueInstance(leftover.RecordInstance(os.Getpid()))
	if err != nil {
		return err
	}
	s.inst = inst
	s.ledger.Add(leftover.Object{Kind: "instance", Name: inst.Name})
	st := []struct{ file, val string }{
		{"tracing_on", "0"},
		{"trace_clock", clock},
		{"options/overwrite", "1"}, // losses then leave in-band page markers
		{"options/record-tgid", "1"},
	}
	if s.cfg.BufferSizeKB > 0 {
		st = append(st, struct{ file, val string }{"buffer_size_kb", strconv.Itoa(s.cfg.BufferSizeKB)})
	}
	for _, x := range st {
		if err := s.inst.WriteFile(x.file, x.val); err != nil {
			if x.file == "options/record-tgid" { // older kernels: top level only
				continue
			}
			return err
		}
	}
	hp, err := s.headerFile("header_page")
	if err != nil {
		return err
	}
	if s.layout, err = ringbuf.ParseHeaderPage(string(hp)); err != nil {
		return err
	}
	ents, err := os.ReadDir(s.inst.Path("per_cpu"))
	if err != nil {
		return err
	}
	for _, e := range ents {
		if n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "cpu")); err == nil && strings.HasPrefix(e.Name(), "cpu") {
			s.cpus = append(s.cpus, n)
		}
	}
	sort.Ints(s.cpus)
	if len(s.cpus) == 0 {
		return errors.New("tracefs instance has no per_cpu buffers")
	}
	s.meta.CPUStatsBefore = s.cpuStats()
	s.meta.ProfileBefore = s.profiles()
	for _, e := range s.events {
		if err := s.inst.Enable(e.System, e.Name, true); err != nil {
			return err
		}
		s.enabled = append(s.enabled, e)
	}
	return nil
}

// headerFile reads events/<name> of the instance (its sub-buffer size may
// differ from the top level's), or of the top level on older kernels.
func (s *session) headerFile(name string) ([]byte, error) {
	if b, err := s.inst.ReadFile(path.Join("events", name)); err == nil {
		return b, nil
	}
	return s.root.ReadFile(path.Join("events", name))
}

func (s *session) startReaders() error {
	s.stop = make(chan struct{})
	for _, cpu := range s.cpus {
		r, err := openCPUReader(s.inst, cpu, s.layout, s.tmpDir)
		if err != nil {
			return err
		}
		s.readers = append(s.readers, r)
	}
	for _, r := range s.readers {
		s.wg.Add(1)
		go func() { defer s.wg.Done(); r.run(s.stop) }()
	}
	return nil
}

// run turns tracing on, runs or waits for what is followed, and turns
// tracing off.
func (s *session) run(cmdPath string) error {
	var cmd *exec.Cmd
	done := make(chan error, 1)
	if len(s.cfg.Command) > 0 {
		var err error
		if cmd, err = s.startCommand(cmdPath); err != nil {
			return err
		}
		go func() { done <- cmd.Wait() }()
	} else {
		if s.cfg.PID != 0 {
			if err := s.inst.WriteFile("set_event_pid", strconv.Itoa(s.cfg.PID)); err != nil {
				return err
			}
			if err := s.inst.WriteFile("options/event-fork", "1"); err != nil {
				return err
			}
			go func() { done <- waitPID(s.cfg.PID) }()
			s.meta.PID = s.cfg.PID
		}
		s.started = time.Now()
		if err := s.inst.WriteFile("tracing_on", "1"); err != nil {
			return err
		}
	}

	var tick, watchTick <-chan time.Time
	if s.cfg.Progress != nil {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		tick = t.C
	}
	if len(s.watches) > 0 {
		// A program that registered a user event waits for the kernel
		// to flip its enable bit: enable what appeared, often.
		if err := s.watchUserEvents(); err != nil {
			return err
		}
		t := time.NewTicker(userEventPoll)
		defer t.Stop()
		watchTick = t.C
	}
	for {
		select {
		case <-done:
			s.tracingOff()
			s.clearProgress()
			if cmd != nil {
				s.meta.ExitCode = follow.ExitCode(cmd)
			}
			return nil
		case sig := <-s.cfg.Signals:
			s.tracingOff()
			s.clearProgress()
			s.meta.Interrupted = sig.String()
			if cmd == nil {
				if n, ok := sig.(syscall.Signal); ok {
					s.meta.ExitCode = 128 + int(n)
				}
				return nil
			}
			s.meta.ExitCode = follow.End(cmd, done, s.cfg.Signals)
			return nil
		case <-tick:
			s.progress()
		case <-watchTick:
			if err := s.watchUserEvents(); err != nil {
				return err
			}
		}
	}
}

// userEventPoll is how often a recording looks for new user events.
const userEventPoll = 2 * time.Millisecond

// watchUserEvents enables the user events that appeared since it last
// looked and match a watch. Tracing is on already: a program writes its
// event as soon as the kernel sets the event's enable bit, which the
// enabling does. Each event's format was read before it was enabled (a
// non-persistent event vanishes when its program exits once it is
// disabled).
func (s *session) watchUserEvents() error {
	if s.watched == nil {
		s.watched = map[string]bool{}
		for _, e := range s.events {
			s.watched[e.String()] = true
		}
	}
	for _, e := range newUserEvents(s.root, s.watches, s.watched) {
		s.watched[e.String()] = true
		if err := s.inst.Enable(e.System, e.Name, true); err != nil {
			if errors.Is(err, tracefs.ErrNotFound) {
				continue // unregistered meanwhile
			}
			return err
		}
		s.events = append(s.events, e)
		s.enabled = append(s.enabled, e)
	}
	return nil
}

// startCommand runs the command under the instance's pid filter from its
// first event on, its own execve included (follow.Start):
//
//  1. set_event_pid holds the thread that forks (event-fork then adds the
//     child the moment it is created) and tracing is turned on;
//  2. the child stops right after its execve, before the command's first
//     instruction;
//  3. set_event_pid is rewritten to hold the command only, and the command
//     is let go.
//
// The price is the few events of gprobe's forking thread (and of any thread
// the Go runtime clones from it) between 1 and 3, recorded under gprobe's
// name, as trace-cmd's own are.
func (s *session) startCommand(cmdPath string) (*exec.Cmd, error) {
	cmd := follow.Command(cmdPath, s.cfg.Command, s.cfg.Stdin, s.cfg.Stdout, s.cfg.Stderr)
	beforeFork := func(tid int) error {
		if !s.cfg.All {
			if err := s.inst.WriteFile("options/event-fork", "1"); err != nil {
				return err
			}
			if err := s.inst.WriteFile("set_event_pid", strconv.Itoa(tid)); err != nil {
				return err
			}
		}
		s.started = time.Now()
		return s.inst.WriteFile("tracing_on", "1")
	}
	stopped := func(pid int) error {
		s.meta.PID = pid
		if s.cfg.All {
			return nil
		}
		// Opening set_event_pid with O_TRUNC lifts the filter until the
		// write sets the new list (long enough to catch other tasks'
		// events), so tracing is paused meanwhile; the command, stopped,
		// misses nothing. The list becomes the command alone: gprobe's
		// thread and any thread the Go runtime cloned from it leave.
		if err := s.inst.WriteFile("tracing_on", "0"); err != nil {
			return err
		}
		if err := s.inst.WriteFile("set_event_pid", strconv.Itoa(pid)); err != nil {
			return err
		}
		return s.inst.WriteFile("tracing_on", "1")
	}
	if err := follow.Start(cmd, beforeFork, stopped); err != nil {
		return nil, err
	}
	return cmd, nil
}

// waitPID returns when process pid has exited.
func waitPID(pid int) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ENOSYS) { // before Linux 5.3
		for unix.Kill(pid, 0) == nil {
			time.Sleep(100 * time.Millisecond)
		}
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(pfd, -1); err == nil || !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func (s *session) tracingOff() {
	if !s.stopped {
		_ = s.inst.WriteFile("tracing_on", "0")
		s.stopped = true
	}
}

func (s *session) progress() {
	var ev, lost uint64
	var bytes int64
	for _, r := range s.readers {
		ev += r.events.Load()
		lost += r.missed.Load()
		bytes += r.size()
	}
	secs := time.Since(s.started).Seconds()
	fmt.Fprintf(s.cfg.Progress, "\r\033[Kgprobe record: %d events (%.0f/s), %s, %d lost", ev, float64(ev)/secs, humanBytes(bytes), lost)
}

func (s *session) clearProgress() {
	if s.cfg.Progress != nil {
		fmt.Fprint(s.cfg.Progress, "\r\033[K")
	}
}

func (s *session) cpuStats() []string {
	out := make([]string, len(s.cpus))
	for i, cpu := range s.cpus {
		b, _ := s.inst.ReadFile(fmt.Sprintf("per_cpu/cpu%d/stats", cpu))
		out[i] = string(b)
	}
	return out
}

func (s *session) profiles() map[string]string {
	m := map[string]string{}
	for _, f := range []string{"uprobe_profile", "kprobe_profile"} {
		if b, err := s.root.ReadFile(f); err == nil {
			m[f] = string(b)
		}
	}
	return m
}

// finish drains the readers, collects the metadata and writes the file.
func (s *session) finish() (*Result, error) {
	s.tracingOff()
	drainStart := time.Now()
	// /proc/kallsyms takes the kernel about as long to print as the
	// buffers take to drain: read it meanwhile.
	symbols := make(chan []byte, 1)
	go func() {
		b, _ := kallsyms.Read()
		symbols <- b
	}()
	if s.stop == nil {
		if err := s.startReaders(); err != nil {
			return nil, err
		}
	}
	close(s.stop)
	s.wg.Wait()
	s.stop = nil
	for _, r := range s.readers {
		if r.err != nil {
			return nil, fmt.Errorf("cpu%d: %w", r.cpu, r.err)
		}
	}
	s.disableEvents()

	m := &s.meta
	m.Tool = "gprobe record"
	m.Command = s.cfg.Command
	m.All = s.cfg.All
	m.Clock = clock
	m.SubbufSize = s.layout.PageSize()
	if b, err := s.inst.ReadFile("buffer_size_kb"); err == nil {
		m.BufferSizeKB, _ = strconv.Atoi(strings.Fields(string(b) + " 0")[0])
	}
	m.CPUStatsAfter = s.cpuStats()
	m.ProfileAfter = s.profiles()
	if b, err := s.root.ReadFile("saved_tgids"); err == nil {
		m.SavedTgids = string(b)
	}
	names := map[string]bool{}
	for _, e := range s.events {
		m.Events = append(m.Events, e.String())
		if e.Definition != "" {
			m.Probes = append(m.Probes, e.Definition)
		}
		names[e.Name] = true
		names[e.System+"/"+e.Name] = true
	}
	var res Result
	for i, r := range s.readers {
		cl := tracefmt.CPULost{
			CPU:        r.cpu,
			Overrun:    statValue(m.CPUStatsAfter[i], "overrun") - statValue(m.CPUStatsBefore[i], "overrun"),
			Dropped:    statValue(m.CPUStatsAfter[i], "dropped events") - statValue(m.CPUStatsBefore[i], "dropped events"),
			PageMissed: r.missed.Load(),
		}
		m.Lost.PerCPU = append(m.Lost.PerCPU, cl)
		m.Lost.Overrun += cl.Overrun
		m.Lost.Dropped += cl.Dropped
		m.Lost.PageMissed += cl.PageMissed
		m.Lost.PagesMissedUnknown += r.missedUnknown.Load()
		res.Events += r.events.Load()
	}
	if p, ok := m.ProfileAfter["kprobe_profile"]; ok {
		m.Lost.ProbeMissed = profileMisses(p, names) - min(profileMisses(m.ProfileBefore["kprobe_profile"], names), profileMisses(p, names))
	}

	n, err := s.writeFile(<-symbols)
	if err != nil {
		return nil, err
	}
	res.Output, res.Bytes, res.Meta, res.ExitCode = s.cfg.Output, n, *m, m.ExitCode
	res.Unmatched = s.unmatchedWatches()
	res.Drain = time.Since(drainStart)
	return &res, nil
}

// unsafeLongSize is the size of a C long here, the "long size" trace.dat
// records for user space.
const unsafeLongSize = 4 << (^uintptr(0) >> 63)

func (s *session) writeFile(kallsyms []byte) (int64, error) {
	f := &tracefmt.Content{
		Version:        6,
		PageSize:       s.layout.PageSize(),
		LongSize:       int(unsafeLongSize),
		Clock:          clock,
		TraceClockFile: nil,
	}
	var err error
	if f.HeaderPage, err = s.headerFile("header_page"); err != nil {
		return 0, err
	}
	if f.HeaderEvent, err = s.headerFile("header_event"); err != nil {
		return 0, err
	}
	ftrace, _ := filepath.Glob(s.root.Path("events/ftrace/*/format"))
	sort.Strings(ftrace)
	for _, p := range ftrace {
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, err
		}
		f.FtraceFormats = append(f.FtraceFormats, b)
	}
	bySystem := map[string]int{}
	for _, e := range s.events {
		b := e.Format
		if b == nil {
			var err error
			if b, err = s.root.EventFormat(e.System, e.Name); err != nil {
				return 0, err
			}
		}
		i, ok := bySystem[e.System]
		if !ok {
			i = len(f.Systems)
			bySystem[e.System] = i
			f.Systems = append(f.Systems, tracefmt.System{Name: e.System})
		}
		f.Systems[i].Formats = append(f.Systems[i].Formats, b)
	}
	f.Kallsyms = kallsyms
	f.PrintkFormats, _ = s.root.ReadFile("printk_formats")
	f.Cmdlines, _ = s.root.ReadFile("saved_cmdlines")
	if tc, err := s.inst.ReadFile("trace_clock"); err == nil {
		f.TraceClockFile = tc
	}
	for i, cpu := range s.cpus {
		f.Options = append(f.Options, tracefmt.CPUStat(cpu, []byte(s.meta.CPUStatsAfter[i])))
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		f.Options = append(f.Options, tracefmt.Option{ID: tracefmt.OptionUname, Data: tracefmt.CString(strings.Join([]string{
			unix.ByteSliceToString(u.Sysname[:]), unix.ByteSliceToString(u.Nodename[:]),
			unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Machine[:])}, " "))})
	}
	f.Options = append(f.Options, tracefmt.Option{ID: tracefmt.OptionVersion, Data: tracefmt.CString("gprobe")})
	meta, err := s.meta.Option()
	if err != nil {
		return 0, err
	}
	f.Options = append(f.Options, meta)

	// CPU i of the file is CPU number i; CPUs without a buffer are empty.
	ncpu := s.cpus[len(s.cpus)-1] + 1
	f.CPUs = make([]tracefmt.CPUData, ncpu)
	for _, r := range s.readers {
		if _, err := r.tmp.Seek(0, io.SeekStart); err != nil {
			return 0, err
		}
		f.CPUs[r.cpu] = tracefmt.CPUData{R: r.tmp, Size: r.size()}
	}

	// Written beside the target and renamed: never a half-written file
	// under the output name.
	out, err := newOutput(filepath.Dir(s.cfg.Output))
	if err != nil {
		return 0, err
	}
	n, err := f.WriteTo(out)
	if err == nil {
		err = out.Chmod(0o644)
	}
	if err == nil {
		err = out.publish(s.cfg.Output)
	}
	out.Close()
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", s.cfg.Output, err)
	}
	return n, nil
}

// output is the file a recording is written to before it takes its name:
// an unnamed file (O_TMPFILE), so that a gprobe killed while writing
// leaves nothing behind, or on file systems without them a temporary
// name, removed on failure.
type output struct {
	*os.File
	dir   string
	named bool
}

func newOutput(dir string) (*output, error) {
	if fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600); err == nil {
		return &output{File: os.NewFile(uintptr(fd), filepath.Join(dir, "(unnamed)")), dir: dir}, nil
	}
	f, err := os.CreateTemp(dir, ".gprobe-out-*")
	if err != nil {
		return nil, err
	}
	return &output{File: f, dir: dir, named: true}, nil
}

// publish gives the file the name path (replacing what had it).
func (o *output) publish(path string) error {
	name := o.Name()
	if !o.named {
		// Linked under a temporary name, then renamed over path: linkat
		// does not replace.
		for i := 0; ; i++ {
			name = filepath.Join(o.dir, fmt.Sprintf(".gprobe-out-%d-%d", os.Getpid(), i))
			err := unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", o.Fd()), unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW)
			if err == nil {
				break
			}
			if !errors.Is(err, unix.EEXIST) || i == 100 {
				return err
			}
		}
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

// Close closes the file; a named one not published is removed.
func (o *output) Close() error {
	err := o.File.Close()
	if o.named {
		os.Remove(o.Name())
	}
	return err
}

func (s *session) disableEvents() error {
	var first error
	for _, e := range s.enabled {
		err := s.inst.Enable(e.System, e.Name, false)
		if err != nil && isUserSystem(e.System) && errors.Is(err, tracefs.ErrNotFound) {
			continue // its program deleted it
		}
		if err != nil && first == nil {
			first = err
		}
	}
	s.enabled = nil
	return first
}

// cleanup undoes setup in every case: readers stopped and closed, events
// disabled, instance removed.
func (s *session) cleanup() (err error) {
	defer func() { s.ledger.Done(err == nil) }()
	if s.inst == nil {
		return nil
	}
	s.tracingOff()
	if s.stop != nil {
		close(s.stop)
		s.wg.Wait()
	}
	for _, r := range s.readers {
		r.close()
	}
	first := s.disableEvents()
	if err := s.inst.Remove(); err != nil && first == nil {
		first = err
	}
	return first
}

// unmatchedWatches are the watches no recorded event matched, as -e wrote
// them (SYSTEM:EVENT).
func (s *session) unmatchedWatches() []string {
	var out []string
	for _, w := range s.watches {
		found := false
		for _, e := range s.events {
			okSys, _ := path.Match(w.sys, e.System)
			okName, _ := path.Match(w.name, e.Name)
			if okSys && okName && isUserSystem(e.System) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, w.sys+":"+w.name)
		}
	}
	return out
}
