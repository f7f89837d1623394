package clikit

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// Perf's parse-options (tools/lib/subcmd/parse-options.c, as perf probe
// 6.1 uses it): the same options are accepted (clusters of short
// switches, attached values, unique abbreviations of long names, "--no-"
// negations), and every failure is reported with perf's words, usage and
// option help, so that a command line perf refuses is refused alike.

// ArgKind is what an option takes after it.
type ArgKind int

const (
	// NoArg is a switch (perf's OPT_BOOLEAN, OPT_INCR).
	NoArg ArgKind = iota
	// Value takes a value: attached (-kPATH, --vmlinux=PATH) or the next
	// argument, whatever it is.
	Value
	// LastDefault takes the next argument unless there is none or it
	// starts with '-'; then its Default (PARSE_OPT_LASTARG_DEFAULT).
	LastDefault
	// Integer takes a base-10 integer (OPT_INTEGER).
	Integer
)

// Option is one option of a command.
type Option struct {
	Short byte   // 0 for none
	Long  string // "" for none
	Arg   ArgKind
	// Default is a LastDefault option's value when none follows.
	Default string
	// Argh names the value in the help ("file" prints " <file>").
	Argh string
	Help string
	// Exclusive options exclude each other (PARSE_OPT_EXCLUSIVE); giving
	// one twice is allowed.
	Exclusive bool
	// Set is called as the option is parsed, with its value ("" for a
	// switch) and whether it was negated (--no-LONG). It returns false
	// after printing why it refuses the value (perf's callbacks print their
	// own message); the parse then fails with the usage and this option's
	// help.
	Set func(value string, unset bool) bool
}

// Options are a command's options and its usage lines, written to W.
type Options struct {
	// Usage are the usage lines: the first printed after " Usage: ", the
	// others after "    or: ".
	Usage   []string
	Options []Option
	W       io.Writer
	// Suggest, when set, names the option an unknown long option was
	// probably meant to be ("" for none); it is printed after perf's
	// message.
	Suggest func(unknown string, longs []string) string
}

// Parsed is a successful parse: the options in order, spelled so that a
// parser knowing only long names reads them (--LONG, --LONG=VALUE,
// --LONG=false for a negated switch; a LastDefault option is --LONG, its
// value given to Set only), and the operands from the first non-option on
// ("--" dropped).
type Parsed struct {
	Canonical []string
	Operands  []string
}

// Parse parses args (without the program's name) as perf's
// parse_options with PARSE_OPT_STOP_AT_NON_OPTION. On failure it has
// written perf's message, usage and help to W and returns false: perf then
// exits with status 129.
func (o *Options) Parse(args []string) (Parsed, bool) {
	p := &optParser{o: o, args: args}
	return p.parse()
}

type optParser struct {
	o    *Options
	args []string
	i    int
	excl *Option
	out  Parsed
}

// errUsage is a failed parse whose report is complete.
type failed struct{}

func (p *optParser) parse() (res Parsed, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, f := r.(failed); !f {
				panic(r)
			}
			res, ok = Parsed{}, false
		}
	}()
	for ; p.i < len(p.args); p.i++ {
		arg := p.args[p.i]
		switch {
		case arg == "--":
			p.out.Operands = append(p.out.Operands, p.args[p.i+1:]...)
			return p.out, true
		case len(arg) < 2 || arg[0] != '-':
			p.out.Operands = append(p.out.Operands, p.args[p.i:]...)
			return p.out, true
		case arg[1] == '-':
			p.long(arg[2:])
		default:
			p.shorts(arg[1:])
		}
	}
	return p.out, true
}

// fail ends the parse: its report has been written.
func (p *optParser) fail() { panic(failed{}) }

// shorts parses a cluster of short options ("nD" of -nD): each is a
// switch, or takes the rest of the cluster or the next argument.
func (p *optParser) shorts(cluster string) {
	for j := 0; j < len(cluster); j++ {
		c := cluster[j]
		opt := p.short(c)
		if opt == nil {
			p.unknown(fmt.Sprintf("unknown switch `%c'", c), "")
		}
		rest := cluster[j+1:]
		attached := opt.Arg != NoArg && rest != ""
		p.value(opt, true, false, rest, attached, string(cluster[j:]))
		if attached {
			return
		}
		// perf's check_typos: "-force" was meant as --force.
		if j == 0 && rest != "" && len(cluster) >= 3 {
			if strings.HasPrefix(cluster, "no-") || p.longPrefixed(cluster) {
				fmt.Fprintf(p.o.W, " Error: did you mean `--%s` (with two dashes ?)\n", cluster)
				p.fail()
			}
		}
	}
}

// longPrefixed reports whether some long name starts with s.
func (p *optParser) longPrefixed(s string) bool {
	for i := range p.o.Options {
		if l := p.o.Options[i].Long; l != "" && strings.HasPrefix(l, s) {
			return true
		}
	}
	return false
}

func (p *optParser) short(c byte) *Option {
	for i := range p.o.Options {
		if p.o.Options[i].Short == c {
			return &p.o.Options[i]
		}
	}
	return nil
}

// long parses "--NAME[=VALUE]" (arg without the dashes) as perf's
// parse_long_opt: an exact name, "no-" negations, unique abbreviations.
func (p *optParser) long(arg string) {
	name, val, hasVal := strings.Cut(arg, "=")
	// An option named exactly wins over another's negation (gprobe's
	// --no-cache is not perf's negated --cache); perf has no such pair.
	for i := range p.o.Options {
		if opt := &p.o.Options[i]; opt.Long != "" && name == opt.Long {
			p.value(opt, false, false, val, hasVal, arg)
			return
		}
	}
	m := p.match(name)
	switch {
	case m.exact != nil:
		p.value(m.exact, false, m.exactUnset, val, hasVal, arg)
	case m.ambiguous != nil:
		no := func(u bool) string {
			if u {
				return "no-"
			}
			return ""
		}
		fmt.Fprintf(p.o.W, " Error: Ambiguous option: %s (could be --%s%s or --%s%s)\n", arg,
			no(m.ambiguousUnset), m.ambiguous.Long, no(m.abbrevUnset), m.abbrev.Long)
		p.usageFor(true, arg, false)
		p.fail()
	case m.abbrev != nil:
		p.value(m.abbrev, false, m.abbrevUnset, val, hasVal && !m.abbrevUnset, arg)
	default:
		p.unknown(fmt.Sprintf("unknown option `%s'", arg), name)
	}
}

// longMatch is what a long name given matches: an option named exactly
// (negated or not), else the last two options it abbreviates.
type longMatch struct {
	exact, abbrev, ambiguous                *Option
	exactUnset, abbrevUnset, ambiguousUnset bool
}

// match looks name up as parse_long_opt does, in the table's order.
func (p *optParser) match(name string) (m longMatch) {
	for i := range p.o.Options {
		opt := &p.o.Options[i]
		if opt.Long == "" {
			continue
		}
		exact, abbrev, unset := matchLong(opt.Long, name)
		if exact {
			m.exact, m.exactUnset = opt, unset
			return m
		}
		if abbrev {
			if m.abbrev != nil {
				m.ambiguous, m.ambiguousUnset = m.abbrev, m.abbrevUnset
			}
			m.abbrev, m.abbrevUnset = opt, unset
		}
	}
	return m
}

// matchLong compares name with the option long: the option itself or its
// negation (exact), or an abbreviation of either; unset for a negation.
func matchLong(long, name string) (exact, abbrev, unset bool) {
	if l, ok := strings.CutPrefix(long, "no-"); ok {
		// --inlines negates --no-inlines
		if name == l {
			return true, false, true
		}
		if strings.HasPrefix(l, name) {
			return false, true, true
		}
	}
	if strings.HasPrefix(long, name) {
		return false, true, false
	}
	if strings.HasPrefix("no-", name) {
		return false, true, true
	}
	if n, ok := strings.CutPrefix(name, "no-"); ok {
		if n == long {
			return true, false, true
		}
		if strings.HasPrefix(long, n) {
			return false, true, true
		}
	}
	return false, false, false
}

// unknown reports an unknown option: perf's message, the option meant
// (Suggest), the whole usage.
func (p *optParser) unknown(msg, name string) {
	fmt.Fprintf(p.o.W, "  Error: %s\n", msg)
	if name != "" && len(name) > 1 && p.o.Suggest != nil {
		var longs []string
		for _, opt := range p.o.Options {
			if opt.Long != "" {
				longs = append(longs, opt.Long)
			}
		}
		if s := p.o.Suggest(name, longs); s != "" {
			fmt.Fprintf(p.o.W, "  Did you mean --%s?\n", s)
		}
	}
	p.o.writeUsage(nil)
	p.fail()
}

// optError is perf's opterror: " Error: switch `c' REASON" or
// " Error: option `LONG' REASON", without a newline (the usage that
// follows starts with one).
func (p *optParser) optError(opt *Option, short, unset bool, reason string) {
	switch {
	case short:
		fmt.Fprintf(p.o.W, " Error: switch `%c' %s", opt.Short, reason)
	case unset:
		fmt.Fprintf(p.o.W, " Error: option `no-%s' %s", opt.Long, reason)
	default:
		fmt.Fprintf(p.o.W, " Error: option `%s' %s", opt.Long, reason)
	}
}

// value is perf's get_value for opt given as typed (optstr: the short
// cluster from this option on, or the long argument), with its attached
// value when hasVal.
func (p *optParser) value(opt *Option, short, unset bool, val string, hasVal bool, optstr string) {
	failOpt := func() {
		p.usageFor(true, optstr, short)
		p.fail()
	}
	if unset && hasVal {
		p.optError(opt, short, unset, "takes no value")
		failOpt()
	}
	if opt.Exclusive {
		p.exclusive(opt, short, optstr)
	}
	if !short && hasVal && opt.Arg == NoArg {
		p.optError(opt, short, unset, "takes no value")
		failOpt()
	}
	val, ok := p.take(opt, unset, val, hasVal)
	if !ok {
		p.optError(opt, short, unset, "requires a value")
		failOpt()
	}
	if opt.Arg == Integer && !unset && !isInteger(val) {
		p.optError(opt, short, unset, "expects a numerical value")
		failOpt()
	}
	if opt.Set != nil && !opt.Set(val, unset) {
		failOpt()
	}
	canon := "--" + opt.Long
	switch {
	case unset && opt.Arg == NoArg:
		canon += "=false"
	case (opt.Arg == Value || opt.Arg == Integer) && !unset:
		canon += "=" + val
	}
	if opt.Long != "" {
		p.out.Canonical = append(p.out.Canonical, canon)
	}
}

// exclusive fails the parse when opt, an exclusive option, follows
// another (PARSE_OPT_EXCLUSIVE), with perf's message and both options'
// help.
func (p *optParser) exclusive(opt *Option, short bool, optstr string) {
	if p.excl == nil || p.excl == opt {
		p.excl = opt
		return
	}
	byShort := short && p.excl.Short != 0 || p.excl.Long == ""
	reason := "cannot be used with " + p.excl.Long
	if byShort {
		reason = fmt.Sprintf("cannot be used with switch `%c'", p.excl.Short)
	}
	p.optError(opt, short, false, reason)
	p.usageFor(true, optstr, short)
	if byShort {
		p.usageFor(false, string(p.excl.Short), true)
	} else {
		p.usageFor(false, p.excl.Long, false)
	}
	p.fail()
}

// take is opt's value: none for a switch or a negation, the attached one,
// a LastDefault option's default, or the next argument (consumed); false
// when a value is required and there is none.
func (p *optParser) take(opt *Option, unset bool, val string, hasVal bool) (string, bool) {
	switch {
	case unset, opt.Arg == NoArg:
		return "", true
	case hasVal:
		return val, true
	case opt.Arg == LastDefault && (p.i+1 == len(p.args) || strings.HasPrefix(p.args[p.i+1], "-")):
		return opt.Default, true
	case p.i+1 < len(p.args):
		p.i++
		return p.args[p.i], true
	}
	return "", false
}

// isInteger is what strtol(s, &end, 10) reads whole: optional space and
// sign, then digits (perf reads "" as 0).
func isInteger(s string) bool {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	s = strings.TrimLeft(s[min(len(s), 0):], "")
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// usageFor is perf's parse_options_usage: the usage lines (when usage),
// then the help of the option whose short name is optstr's first byte
// (short), or of every option whose long name starts with optstr.
func (p *optParser) usageFor(usage bool, optstr string, short bool) {
	p.o.UsageFor(usage, optstr, short)
}

// UsageFor writes what perf's parse_options_usage writes: with usage, a
// blank line, the usage lines and a blank line; then the help of the
// option whose short name is optstr's first byte (short), or of every
// option whose long name starts with optstr (or, for "no-..." optstr,
// with what follows "no-").
func (o *Options) UsageFor(usage bool, optstr string, short bool) {
	if usage {
		o.usageLines()
		fmt.Fprintln(o.W)
	}
	for i := range o.Options {
		opt := &o.Options[i]
		if short {
			if optstr != "" && opt.Short == optstr[0] {
				o.help(opt)
				return
			}
			continue
		}
		if opt.Long == "" {
			continue
		}
		if strings.HasPrefix(opt.Long, optstr) {
			o.help(opt)
		}
		if strings.HasPrefix("no-", optstr) && strings.HasPrefix(opt.Long, optstr[min(3, len(optstr)):]) {
			o.help(opt)
		}
	}
}

// WriteUsage writes what perf's usage_with_options_msg writes: "  Error: MSG"
// and a newline when msg is not "" (perf's messages end with a newline of
// their own), the usage lines and every option's help, sorted as perf
// sorts them.
func (o *Options) WriteUsage(msg string) {
	if msg != "" {
		fmt.Fprintf(o.W, "  Error: %s\n", msg)
	}
	o.writeUsage(nil)
}

func (o *Options) writeUsage(only func(*Option) bool) {
	o.usageLines()
	fmt.Fprintln(o.W)
	sorted := make([]*Option, len(o.Options))
	for i := range o.Options {
		sorted[i] = &o.Options[i]
	}
	// perf's option__cmp: by short name ignoring case (none sorts last),
	// then by long name.
	key := func(opt *Option) int {
		c := int(opt.Short)
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c == 0 {
			c = 'z' + 1
		}
		return c
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if ka, kb := key(a), key(b); ka != kb {
			return ka < kb
		}
		return a.Long < b.Long
	})
	for _, opt := range sorted {
		if only == nil || only(opt) {
			o.help(opt)
		}
	}
	fmt.Fprintln(o.W)
}

func (o *Options) usageLines() {
	for i, u := range o.Usage {
		if i == 0 {
			fmt.Fprintf(o.W, "\n Usage: %s\n", u)
		} else {
			fmt.Fprintf(o.W, "    or: %s\n", u)
		}
	}
}

// help is perf's print_option_help: "    -s, --long <argh>", the help from
// column 26 (on the next line when the names are longer).
func (o *Options) help(opt *Option) {
	var b strings.Builder
	b.WriteString("    ")
	if opt.Short != 0 {
		fmt.Fprintf(&b, "-%c", opt.Short)
	} else {
		b.WriteString("    ")
	}
	if opt.Long != "" && opt.Short != 0 {
		b.WriteString(", ")
	}
	if opt.Long != "" {
		b.WriteString("--" + opt.Long)
	}
	switch opt.Arg {
	case Integer:
		b.WriteString(" <n>")
	case Value, LastDefault:
		if opt.Argh != "" {
			fmt.Fprintf(&b, " <%s>", opt.Argh)
		} else {
			b.WriteString(" ...")
		}
	}
	const width, gap = 24, 2
	pad := width - b.Len()
	if b.Len() > width {
		b.WriteByte('\n')
		pad = width
	}
	fmt.Fprintf(o.W, "%s%*s%s\n", b.String(), pad+gap, "", opt.Help)
}

// OptionsOf are urfave/cli flags as Options: each flag's first name as the
// long name and a one-letter alias as the short name, whether it takes a
// value (an integer for an IntFlag), and its usage as the help, with the
// word it quotes in backquotes, lowercased, naming the value.
func OptionsOf(flags []cli.Flag) []Option {
	var out []Option
	for _, f := range flags {
		names := f.Names()
		opt := Option{Long: names[0]}
		for _, n := range names[1:] {
			if len(n) == 1 {
				opt.Short = n[0]
			}
		}
		if df, ok := f.(cli.DocGenerationFlag); ok {
			opt.Argh, opt.Help = unquoteUsage(df.GetUsage())
			opt.Argh = strings.ToLower(opt.Argh)
			if df.TakesValue() {
				opt.Arg = Value
			}
		}
		if _, ok := f.(*cli.IntFlag); ok {
			opt.Arg = Integer
		}
		if _, ok := f.(fixedIntFlag); ok {
			opt.Arg = Integer
		}
		out = append(out, opt)
	}
	return out
}
