// Package portability checks a list of probe points against many kernels at
// once, for fleets: on each kernel, whether each point resolves and how
// (at the function's own symbol, only at inline instances, only at
// compiler-made clones), and when it does not, what is missing (the
// function, an argument, the line); across kernels, whether the members an
// argument reads moved. Each kernel is opened once and every point is
// resolved against it as `gprobe -D` would, so each kernel's definitions are
// the lines `add --from` installs there.
//
// A kernel is a vmlinux with DWARF (a -dbg package's), a vmlinux without
// DWARF but with its symbol table and .BTF, or a raw BTF file (a saved
// /sys/kernel/btf/vmlinux). Without DWARF only function entries resolve:
// lines, locals and inline instances are DWARF's.
package portability

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/resolver"
	"github.com/gprobe/gprobe/resolve/spec"
	"github.com/gprobe/gprobe/resolve/target"
)

// ErrBadProbeList: a line of the probe list is not a probe definition.
var ErrBadProbeList = errors.New("bad probe list")

// Status is how a probe point fares on one kernel.
type Status string

const (
	// OK: the point resolves, at the function's own symbol (or a source
	// line, or a BTF function).
	OK Status = "ok"
	// Inlined: the function has no symbol of its own; it resolves only at
	// its inline instances in other functions.
	Inlined Status = "inlined"
	// Clone: the function exists only as compiler-made copies
	// (FUNC.isra.0, FUNC.constprop.0, FUNC.cold, FUNC.part.0).
	Clone Status = "clone"
	// Missing: the function (or source file) is not there, or the point
	// needs DWARF and the kernel has none.
	Missing Status = "missing"
	// ArgMissing: the place resolves, an argument does not (no such
	// variable or member there, or not fetchable).
	ArgMissing Status = "arg-missing"
	// FieldMoved: the point resolves, but the member offsets its arguments
	// read differ from those on the first kernel where it resolved: one
	// kernel's definition must not be installed on the other.
	FieldMoved Status = "field-moved"
	// LineMoved: the function is there, but the line, pattern or offset
	// inside it does not resolve.
	LineMoved Status = "line-moved"
)

// Result is one cell of the matrix: a probe point on a kernel.
type Result struct {
	Spec   string `json:"spec"`
	Kernel string `json:"kernel"`
	Status Status `json:"status"`
	// Sites is the number of trace events the point became (0 when it did
	// not resolve).
	Sites int `json:"sites"`
	// Definitions are the lines `gprobe -D` prints for the point on this
	// kernel.
	Definitions []string `json:"definitions"`
	// Reason is the resolver's message when the point did not resolve.
	Reason string `json:"-"`

	probes []probe.Probe
	layout string // member offsets the arguments read (see layoutOf)
}

// Report is the matrix: one Result per probe point and kernel, points in
// list order, kernels in the order given.
type Report struct {
	Kernels []string `json:"kernels"`
	Results []Result `json:"results"`
}

// Options tune a check.
type Options struct {
	// Features are the probe-event features definitions are written for
	// (a tracefs README's); nil means unknown: resolution as with none,
	// the kernel's grammar checked as Linux 6.1's (as -D does).
	Features *probedef.Features
	// MaxProbes is perf's --max-probes (default 128).
	MaxProbes int
	// Jobs is how many kernels are resolved at once (default: the number
	// of CPUs). Each open kernel maps its image and caches the units it
	// reads.
	Jobs int
}

// Point is one line of a probe list.
type Point struct {
	Text  string // as written
	Line  int    // in the list
	probe *spec.Probe
}

// ReadProbes reads a probe list: one perf probe definition per line
// ("vfs_read file->f_pos count"); blank lines and lines starting with '#'
// are skipped. A line that is not a definition is an error naming it.
func ReadProbes(r io.Reader, name string) ([]Point, error) {
	var out []Point
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		p, err := spec.ParseProbe(text)
		if err != nil {
			msg := err.Error()
			var se *spec.SyntaxError
			if errors.As(err, &se) && se.Perf != "" {
				msg = firstLine(se.Perf)
			}
			return nil, fmt.Errorf("%s:%d: %q: %s: %w", name, n, text, msg, ErrBadProbeList)
		}
		if p.Point.SDT {
			return nil, fmt.Errorf("%s:%d: %q: an SDT marker of a user program, not a kernel probe point: %w", name, n, text, ErrBadProbeList)
		}
		out = append(out, Point{Text: text, Line: n, probe: p})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no probe definitions: %w", name, ErrBadProbeList)
	}
	return out, nil
}

// ReadProbesFile reads the probe list in the file at path, or on stdin
// when path is "-" (see ReadProbes).
func ReadProbesFile(path string) ([]Point, error) {
	if path == "-" {
		return ReadProbes(os.Stdin, "stdin")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadProbes(f, path)
}

// Check resolves every point on every kernel. A kernel that cannot be
// opened is an error naming it; a point that does not resolve is a cell.
func Check(points []Point, kernels []string, opts Options) (*Report, error) {
	if opts.MaxProbes <= 0 {
		opts.MaxProbes = 128
	}
	seen := map[string]bool{}
	for _, k := range kernels {
		if seen[k] {
			return nil, fmt.Errorf("%s: kernel given twice", k)
		}
		seen[k] = true
	}
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	jobs = min(jobs, len(kernels))
	cells := make([][]Result, len(kernels)) // [kernel][point]
	errs := make([]error, len(kernels))
	next := make(chan int)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				cells[i], errs[i] = checkKernel(kernels[i], points, opts)
			}
		}()
	}
	for i := range kernels {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err // the first kernel, in the order given, that failed
		}
	}
	rep := &Report{Kernels: kernels}
	for p := range points {
		row := make([]Result, len(kernels))
		for k := range kernels {
			row[k] = cells[k][p]
		}
		markMoved(row)
		rep.Results = append(rep.Results, row...)
	}
	return rep, nil
}

// markMoved marks the cells whose member offsets differ from those of the
// first kernel where the point resolved.
func markMoved(row []Result) {
	ref := ""
	for i := range row {
		c := &row[i]
		if c.Sites == 0 || c.layout == "" {
			continue
		}
		if ref == "" {
			ref = c.layout
		} else if c.layout != ref {
			c.Status = FieldMoved
		}
	}
}

// Unresolved returns the points that resolve on no kernel.
func (r *Report) Unresolved() []string {
	var out []string
	n := len(r.Kernels)
	for i := 0; i+n <= len(r.Results); i += n {
		sites := 0
		for _, c := range r.Results[i : i+n] {
			sites += c.Sites
		}
		if sites == 0 {
			out = append(out, r.Results[i].Spec)
		}
	}
	return out
}

// kernel is one opened kernel and what is known about its functions.
type kernel struct {
	path  string
	r     *resolver.Resolver
	opts  Options
	funcs map[string]bool // function symbols (BTF functions without an image)
	// clones maps a function name to whether a compiler-made copy of it
	// (NAME.suffix) is among the symbols.
	clones  map[string]bool
	entries map[string]bool // resolves(FUNC entry), by point text
	warned  string          // the resolver's last warning
}

func checkKernel(path string, points []Point, opts Options) ([]Result, error) {
	k := &kernel{path: path, opts: opts, funcs: map[string]bool{}, clones: map[string]bool{}, entries: map[string]bool{}}
	t, err := target.Open(target.Options{Vmlinux: path})
	if err != nil {
		return nil, err
	}
	ro := resolver.Options{MaxProbes: opts.MaxProbes, Warn: func(s string) { k.warned = s }}
	if opts.Features != nil {
		ro.Features = *opts.Features
	}
	r, err := resolver.New(t, ro)
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer r.Close()
	all, _ := spec.ParseFilter("*")
	names, err := r.Functions(all)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	k.r = r
	for _, n := range names {
		k.funcs[n] = true
		if base, _, ok := strings.Cut(n, "."); ok {
			k.clones[base] = true
		}
	}
	out := make([]Result, len(points))
	for i := range points {
		out[i] = k.cell(&points[i])
	}
	return out, nil
}

// cell resolves one point on the kernel and classifies the answer.
func (k *kernel) cell(pt *Point) Result {
	res := Result{Spec: pt.Text, Kernel: k.path, Definitions: []string{}}
	k.warned = ""
	ps, err := k.probes(pt.probe)
	if err != nil {
		// perf prints some reasons as warnings before an empty error.
		res.Reason = reason(err, k.warned)
		res.Status = k.failure(pt.probe)
		if res.Reason == "" {
			res.Reason = fmt.Sprintf("%s is not there", pt.probe.Point.String())
			if res.Status == ArgMissing {
				res.Reason = "an argument is not there"
			}
		}
		return res
	}
	res.Status = k.kind(pt.probe.Point, ps)
	res.Sites, res.probes = len(ps), ps
	for _, p := range ps {
		res.Definitions = append(res.Definitions, p.String())
	}
	res.layout = layoutOf(pt.probe, ps[0])
	return res
}

// probes resolves p as -D does: nothing the kernel would refuse. Without
// an image, the function must be one BTF describes (resolution from BTF
// alone takes a name without arguments on trust).
func (k *kernel) probes(p *spec.Probe) ([]probe.Probe, error) {
	if fn := p.Point.Function; !k.r.HasSymbols() && p.Point.HasFunction && !k.funcs[fn] {
		return nil, fmt.Errorf("Failed to find %s in BTF", fn)
	}
	ps, err := k.r.Probes(p)
	if err != nil {
		return nil, err
	}
	for _, pr := range ps {
		if _, err := probedef.Parse(pr.String(), &probedef.Options{Arch: k.r.Arch(), NoStat: true, Features: k.opts.Features}); err != nil {
			return nil, fmt.Errorf("the kernel would refuse %q: %w", pr.String(), err)
		}
	}
	return ps, nil
}

// kind tells how a point is placed on the kernel, from its sites when it
// resolved: at the function's own symbol, only at compiler-made clones of
// it, or only at its inline instances in other functions.
func (k *kernel) kind(pp spec.Point, sites []probe.Probe) Status {
	fn := pp.Function
	if !pp.HasFunction || spec.IsGlob(fn) || k.funcs[fn] {
		return OK
	}
	if len(sites) == 0 {
		if k.clones[fn] {
			return Clone
		}
		return Inlined
	}
	for _, p := range sites {
		if !strings.HasPrefix(p.Target.Symbol, fn+".") {
			return Inlined
		}
	}
	return Clone
}

// failure classifies a point that did not resolve, by resolving less of
// it: without its arguments (arg-missing), then the function's entry
// alone (line-moved, or how the function itself is placed).
func (k *kernel) failure(p *spec.Probe) Status {
	pp := p.Point
	if len(p.Args) > 0 && k.resolves(&spec.Probe{Point: pp, UserEvent: p.UserEvent}) {
		return ArgMissing
	}
	inside := pp.Line != 0 || pp.HasLazy || pp.Offset != 0
	if !k.r.HasDWARF() && (inside || pp.HasFile) {
		return Missing // needs DWARF
	}
	if !pp.HasFunction {
		if k.hasFile(pp.File) {
			return LineMoved
		}
		return Missing
	}
	if spec.IsGlob(pp.Function) {
		return Missing
	}
	if k.resolves(&spec.Probe{Point: spec.Point{Function: pp.Function, HasFunction: true, File: pp.File, HasFile: pp.HasFile}}) {
		if inside {
			return LineMoved
		}
		return k.kind(pp, nil) // FUNC%return of an inline function
	}
	if k.clones[pp.Function] && !k.funcs[pp.Function] {
		return Clone
	}
	return Missing
}

// resolves reports whether p resolves (function entries are remembered).
func (k *kernel) resolves(p *spec.Probe) bool {
	key := p.String()
	entry := len(p.Args) == 0 && p.Point.Line == 0 && !p.Point.HasLazy && p.Point.Offset == 0 && !p.Point.Return
	if ok, seen := k.entries[key]; seen && entry {
		return ok
	}
	_, err := k.probes(p)
	if entry {
		k.entries[key] = err == nil
	}
	return err == nil
}

// hasFile reports whether the kernel's DWARF has code from a source file.
func (k *kernel) hasFile(file string) bool {
	lr, err := spec.ParseLineRange(file)
	if err != nil {
		return false
	}
	_, err = k.r.LineRange(lr)
	return err == nil
}

// layoutOf is what the arguments of a resolved point read from memory: for
// each argument with members, the offsets of its dereferences that follow
// '->' (the outermost ones; the innermost may be where the variable lives,
// which is the compiler's choice), and the bitfield it reads. Two kernels
// whose layouts differ read different offsets for the same members.
func layoutOf(p *spec.Probe, pr probe.Probe) string {
	if len(p.Args) != len(pr.Args) {
		return "" // $vars or $params: no members
	}
	var b strings.Builder
	for i, a := range p.Args {
		if len(a.Fields) == 0 {
			continue
		}
		derefs := 0
		for _, f := range a.Fields {
			if f.Ref {
				derefs++
			}
		}
		fa := pr.Args[i]
		fmt.Fprintf(&b, "%d:", i)
		for e := fa.Expr; derefs > 0; derefs-- {
			m, ok := e.(probe.Mem)
			if !ok {
				break
			}
			fmt.Fprintf(&b, "%d,", m.Off)
			e = m.Inner
		}
		if strings.HasPrefix(fa.Type, "b") {
			b.WriteString(fa.Type)
		}
		b.WriteString(";")
	}
	return b.String()
}

// reason is the first line of a resolver's message, or of its last
// warning when the message is empty ("" when there is neither).
func reason(err error, warned string) string {
	var re *core.Error
	if errors.As(err, &re) && re.Msg == "" {
		return firstLine(warned)
	}
	return firstLine(err.Error())
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
