package probedef

import (
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/disasm/arch"
	"github.com/gprobe/gprobe/emit/probe"
)

// Kernel limits (kernel/trace/trace_probe.h, trace_kprobe.c).
const (
	MaxTraceArgs       = 128  // MAX_TRACE_ARGS
	MaxArgStrLen       = 63   // MAX_ARGSTR_LEN: one argument body
	MaxArgNameLen      = 32   // MAX_ARG_NAME_LEN
	MaxArrayLen        = 64   // MAX_ARRAY_LEN
	MaxEventNameLen    = 64   // MAX_EVENT_NAME_LEN, including the NUL
	MaxKretprobeActive = 4096 // KRETPROBE_MAXACTIVE_MAX
	MaxLineLen         = 4094 // one written line (WRITE_BUFSIZE - 2)
	fetchInsnMax       = 16   // FETCH_INSN_MAX
	maxProbeEventSize  = 3072 // MAX_PROBE_EVENT_SIZE
	paramMaxStack      = 16384 / 8
)

// The kernel's messages (trace_probe.h ERRORS), by error name.
var errText = map[string]string{
	"FILE_NOT_FOUND":    "Failed to find the given file",
	"NO_REGULAR_FILE":   "Not a regular file",
	"BAD_REFCNT":        "Invalid reference counter offset",
	"REFCNT_OPEN_BRACE": "Reference counter brace is not closed",
	"BAD_REFCNT_SUFFIX": "Reference counter has wrong suffix",
	"BAD_UPROBE_OFFS":   "Invalid uprobe offset",
	"MAXACT_NO_KPROBE":  "Maxactive is not for kprobe",
	"BAD_MAXACT_TYPE":   "Maxactive is only for function exit",
	"BAD_MAXACT":        "Invalid maxactive number",
	"MAXACT_TOO_BIG":    "Maxactive is too big",
	"BAD_PROBE_ADDR":    "Invalid probed address or symbol",
	"NON_UNIQ_SYMBOL":   "The symbol is not unique",
	"BAD_RETPROBE":      "Retprobe address must be an function entry",
	"BAD_TP_NAME":       "Invalid character in tracepoint name",
	"BAD_ADDR_SUFFIX":   "Invalid probed address suffix",
	"NO_GROUP_NAME":     "Group name is not specified",
	"GROUP_TOO_LONG":    "Group name is too long",
	"BAD_GROUP_NAME":    "Group name must follow the same rules as C identifiers",
	"NO_EVENT_NAME":     "Event name is not specified",
	"EVENT_TOO_LONG":    "Event name is too long",
	"BAD_EVENT_NAME":    "Event name must follow the same rules as C identifiers",
	"EVENT_EXIST":       "Given group/event name is already used by another event",
	"RETVAL_ON_PROBE":   "$retval is not available on probe",
	"NO_RETVAL":         "This function returns 'void' type",
	"BAD_STACK_NUM":     "Invalid stack number",
	"BAD_ARG_NUM":       "Invalid argument number",
	"BAD_VAR":           "Invalid $-variable specified",
	"BAD_REG_NAME":      "Invalid register name",
	"BAD_MEM_ADDR":      "Invalid memory address",
	"BAD_IMM":           "Invalid immediate value",
	"IMMSTR_NO_CLOSE":   "String is not closed with '\"'",
	"FILE_ON_KPROBE":    "File offset is not available with kprobe",
	"BAD_FILE_OFFS":     "Invalid file offset value",
	"SYM_ON_UPROBE":     "Symbol is not available with uprobe",
	"TOO_MANY_OPS":      "Dereference is too much nested",
	"DEREF_NEED_BRACE":  "Dereference needs a brace",
	"BAD_DEREF_OFFS":    "Invalid dereference offset",
	"DEREF_OPEN_BRACE":  "Dereference brace is not closed",
	"COMM_CANT_DEREF":   "$comm can not be dereferenced",
	"BAD_FETCH_ARG":     "Invalid fetch argument",
	"ARRAY_NO_CLOSE":    "Array is not closed",
	"BAD_ARRAY_SUFFIX":  "Array has wrong suffix",
	"BAD_ARRAY_NUM":     "Invalid array size",
	"ARRAY_TOO_BIG":     "Array number is too big",
	"BAD_TYPE":          "Unknown type is specified",
	"BAD_STRING":        "String accepts only memory argument",
	"BAD_SYMSTRING":     "Symbol String doesn't accept data/userdata",
	"BAD_BITFIELD":      "Invalid bitfield",
	"ARG_NAME_TOO_LONG": "Argument name is too long",
	"NO_ARG_NAME":       "Argument name is not specified",
	"BAD_ARG_NAME":      "Argument name must follow the same rules as C identifiers",
	"USED_ARG_NAME":     "This argument name is already used",
	"ARG_TOO_LONG":      "Argument expression is too long",
	"NO_ARG_BODY":       "No argument expression",
	"DIFF_PROBE_TYPE":   "Probe type is different from existing probe",
	"DIFF_ARG_TYPE":     "Argument type or name is different from existing probe",
	"SAME_PROBE":        "There is already the exact same probe event",
	"FAIL_REG_PROBE":    "Failed to register probe event",
	"NO_EVENT_INFO":     "This requires both group and event name to attach",
	"BAD_ATTACH_EVENT":  "Attached event does not exist",
	"BAD_ATTACH_ARG":    "Attached event does not have this field",
	"NO_EP_FILTER":      "No filter rule after 'if'",
	"NOSUP_BTFARG":      "BTF is not available or not supported",
	"NO_BTFARG":         "This variable is not found at this probe point",
	"NO_BTF_ENTRY":      "No BTF entry for this probe point",
	"NOFENTRY_ARGS":     "$arg* can be used only on function entry or exit",
	"DOUBLE_ARGS":       "$arg* can be used only once in the parameters",
	"ARGS_2LONG":        "$arg* failed because the argument list is too long",
	"NO_PTR_STRCT":      "This is not a pointer to union/structure.",
	"NOSUP_DAT_ARG":     "Non pointer structure/union argument is not supported.",
	"BAD_HYPHEN":        "Failed to parse single hyphen. Forgot '>'?",
	"NO_BTF_FIELD":      "This field is not found.",
	"BAD_BTF_TID":       "Failed to get BTF type info.",
	"BAD_TYPE4STR":      "This type does not fit for string.",
	"EVENT_TOO_BIG":     "Event too big (too many fields?)",
	"NEED_STRING_TYPE":  "$comm and immediate-string only accepts string type",
	"TOO_MANY_ARGS":     "Too many arguments are specified",
	// Refused by gprobe although the kernel silently accepts or ignores them.
	"MAXACT_NO_UPROBE": "Maxactive is not for uprobe (the kernel would ignore the event name)",
	"BAD_PREFIX":       "A definition starts with p:, r: or -: (the kernel would ignore what follows the p or r)",
	"TRAILING_DEREF":   "Text after the closing brace of a dereference (the kernel would ignore it)",
	"NO_PLACE":         "No probe place",
	"NOT_A_PROBE":      "Not a probe definition: lines start with p, r, f, t, e or -:",
	"BAD_KIND_PREFIX":  "The kind letter is followed by a maxactive count (f only) or :GROUP/EVENT (the kernel would ignore anything else)",
	"NO_FPROBES":       KindRequirement(probe.Fprobe) + "; this kernel's tracefs README does not offer them",
	"NO_TPROBES":       KindRequirement(probe.Tprobe) + "; this kernel's tracefs README does not offer them",
	"NO_EPROBES":       KindRequirement(probe.Eprobe) + "; this kernel's tracefs README does not offer them",
	"NO_EP_FILTERS":    "Eprobe filters (if FILTER) need Linux " + sinceFilter + " or later; this kernel's tracefs README does not offer them",
	"LINE_TOO_LONG":    "Line length is too long: Should be less than 4094",
	"BAD_CHAR":         "A definition cannot contain '#' (it starts a comment)",
	"BAD_SYMBOL":       "Invalid symbol in @SYMBOL[+|-OFFSET] (the kernel would fail to register the probe)",
	"DELETE_LINE":      "A deletion (-:GROUP/EVENT), not a definition: delete events with gprobe -d",
	"NO_REF_CTR":       "Reference counters (PATH:OFFSET(REF_CTR_OFFSET), an SDT marker's semaphore) need Linux " + sinceRefCtr + " or later; this kernel's tracefs README does not offer them",
	// User events (kernel/trace/trace_events_user.c), which refuses them
	// with EINVAL and no error_log entry.
	"USER_FLAGS":      "User events take no flags (u:NAME[:FLAGS]): the kernel refuses any",
	"BAD_USER_FIELD":  "Invalid user event field: want TYPE NAME (u32, s64, char[16], __data_loc char[], unsigned int, ...) or struct TYPE NAME SIZE; long is not allowed",
	"USER_ARRAY_SIZE": "A user event's array holds 1 to 1024 elements",
	"USER_DUP_FIELD":  "This field name is already used",
}

// parser holds one line being parsed.
type parser struct {
	opts  *Options
	feat  *Features
	kind  probe.Kind
	argv  []string
	cmd   string
	index int // argv index errors refer to, as trace_probe_log_set_index
}

func (p *parser) fail(offset int, code string) *Error {
	pos := 0
	if p.index >= len(p.argv) {
		pos = len(p.cmd) + 1
		offset = 0
	} else {
		for i := 0; i < p.index; i++ {
			pos += len(p.argv[i]) + 1
		}
	}
	return &Error{Kind: p.kind, Code: code, Text: errText[code], Command: p.cmd, Pos: pos + offset}
}

// KindOf tells which kind of probe a line defines, as the kernel decides:
// by its first letter (f, t, e), and for p and r a uprobe when its place has
// a '/' and its last ':' is followed by a digit.
func KindOf(line string) probe.Kind {
	f := strings.Fields(line)
	if len(f) > 0 {
		switch f[0][0] {
		case 'f':
			return probe.Fprobe
		case 't':
			return probe.Tprobe
		case 'e':
			return probe.Eprobe
		case 'u':
			return probe.UserEvent
		}
	}
	if len(f) >= 2 && isUprobePlace(f[1]) {
		return probe.Uprobe
	}
	return probe.Kprobe
}

func isUprobePlace(s string) bool {
	if !strings.Contains(s, "/") {
		return false
	}
	i := strings.LastIndexByte(s, ':')
	return i >= 0 && i+1 < len(s) && isDigit(s[i+1])
}

// Parse reads one definition line into a Probe, checking it as the kernel
// would: a refused line returns an *Error (wrapping ErrSyntax) with the
// kernel's message and error position. opts may be nil (syntax for Linux
// 6.1 on this machine's architecture, uprobe paths checked with os.Stat).
// The Probe prints back as the line was written (single spaces between
// words): arguments keep their text (probe.ParseFetchOf) and the place its
// spelling (probe.Probe.KeepPlace). Deletion lines ("-:GROUP/EVENT") are
// refused with DELETE_LINE.
func Parse(line string, opts *Options) (*probe.Probe, error) {
	if opts == nil {
		opts = &Options{}
	}
	p := &parser{opts: opts, feat: opts.features(), argv: strings.Fields(line)}
	p.cmd = strings.Join(p.argv, " ")
	p.kind = KindOf(line)
	if len(p.argv) == 0 {
		return nil, p.fail(0, "NOT_A_PROBE")
	}
	if len(line) > MaxLineLen {
		return nil, p.fail(0, "LINE_TOO_LONG")
	}
	if strings.ContainsAny(line, "#") {
		return nil, p.fail(strings.IndexByte(p.cmd, '#'), "BAD_CHAR")
	}
	a0 := p.argv[0]
	switch {
	case a0[0] == '-':
		return nil, p.fail(0, "DELETE_LINE")
	case a0[0] == 'f' && !p.feat.Offers(probe.Fprobe):
		return nil, p.fail(0, "NO_FPROBES")
	case a0[0] == 't' && !p.feat.Offers(probe.Tprobe):
		return nil, p.fail(0, "NO_TPROBES")
	case a0[0] == 'e' && !p.feat.Offers(probe.Eprobe):
		return nil, p.fail(0, "NO_EPROBES")
	case !strings.ContainsRune("prfteu", rune(a0[0])):
		return nil, p.fail(0, "NOT_A_PROBE")
	case a0[0] == 'u':
		d, err := p.parseUserEvent()
		if err != nil {
			return nil, err
		}
		return d, nil
	}
	if len(p.argv) < 2 {
		p.index = 1
		return nil, p.fail(0, "NO_PLACE")
	}
	var d *probe.Probe
	var err *Error
	switch p.kind {
	case probe.Uprobe:
		d, err = p.parseUprobe()
	case probe.Fprobe, probe.Tprobe:
		d, err = p.parseFprobe()
	case probe.Eprobe:
		d, err = p.parseEprobe()
	default:
		d, err = p.parseKprobe()
	}
	if err != nil {
		return nil, err
	}
	if err := p.checkExisting(d); err != nil {
		return nil, err
	}
	if p.kind == probe.Fprobe {
		if err := p.checkFunction(d); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func (p *parser) parseKprobe() (*probe.Probe, *Error) {
	d := &probe.Probe{Kind: probe.Kprobe}
	a0 := p.argv[0]
	d.Return = a0[0] == 'r'
	event, hasEvent := "", false
	evOff := 0
	if i := strings.IndexByte(a0[1:], ':'); i >= 0 {
		event, hasEvent, evOff = a0[i+2:], true, i+2
	}
	if len(a0) > 1 && isDigit(a0[1]) {
		if !d.Return {
			if p.feat.modern() {
				return nil, p.fail(1, "BAD_MAXACT_TYPE")
			}
			return nil, p.fail(1, "MAXACT_NO_KPROBE")
		}
		num := a0[1:]
		if hasEvent {
			num = a0[1 : evOff-1]
		}
		v, err := p.maxActive(num)
		if err != nil {
			return nil, err
		}
		d.MaxActive = v
	} else if len(a0) > 1 && a0[1] != ':' {
		// The kernel reads only argv[0][0] and what follows a ':'.
		return nil, p.fail(1, "BAD_PREFIX")
	}

	place := p.argv[1]
	fentry := false
	if addr, ok := kstrtoull(place, 0); ok {
		d.Target.Address = addr
	} else {
		p.index = 1
		sym := place
		if i := strings.IndexByte(sym, '%'); i >= 0 {
			if sym[i:] != "%return" {
				return nil, p.fail(i, "BAD_ADDR_SUFFIX")
			}
			sym = sym[:i]
			d.Return = true
		}
		var off int64
		if i := strings.IndexAny(sym, "+-"); i >= 0 {
			v, ok := kstrtoll(sym[i:], 0)
			if !ok || v < 0 || v > 0xffffffff {
				return nil, p.fail(0, "BAD_PROBE_ADDR")
			}
			off = v
			sym = sym[:i]
		}
		exists := true
		if p.opts.Symbols != nil && !strings.Contains(sym, ":") {
			exists = p.opts.Symbols(sym) > 0
		}
		entry := off == 0 || (p.arch() == arch.AMD64 && off == 4) // ENDBR64 on IBT kernels
		if sym == "_text" || sym == "_stext" {
			// perf's relocation base (a kretprobe it rebased): the kernel
			// looks the address up, gprobe cannot tell an entry from here.
			entry = true
		}
		if d.Return && exists && !entry {
			return nil, p.fail(0, "BAD_RETPROBE")
		}
		fentry = exists && entry && !(d.Return && p.feat.modern())
		if p.opts.Symbols != nil && !strings.Contains(sym, ":") {
			switch n := p.opts.Symbols(sym); {
			case n > 1:
				return nil, p.fail(0, "NON_UNIQ_SYMBOL")
			case n == 0:
				return nil, p.fail(0, "BAD_PROBE_ADDR")
			}
		}
		if m, s, ok := strings.Cut(sym, ":"); ok {
			d.Target.Module, sym = m, s
		}
		d.Target.Symbol, d.Target.Offset = sym, uint64(off)
	}
	d.KeepPlace(place)
	p.index = 0
	if hasEvent {
		if err := p.parseEventName(d, event, evOff); err != nil {
			return nil, err
		}
	}
	ctx := &argCtx{kernel: true, ret: d.Return, fentry: fentry, funcName: d.Target.Symbol}
	if d.Target.Module != "" {
		ctx.funcName = ""
	}
	if err := p.parseArgs(d, ctx); err != nil {
		return nil, err
	}
	return d, nil
}

func (p *parser) parseUprobe() (*probe.Probe, *Error) {
	d := &probe.Probe{Kind: probe.Uprobe}
	a0 := p.argv[0]
	d.Return = a0[0] == 'r'
	if len(a0) > 1 && a0[1] != ':' {
		if isDigit(a0[1]) {
			return nil, p.fail(1, "MAXACT_NO_UPROBE")
		}
		return nil, p.fail(1, "BAD_PREFIX")
	}
	p.index = 1
	file := p.argv[1]
	colon := strings.LastIndexByte(file, ':')
	path, rest := file[:colon], file[colon+1:]
	restOff := colon + 1
	d.Target.Path = path
	if !p.opts.NoStat {
		stat := p.opts.Stat
		if stat == nil {
			stat = os.Stat
		}
		fi, err := stat(path)
		if err != nil {
			return nil, p.fail(0, "FILE_NOT_FOUND")
		}
		if !fi.Mode().IsRegular() {
			return nil, p.fail(0, "NO_REGULAR_FILE")
		}
	}
	if i := strings.IndexByte(rest, '('); i >= 0 {
		if !p.feat.RefCtr {
			return nil, p.fail(restOff+i, "NO_REF_CTR")
		}
		j := strings.IndexByte(rest[i:], ')')
		if j < 0 {
			return nil, p.fail(restOff+len(rest), "REFCNT_OPEN_BRACE")
		}
		j += i
		if j+1 != len(rest) {
			return nil, p.fail(restOff+j+1, "BAD_REFCNT_SUFFIX")
		}
		v, ok := kstrtoull(rest[i+1:j], 0)
		if !ok {
			return nil, p.fail(restOff+i+1, "BAD_REFCNT")
		}
		d.Target.RefCtr, d.Target.HasRefCtr = v, true
		rest = rest[:i]
	}
	if i := strings.IndexByte(rest, '%'); i >= 0 {
		if rest[i:] != "%return" {
			return nil, p.fail(restOff+i, "BAD_ADDR_SUFFIX")
		}
		d.Return = true
		rest = rest[:i]
	}
	off, ok := kstrtoull(rest, 0)
	if !ok {
		return nil, p.fail(restOff, "BAD_UPROBE_OFFS")
	}
	d.Target.Offset = off
	d.KeepPlace(file)
	p.index = 0
	if len(a0) > 1 {
		if err := p.parseEventName(d, a0[2:], 2); err != nil {
			return nil, err
		}
	}
	if err := p.parseArgs(d, &argCtx{ret: d.Return, user: true}); err != nil {
		return nil, err
	}
	return d, nil
}

// parseEventName is traceprobe_parse_event_name.
func (p *parser) parseEventName(d *probe.Probe, event string, offset int) *Error {
	slash := strings.IndexByte(event, '/')
	if slash < 0 {
		slash = strings.IndexByte(event, '.')
	}
	if slash >= 0 {
		if slash == 0 {
			return p.fail(offset, "NO_GROUP_NAME")
		}
		if slash+1 > MaxEventNameLen {
			return p.fail(offset, "GROUP_TOO_LONG")
		}
		if !isGoodName(event[:slash], true) {
			return p.fail(offset, "BAD_GROUP_NAME")
		}
		d.Group = event[:slash]
		offset += slash + 1
		event = event[slash+1:]
	}
	if event == "" {
		if slash >= 0 {
			return nil // "GRP/": the kernel generates the event name
		}
		return p.fail(offset, "NO_EVENT_NAME")
	}
	if code := EventNameCode(event); code != "" {
		return p.fail(offset, code)
	}
	d.Event = event
	return nil
}

// EventNameCode is the kernel's rule for an event name (MAX_EVENT_NAME_LEN,
// is_good_name): the error_log code of the name's fault, "EVENT_TOO_LONG"
// or "BAD_EVENT_NAME", or "" when the kernel takes it.
func EventNameCode(name string) string {
	switch {
	case len(name) >= MaxEventNameLen:
		return "EVENT_TOO_LONG"
	case !isGoodName(name, false):
		return "BAD_EVENT_NAME"
	}
	return ""
}

func isGoodName(s string, system bool) bool {
	if s == "" || !(isAlpha(s[0]) || s[0] == '_') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(isAlpha(c) || isDigit(c) || c == '_' || (system && c == '-')) {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// arch is the architecture the line is checked for: Options.Arch, else the
// running machine's; the invalid Arch if gprobe does not know it.
func (p *parser) arch() arch.Arch {
	a, _ := p.opts.Arch.OrHost()
	return a
}

var reservedFields = []string{"common_type", "common_flags", "common_preempt_count", "common_pid",
	"common_tgid", "__probe_ip", "__probe_ret_ip", "__probe_func"}

// parseArgs checks the arguments (the words after the place, or the
// eprobe's words before "if") and gives d its arguments as written.
func (p *parser) parseArgs(d *probe.Probe, ctx *argCtx) *Error {
	args := p.argv[2:]
	if d.Kind == probe.Eprobe {
		if i := slices.Index(args, "if"); i >= 0 {
			args = args[:i]
		}
	}
	if len(args) > MaxTraceArgs {
		p.index = 2
		return p.fail(0, "TOO_MANY_ARGS")
	}
	words := args
	if p.feat.modern() && ctx.kernel && !ctx.tevent {
		var err *Error
		if words, err = p.expandMetaArgs(args, ctx); err != nil {
			return err
		}
		if len(words) > MaxTraceArgs {
			p.index = 2
			return p.fail(0, "TOO_MANY_ARGS")
		}
		if contains(p.feat.Types, "%pd") {
			expanded := !slices.Equal(words, args)
			words = dentryArgs(words)
			if !expanded {
				// The kernel rewrites the words in place: it logs them so.
				p.argv = append(p.argv[:2:2], words...)
				p.cmd = strings.Join(p.argv, " ")
			}
		}
	}
	size := 0
	names := map[string]bool{}
	for _, r := range reservedFields {
		names[r] = true
	}
	for i, a := range words {
		p.index = i + 2
		body := a
		bodyOff := 0
		name := "arg" + strconv.Itoa(i+1)
		if eq := strings.IndexByte(a, '='); eq >= 0 {
			if eq > MaxArgNameLen {
				return p.fail(0, "ARG_NAME_TOO_LONG")
			}
			if eq == 0 {
				return p.fail(0, "NO_ARG_NAME")
			}
			name = a[:eq]
			body, bodyOff = a[eq+1:], eq+1
		} else if p.feat.modern() && p.feat.BTFArgs {
			// generate_probe_arg_name: a BTF name names its field.
			if n, _, _ := strings.Cut(a, ":"); isGoodName(n, false) {
				name = n
			}
		}
		if !isGoodName(name, false) {
			return p.fail(0, "BAD_ARG_NAME")
		}
		if names[name] {
			return p.fail(0, "USED_ARG_NAME")
		}
		names[name] = true
		ctx.offset = bodyOff
		if err := p.parseArgBody(body, ctx, &size); err != nil {
			return err
		}
		if d.Kind == probe.Eprobe && !p.feat.modern() {
			if err := p.checkField61(body, ctx); err != nil {
				return err
			}
		}
	}
	for _, a := range args {
		d.Args = append(d.Args, splitArg(d.Kind, a))
	}
	return nil
}

// splitArg reads one argument as written, NAME=FETCH:TYPE, into the model.
func splitArg(k probe.Kind, a string) probe.FetchArg {
	var fa probe.FetchArg
	if eq := strings.IndexByte(a, '='); eq >= 0 {
		fa.Name, a = a[:eq], a[eq+1:]
	}
	fetch, typ, _ := strings.Cut(a, ":")
	fa.Expr, fa.Type = probe.ParseFetchOf(k, fetch), typ
	return fa
}

// checkExisting runs the kernel's multi-probe checks against opts.Existing.
// kprobes, uprobes, and fprobes with tprobes (one kernel family) append
// probes to an event of their own kind; any other event of that name is
// EVENT_EXIST, as is any event of an eprobe's name.
func (p *parser) checkExisting(d *probe.Probe) error {
	if d.Event == "" {
		return nil
	}
	family := func(k probe.Kind) probe.Kind {
		if k == probe.Tprobe {
			return probe.Fprobe
		}
		return k
	}
	for _, old := range p.opts.Existing {
		if old.GroupOrDefault() != d.GroupOrDefault() || old.Event != d.Event {
			continue
		}
		if family(old.Kind) != family(d.Kind) || d.Kind == probe.Eprobe {
			p.index = 0
			return p.fail(0, "EVENT_EXIST")
		}
		if old.Return != d.Return || old.Kind != d.Kind {
			p.index = 0
			return p.fail(0, "DIFF_PROBE_TYPE")
		}
		if i := compareArgTypes(d, old); i > 0 {
			p.index = i + 1
			return p.fail(0, "DIFF_ARG_TYPE")
		}
		if samePlace(old.Target, d.Target) {
			same := true
			for i := range d.Args {
				if argBody(d.Args[i]) != argBody(old.Args[i]) {
					same = false
				}
			}
			if same {
				p.index = 0
				return p.fail(0, "SAME_PROBE")
			}
		}
	}
	return nil
}

// argBody is what follows NAME= in an argument, as the kernel compares it.
func argBody(a probe.FetchArg) string {
	a.Name = ""
	return a.String()
}

// compareArgTypes is trace_probe_compare_arg_type: the 1-based index of the
// first argument whose name, type or count differs, 0 if none.
func compareArgTypes(a, b *probe.Probe) int {
	if len(a.Args) < len(b.Args) {
		return len(a.Args) + 1
	}
	if len(a.Args) > len(b.Args) {
		return len(b.Args) + 1
	}
	for i := range a.Args {
		xt, xn := splitArray(a.Args[i].Type)
		yt, yn := splitArray(b.Args[i].Type)
		if a.ArgName(i) != b.ArgName(i) || fetchTypeOf(a.Args[i].Expr, xt) != fetchTypeOf(b.Args[i].Expr, yt) || xn != yn {
			return i + 1
		}
	}
	return 0
}

// splitArray splits "u8[16]" into "u8" and 16 (0 without an array suffix).
func splitArray(t string) (string, int) {
	if i := strings.IndexByte(t, '['); i >= 0 && strings.HasSuffix(t, "]") {
		if n, ok := kstrtoull(t[i+1:len(t)-1], 0); ok {
			return t[:i], int(n)
		}
	}
	return t, 0
}

// fetchTypeOf is the kernel's fetch type of an argument (bitfields share
// their container's type; $comm and immediate strings are strings).
func fetchTypeOf(f probe.Fetch, t string) string {
	fetch := f.String()
	if fetch == "$comm" || fetch == "$COMM" || strings.HasPrefix(fetch, `\"`) {
		return "string"
	}
	if t == "" {
		return "x64"
	}
	if t[0] == 'b' {
		if i := strings.IndexByte(t, '/'); i >= 0 {
			return "u" + t[i+1:]
		}
	}
	return t
}

func samePlace(a, b probe.Location) bool {
	if a.IsUprobe() {
		return a.Path == b.Path && a.Offset == b.Offset
	}
	return a.Module == b.Module && a.Symbol == b.Symbol && a.Offset == b.Offset && a.Address == b.Address
}

// RegularFile is an Options.Stat that reports every path as a regular file.
func RegularFile(string) (fs.FileInfo, error) { return regular{}, nil }

type regular struct{ fs.FileInfo }

func (regular) Mode() fs.FileMode { return 0 }

// parseFprobe is Linux 6.12's __trace_fprobe_create: f[N][:[GRP/][EVENT]]
// FUNC[%return] ARGS and t[:[GRP/][EVENT]] TRACEPOINT ARGS.
func (p *parser) parseFprobe() (*probe.Probe, *Error) {
	tpoint := p.kind == probe.Tprobe
	d := &probe.Probe{Kind: p.kind}
	a0 := p.argv[0]
	event, hasEvent, evOff := "", false, 0
	if i := strings.IndexByte(a0[1:], ':'); i >= 0 {
		event, hasEvent, evOff = a0[i+2:], true, i+2
	}
	if len(a0) > 1 && isDigit(a0[1]) {
		num := a0[1:]
		if hasEvent {
			num = a0[1 : evOff-1]
		}
		v, err := p.maxActive(num)
		if err != nil {
			return nil, err
		}
		d.MaxActive = v
	} else if len(a0) > 1 && a0[1] != ':' {
		// The kernel reads only argv[0][0] and what follows a ':'.
		return nil, p.fail(1, "BAD_KIND_PREFIX")
	}

	// parse_symbol_and_return
	p.index = 1
	place := p.argv[1]
	sym := place
	if i := strings.IndexByte(place, '%'); i >= 0 {
		if tpoint || place[i:] != "%return" {
			return nil, p.fail(i, "BAD_ADDR_SUFFIX")
		}
		sym, d.Return = place[:i], true
	}
	if !d.Return {
		if tpoint {
			for i := 0; i < len(sym); i++ {
				if c := sym[i]; !isAlpha(c) && !isDigit(c) && c != '_' {
					return nil, p.fail(i, "BAD_TP_NAME")
				}
			}
		}
		// A $retval among the arguments makes an fprobe a return probe.
		for i, a := range p.argv[2:] {
			j := strings.Index(a, "$retval")
			if j < 0 || (j+7 < len(a) && (isAlpha(a[j+7]) || isDigit(a[j+7]) || a[j+7] == '_')) {
				continue
			}
			if tpoint {
				p.index = i + 2
				return nil, p.fail(j, "RETVAL_ON_PROBE")
			}
			d.Return = true
			break
		}
	}
	if !d.Return && d.MaxActive > 0 {
		p.index = 0
		return nil, p.fail(1, "BAD_MAXACT_TYPE")
	}
	d.Target.Symbol = sym
	d.KeepPlace(place)
	p.index = 0
	if hasEvent {
		if err := p.parseEventName(d, event, evOff); err != nil {
			return nil, err
		}
	}
	ctx := &argCtx{kernel: true, fprobe: true, tpoint: tpoint, ret: d.Return, fentry: !d.Return, funcName: sym}
	if tpoint {
		// The kernel reads the tracepoint's arguments from the prototype
		// of the stub function it probes.
		ctx.funcName = "__probestub_" + sym
	}
	if err := p.parseArgs(d, ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// checkFunction is the registration of an fprobe: a function the kernel
// does not have is refused once the whole line has been read (ftrace's
// filter matches nothing).
func (p *parser) checkFunction(d *probe.Probe) *Error {
	sym := d.Target.Symbol
	if p.opts.Symbols == nil || strings.ContainsAny(sym, ":*?[") {
		// Module functions and ftrace's globs are left to the kernel.
		return nil
	}
	if p.opts.Symbols(sym) == 0 {
		p.index = 1
		return p.fail(0, "FAIL_REG_PROBE")
	}
	return nil
}

// parseEprobe is __trace_eprobe_create: e[:[GRP/][EVENT]] SYSTEM.EVENT
// ARGS [if FILTER].
func (p *parser) parseEprobe() (*probe.Probe, *Error) {
	d := &probe.Probe{Kind: probe.Eprobe}
	a0 := p.argv[0]
	if i := strings.IndexByte(a0[1:], ':'); i >= 0 {
		if err := p.parseEventName(d, a0[i+2:], i+2); err != nil {
			return nil, err
		}
	} else if len(a0) > 1 {
		return nil, p.fail(1, "BAD_KIND_PREFIX")
	}
	p.index = 1
	place := p.argv[1]
	attached := &probe.Probe{}
	if err := p.parseEventName(attached, place, 0); err != nil || attached.Group == "" || attached.Event == "" {
		p.index = 1
		return nil, p.fail(0, "NO_EVENT_INFO")
	}
	d.Target.Event = probe.EventID{System: attached.Group, Name: attached.Event}
	d.KeepPlace(place)
	filterIdx := -1
	if i := slices.Index(p.argv[2:], "if"); i >= 0 {
		filterIdx = i + 3
	}
	if p.opts.EventFields != nil {
		if _, ok := p.opts.EventFields(d.Target.Event); !ok {
			p.index = 1
			return nil, p.fail(0, "BAD_ATTACH_EVENT")
		}
	}
	if filterIdx >= 0 {
		if !p.feat.EprobeFilter {
			p.index = filterIdx - 1
			return nil, p.fail(0, "NO_EP_FILTERS")
		}
		p.index = filterIdx
		if filterIdx >= len(p.argv) {
			return nil, p.fail(0, "NO_EP_FILTER")
		}
		d.Filter = strings.Join(p.argv[filterIdx:], " ")
	}
	ctx := &argCtx{kernel: true, tevent: true, event: d.Target.Event}
	if err := p.parseArgs(d, ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// checkField61 is Linux 6.1's trace_eprobe_tp_arg_update: an argument that
// starts from $NAME needs the attached event to have that field (or NAME
// to be comm), checked once the argument is parsed.
func (p *parser) checkField61(body string, ctx *argCtx) *Error {
	fetch, _, _ := strings.Cut(body, ":")
	i := strings.LastIndexByte(fetch, '$')
	if i < 0 {
		return nil
	}
	name := fetch[i+1:]
	if j := strings.IndexByte(name, ')'); j >= 0 {
		name = name[:j]
	}
	if name == "comm" || name == "COMM" || ctx.hasField(p.opts, name) {
		return nil
	}
	return p.fail(0, "BAD_ATTACH_ARG")
}

// maxActive reads the number after a kretprobe's or fprobe exit's "r" or
// "f" as the kernel does (kstrtouint, then the limit).
func (p *parser) maxActive(num string) (int, *Error) {
	if len(num) > MaxEventNameLen-1 {
		return 0, p.fail(1, "BAD_MAXACT")
	}
	v, ok := kstrtoull(num, 0)
	if !ok || v == 0 || v > 0xffffffff {
		return 0, p.fail(1, "BAD_MAXACT")
	}
	if v > MaxKretprobeActive {
		return 0, p.fail(1, "MAXACT_TOO_BIG")
	}
	return int(v), nil
}

// parseUserEvent reads "u:NAME[ FIELD[;FIELD...]]" as user_event_create
// and user_event_parse_fields do (kernel/trace/trace_events_user.c, 6.4
// and later): fields split at ';', each "TYPE NAME" (a type of two words:
// unsigned, struct, __data_loc or __rel_loc, then one more) or "struct
// TYPE NAME SIZE", the types the kernel knows the size of (user_field_size:
// no long). The kernel names the event as it is given; gprobe wants a name
// tracefs tools can address (a C identifier).
func (p *parser) parseUserEvent() (*probe.Probe, *Error) {
	d := &probe.Probe{Kind: probe.UserEvent}
	name, ok := strings.CutPrefix(p.argv[0], "u:")
	if !ok {
		return nil, p.fail(0, "BAD_KIND_PREFIX")
	}
	if n, _, flags := strings.Cut(name, ":"); flags {
		return nil, p.fail(len(n)+2, "USER_FLAGS")
	}
	if name == "" {
		return nil, p.fail(2, "NO_EVENT_NAME")
	}
	if len(name) >= MaxEventNameLen {
		return nil, p.fail(2, "EVENT_TOO_LONG")
	}
	if !isGoodName(name, false) {
		return nil, p.fail(2, "BAD_EVENT_NAME")
	}
	d.Event = name
	p.index = 1
	rest := strings.Join(p.argv[1:], " ")
	if rest == "" {
		return d, nil
	}
	seen := map[string]bool{}
	offset := 0
	for _, raw := range strings.Split(rest, ";") {
		f, err := userField(raw)
		if err != "" {
			return nil, p.fail(offset, err)
		}
		if f.Name != "" {
			if seen[f.Name] {
				return nil, p.fail(offset, "USER_DUP_FIELD")
			}
			seen[f.Name] = true
			d.Fields = append(d.Fields, f)
		}
		offset += len(raw) + 1
	}
	return d, nil
}

// userTwoWord are the type prefixes user_event_parse_field reads with the
// word after them.
var userTwoWord = []string{"unsigned ", "struct ", "__data_loc unsigned ", "__data_loc ", "__rel_loc unsigned ", "__rel_loc "}

// userField reads one field; an empty one (";;", a trailing ';') is
// skipped, as the kernel does.
func userField(raw string) (probe.UserField, string) {
	words := strings.Fields(raw)
	if len(words) == 0 {
		return probe.UserField{}, ""
	}
	field := strings.Join(words, " ")
	typ, rest := "", field
	for _, pre := range userTwoWord {
		if strings.HasPrefix(field, pre) {
			w := strings.Fields(field[len(pre):])
			if len(w) == 0 {
				return probe.UserField{}, "BAD_USER_FIELD"
			}
			typ = pre + w[0]
			rest = strings.Join(w[1:], " ")
			break
		}
	}
	w := strings.Fields(rest)
	if typ == "" {
		if len(w) == 0 {
			return probe.UserField{}, "BAD_USER_FIELD"
		}
		typ, w = w[0], w[1:]
	}
	f := probe.UserField{Type: typ}
	switch {
	case len(w) == 1:
		f.Name = w[0]
	case len(w) == 2 && strings.HasPrefix(typ, "struct "):
		n, err := strconv.ParseUint(w[1], 10, 32)
		if err != nil || n == 0 {
			return probe.UserField{}, "BAD_USER_FIELD"
		}
		f.Name, f.Size = w[0], int(n)
		return f, ""
	default:
		return probe.UserField{}, "BAD_USER_FIELD"
	}
	if code := userFieldSize(typ); code != "" {
		return probe.UserField{}, code
	}
	return f, ""
}

// userFieldSize is user_field_size's verdict on a type ("" when known).
func userFieldSize(typ string) string {
	switch typ {
	case "s64", "u64", "s32", "u32", "int", "unsigned int", "s16", "u16", "short", "unsigned short",
		"s8", "u8", "char", "unsigned char":
		return ""
	}
	if strings.HasPrefix(typ, "__data_loc ") || strings.HasPrefix(typ, "__rel_loc ") {
		return ""
	}
	for _, pre := range []string{"char[", "unsigned char["} {
		if n, ok := strings.CutPrefix(typ, pre); ok {
			// kstrtouint(base 0) of what precedes ']', at most 7 characters.
			num, _, closed := strings.Cut(n, "]")
			if !closed || len(num) > 7 {
				return "BAD_USER_FIELD"
			}
			v, err := strconv.ParseUint(num, 0, 32)
			if err != nil {
				return "BAD_USER_FIELD"
			}
			if v == 0 || v > 1024 {
				return "USER_ARRAY_SIZE"
			}
			return ""
		}
	}
	return "BAD_USER_FIELD"
}
