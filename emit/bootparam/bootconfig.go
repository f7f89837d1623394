package bootparam

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
)

// Extra Boot Config (CONFIG_BOOT_CONFIG, CONFIG_BOOTTIME_TRACING): a
// key-value file appended to the initramfs (bootconfig -a) and read when
// the command line holds "bootconfig". What the kernel does with its
// ftrace keys, from kernel/trace/trace_boot.c and lib/bootconfig.c (6.12;
// Documentation/trace/boottime-trace.rst and
// Documentation/admin-guide/bootconfig.rst):
//
//   - at core_initcall_sync, before any user-space process, it walks
//     ftrace.event.GROUP.EVENT in the order the keys first appear: an
//     event of group "kprobes" is first defined from its "probes" values,
//     each made "p:kprobes/EVENT VALUE" (so a return probe is written
//     SYM%return in the value: the line is always p:), one of group
//     "synthetic" from its "fields"; then the event's filter, its actions
//     (each written as to its trigger file) and its enable are applied. A
//     hist trigger naming a synthetic event therefore comes after that
//     event's definition, or it fails (trace_boot: Failed to apply hist
//     trigger);
//   - no other kind of probe is defined there: no uprobe, fprobe, tracepoint
//     probe or event probe;
//   - each command is composed in a 256-byte buffer (MAX_BUF_LEN), its
//     pieces appended as " %s%c" with a separator (kernel/trace/
//     trace_dynevent.c): a definition "p:kprobes/EVENT VALUE" gets a NUL
//     separator and must fit in 254 bytes, a synthetic event "EVENT
//     FIELD; FIELD;" in 255, a filter and each action in 255, and
//     "p:kprobes/EVENT" in 63 (MAX_EVENT_NAME_LEN);
//   - keys are words of letters, digits, '-' and '_'; a value holds
//     printable characters and spaces, quoted with ' or " (no escape), so a
//     value holding both quotes cannot be written; the whole file holds at
//     most 32767 bytes (XBC_DATA_MAX);
//   - kernel.KEY = VALUE adds KEY=VALUE to the command line.
//
// As with kprobe_event=, the events are written into the top-level buffer,
// which keeps its boot size (a page per CPU) unless a tracer is named at
// boot: a config sets kernel.ftrace = nop (BufferParam).

// BootconfigGroup is the only group whose events the kernel's boot-time
// tracing defines from probes.
const BootconfigGroup = "kprobes"

// Limits of the kernel's boot-time tracing (kernel/trace/trace_boot.c,
// kernel/trace/trace.h, include/linux/bootconfig.h).
const (
	// CommandMax is the longest command trace_boot composes (MAX_BUF_LEN
	// 256 with its NUL): a filter, an action, a synthetic event.
	CommandMax = 255
	// DefinitionMax is the longest kprobe definition: its place and
	// arguments are appended with a NUL separator that takes a byte.
	DefinitionMax = CommandMax - 1
	// EventHeaderMax is the longest "p:kprobes/EVENT" (MAX_EVENT_NAME_LEN
	// 64 with its NUL).
	EventHeaderMax = 63
	// ConfigMax is the largest bootconfig file (XBC_DATA_MAX).
	ConfigMax = 32767
)

// ErrBootconfig: a setup cannot be written as boot-time tracing.
var ErrBootconfig = errors.New("cannot be defined by boot-time tracing")

// ErrUprobe is perf probe's refusal of --bootconfig with -x, its message
// as perf prints it.
var ErrUprobe = errors.New("--bootconfig doesn't support uprobes.")

// BootError says which event cannot be set up at boot and why; it wraps
// ErrBootconfig (or ErrUprobe).
type BootError struct {
	Event  string // GROUP.EVENT, "" for the whole config
	Reason string
	err    error
}

func (e *BootError) Error() string {
	if e.err == ErrUprobe {
		return ErrUprobe.Error()
	}
	if e.Event == "" {
		return fmt.Sprintf("boot-time tracing: %s", e.Reason)
	}
	return fmt.Sprintf("%s %s: %s", e.Event, ErrBootconfig, e.Reason)
}

func (e *BootError) Unwrap() error {
	if e.err != nil {
		return e.err
	}
	return ErrBootconfig
}

// Event is one event's boot-time setup, under ftrace.event.SYSTEM.NAME.
type Event struct {
	System, Name string
	// Probes define a kprobes event (System BootconfigGroup): kprobes and
	// kretprobes on one place each, their arguments of one type.
	Probes []probe.Probe
	// Fields define a synthetic event (System "synthetic"): "TYPE NAME"
	// each, as in synthetic_events.
	Fields []string
	// Filter is the event's filter, as written to its filter file.
	Filter string
	// Actions are triggers, each as written to the event's trigger file
	// (hist:..., traceon, ...), applied in order.
	Actions []string
	// Enable enables the event.
	Enable bool
}

// Config is a whole boot-time tracing setup. Events are applied in order.
type Config struct {
	// Kernel holds command-line parameters (KEY or KEY=VALUE), written as
	// kernel.KEY = VALUE.
	Kernel []string
	Events []Event
}

// Bootconfig returns the boot-time setup that defines and enables probes
// from boot: one event per event name (probes of one name share it, as
// perf probe's --bootconfig groups them), in the order the names first
// appear, and BufferParam so that the boot's events are kept. Probes other
// than kprobes and kretprobes are refused (*BootError).
func Bootconfig(probes []probe.Probe) (*Config, error) {
	if len(probes) == 0 {
		return nil, &BootError{Reason: "no probe to define"}
	}
	c := &Config{Kernel: []string{BufferParam}}
	at := map[string]int{}
	for _, p := range probes {
		i, ok := at[p.Event]
		if !ok {
			i = len(c.Events)
			at[p.Event] = i
			c.Events = append(c.Events, Event{System: BootconfigGroup, Name: p.Event, Enable: true})
		}
		c.Events[i].Probes = append(c.Events[i].Probes, p)
	}
	if _, err := c.Render(); err != nil {
		return nil, err
	}
	return c, nil
}

// Text is how -D prints probes, each line ending in a newline: their
// definitions, one a line; with boot, the kernel command line that defines
// them at boot (CommandLine); with bootconfig, the Extra Boot Config that
// defines and enables them (BootconfigText).
func Text(probes []probe.Probe, boot, bootconfig bool) (string, error) {
	switch {
	case boot:
		s, err := CommandLine(probes)
		if err != nil {
			return "", err
		}
		return s + "\n", nil
	case bootconfig:
		return BootconfigText(probes)
	}
	var b strings.Builder
	for _, p := range probes {
		b.WriteString(p.String() + "\n")
	}
	return b.String(), nil
}

// BootconfigText is Bootconfig(probes) rendered: the text for
// bootconfig -a.
func BootconfigText(probes []probe.Probe) (string, error) {
	c, err := Bootconfig(probes)
	if err != nil {
		return "", err
	}
	return c.Render()
}

// ProbeValue is the value of ftrace.event.kprobes.EVENT.probes that
// defines p: its place and arguments, a return probe's place written
// SYM%return (the kernel makes every boot-time probe a p: line).
func ProbeValue(p probe.Probe) (string, error) {
	name := p.GroupOrDefault() + "." + p.Event
	switch {
	case p.Kind == probe.Uprobe || p.Target.IsUprobe():
		return "", &BootError{Event: name, err: ErrUprobe}
	case p.Kind != probe.Kprobe:
		return "", &BootError{Event: name, Reason: fmt.Sprintf("the kernel's boot-time tracing defines kprobes and synthetic events only, not %s events", p.Kind)}
	case p.Return && p.MaxActive > 0:
		return "", &BootError{Event: name, Reason: "a boot-time return probe takes the kernel's default maxactive; it cannot be given"}
	}
	q := p
	q.Group, q.Event = BootconfigGroup, p.Event
	if p.Return {
		l := p.Target
		if l.Symbol == "" || l.Offset != 0 {
			return "", &BootError{Event: name, Reason: "a return probe is defined at boot as SYM%return, on a function's entry"}
		}
		q.Target.Place = modPrefix(l.Module) + l.Symbol + "%return"
	}
	_, value, _ := strings.Cut(q.String(), " ")
	return value, nil
}

func modPrefix(m string) string {
	if m == "" {
		return ""
	}
	return m + ":"
}

// Render writes the config in bootconfig's syntax, one key a line. It
// refuses (*BootError) what the kernel would not apply: see the comment at
// the top of this file.
func (c *Config) Render() (string, error) {
	var b strings.Builder
	for _, k := range c.Kernel {
		key, val, hasVal := strings.Cut(k, "=")
		if err := checkKey(key, "kernel."+key); err != nil {
			return "", err
		}
		if !hasVal {
			fmt.Fprintf(&b, "kernel.%s\n", key)
			continue
		}
		v, err := quote(val, "kernel."+key)
		if err != nil {
			return "", err
		}
		if plainWord(val) {
			v = val
		}
		fmt.Fprintf(&b, "kernel.%s = %s\n", key, v)
	}
	seen := map[string]bool{}
	for _, e := range c.Events {
		name := e.System + "." + e.Name
		if seen[name] {
			return "", &BootError{Event: name, Reason: "the event is set up twice"}
		}
		seen[name] = true
		if err := checkKey(e.System, name); err != nil {
			return "", err
		}
		if err := checkKey(e.Name, name); err != nil {
			return "", err
		}
		key := "ftrace.event." + name
		switch {
		case len(e.Probes) > 0 && e.System != BootconfigGroup:
			return "", &BootError{Event: name, Reason: "the kernel defines probes at boot in the group " + BootconfigGroup + " only"}
		case len(e.Fields) > 0 && e.System != "synthetic":
			return "", &BootError{Event: name, Reason: "fields define a synthetic event: its group is synthetic"}
		}
		if len(e.Probes) > 0 {
			if h := "p:" + BootconfigGroup + "/" + e.Name; len(h) > EventHeaderMax {
				return "", &BootError{Event: name, Reason: fmt.Sprintf("the kernel composes %q in %d bytes; the name is too long", h, EventHeaderMax)}
			}
			var vals []string
			for _, p := range e.Probes {
				if p.Event != e.Name {
					return "", &BootError{Event: name, Reason: fmt.Sprintf("probe %q is not of this event", p.String())}
				}
				v, err := ProbeValue(p)
				if err != nil {
					return "", err
				}
				if err := fitsCommand("p:"+BootconfigGroup+"/"+e.Name+" "+v, DefinitionMax, name, "definition"); err != nil {
					return "", err
				}
				q, err := quote(v, name)
				if err != nil {
					return "", err
				}
				vals = append(vals, q)
			}
			fmt.Fprintf(&b, "%s.probes = %s\n", key, strings.Join(vals, ", "))
		}
		if len(e.Fields) > 0 {
			cmd := e.Name
			var vals []string
			for _, f := range e.Fields {
				cmd += " " + f + ";"
				q, err := quote(f, name)
				if err != nil {
					return "", err
				}
				vals = append(vals, q)
			}
			if err := fitsCommand(cmd, CommandMax, name, "synthetic event"); err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "%s.fields = %s\n", key, strings.Join(vals, ", "))
		}
		if e.Filter != "" {
			if err := fitsCommand(e.Filter, CommandMax, name, "filter"); err != nil {
				return "", err
			}
			q, err := quote(e.Filter, name)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "%s.filter = %s\n", key, q)
		}
		if len(e.Actions) > 0 {
			var vals []string
			for _, a := range e.Actions {
				if err := fitsCommand(a, CommandMax, name, "action"); err != nil {
					return "", err
				}
				q, err := quote(a, name)
				if err != nil {
					return "", err
				}
				vals = append(vals, q)
			}
			fmt.Fprintf(&b, "%s.actions = %s\n", key, strings.Join(vals, ", "))
		}
		if e.Enable {
			fmt.Fprintf(&b, "%s.enable\n", key)
		}
	}
	if b.Len() > ConfigMax {
		return "", &BootError{Reason: fmt.Sprintf("the config takes %d bytes; the kernel reads at most %d", b.Len(), ConfigMax)}
	}
	return b.String(), nil
}

// checkKey: a key word holds letters, digits, '-' and '_'.
func checkKey(w, event string) error {
	if w == "" {
		return &BootError{Event: event, Reason: "an empty key word"}
	}
	for _, c := range w {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return &BootError{Event: event, Reason: fmt.Sprintf("%q cannot be a bootconfig key word (letters, digits, - and _ only)", w)}
		}
	}
	return nil
}

// quote quotes a value: with ' unless it holds one, then with ".
func quote(v, event string) (string, error) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' || c == 0x7f {
			return "", &BootError{Event: event, Reason: fmt.Sprintf("the value %q holds the control character %q, which bootconfig cannot carry", v, c)}
		}
	}
	switch {
	case !strings.Contains(v, "'"):
		return "'" + v + "'", nil
	case !strings.Contains(v, `"`):
		return `"` + v + `"`, nil
	}
	return "", &BootError{Event: event, Reason: fmt.Sprintf("the value %q holds both quotes; bootconfig has no escape", v)}
}

// fitsCommand: the kernel composes each command in MAX_BUF_LEN bytes.
func fitsCommand(cmd string, limit int, event, what string) error {
	if len(cmd) > limit {
		return &BootError{Event: event, Reason: fmt.Sprintf("the %s takes %d bytes; boot-time tracing composes it in %d (%s)", what, len(cmd), limit, strconv.Quote(cmd))}
	}
	return nil
}

// plainWord: a value that needs no quotes (letters, digits, '.', '-', '_').
func plainWord(v string) bool {
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return v != ""
}
