// Package histfmt reads the hist file of a tracefs event: what the kernel's
// hist triggers aggregated (hist_show and its helpers in
// kernel/trace/trace_events_hist.c, the same in Linux 6.1 and 6.12).
//
// A hist file holds one table per hist trigger on the event:
//
//	# event histogram
//	#
//	# trigger info: hist:keys=comm,lat.log2:vals=hitcount,lat:sort=hitcount:size=2048 [active]
//	#
//
//	{ comm: dd                                                , lat: ~ 2^12 } hitcount:         75  lat:     242783
//	{ comm: dd                                                , lat: ~ 2^13 } hitcount:         11  lat:      63100
//		max:      28615  pid:         91
//
//	Totals:
//	    Hits: 86
//	    Entries: 2
//	    Dropped: 0
//
// Each entry is its key fields in braces, in the order of the trigger's
// keys, then its values (hitcount first), then one line per onmax or
// onchange action ("max:" and the saved fields). The kernel prints each
// kind of key its own way (a number right-aligned in 10 columns, .hex,
// .log2 "~ 2^N", .buckets "~ LO-HI", .execname "COMM[PID]", .syscall,
// .sym, stack traces over several lines, strings left-aligned in 50
// columns); Parse reads the kinds from the trigger info line. A string can
// hold any byte but NUL (a comm can hold ", " or " }"): it is read by its
// column width, which is exact for strings shorter than the width (a comm,
// at most 15 bytes, always is); a longer one ends at the next separator.
// Strings cannot be told from numbers by their text, so Options names the
// string fields.
package histfmt

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrSyntax: the text is not a hist file as the kernel prints one.
var ErrSyntax = errors.New("malformed hist file")

// Table is one hist trigger's histogram.
type Table struct {
	// Trigger is the trigger as the kernel shows it ("hist:keys=...:size=2048"),
	// without its filter and state.
	Trigger string
	// Filter is the trigger's filter (after " if "), "" when it has none.
	Filter string
	// Paused: the trigger is paused (" [paused]"), not active.
	Paused bool
	// Keys are the trigger's key fields, in the order entries print them.
	Keys []Key
	// Entries are the table's entries, in the kernel's sort order.
	Entries []Entry
	// Hits counts the events the trigger saw; Dropped those it could not
	// count because the table was full (its size).
	Hits, Dropped uint64
}

// Key is one key field of a trigger.
type Key struct {
	// Name is the field's name as entries print it ("common_pid" for
	// common_pid.execname, "lat" for lat.log2).
	Name string
	Kind Kind
	// Buckets is the bucket size of a KindBuckets key.
	Buckets uint64
}

// Kind is how the kernel prints a key field.
type Kind uint8

const (
	KindNumber     Kind = iota // "%10llu"
	KindString                 // "%-50s" (Options.Strings)
	KindHex                    // .hex: "%llx"
	KindLog2                   // .log2: "~ 2^%-2llu"; Num is the exponent
	KindBuckets                // .buckets=N: "~ %llu-%llu"; Num is the bucket's first value
	KindExecname               // .execname: "%-16s[%10llu]"; Text is the comm, Num the pid
	KindSyscall                // .syscall: "%-30s[%3llu]"; Text is the name, Num the number
	KindSym                    // .sym: "[%llx] %-45ps"; Num is the address, Text the symbol
	KindSymOffset              // .sym-offset: "[%llx] %-55pS"
	KindStacktrace             // common_stacktrace, FIELD.stacktrace: one frame a line; Text holds them
)

// Entry is one entry of a table.
type Entry struct {
	Keys []Field // one per Table.Keys
	// Values are hitcount (unless the trigger has nohitcount) and the
	// trigger's values, as printed.
	Values []Field
	// Actions are the onmax and onchange actions' lines: "max" or
	// "changed" with the tracked value, then the saved fields.
	Actions [][]Field
}

// Field is one printed name and value.
type Field struct {
	Name string
	// Text is the value as printed, without the padding; for a string,
	// trailing spaces are padding (a string that ends in spaces loses them).
	Text string
	// Num is the value's number, when it prints one (see Kind).
	Num uint64
}

// Value returns the named value (hitcount, a value, or an action's
// field, searched in that order) and whether it is there.
func (e *Entry) Value(name string) (Field, bool) {
	for _, f := range e.Values {
		if f.Name == name {
			return f, true
		}
	}
	for _, a := range e.Actions {
		for _, f := range a {
			if f.Name == name {
				return f, true
			}
		}
	}
	return Field{}, false
}

// Options tell what the text cannot.
type Options struct {
	// Strings names the string fields (keys, and saved fields in action
	// lines): the event's char[] fields and string variables.
	Strings []string
}

// Parse reads a hist file. A file without hist triggers (empty) has no
// tables.
func Parse(text string, opts *Options) ([]Table, error) {
	if opts == nil {
		opts = &Options{}
	}
	p := &parser{s: text, strs: map[string]bool{}}
	for _, s := range opts.Strings {
		p.strs[s] = true
	}
	var tables []Table
	for p.i < len(p.s) {
		if len(tables) > 0 {
			if err := p.expect("\n\n"); err != nil {
				return nil, err
			}
		}
		t, err := p.table()
		if err != nil {
			return nil, err
		}
		tables = append(tables, t)
	}
	return tables, nil
}

type parser struct {
	s    string
	i    int
	strs map[string]bool
	// graphs tells, per printed value of the current table, whether it is
	// a .graph bar.
	graphs []bool
}

func (p *parser) errorf(format string, args ...any) error {
	line := 1 + strings.Count(p.s[:p.i], "\n")
	return fmt.Errorf("%w: line %d: %s", ErrSyntax, line, fmt.Sprintf(format, args...))
}

func (p *parser) has(lit string) bool { return strings.HasPrefix(p.s[p.i:], lit) }

func (p *parser) expect(lit string) error {
	if !p.has(lit) {
		return p.errorf("want %q, have %q", lit, p.peekText(len(lit)+8))
	}
	p.i += len(lit)
	return nil
}

func (p *parser) peekText(n int) string {
	end := min(p.i+n, len(p.s))
	return p.s[p.i:end]
}

// line reads up to the next newline and past it.
func (p *parser) line() (string, error) {
	j := strings.IndexByte(p.s[p.i:], '\n')
	if j < 0 {
		return "", p.errorf("unterminated line")
	}
	l := p.s[p.i : p.i+j]
	p.i += j + 1
	return l, nil
}

// number reads decimal digits after optional spaces.
func (p *parser) number() (uint64, error) { return p.numberBase(10) }

func (p *parser) numberBase(base int) (uint64, error) {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
	j := p.i
	for j < len(p.s) && isDigit(p.s[j], base) {
		j++
	}
	if j == p.i {
		return 0, p.errorf("want a number, have %q", p.peekText(12))
	}
	n, err := strconv.ParseUint(p.s[p.i:j], base, 64)
	if err != nil {
		return 0, p.errorf("%v", err)
	}
	p.i = j
	return n, nil
}

func isDigit(c byte, base int) bool {
	if c >= '0' && c <= '9' {
		return true
	}
	return base == 16 && (c >= 'a' && c <= 'f')
}

func (p *parser) table() (Table, error) {
	var t Table
	if err := p.expect("# event histogram\n#\n# trigger info: "); err != nil {
		return t, err
	}
	info, err := p.line()
	if err != nil {
		return t, err
	}
	if err := p.expect("#\n\n"); err != nil {
		return t, err
	}
	switch {
	case strings.HasSuffix(info, " [active]"):
		info = strings.TrimSuffix(info, " [active]")
	case strings.HasSuffix(info, " [paused]"):
		info, t.Paused = strings.TrimSuffix(info, " [paused]"), true
	default:
		return t, fmt.Errorf("%w: trigger info %q: no [active] or [paused]", ErrSyntax, info)
	}
	t.Trigger, t.Filter, _ = strings.Cut(info, " if ")
	if t.Keys, p.graphs, err = p.spec(t.Trigger); err != nil {
		return t, err
	}
	for p.has("{ ") {
		e, err := p.entry(t.Keys)
		if err != nil {
			return t, err
		}
		t.Entries = append(t.Entries, e)
	}
	if p.has("\nSnapshot taken ") {
		// An onmax().snapshot() action's note; its key is printed like an
		// entry's, so it may span lines: the totals end it.
		j := strings.Index(p.s[p.i:], "\nTotals:\n")
		if j < 0 {
			return t, p.errorf("snapshot note without totals")
		}
		p.i += j
	}
	if err := p.expect("\nTotals:\n    Hits: "); err != nil {
		return t, err
	}
	if t.Hits, err = p.number(); err != nil {
		return t, err
	}
	if err := p.expect("\n    Entries: "); err != nil {
		return t, err
	}
	n, err := p.number()
	if err != nil {
		return t, err
	}
	if n != uint64(len(t.Entries)) {
		return t, p.errorf("totals count %d entries, the table has %d", n, len(t.Entries))
	}
	if err := p.expect("\n    Dropped: "); err != nil {
		return t, err
	}
	if t.Dropped, err = p.number(); err != nil {
		return t, err
	}
	return t, p.expect("\n")
}

// spec reads the key fields and which values are .graph bars from a
// trigger as the kernel prints it: hist:[NAME:]keys=K[,K...]:vals=V[,V...]:...
// Entries print the values in the order of vals (hitcount is the raw
// hitcount, left out of both with nohitcount).
func (p *parser) spec(trigger string) ([]Key, []bool, error) {
	rest, ok := strings.CutPrefix(trigger, "hist:")
	if !ok {
		return nil, nil, fmt.Errorf("%w: trigger %q is not a hist trigger", ErrSyntax, trigger)
	}
	if i := strings.Index(rest, "keys="); i > 0 && !strings.Contains(rest[:i], "=") {
		rest = rest[i:] // a named trigger: hist:NAME:keys=...
	}
	attrs := strings.Split(rest, ":")
	keys, ok := strings.CutPrefix(attrs[0], "keys=")
	if !ok || keys == "" {
		return nil, nil, fmt.Errorf("%w: trigger %q has no keys", ErrSyntax, trigger)
	}
	var out []Key
	for _, k := range strings.Split(keys, ",") {
		key, err := p.key(k)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: trigger %q: %v", ErrSyntax, trigger, err)
		}
		out = append(out, key)
	}
	var graphs []bool
	for _, a := range attrs[1:] {
		if vals, ok := strings.CutPrefix(a, "vals="); ok {
			for _, v := range strings.Split(vals, ",") {
				graphs = append(graphs, strings.HasSuffix(v, ".graph"))
			}
		}
	}
	return out, graphs, nil
}

var keyKinds = map[string]Kind{
	"hex": KindHex, "log2": KindLog2, "execname": KindExecname, "syscall": KindSyscall,
	"sym": KindSym, "sym-offset": KindSymOffset, "stacktrace": KindStacktrace,
}

func (p *parser) key(k string) (Key, error) {
	if k == "common_stacktrace" || k == "stacktrace" {
		return Key{Name: "common_stacktrace", Kind: KindStacktrace}, nil
	}
	name := strings.TrimPrefix(k, "$")
	if v, _, ok := strings.Cut(name, "="); ok && !strings.Contains(name, ".buckets=") {
		name = v // never printed: a key that is a variable shows "VAR=FIELD"; entries print VAR
	}
	base, mod, hasMod := strings.Cut(name, ".")
	if !hasMod {
		if p.strs[base] {
			return Key{Name: base, Kind: KindString}, nil
		}
		return Key{Name: base, Kind: KindNumber}, nil
	}
	if n, ok := strings.CutPrefix(mod, "buckets="); ok {
		b, err := strconv.ParseUint(n, 10, 64)
		if err != nil || b == 0 {
			return Key{}, fmt.Errorf("key %q: bad bucket size", k)
		}
		return Key{Name: base, Kind: KindBuckets, Buckets: b}, nil
	}
	kind, ok := keyKinds[mod]
	if !ok {
		return Key{}, fmt.Errorf("key %q: unknown modifier %q", k, mod)
	}
	if kind == KindStacktrace {
		return Key{Name: base + ".stacktrace", Kind: kind}, nil
	}
	return Key{Name: base, Kind: kind}, nil
}

func (p *parser) entry(keys []Key) (Entry, error) {
	var e Entry
	if err := p.expect("{ "); err != nil {
		return e, err
	}
	multiline := false
	for i, k := range keys {
		if i > 0 {
			if err := p.expect(", "); err != nil {
				return e, err
			}
		}
		next := " }"
		if i+1 < len(keys) {
			next = ", " + keys[i+1].Name
		}
		f, err := p.keyField(k, next)
		if err != nil {
			return e, err
		}
		multiline = multiline || k.Kind == KindStacktrace
		e.Keys = append(e.Keys, f)
	}
	end := " }"
	if multiline {
		end = "}"
	}
	if err := p.expect(end); err != nil {
		return e, err
	}
	var err error
	if e.Values, err = p.values(); err != nil {
		return e, err
	}
	for p.has("\n\t") {
		p.i += 2
		a, err := p.action()
		if err != nil {
			return e, err
		}
		e.Actions = append(e.Actions, a)
	}
	return e, p.expect("\n")
}

// keyField reads one key; next is what follows the key's value when the
// value is as long as its column (", NEXTNAME" or " }").
func (p *parser) keyField(k Key, next string) (Field, error) {
	f := Field{Name: k.Name}
	if k.Kind == KindStacktrace {
		if k.Name == "common_stacktrace" {
			if err := p.expect("common_stacktrace:\n"); err != nil {
				return f, err
			}
		} else if err := p.expect(k.Name); err != nil {
			return f, err
		}
		var frames []string
		for p.has("         ") {
			p.i += 9
			l, err := p.line()
			if err != nil {
				return f, err
			}
			frames = append(frames, l)
		}
		f.Text = strings.Join(frames, "\n")
		return f, nil
	}
	if err := p.expect(k.Name + ": "); err != nil {
		return f, err
	}
	var err error
	switch k.Kind {
	case KindNumber:
		f.Num, err = p.number()
		f.Text = strconv.FormatUint(f.Num, 10)
	case KindHex:
		f.Num, err = p.numberBase(16)
		f.Text = strconv.FormatUint(f.Num, 16)
	case KindLog2:
		if err = p.expect("~ 2^"); err == nil {
			f.Num, err = p.number()
			f.Text = "~ 2^" + strconv.FormatUint(f.Num, 10)
			if err == nil && f.Num < 10 {
				err = p.expect(" ") // "%-2llu"
			}
		}
	case KindBuckets:
		var hi uint64
		if err = p.expect("~ "); err == nil {
			if f.Num, err = p.number(); err == nil {
				if err = p.expect("-"); err == nil {
					hi, err = p.number()
				}
			}
		}
		if err == nil && hi != f.Num+k.Buckets-1 {
			err = p.errorf("bucket %d-%d is not %d wide", f.Num, hi, k.Buckets)
		}
		f.Text = fmt.Sprintf("~ %d-%d", f.Num, hi)
	case KindString:
		f.Text, err = p.padded(50, next)
	case KindExecname, KindSyscall:
		width := 16
		if k.Kind == KindSyscall {
			width = 30
		}
		if f.Text, err = p.padded(width, "["); err == nil {
			if err = p.expect("["); err == nil {
				if f.Num, err = p.number(); err == nil {
					err = p.expect("]")
				}
			}
		}
	case KindSym, KindSymOffset:
		width := 45
		if k.Kind == KindSymOffset {
			width = 55
		}
		if err = p.expect("["); err == nil {
			if f.Num, err = p.numberBase(16); err == nil {
				if err = p.expect("] "); err == nil {
					f.Text, err = p.padded(width, next)
				}
			}
		}
	}
	return f, err
}

// padded reads text left-aligned in width columns: the width when next
// follows it (or the text is the whole rest), else up to the next
// occurrence of next after the width (a longer text). Trailing spaces are
// padding.
func (p *parser) padded(width int, next string) (string, error) {
	rest := p.s[p.i:]
	end := -1
	switch {
	case len(rest) >= width && strings.HasPrefix(rest[width:], next):
		end = width
	case len(rest) > width:
		if j := strings.Index(rest[width:], next); j >= 0 {
			end = width + j
		}
	}
	if end < 0 {
		return "", p.errorf("text of %d columns not followed by %q", width, next)
	}
	p.i += end
	return strings.TrimRight(rest[:end], " "), nil
}

// values reads " hitcount: N" and "  NAME: N" (or "  NAME (%): P.PP",
// "  NAME: ####    " for .graph) up to the end of the line.
func (p *parser) values() ([]Field, error) {
	var out []Field
	for p.has(" ") {
		for p.has(" ") {
			p.i++
		}
		j := strings.IndexByte(p.s[p.i:], ':')
		nl := strings.IndexByte(p.s[p.i:], '\n')
		if j <= 0 || (nl >= 0 && nl < j) {
			return nil, p.errorf("want NAME: VALUE, have %q", p.peekText(20))
		}
		name := p.s[p.i : p.i+j]
		p.i += j + 1
		var f Field
		if base, ok := strings.CutSuffix(name, " (%)"); ok {
			f.Name = base + " (%)"
			if p.has("[ERROR]") {
				p.i += len("[ERROR]")
				f.Text = "[ERROR]"
				out = append(out, f)
				continue
			}
			whole, err := p.number()
			if err != nil {
				return nil, err
			}
			if err := p.expect("."); err != nil {
				return nil, err
			}
			if p.i+2 > len(p.s) || !isDigit(p.s[p.i], 10) || !isDigit(p.s[p.i+1], 10) {
				return nil, p.errorf("want two decimals")
			}
			f.Text = fmt.Sprintf("%d.%s", whole, p.s[p.i:p.i+2])
			f.Num = whole*100 + uint64(p.s[p.i]-'0')*10 + uint64(p.s[p.i+1]-'0')
			p.i += 2
			out = append(out, f)
			continue
		}
		f.Name = name
		if err := p.expect(" "); err != nil {
			return nil, err
		}
		if n := len(out); n < len(p.graphs) && p.graphs[n] {
			if p.i+20 > len(p.s) {
				return nil, p.errorf("graph bar cut short")
			}
			f.Text = strings.TrimRight(p.s[p.i:p.i+20], " ")
			p.i += 20
			out = append(out, f)
			continue
		}
		for p.has(" ") {
			p.i++
		}
		j = p.i
		for j < len(p.s) && p.s[j] != ' ' && p.s[j] != '\n' {
			j++
		}
		f.Text = p.s[p.i:j]
		if n, err := strconv.ParseUint(f.Text, 10, 64); err == nil {
			f.Num = n
		} else if n, err := strconv.ParseUint(f.Text, 16, 64); err == nil {
			f.Num = n // a .hex value
		} else {
			return nil, p.errorf("value %s: %q is not a number", name, f.Text)
		}
		p.i = j
		out = append(out, f)
	}
	return out, nil
}

// action reads an onmax/onchange line after its "\n\t": "max: N" or
// "changed: N", then "  NAME: VALUE" per saved field (numbers in 10
// columns, strings left-aligned in 32).
func (p *parser) action() ([]Field, error) {
	var out []Field
	for _, h := range []string{"max", "changed"} {
		if p.has(h + ": ") {
			p.i += len(h) + 2
			n, err := p.number()
			if err != nil {
				return nil, err
			}
			out = append(out, Field{Name: h, Text: strconv.FormatUint(n, 10), Num: n})
			break
		}
	}
	if out == nil {
		return nil, p.errorf("want max: or changed:, have %q", p.peekText(12))
	}
	for p.has("  ") {
		p.i += 2
		j := strings.Index(p.s[p.i:], ": ")
		nl := strings.IndexByte(p.s[p.i:], '\n')
		if j <= 0 || (nl >= 0 && nl < j) {
			return nil, p.errorf("want NAME: VALUE, have %q", p.peekText(20))
		}
		f := Field{Name: p.s[p.i : p.i+j]}
		p.i += j + 2
		if p.strs[f.Name] {
			s, err := p.padded(32, "")
			if err != nil {
				return nil, err
			}
			f.Text = s
		} else {
			n, err := p.number()
			if err != nil {
				return nil, err
			}
			f.Text, f.Num = strconv.FormatUint(n, 10), n
		}
		out = append(out, f)
	}
	return out, nil
}
