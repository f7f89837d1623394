package analyze

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gprobe/gprobe/analyze/report"
	"github.com/gprobe/gprobe/analyze/trace"
	"github.com/gprobe/gprobe/internal/tracefmt"
)

// Inputs lists the recordings args name: a file as given; for a directory,
// every regular file (or link to one) in it or below that starts with
// trace.dat's magic,
// in name order (text recordings are named one by one).
func Inputs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			regular := d.Type().IsRegular()
			if d.Type()&fs.ModeSymlink != 0 {
				st, err := os.Stat(p)
				regular = err == nil && st.Mode().IsRegular()
			}
			if regular && isTraceDat(p) {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: %w: no trace.dat file in the directory", a, ErrUnknownFormat)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

func isTraceDat(path string) bool {
	fh, err := os.Open(path)
	if err != nil {
		return false
	}
	defer fh.Close()
	head := make([]byte, len(tracefmt.Magic))
	_, err = io.ReadFull(fh, head)
	return err == nil && bytes.Equal(head, tracefmt.Magic)
}

// File analyses the recording at path, read through the exporters'
// Source (see Exporter). done sees the finished analysis while the
// recording is still open.
func File(path string, cfg Config, done func(*Analysis) error) error {
	rec, err := Open(path)
	if err != nil {
		return err
	}
	defer rec.Close()
	var src trace.Source = rec
	for _, e := range cfg.Exporters {
		src = e.Source(path, src)
	}
	a, err := Analyze(src, cfg)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return done(a)
}

// RunFiles analyses the recordings one after the other, each in one
// streaming pass (its CPU streams merged by timestamp), and calls each
// (when not nil) with every analysis as soon as it is complete; the
// analysis is dropped afterwards, so memory holds one recording's live
// state at a time, not one per file. It returns the total over all of
// them.
func RunFiles(paths []string, cfg Config, each func(*Analysis) error) (*Total, error) {
	total := NewTotal(cfg)
	for _, p := range paths {
		err := File(p, cfg, func(a *Analysis) error {
			a.File = p
			total.Add(a)
			if each == nil {
				return nil
			}
			return each(a)
		})
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// ReportFiles writes to m the report of each recording, or with byHost of
// each host (the total of its recordings, in the order first seen), then
// the total, in one pass over the files. allObjects asks every report for
// all its outstanding objects (report.Report.AllObjects).
func ReportFiles(m *report.Many, paths []string, cfg Config, byHost, allObjects bool) error {
	hosts := map[string]*Total{}
	var order []string
	total, err := RunFiles(paths, cfg, func(an *Analysis) error {
		if byHost {
			h, ok := hosts[an.Host]
			if !ok {
				h = NewTotal(cfg)
				hosts[an.Host] = h
				order = append(order, an.Host)
			}
			h.Add(an)
		}
		r := an.Report()
		r.AllObjects = allObjects
		return m.Recording(r)
	})
	if err != nil {
		return err
	}
	for _, h := range order {
		if err := m.Host(hosts[h].Report()); err != nil {
			return err
		}
	}
	return m.Total(total.Report())
}

// ParseBy reads gprobe analyze's --by: a latency split (comm or pid, for
// latency.Options.By) and how several recordings are reported (file or
// host, for ReportFiles), at most one of each, comma-separated.
func ParseBy(s string) (latencyBy, parts string, err error) {
	if s == "" {
		return "", "", nil
	}
	for _, b := range strings.Split(s, ",") {
		switch {
		case (b == "comm" || b == "pid") && latencyBy == "":
			latencyBy = b
		case (b == "file" || b == "host") && parts == "":
			parts = b
		default:
			return "", "", fmt.Errorf("--by %q: want comm or pid, file or host, or one of each", s)
		}
	}
	return latencyBy, parts, nil
}
