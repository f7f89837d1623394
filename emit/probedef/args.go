package probedef

import (
	"strconv"
	"strings"

	"github.com/gprobe/gprobe/emit/probe"
)

// argCtx is what the kernel keeps while it parses one line's arguments
// (the probe flags TPARG_FL_*, and from Linux 6.5 the rest of
// traceprobe_parse_context).
type argCtx struct {
	kernel, user, ret, fentry bool
	fprobe, tpoint, tevent    bool
	// funcName is the function whose BTF prototype names the parameters
	// (a kprobe's symbol, an fprobe's function, a tprobe's stub).
	funcName string
	// event is an eprobe's attached event.
	event probe.EventID

	btfQueried bool
	btfFound   bool
	params     []BTFParam
	retType    BTFType

	// offset is ctx->offset: the argument position errors are logged at.
	offset      int
	lastType    BTFType
	lastBitoffs int
	lastBitsize int
}

// funcEntry is tparg_is_function_entry.
func (c *argCtx) funcEntry() bool { return c.kernel && c.fentry && !c.ret && !c.user && !c.tevent }

// funcReturn is tparg_is_function_return.
func (c *argCtx) funcReturn() bool { return c.kernel && c.ret && !c.fentry && !c.user && !c.tevent }

// Fetch operations, as far as the checks need to tell them apart.
type op int

const (
	opNop op = iota
	opReg
	opStackP
	opStack
	opRetval
	opComm
	opArg
	opImm
	opData
	opFoffs
	opSymbol
	opDeref
	opUderef
	opStString
	opStMem
	opStUmem
	opStRaw
	opEData
	opTPArg
	opModBF
	opLoop
	opEnd
)

// code simulates the kernel's fetch instruction buffer, whose size bounds
// how deeply an argument can nest.
type code struct {
	ops [fetchInsnMax]op
	pc  int
}

const endPC = fetchInsnMax - 1

func newCode() *code {
	c := &code{}
	c.ops[endPC] = opEnd
	return c
}

// validReg is regs_query_register_offset. An architecture gprobe does not
// know accepts any name.
func (p *parser) validReg(r string) bool {
	if p.opts.AnyRegister {
		return r != ""
	}
	if p.arch().IsFetchRegister(r) {
		return true
	}
	return r != "" && p.arch().FetchRegisters() == nil
}

var basicTypes = map[string]int{"u8": 1, "u16": 2, "u32": 4, "u64": 8, "s8": 1, "s16": 2, "s32": 4, "s64": 8,
	"x8": 1, "x16": 2, "x32": 4, "x64": 8, "symbol": 8, "char": 1, "string": 4, "ustring": 4, "symstr": 4}

// findType is find_fetch_type: the type's size, whether it is a string type,
// or ok=false. (A %pd/%pD type has been expanded into a string by then.)
func (p *parser) findType(t string, user bool) (size int, str bool, ok bool) {
	if t == "" {
		return 8, false, true
	}
	if t[0] == 'b' {
		i := strings.IndexByte(t, '/')
		if i < 0 {
			return 0, false, false
		}
		bs, ok := kstrtoull(t[i+1:], 0)
		if !ok {
			return 0, false, false
		}
		switch bs {
		case 8, 16, 32, 64:
			return int(bs / 8), false, true
		}
		return 0, false, false
	}
	sz, ok := basicTypes[t]
	if !ok {
		return 0, false, false
	}
	if p.feat.Types != nil && !contains(p.feat.Types, t) {
		return 0, false, false
	}
	if user && (t == "symbol" || t == "symstr") {
		// Kernel symbols mean nothing in a user process (refused by newer kernels).
		return 0, false, false
	}
	return sz, t == "string" || t == "ustring" || t == "symstr", true
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// parseArgBody is traceprobe_parse_probe_arg_body: body is the text after
// NAME=, ctx.offset its position in the argument.
func (p *parser) parseArgBody(body string, ctx *argCtx, size *int) *Error {
	modern := p.feat.modern()
	offset := ctx.offset
	if len(body) > MaxArgStrLen {
		return p.fail(offset, "ARG_TOO_LONG")
	}
	if body == "" {
		return p.fail(offset, "NO_ARG_BODY")
	}
	arg := body
	count := 0
	t, hasT := "", false
	tOff := 0
	if i := strings.IndexByte(body, ':'); i >= 0 {
		arg, t, hasT, tOff = body[:i], body[i+1:], true, i+1
		if j := strings.IndexByte(t, '['); j >= 0 {
			t2 := t[j+1:]
			t2Off := tOff + j + 1
			t = t[:j]
			k := strings.IndexByte(t2, ']')
			if k < 0 {
				return p.fail(offset+t2Off+len(t2), "ARRAY_NO_CLOSE")
			}
			if k+1 != len(t2) {
				return p.fail(offset+t2Off+k+1, "BAD_ARRAY_SUFFIX")
			}
			n, ok := kstrtoull(t2[:k], 0)
			if !ok || n == 0 || n > 0xffffffff {
				return p.fail(offset+t2Off, "BAD_ARRAY_NUM")
			}
			if n > MaxArrayLen {
				return p.fail(offset+t2Off, "ARRAY_TOO_BIG")
			}
			count = int(n)
		}
	}
	typeOff := offset
	if hasT {
		typeOff = offset + tOff
	}
	var tsize int
	var isStr, ok bool
	// An eprobe's $comm may be a field of the attached event.
	if !ctx.tevent && (arg == "$comm" || arg == "$COMM" || strings.HasPrefix(arg, `\"`)) {
		if count > 0 || (hasT && t != "string") {
			return p.fail(typeOff, "NEED_STRING_TYPE")
		}
		tsize, isStr, ok = 4, true, true
		if !hasT {
			t = "string"
		}
	} else {
		tsize, isStr, ok = p.findType(t, ctx.user)
		// "x:" names the type "", which no type is (find_fetch_type).
		ok = ok && !(hasT && t == "")
	}
	if !ok {
		return p.fail(typeOff, "BAD_TYPE")
	}
	n := count
	if n == 0 {
		n = 1
	}
	if !modern {
		*size += tsize * n
		if *size > maxProbeEventSize {
			return p.fail(offset, "EVENT_TOO_BIG")
		}
	}

	c := newCode()
	ctx.lastType = nil
	if err := p.parseFetch(arg, c, ctx); err != nil {
		return err
	}
	if !modern {
		// Linux 6.1 passes the position by value: what follows points at
		// the argument again.
		ctx.offset = offset
	}
	if modern && ctx.lastType != nil {
		switch {
		case !hasT:
			tsize = btfFetchSize(ctx)
		case strings.Contains(t, "string"):
			if err := p.btfStringFetch(c, ctx); err != nil {
				return err
			}
		}
	}
	if modern {
		*size += tsize * n
		if *size > maxProbeEventSize {
			return p.fail(ctx.offset, "EVENT_TOO_BIG")
		}
	}
	// finalize_fetch_insn: positions are ctx.offset (moved by a
	// dereference since Linux 6.5) plus the type's offset in the argument.
	typeOff = ctx.offset
	if hasT {
		typeOff = ctx.offset + tOff
	}
	cur := c.ops[c.pc]
	next := func() bool {
		c.pc++
		return c.ops[c.pc] == opNop
	}
	if isStr {
		if t == "symstr" {
			switch cur {
			case opReg, opStack, opRetval, opArg, opDeref, opTPArg:
			default:
				return p.fail(typeOff, "BAD_SYMSTRING")
			}
		} else {
			switch cur {
			case opDeref, opUderef, opImm, opComm, opData, opTPArg:
			default:
				return p.fail(typeOff, "BAD_STRING")
			}
		}
		if t == "symstr" || cur == opImm || cur == opComm || cur == opData || cur == opTPArg || count > 0 {
			if !next() {
				return p.fail(ctx.offset, "TOO_MANY_OPS")
			}
		}
		c.ops[c.pc] = opStString
	} else if cur == opDeref {
		c.ops[c.pc] = opStMem
	} else if cur == opUderef {
		c.ops[c.pc] = opStUmem
	} else {
		if !next() {
			return p.fail(ctx.offset, "TOO_MANY_OPS")
		}
		c.ops[c.pc] = opStRaw
	}
	store := c.ops[c.pc]
	switch {
	case hasT && t != "" && t[0] == 'b':
		if !p.bitfield(t, tsize, c) {
			return p.fail(typeOff, "BAD_BITFIELD")
		}
	case !hasT && modern && ctx.lastType != nil:
		// parse_btf_bitfield: a BTF member that is not whole bytes.
		if ctx.lastBitsize%8 != 0 || ctx.lastBitoffs != 0 {
			if !next() {
				return p.fail(ctx.offset, "TOO_MANY_OPS")
			}
			c.ops[c.pc] = opModBF
		}
	}
	if count > 0 {
		if store != opStMem && store != opStString {
			return p.fail(typeOff, "BAD_STRING")
		}
		if !next() {
			return p.fail(ctx.offset, "TOO_MANY_OPS")
		}
		c.ops[c.pc] = opLoop
	}
	return nil
}

// bitfield is __parse_bitfield_probe_arg.
func (p *parser) bitfield(t string, size int, c *code) bool {
	bw, rest := simpleStrtoul(t[1:])
	if bw == 0 || !strings.HasPrefix(rest, "@") {
		return false
	}
	bo, rest2 := simpleStrtoul(rest[1:])
	if len(rest2) == len(rest)-1 || !strings.HasPrefix(rest2, "/") {
		return false
	}
	c.pc++
	if c.ops[c.pc] != opNop {
		return false
	}
	c.ops[c.pc] = opModBF
	return uint64(size*8) >= bw+bo && bw+bo >= bw
}

// parseFetch is parse_probe_arg; ctx.offset is the position of arg in the
// argument.
func (p *parser) parseFetch(arg string, c *code, ctx *argCtx) *Error {
	modern := p.feat.modern()
	offs := ctx.offset
	if arg == "" {
		return p.fail(offs, "BAD_FETCH_ARG")
	}
	switch arg[0] {
	case '$':
		if modern {
			return p.parseVarModern(arg, c, ctx)
		}
		return p.parseVar(arg[1:], c, ctx)
	case '%':
		if ctx.tevent || (modern && ctx.fprobe) {
			// eprobes and fprobes do not handle registers: the kernel logs
			// BAD_VAR, then (its parser going on with no fetch)
			// BAD_FETCH_ARG, the entry a reader finds last.
			return p.fail(offs, "BAD_FETCH_ARG")
		}
		if !p.validReg(arg[1:]) {
			return p.fail(offs, "BAD_REG_NAME")
		}
		c.ops[c.pc] = opReg
	case '@':
		switch {
		case len(arg) > 1 && isDigit(arg[1]):
			if _, ok := kstrtoull(arg[1:], 0); !ok {
				return p.fail(offs, "BAD_MEM_ADDR")
			}
			c.ops[c.pc] = opImm
		case len(arg) > 1 && arg[1] == '+':
			if ctx.kernel {
				return p.fail(offs, "FILE_ON_KPROBE")
			}
			if _, ok := kstrtoll(arg[2:], 0); !ok {
				return p.fail(offs, "BAD_FILE_OFFS")
			}
			c.ops[c.pc] = opFoffs
		default:
			if !ctx.kernel {
				return p.fail(offs, "SYM_ON_UPROBE")
			}
			if !goodSymbolRef(arg[1:]) {
				return p.fail(offs, "BAD_SYMBOL")
			}
			c.ops[c.pc] = opSymbol
			if c.pc++; c.pc == endPC {
				return p.fail(offs, "TOO_MANY_OPS")
			}
			c.ops[c.pc] = opImm
		}
		if c.pc++; c.pc == endPC {
			return p.fail(offs, "TOO_MANY_OPS")
		}
		c.ops[c.pc] = opDeref
	case '+', '-':
		deref := opDeref
		s := arg
		if len(s) > 1 && s[1] == 'u' {
			// Like the kernel, drop the 'u' and count positions without it:
			// errors inside +u...( point one column early, as in error_log.
			deref = opUderef
			s = s[:1] + s[2:]
		}
		sign := s[0]
		if sign == '+' {
			s = s[1:]
		}
		i := strings.IndexByte(s, '(')
		if i < 0 {
			return p.fail(offs, "DEREF_NEED_BRACE")
		}
		if _, ok := kstrtoll(s[:i], 0); !ok {
			return p.fail(offs, "BAD_DEREF_OFFS")
		}
		step := i + 1
		if sign != '-' {
			step++
		}
		offs += step
		ctx.offset = offs
		inner := s[i+1:]
		j := strings.LastIndexByte(inner, ')')
		if j < 0 {
			return p.fail(offs+len(inner), "DEREF_OPEN_BRACE")
		}
		if j+1 != len(inner) {
			// The kernel stops at the last ')' and never reads what follows.
			return p.fail(offs+j+1, "TRAILING_DEREF")
		}
		if err := p.parseFetch(inner[:j], c, ctx); err != nil {
			return err
		}
		ctx.offset = offs
		if op := c.ops[c.pc]; op == opComm || op == opData {
			return p.fail(offs, "COMM_CANT_DEREF")
		}
		if c.pc++; c.pc == endPC {
			return p.fail(offs, "TOO_MANY_OPS")
		}
		c.ops[c.pc] = deref
		ctx.lastType = nil
	case '\\':
		if len(arg) > 1 && arg[1] == '"' {
			s := arg[2:]
			if s == "" || s[len(s)-1] != '"' {
				return p.fail(offs+2+len(s), "IMMSTR_NO_CLOSE")
			}
			c.ops[c.pc] = opData
			return nil
		}
		if !p.feat.Immediates || !immediate(arg[1:]) {
			return p.fail(offs+1, "BAD_IMM")
		}
		c.ops[c.pc] = opImm
	default:
		if modern && (isAlpha(arg[0]) || arg[0] == '_') {
			if !ctx.funcEntry() && !ctx.funcReturn() {
				return p.fail(offs, "NOSUP_BTFARG")
			}
			return p.parseBTFArg(arg, c, ctx)
		}
		return p.fail(offs, "BAD_FETCH_ARG")
	}
	return nil
}

// parseVar is Linux 6.1's parse_probe_vars (v is the text after '$').
func (p *parser) parseVar(v string, c *code, ctx *argCtx) *Error {
	offs := ctx.offset
	switch {
	case ctx.tevent:
		// An eprobe's field, looked up once the argument is parsed.
		c.ops[c.pc] = opTPArg
	case v == "retval":
		if !ctx.ret {
			return p.fail(offs, "RETVAL_ON_PROBE")
		}
		c.ops[c.pc] = opRetval
	case strings.HasPrefix(v, "stack"):
		n := v[len("stack"):]
		switch {
		case n == "":
			c.ops[c.pc] = opStackP
		case isDigit(n[0]):
			val, ok := kstrtoull10(n)
			if !ok {
				return p.fail(offs, "BAD_VAR")
			}
			if ctx.kernel && val > paramMaxStack {
				return p.fail(offs, "BAD_STACK_NUM")
			}
			c.ops[c.pc] = opStack
		default:
			return p.fail(offs, "BAD_VAR")
		}
	case v == "comm" || v == "COMM":
		c.ops[c.pc] = opComm
	case p.feat.ArgN && ctx.funcEntry() && strings.HasPrefix(v, "arg"):
		val, ok := kstrtoull10(v[3:])
		if !ok {
			return p.fail(offs, "BAD_VAR")
		}
		if val == 0 || val > paramMaxStack {
			return p.fail(offs, "BAD_ARG_NUM")
		}
		c.ops[c.pc] = opArg
	default:
		return p.fail(offs, "BAD_VAR")
	}
	return nil
}

// parseVarModern is Linux 6.12's parse_probe_vars: arg starts with '$'.
func (p *parser) parseVarModern(arg string, c *code, ctx *argCtx) *Error {
	offs := ctx.offset
	v := arg[1:]
	if ctx.tevent {
		if ctx.hasField(p.opts, v) {
			c.ops[c.pc] = opTPArg
			return nil
		}
		if v == "comm" || v == "COMM" {
			c.ops[c.pc] = opComm
			return nil
		}
		return p.fail(offs, "BAD_VAR")
	}
	if strings.HasPrefix(v, "retval") {
		if !ctx.ret {
			return p.fail(offs, "RETVAL_ON_PROBE")
		}
		if !ctx.kernel || !p.feat.BTFArgs {
			c.ops[c.pc] = opRetval
			return nil
		}
		return p.parseBTFArg(arg, c, ctx)
	}
	if n, ok := strings.CutPrefix(v, "stack"); ok {
		switch {
		case n == "":
			c.ops[c.pc] = opStackP
			return nil
		case isDigit(n[0]):
			val, ok := kstrtoull10(n)
			if !ok {
				return p.fail(offs, "BAD_VAR")
			}
			if ctx.kernel && val > paramMaxStack {
				return p.fail(offs, "BAD_STACK_NUM")
			}
			c.ops[c.pc] = opStack
			return nil
		}
		return p.fail(offs, "BAD_VAR")
	}
	if v == "comm" || v == "COMM" {
		c.ops[c.pc] = opComm
		return nil
	}
	if n, ok := strings.CutPrefix(v, "arg"); ok && p.feat.ArgN {
		val, ok := kstrtoull10(n)
		if !ok {
			return p.fail(offs, "BAD_VAR")
		}
		if val == 0 || val > paramMaxStack {
			return p.fail(offs, "BAD_ARG_NUM")
		}
		switch {
		case ctx.funcEntry():
			c.ops[c.pc] = opArg
		case ctx.funcReturn():
			c.ops[c.pc] = opEData
		default:
			return p.fail(offs, "NOFENTRY_ARGS")
		}
		return nil
	}
	return p.fail(offs, "BAD_VAR")
}

// immediate is str_to_immediate.
func immediate(s string) bool {
	switch {
	case s == "":
		return false
	case isDigit(s[0]):
		_, ok := kstrtoull(s, 0)
		return ok
	case s[0] == '-':
		_, ok := kstrtoll(s, 0)
		return ok
	case s[0] == '+':
		_, ok := kstrtoll(s[1:], 0)
		return ok
	}
	return false
}

// kstrtoull parses like the kernel's kstrtoull: an optional '+', base 0
// (0x hex, leading 0 octal), a single trailing newline, no overflow.
func kstrtoull(s string, base int) (uint64, bool) {
	if strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	if base == 0 {
		switch {
		case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isHex(s[2]):
			base, s = 16, s[2:]
		case len(s) > 0 && s[0] == '0':
			base = 8
		default:
			base = 10
		}
	} else if base == 16 && len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
	}
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return 0, false
	}
	v, err := strconv.ParseUint(s, base, 64)
	return v, err == nil
}

func kstrtoull10(s string) (uint64, bool) { return kstrtoull(s, 10) }

// kstrtoll is the kernel's kstrtoll (a leading '-' allowed).
func kstrtoll(s string, base int) (int64, bool) {
	if strings.HasPrefix(s, "-") {
		v, ok := kstrtoull(s[1:], base)
		if !ok || v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	v, ok := kstrtoull(s, base)
	if !ok || v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// simpleStrtoul is the kernel's simple_strtoul(s, &tail, 0).
func simpleStrtoul(s string) (uint64, string) {
	base := uint64(10)
	switch {
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isHex(s[2]):
		base, s = 16, s[2:]
	case len(s) > 0 && s[0] == '0':
		base = 8
	}
	var v uint64
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		var d uint64
		switch {
		case isDigit(c):
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			d = 99
		}
		if d >= base {
			break
		}
		v = v*base + d
	}
	return v, s[i:]
}

// goodSymbolRef checks SYM[+|-OFF] of @SYM. The kernel only looks the symbol
// up when it registers the probe and then blames the probe place.
func goodSymbolRef(s string) bool {
	sym := s
	if i := strings.IndexAny(s, "+-"); i >= 0 {
		if _, ok := kstrtoll(s[i:], 0); !ok {
			return false
		}
		sym = s[:i]
	}
	if sym == "" {
		return false
	}
	for i := 0; i < len(sym); i++ {
		c := sym[i]
		if !(isAlpha(c) || c == '_' || c == '.' || c == '$' || (i > 0 && isDigit(c))) {
			return false
		}
	}
	return true
}
