package install

import (
	"fmt"
	iofs "io/fs"
	"regexp"
	"strings"
	"sync"

	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/mountns"
)

// Def is one thing `gprobe add` is given: raw definition lines (Lines, or
// the --from file From), or a definition its caller resolves (Req, filled
// in by AddOptions.Resolve).
type Def struct {
	Lines []string
	From  string // a file of definition lines (ReadDefinitions); "-" is stdin
	Req   *Request
}

// AddOptions tune Add.
type AddOptions struct {
	Options
	// DryRun plans and checks everything, and writes nothing.
	DryRun bool
	// Resolve fills in the Probes (and Module) of the requests of defs
	// given as Req, in order, once every raw line has been read. It
	// reports its own failures: Add returns its error as it is, in an
	// *AddError whose Step is StepResolve.
	Resolve func([]*Request) error
	// MountNS, when > 0, is the process whose mount namespace the
	// definitions are written from (perf's --target-ns): the kernel
	// resolves a uprobe's path there, so Add checks and writes the paths
	// in that namespace (fs's Enter and Options.Stat are set for it) when
	// it is not gprobe's own.
	MountNS int
}

// Step is a step of Add.
type Step int

// The steps of Add, in order.
const (
	StepNamespace Step = iota + 1 // entering AddOptions.MountNS
	StepList                      // reading the installed events
	StepRead                      // reading the --from files
	StepRaw                       // reading raw definition lines (RawRequests)
	StepResolve                   // AddOptions.Resolve
	StepKinds                     // the kernel's events file for each kind used
	StepPlan                      // naming and checking (Plan)
	StepWrite                     // writing, all or none (Write)
)

// AddError is a failure of Add at Step; its message is Err's.
type AddError struct {
	Step Step
	Err  error
}

func (e *AddError) Error() string { return e.Err.Error() }
func (e *AddError) Unwrap() error { return e.Err }

// Add installs what one `gprobe add` (perf probe -a) asks for, all or
// nothing, in the order of defs: it enters MountNS's namespace for the
// writes (a process that cannot be read is an error wrapping
// mountns.ErrNoProcess), reads the installed events and every
// --from file, reads consecutive raw lines together as RawRequests does
// (so that lines naming one event form one request), has the other
// definitions resolved, makes sure the kernel has the events file of each
// kind used, names everything against the installed events (Plan) and,
// unless DryRun, writes the plan (WriteSome: an event of a function
// pattern the kernel refuses is left out with a warning). It returns what
// was written (the plan, with DryRun).
func Add(fs *tracefs.FS, defs []Def, o AddOptions) ([]Event, error) {
	fail := func(s Step, err error) ([]Event, error) { return nil, &AddError{Step: s, Err: err} }
	if err := enterNS(fs, &o); err != nil {
		return fail(StepNamespace, err)
	}
	installed, err := fs.List()
	if err != nil {
		return fail(StepList, err)
	}
	lines := make([][]string, len(defs))
	for i, d := range defs {
		if lines[i] = d.Lines; d.From != "" {
			if lines[i], err = ReadDefinitions(d.From); err != nil {
				return fail(StepRead, err)
			}
		}
	}
	var reqs, resolve []*Request
	for i := 0; i < len(defs); i++ {
		if r := defs[i].Req; r != nil {
			reqs, resolve = append(reqs, r), append(resolve, r)
			continue
		}
		var run []string
		for ; i < len(defs) && defs[i].Req == nil; i++ {
			run = append(run, lines[i]...)
		}
		i--
		rs, err := RawRequests(fs, run, o.Options)
		if err != nil {
			return fail(StepRaw, err)
		}
		reqs = append(reqs, rs...)
	}
	if len(resolve) > 0 {
		if err := o.Resolve(resolve); err != nil {
			return fail(StepResolve, err)
		}
	}
	for _, r := range reqs {
		for _, p := range r.Probes {
			if err := fs.Check(p.Kind); err != nil {
				return fail(StepKinds, err)
			}
		}
	}
	plan, err := Plan(reqs, installed, o.Options)
	if err != nil {
		return fail(StepPlan, err)
	}
	if !o.DryRun {
		if plan, err = WriteSome(fs, plan, o.Warn); err != nil {
			return fail(StepWrite, err)
		}
	}
	return plan, nil
}

// enterNS sets fs and o up for writing from o.MountNS's mount namespace.
func enterNS(fs *tracefs.FS, o *AddOptions) error {
	pid := o.MountNS
	if pid <= 0 {
		return nil
	}
	if same, err := mountns.Same(pid); err != nil || same {
		if err != nil {
			return fmt.Errorf("--target-ns: %w", err)
		}
		return nil
	}
	fs.Enter = func(write func() error) error { return mountns.Do(pid, write) }
	o.Stat = func(p string) (iofs.FileInfo, error) { return mountns.Stat(pid, p) }
	return nil
}

// IsDefinition tells a definition line of the kernel's grammar
// ("p:GRP/EV PLACE ...", "r:EV PLACE", "r16:...", "f:EV FUNC",
// "f8:EV FUNC%return", "t:EV TRACEPOINT", "e:EV SYSTEM.EVENT", a user
// event's "u:NAME FIELDS") from a perf PROBEDEF. A PROBEDEF's first word
// never looks like that unless it names a function "p", "r", "f", "t", "e"
// or "u" with a line number ("p:10"), which stays a PROBEDEF.
func IsDefinition(s string) bool {
	s = strings.TrimSpace(s) + " "
	return definitionHead().MatchString(s) && !funcLineHead().MatchString(s)
}

var (
	definitionHead = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([prf][0-9]*|[teu]):[^=\s]*\s`) })
	funcLineHead   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[prfteu]:[0-9]+\s`) })
)
