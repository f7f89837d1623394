package finder

import (
	"fmt"

	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/internal/core"
	"github.com/gprobe/gprobe/resolve/internal/dwarfinfo"
	"github.com/gprobe/gprobe/resolve/spec"
)

// ErrUnsupportedRange is perf's -EOPNOTSUPP from the alternative line-range
// search: a SRC or FUNC@SRC range that matched nothing.
var ErrUnsupportedRange = fmt.Errorf("line range search: %w", core.ErrUnsupported)

// LineRange finds the probe-able lines of a -L range the way perf's
// debuginfo__find_line_range does: the first unit (in .debug_info order)
// whose matching function yields lines, or, for SRC ranges, the first unit
// containing the file that yields lines. It returns an error wrapping
// core.ErrNotFound ("Specified source line is not found.") when nothing matches.
func (d *DWARF) LineRange(lr *spec.LineRange) (*lines.Listing, error) {
	notFound := core.Errorf(core.ErrNotFound, "Specified source line is not found.")
	// Like perf, the search moves the range by the declaration line of any
	// function it matched, and the alternative search starts from there.
	cur := *lr
	l, err := d.lineRange(&cur)
	if err != nil || l != nil {
		return l, err
	}
	// perf's get_alternative_line_range: a symbol DWARF does not name. It
	// refuses ranges without a function or with a file (-EOPNOTSUPP).
	if !lr.HasFunction || lr.HasFile {
		return nil, core.Errorf(ErrUnsupportedRange, "Debuginfo analysis failed.")
	}
	{
		alt, err := d.alternative(&spec.Point{Function: cur.Function, HasFunction: true, Line: cur.Start})
		if err != nil {
			return nil, err
		}
		if alt != nil {
			lr2 := cur
			lr2.Function, lr2.HasFunction = alt.Function, alt.Function != ""
			lr2.File, lr2.HasFile = alt.File, alt.HasFile
			lr2.Start = alt.Line
			if cur.End != lines.OpenEnd {
				lr2.End = lr2.Start + (cur.End - cur.Start)
			}
			if l, err := d.lineRange(&lr2); err != nil || l != nil {
				return l, err
			}
		}
	}
	return nil, notFound
}

func (d *DWARF) lineRange(lr *spec.LineRange) (*lines.Listing, error) {
	if !lr.HasFunction || lr.Function == "" {
		return d.fileLineRange(lr)
	}
	var found *lines.Listing
	err := d.im.File.EachFuncs(nameMatcher(lr.Function), func(refs []dwarfinfo.FuncRef) (bool, error) {
		l, err := d.lineRangeInUnit(lr, refs, &lr.Start, &lr.End)
		found = l
		return l != nil, err
	})
	return found, err
}

// fileLineRange is the SRC[:START[-END]] form: the first unit containing
// the file that has probe-able lines in the range.
func (d *DWARF) fileLineRange(lr *spec.LineRange) (*lines.Listing, error) {
	units, err := d.im.File.UnitsWithFile(lr.File)
	if err != nil {
		return nil, err
	}
	for _, idx := range units {
		cu, err := d.im.File.Unit(idx)
		if err != nil {
			return nil, err
		}
		fname := cuFindRealpath(cu.Lines, lr.File)
		if fname == "" {
			continue
		}
		l := &lines.Listing{CompDir: cu.Lines.CompDir, Start: lr.Start, End: lr.End}
		if _, err := cu.Lines.CollectLines(nil, fname, lr.Start, lr.End, l); err != nil {
			return nil, err
		}
		if len(l.Lines) > 0 {
			return l, nil
		}
	}
	return nil, nil
}

// lineRangeInUnit is perf's line_range_search_cb for one unit. Like perf,
// it moves start/end by the function's declaration line when it finds the
// function, even if no line is found there.
func (d *DWARF) lineRangeInUnit(lr *spec.LineRange, refs []dwarfinfo.FuncRef, start, end *int) (*lines.Listing, error) {
	cu, err := d.im.File.Unit(refs[0].Unit)
	if err != nil {
		return nil, err
	}
	u := cu.Lines
	if lr.HasFile && cuFindRealpath(u, lr.File) == "" {
		return nil, nil
	}
	for _, ref := range refs {
		sp := cu.Scopes[ref.Offset]
		if sp == nil {
			continue
		}
		if lr.HasFile && !lines.TailCmp(lr.File, u.File(sp.DeclFile)) {
			continue
		}
		if !sp.IsFuncDef() {
			continue
		}
		fname := u.File(sp.DeclFile)
		offset := sp.DeclLine
		s, e := clampAdd(offset, *start), clampAdd(offset, *end)
		*start, *end = s, e
		l := &lines.Listing{Function: lr.Function, CompDir: u.CompDir, Start: s, End: e, Offset: offset}
		if lr.End == lines.OpenEnd {
			l.End = lines.OpenEnd
		}
		roots := []*lines.Scope{sp}
		if !sp.IsFuncInstance() {
			roots = u.Instances(sp)
		}
		for _, root := range roots {
			if _, err := u.CollectLines(root, fname, s, e, l); err != nil {
				return nil, err
			}
		}
		if len(l.Lines) == 0 {
			return nil, nil
		}
		return l, nil
	}
	return nil, nil
}

// clampAdd adds like perf's int arithmetic with its overflow check: a
// negative result becomes INT_MAX.
func clampAdd(a, b int) int {
	s := int32(a) + int32(b)
	if s < 0 {
		return lines.OpenEnd
	}
	return int(s)
}
