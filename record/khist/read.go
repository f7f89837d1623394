package khist

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/internal/histfmt"
	"github.com/gprobe/gprobe/internal/log2lat"
)

// read reads the histograms into res.
func (s *session) read(res *Result) error {
	hists := map[string]string{}
	for _, t := range s.triggers {
		if _, ok := hists[t.file]; ok {
			continue
		}
		text, err := s.inst.ReadFile(histFile(t.file))
		if err != nil {
			return err
		}
		hists[t.file] = string(text)
	}
	return counted(s.triggers, hists, s.cfg.By, res)
}

// histFile is the hist file beside an event's trigger file.
func histFile(trigger string) string { return strings.TrimSuffix(trigger, "trigger") + "hist" }

// counted reads what the triggers counted from the hist files (text by
// trigger file) into res: the calls from the synthetic event's two
// tables, the hits from the entry's and the return's counts, the hits a
// full table dropped from every table.
func counted(triggers []trigger, hists map[string]string, by string, res *Result) error {
	var tables [roleReturnHits + 1]histfmt.Table
	have := map[role]bool{}
	parsed := map[string][]histfmt.Table{}
	for _, t := range triggers {
		ts, ok := parsed[t.file]
		if !ok {
			var err error
			if ts, err = histfmt.Parse(hists[t.file], &histfmt.Options{Strings: []string{"comm"}}); err != nil {
				return fmt.Errorf("%s: %w", histFile(t.file), err)
			}
			parsed[t.file] = ts
		}
		found := 0
		for _, tb := range ts {
			if sameTrigger(tb.Trigger, t.spec) {
				tables[t.role] = tb
				res.Lost += tb.Dropped
				found++
			}
		}
		if found != 1 {
			return fmt.Errorf("%w: %s has %d tables for %s", histfmt.ErrSyntax, histFile(t.file), found, t.spec)
		}
		have[t.role] = true
	}
	for _, r := range []role{roleSums, roleMins, roleEntryHits, roleReturnHits} {
		if !have[r] {
			return fmt.Errorf("no trigger for table %d of %d triggers", r, len(triggers))
		}
	}
	rows, err := interpret(tables[roleSums], tables[roleMins], tables[roleEntryHits], tables[roleReturnHits], by)
	if err != nil {
		return err
	}
	res.Rows = rows
	res.Hits = tables[roleEntryHits].Hits + tables[roleReturnHits].Hits
	return nil
}

// sameTrigger tells whether the kernel's rendering of a trigger is spec:
// the same attributes, but for those the kernel adds when left to their
// defaults (vals=hitcount, sort, clock) and the order (it writes the
// actions last).
func sameTrigger(shown, spec string) bool {
	want := map[string]bool{}
	for _, a := range strings.Split(spec, ":") {
		want[a] = true
	}
	for _, a := range strings.Split(shown, ":") {
		switch {
		case want[a]:
			delete(want, a)
		case a == "vals=hitcount", strings.HasPrefix(a, "sort="), strings.HasPrefix(a, "clock="):
		default:
			return false
		}
	}
	return len(want) == 0
}

// interpret turns the tables into rows: calls per log2 bucket with their
// sum and maximum (sums), their minimum (mins), hits per thread (entries,
// returns). The latency was counted plus one (see the package comment).
func interpret(sums, mins, entries, returns histfmt.Table, by string) ([]Row, error) {
	rows := map[string]*Row{}
	if by == "" {
		rows[""] = &Row{} // the one row, calls or not
	}
	row := func(g string) *Row {
		r, ok := rows[g]
		if !ok {
			r = &Row{Group: g}
			rows[g] = r
		}
		return r
	}
	bucket := func(t histfmt.Table, e histfmt.Entry) (*Bucket, error) {
		k := e.Keys[len(e.Keys)-1]
		if t.Keys[len(t.Keys)-1].Kind != histfmt.KindLog2 || k.Num > 64 {
			return nil, fmt.Errorf("%w: latency bucket %q", histfmt.ErrSyntax, k.Text)
		}
		g := ""
		if by != "" {
			g = groupOf(t.Keys[0], e.Keys[0])
		}
		return &row(g).Buckets[k.Num], nil
	}
	for _, e := range sums.Entries {
		b, err := bucket(sums, e)
		if err != nil {
			return nil, err
		}
		hc, ok1 := e.Value("hitcount")
		sum, ok2 := e.Value("ns_plus1")
		mx, ok3 := e.Value("max")
		if !ok1 || !ok2 || !ok3 || hc.Num == 0 || mx.Num == 0 || sum.Num < hc.Num {
			return nil, fmt.Errorf("%w: latency entry %+v", histfmt.ErrSyntax, e)
		}
		b.Count, b.SumNs, b.MaxNs = hc.Num, sum.Num-hc.Num, mx.Num-1
		b.MinNs = b.MaxNs // until mins says
	}
	for _, e := range mins.Entries {
		b, err := bucket(mins, e)
		if err != nil {
			return nil, err
		}
		mx, ok := e.Value("max")
		if !ok || mx.Num == 0 {
			return nil, fmt.Errorf("%w: latency entry %+v", histfmt.ErrSyntax, e)
		}
		// The maximum of -(ns_plus1), an unsigned 64-bit negation.
		if m := -mx.Num - 1; b.Count > 0 && m <= b.MaxNs {
			b.MinNs = m
		}
	}
	for i, t := range []histfmt.Table{entries, returns} {
		for _, e := range t.Entries {
			hc, ok := e.Value("hitcount")
			if !ok || len(e.Keys) != 1 {
				return nil, fmt.Errorf("%w: hits entry %+v", histfmt.ErrSyntax, e)
			}
			g := ""
			switch by {
			case "comm":
				g = e.Keys[0].Text
			case "pid":
				g = strconv.FormatUint(e.Keys[0].Num, 10)
			}
			if i == 0 {
				row(g).Entries += hc.Num
			} else {
				row(g).Returns += hc.Num
			}
		}
	}
	out := make([]Row, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	return out, nil
}

// groupOf is the group an entry's first key names: a comm, or a pid.
func groupOf(k histfmt.Key, f histfmt.Field) string {
	if k.Kind == histfmt.KindString {
		return f.Text
	}
	return strconv.FormatUint(f.Num, 10)
}

// Log2 is the result as analyze reports latencies aggregated in log2
// buckets (analyze.Log2Report): a row per group, uncertain when the kernel
// lost hits.
func (r *Result) Log2() []log2lat.Hist {
	var ls []log2lat.Hist
	for _, row := range r.Rows {
		ls = append(ls, log2lat.Hist{Function: r.Function, Group: row.Group, EntryEvent: r.EntryEvent, ReturnEvent: r.ReturnEvent,
			Buckets: row.Buckets, Entries: row.Entries, Returns: row.Returns, Uncertain: r.Lost > 0})
	}
	return ls
}
