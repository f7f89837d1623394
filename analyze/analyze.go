package analyze

import (
	"fmt"

	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/analyze/report"
	"github.com/gprobe/gprobe/analyze/symbolize"
	"github.com/gprobe/gprobe/analyze/trace"
)

// Config selects the analyses.
type Config struct {
	Latency  latency.Options
	Refcount *refcount.Spec // nil: no refcount analysis
	RefSpec  string         // the spec as the user wrote it, for the report
	// MaxListed bounds each list of objects and sites in the refcount
	// report (default 100); counts are always exact.
	MaxListed int
	// Exporters see every matched call, and in a pass over files (File,
	// RunFiles) every event (see Exporter).
	Exporters []Exporter
}

// Analysis is the finished analysis of one recording. Its report streams
// every outstanding object from the analysis' state, so keep it only as
// long as that is wanted.
type Analysis struct {
	// File and Host name the recording (Host when it says).
	File, Host string
	info       trace.Info
	cfg        Config
	lat        *latency.Analyzer
	rc         *refcount.Analyzer
}

// Run reads src once and runs every selected analysis over it.
func Run(src trace.Source, cfg Config) (*report.Report, error) {
	a, err := Analyze(src, cfg)
	return a.Report(), err
}

// Analyze reads src once and runs every selected analysis over it. On an
// error the analysis holds what was read before it.
func Analyze(src trace.Source, cfg Config) (*Analysis, error) {
	// Probe definitions stored in the file (gprobe record) are known
	// before the events: trace.dat metadata precedes the data.
	cfg.Latency.Definitions = append(cfg.Latency.Definitions[:len(cfg.Latency.Definitions):len(cfg.Latency.Definitions)], src.Info().Probes...)
	a := &Analysis{cfg: cfg, lat: latency.New(cfg.Latency)}
	a.lat.OnCall = onCall(cfg.Exporters)
	if cfg.Refcount != nil {
		info := src.Info()
		a.rc = refcount.New(*cfg.Refcount, refcount.Options{MaxListed: cfg.MaxListed, Symbols: symbolize.New(info.Probes, info.Kallsyms)})
	}
	err := src.Run(func(e *trace.Event) error {
		a.lat.Event(e)
		if a.rc != nil {
			a.rc.Event(e)
		}
		return nil
	})
	a.info = src.Info()
	a.Host = a.info.Host
	if a.rc != nil && a.info.StatsLost > 0 {
		a.rc.LostSomewhere()
	}
	return a, err
}

// Report is the analysis' report.
func (a *Analysis) Report() *report.Report {
	rep := &report.Report{File: a.File, Host: a.Host, Latency: a.lat.Results(), RefcountSpec: a.cfg.RefSpec}
	rep.AddInfo(a.info)
	if a.rc != nil {
		r := a.rc.Report()
		rep.Refcount = &r
	}
	return rep
}

// Total adds up the analyses of several recordings: counts add, latency
// rows of the same function and group merge (percentiles from the merged
// histograms), refcount lists keep the oldest objects and busiest sites.
// It keeps no recording's events or objects.
type Total struct {
	rep report.Report
	lat *latency.Analyzer
	rc  *refcount.Totals
}

// NewTotal returns an empty total for analyses made with cfg.
func NewTotal(cfg Config) *Total {
	t := &Total{lat: latency.New(latency.Options{By: cfg.Latency.By})}
	t.rep.RefcountSpec = cfg.RefSpec
	if cfg.Refcount != nil {
		t.rc = refcount.NewTotals(cfg.MaxListed)
	}
	return t
}

// Add adds a finished analysis.
func (t *Total) Add(a *Analysis) {
	t.rep.Recordings++
	t.rep.AddInfo(a.info)
	if t.rep.Recordings == 1 {
		t.rep.Host = a.Host
	} else if t.rep.Host != a.Host {
		t.rep.Host = ""
	}
	t.lat.Merge(a.lat)
	if t.rc != nil && a.rc != nil {
		t.rc.Add(a.rc, a.File)
	}
}

// Report is the total so far.
func (t *Total) Report() *report.Report {
	rep := t.rep
	rep.Format = fmt.Sprintf("%d recordings", rep.Recordings)
	if rep.Recordings == 1 {
		rep.Format = "1 recording"
	}
	rep.Latency = t.lat.Results()
	if t.rc != nil {
		r := t.rc.Report()
		rep.Refcount = &r
	}
	return &rep
}
