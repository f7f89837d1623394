package analyze

import (
	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/analyze/report"
	"github.com/gprobe/gprobe/analyze/trace"
)

// Config selects the analyses.
type Config struct {
	Latency  latency.Options
	Refcount *refcount.Spec // nil: no refcount analysis
	RefSpec  string         // the spec as the user wrote it, for the report
	// OnCall, when set, sees every matched call (timeline export).
	OnCall func(latency.Call)
}

// Run reads src once and runs every selected analysis over it.
func Run(src trace.Source, cfg Config) (*report.Report, error) {
	// Probe definitions stored in the file (gprobe record) are known
	// before the events: trace.dat metadata precedes the data.
	cfg.Latency.Definitions = append(cfg.Latency.Definitions, src.Info().Probes...)
	lat := latency.New(cfg.Latency)
	lat.OnCall = cfg.OnCall
	var rc *refcount.Analyzer
	if cfg.Refcount != nil {
		rc = refcount.New(*cfg.Refcount, refcount.Options{})
	}
	err := src.Run(func(e *trace.Event) error {
		lat.Event(e)
		if rc != nil {
			rc.Event(e)
		}
		return nil
	})
	info := src.Info()
	rep := &report.Report{StatsLost: info.StatsLost,
		Format: info.Format, Events: info.Events, LostEvents: info.Lost, LostUnknown: info.LostUnknown,
		Truncated: info.Truncated, TextTimestamps: info.TextTimestamps,
		Latency: lat.Results(), RefcountSpec: cfg.RefSpec,
	}
	if rc != nil {
		if info.StatsLost > 0 {
			rc.LostSomewhere()
		}
		r := rc.Report()
		rep.Refcount = &r
	}
	return rep, err
}
