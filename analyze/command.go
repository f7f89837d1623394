package analyze

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/gprobe/gprobe/analyze/objtrace"
	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/analyze/report"
	"github.com/gprobe/gprobe/internal/gcpace"
)

// Request is gprobe analyze's workflow as its flags ask it: the reports
// of the recordings (one, or each file or host and the total) and the
// output formats of the same pass, or --object / --objects alone.
type Request struct {
	// Paths are the recordings, in the order read.
	Paths []string
	// Many: several recordings (several operands, a directory, or --by
	// file|host), reported each and as a total.
	Many bool

	flags FlagValues
	cfg   Config
	out   report.Output
	unit  report.Unit
	// parts says how several recordings are reported: "file" or "host"
	// ("" when --by does not say).
	parts string
	all   bool // --all-objects
}

// ParseRequest reads analyze's flags from f and finds the recordings args
// name (trace.out when none).
func ParseRequest(f FlagValues, args []string) (*Request, error) {
	if len(args) == 0 {
		args = []string{"trace.out"}
	}
	req := &Request{flags: f}
	if err := req.parseFlags(); err != nil {
		return nil, err
	}
	paths, err := Inputs(args)
	if err != nil {
		return nil, err
	}
	req.Paths = paths
	req.Many = len(args) > 1 || len(paths) != 1 || paths[0] != args[0] || req.parts != ""
	return req, nil
}

// parseFlags reads analyze's flags (but those of --object and --objects).
func (req *Request) parseFlags() (err error) {
	c := req.flags
	if req.unit, err = report.ParseUnit(c.String("unit")); err != nil {
		return err
	}
	switch {
	case c.Bool("json") && c.Bool("json-lines"):
		return errors.New("--json and --json-lines: choose one")
	case c.Bool("json"):
		req.out = report.OutputJSON
	case c.Bool("json-lines"):
		req.out = report.OutputJSONLines
	}
	if req.cfg.MaxListed = c.Int("max-objects"); req.cfg.MaxListed <= 0 {
		return fmt.Errorf("--max-objects %d: want at least 1", req.cfg.MaxListed)
	}
	if req.cfg.Latency.By, req.parts, err = ParseBy(c.String("by")); err != nil {
		return err
	}
	if s := c.String("refcount"); s != "" {
		spec, err := refcount.ParseSpec(s)
		if err != nil {
			return err
		}
		req.cfg.Refcount, req.cfg.RefSpec = &spec, s
	}
	if p := c.String("probes"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		req.cfg.Latency.Definitions = strings.Split(string(b), "\n")
	}
	req.all = c.Bool("all-objects")
	return nil
}

// Objects reports whether the request is --object or --objects.
func (req *Request) Objects() bool { return req.flags.IsSet("object") || req.flags.IsSet("objects") }

// PaceGC sets the garbage collector's pacing for a process that runs this
// one request and exits (gprobe analyze): past 8 MiB live, collecting at
// 40% keeps the peak below trace-cmd's at every size (gcpace). One
// recording without the object analyses collects at 400% instead: the
// objects' store and index live outside Go's heap, which holds the
// metadata and buffers, nearly all live to the end, so a collection
// before 16 MiB frees little and costs a small recording more than its
// analysis (the collector's first touch of its own memory: ~3 ms on a
// virtual machine, for a trace-cmd zstd file's 2 MB of inflated formats).
// Many files leave each one's state behind: Go's pacing stays.
func (req *Request) PaceGC() {
	gcpace.SwitchAt(8 << 20)
	if !req.Objects() && !req.Many {
		debug.SetGCPercent(400)
	}
}

// Run writes the request's reports to w and its formats' files.
func (req *Request) Run(w io.Writer) error {
	if req.Objects() {
		return req.objects(w)
	}
	if req.Many && req.parts == "host" && req.all && req.out != report.OutputJSONLines {
		return errors.New("--all-objects lists the objects of each recording: use --by file or --json-lines")
	}
	_, _, err := WithFormats("analyze", FormatInput{req.flags, req.Paths, req.cfg}, req.Many, func(cfg Config) error {
		if req.Many {
			m := report.NewMany(w, req.out, cmp.Or(req.parts, "file")+"s", req.unit, cfg.MaxListed)
			return ReportFiles(m, req.Paths, cfg, req.parts == "host", req.all)
		}
		return File(req.Paths[0], cfg, func(an *Analysis) error {
			r := an.Report()
			r.AllObjects = req.all
			return report.Write(w, r, req.out, req.unit, cfg.MaxListed)
		})
	})
	return err
}

// objects runs --object or --objects, alone.
func (req *Request) objects(w io.Writer) error {
	c := req.flags
	var alone []string
	for _, f := range Formats {
		if f.Command == "analyze" {
			alone = append(alone, f.Flag)
		}
	}
	for _, f := range append(alone, "json-lines", "all-objects", "by", "probes") {
		if c.IsSet(f) {
			return fmt.Errorf("--%s does not go with --object or --objects", f)
		}
	}
	asJSON, unit, spec := req.out == report.OutputJSON, req.unit, req.cfg.Refcount
	if c.IsSet("object") {
		if c.IsSet("objects") || spec != nil {
			return errors.New("--object follows every field: give it without --objects or --refcount")
		}
		addr, err := objtrace.ParseAddr(c.String("object"))
		if err != nil {
			return err
		}
		return ReportObject(w, req.Paths, addr, asJSON, unit)
	}
	n := c.Int("objects")
	if n <= 0 {
		return fmt.Errorf("--objects %d: want at least 1", n)
	}
	by, err := objtrace.ParseBy(c.String("rank"))
	if err != nil {
		return err
	}
	return ReportRanking(w, req.Paths, objtrace.NewRanker(n, by, spec), asJSON, unit)
}
