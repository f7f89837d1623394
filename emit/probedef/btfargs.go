package probedef

import (
	"strconv"
	"strings"
)

// BTF arguments, as Linux 6.12's trace_probe.c parses them: a parameter by
// its BTF name ("count"), members through it ("file->f_pos"), $retval's
// members, and $argN / $arg* expanded into parameter names before the
// arguments are parsed.

// maxBTFArgsLen is MAX_BTF_ARGS_LEN: the buffer $argN and $arg* expand into.
const maxBTFArgsLen = 128

// queryBTF is query_btf_context: the prototype of ctx.funcName (a tprobe's
// stub loses its first, hidden parameter). It reports false when there is
// no BTF entry or gprobe was not given the kernel's BTF.
func (p *parser) queryBTF(ctx *argCtx) bool {
	if !ctx.btfQueried {
		ctx.btfQueried = true
		if p.opts.BTF != nil && ctx.funcName != "" {
			ctx.params, ctx.retType, ctx.btfFound = p.opts.BTF.Func(ctx.funcName)
			if ctx.btfFound && ctx.tpoint && len(ctx.params) > 0 {
				ctx.params = ctx.params[1:]
			}
		}
	}
	return ctx.btfFound
}

// btfKnown reports whether the checks can use BTF: without Options.BTF a
// name is checked for its syntax only.
func (p *parser) btfKnown() bool { return p.opts.BTF != nil }

// splitField is split_next_field: the first member separator in name at
// or after its start: "->" (arrow) or "."; a lone '-' is BAD_HYPHEN. It
// returns the name before it and the rest after it ("" and no separator
// when there is none).
func (p *parser) splitField(name string, ctx *argCtx) (head, rest string, arrow, found bool, err *Error) {
	i := strings.IndexAny(name, ".-")
	if i < 0 {
		return name, "", false, false, nil
	}
	switch {
	case name[i] == '-' && i+1 < len(name) && name[i+1] == '>':
		return name[:i], name[i+2:], true, true, nil
	case name[i] == '.':
		return name[:i], name[i+1:], false, true, nil
	}
	return "", "", false, false, p.fail(ctx.offset+i, "BAD_HYPHEN")
}

// parseBTFArg is parse_btf_arg: varname is a parameter name or $retval,
// with members.
func (p *parser) parseBTFArg(varname string, c *code, ctx *argCtx) *Error {
	if ctx.funcName == "" {
		// The kernel gives up without logging (a kprobe on an address).
		return p.fail(ctx.offset, "NO_BTF_ENTRY")
	}
	name, field, arrow, hasField, err := p.splitField(varname, ctx)
	if err != nil {
		return err
	}
	fieldOff := len(name) + 1
	if arrow {
		fieldOff++
	}
	if hasField && !arrow {
		return p.fail(ctx.offset+len(name)+1, "NOSUP_DAT_ARG")
	}
	var typ BTFType
	if ctx.ret && name == "$retval" {
		c.ops[c.pc] = opRetval
		switch {
		case p.queryBTF(ctx):
			if ctx.retType == nil {
				return p.fail(ctx.offset, "NO_RETVAL")
			}
			typ = ctx.retType
		case hasField && p.btfKnown():
			return p.fail(ctx.offset+fieldOff, "NO_BTF_ENTRY")
		default:
			return p.btfFieldSyntax(field, hasField, fieldOff, c, ctx)
		}
	} else {
		if !p.btfKnown() {
			if ctx.funcEntry() {
				c.ops[c.pc] = opArg
			} else {
				c.ops[c.pc] = opEData
			}
			return p.btfFieldSyntax(field, hasField, fieldOff, c, ctx)
		}
		if !p.queryBTF(ctx) || len(ctx.params) == 0 {
			return p.fail(ctx.offset, "NO_BTF_ENTRY")
		}
		for _, prm := range ctx.params {
			if prm.Name != "" && prm.Name == name {
				typ = prm.Type
				break
			}
		}
		if typ == nil {
			return p.fail(ctx.offset, "NO_BTFARG")
		}
		if ctx.funcEntry() {
			c.ops[c.pc] = opArg
		} else {
			c.ops[c.pc] = opEData
		}
	}
	ctx.lastType, ctx.lastBitoffs, ctx.lastBitsize = typ, 0, 0
	if hasField {
		ctx.offset += fieldOff
		return p.parseBTFField(field, typ, c, ctx)
	}
	return nil
}

// btfFieldSyntax checks a member chain without BTF: each "->" is one
// dereference, which is all the kernel's limits depend on.
func (p *parser) btfFieldSyntax(field string, hasField bool, fieldOff int, c *code, ctx *argCtx) *Error {
	if !hasField {
		return nil
	}
	ctx.offset += fieldOff
	for field != "" {
		_, rest, arrow, found, err := p.splitField(field, ctx)
		if err != nil {
			return err
		}
		if !found || arrow {
			if c.pc++; c.pc == endPC {
				return p.fail(ctx.offset, "TOO_MANY_OPS")
			}
			c.ops[c.pc] = opDeref
		}
		if !found {
			break
		}
		ctx.offset += len(field) - len(rest)
		field = rest
	}
	return nil
}

// parseBTFField is parse_btf_field: the members after a parameter, typ the
// parameter's type, which must point to a struct or union at each "->".
func (p *parser) parseBTFField(field string, typ BTFType, c *code, ctx *argCtx) *Error {
	for {
		if typ.Kind() != BTFPointer {
			return p.fail(ctx.offset, "NO_PTR_STRCT")
		}
		typ = typ.Elem()
		if typ == nil {
			return p.fail(ctx.offset, "BAD_BTF_TID")
		}
		bitoffs := 0
		arrow := false
		for {
			name, rest, isArrow, found, err := p.splitField(field, ctx)
			if err != nil {
				return err
			}
			if typ.Kind() != BTFStruct {
				return p.fail(ctx.offset, "BAD_BTF_TID")
			}
			mtype, off, bits, ok := typ.Member(name)
			if !ok {
				return p.fail(ctx.offset, "NO_BTF_FIELD")
			}
			bitoffs += off
			ctx.lastBitsize = bits
			typ = mtype
			if typ == nil {
				return p.fail(ctx.offset, "BAD_BTF_TID")
			}
			if !found {
				// The kernel then adds a NULL pointer's distance to its
				// position; later errors of this argument are logged at a
				// meaningless column, which gprobe does not try to match.
				field = ""
				break
			}
			ctx.offset += len(field) - len(rest)
			field = rest
			if isArrow {
				arrow = true
				break
			}
		}
		if c.pc++; c.pc == endPC {
			return p.fail(ctx.offset, "TOO_MANY_OPS")
		}
		c.ops[c.pc] = opDeref
		ctx.lastBitoffs = bitoffs % 8
		ctx.lastType = typ
		if !arrow {
			return nil
		}
	}
}

// btfFetchSize is find_fetch_type_from_btf_type: the size of the type the
// kernel stores a BTF argument as when none is given.
func btfFetchSize(ctx *argCtx) int {
	t := ctx.lastType
	switch t.Kind() {
	case BTFEnum:
		return 4
	case BTFEnum64, BTFPointer:
		return 8
	case BTFInt:
		bits, off, signed := t.Int()
		switch bits {
		case 8, 16, 32, 64:
			return bits / 8
		}
		if !signed {
			ctx.lastBitsize = bits
			ctx.lastBitoffs += off
		}
	}
	return 8
}

// btfStringFetch is check_prepare_btf_string_fetch: a string of a BTF
// argument is a char array in place, or what a char pointer points to (one
// more dereference).
func (p *parser) btfStringFetch(c *code, ctx *argCtx) *Error {
	t := ctx.lastType
	isByte := func(e BTFType) bool {
		if e == nil || e.Kind() != BTFInt {
			return false
		}
		bits, _, signed := e.Int()
		return !signed && bits == 8
	}
	switch {
	case t.Kind() == BTFArray && isByte(t.Elem()):
		return nil
	case t.Kind() == BTFPointer && isByte(t.Elem()):
		if c.ops[c.pc+1] == opEnd {
			return p.fail(ctx.offset, "TOO_MANY_OPS")
		}
		c.pc++
		c.ops[c.pc] = opDeref
		return nil
	}
	return p.fail(ctx.offset, "BAD_TYPE4STR")
}

// hasField reports whether an eprobe's attached event has the field name
// (parse_trace_event_arg); any name when the fields are not known.
func (ctx *argCtx) hasField(o *Options, name string) bool {
	if o.EventFields == nil {
		return true
	}
	fields, _ := o.EventFields(ctx.event)
	for _, f := range fields {
		if f == name {
			return true
		}
	}
	return false
}

// expandMetaArgs is traceprobe_expand_meta_args: with BTF, a bare $argN
// (with its :TYPE) becomes the N-th parameter's name and $arg* all of
// them, before the arguments are parsed. Errors are logged against the
// words as written (index i+2). It returns the words to parse.
func (p *parser) expandMetaArgs(args []string, ctx *argCtx) ([]string, *Error) {
	argsIdx := -1
	found := false
	for i, a := range args {
		if !strings.HasPrefix(a, "$arg") {
			continue
		}
		p.index = i + 2
		if !ctx.funcEntry() && !ctx.funcReturn() {
			return nil, p.fail(0, "NOFENTRY_ARGS")
		}
		if len(a) > 4 && isDigit(a[4]) {
			found = true
			continue
		}
		if len(a) <= 4 || a[4] != '*' {
			return nil, p.fail(0, "BAD_VAR")
		}
		if argsIdx >= 0 {
			return nil, p.fail(0, "DOUBLE_ARGS")
		}
		found, argsIdx = true, i
	}
	if !found {
		return args, nil
	}
	if !p.btfKnown() {
		// Without the kernel's BTF the expansion is unknown: parse the
		// words as written ($arg* then stands for itself).
		return args, nil
	}
	if !p.queryBTF(ctx) || len(ctx.params) == 0 {
		if argsIdx >= 0 {
			return nil, p.fail(0, "NOSUP_BTFARG")
		}
		return args, nil
	}
	used := 0
	var out []string
	add := func(s string) *Error {
		if used+len(s) >= maxBTFArgsLen {
			return p.fail(0, "ARGS_2LONG")
		}
		used += len(s) + 1
		out = append(out, s)
		return nil
	}
	for i, a := range args {
		p.index = i + 2
		switch {
		case i == argsIdx:
			for _, prm := range ctx.params {
				if prm.Name == "" {
					return nil, p.fail(0, "NO_BTF_ENTRY")
				}
				if err := add(prm.Name); err != nil {
					return nil, err
				}
			}
		case strings.HasPrefix(a, "$arg"):
			n, typ := simpleStrtoul10(a[4:])
			if typ != "" && typ[0] != ':' {
				return nil, p.fail(0, "BAD_VAR")
			}
			if n == 0 {
				return nil, p.fail(0, "BAD_ARG_NUM")
			}
			if n > uint64(len(ctx.params)) {
				return nil, p.fail(0, "NO_BTFARG")
			}
			prm := ctx.params[n-1]
			if prm.Name == "" {
				return nil, p.fail(0, "NO_BTF_ENTRY")
			}
			if err := add(prm.Name + typ); err != nil {
				return nil, err
			}
		default:
			out = append(out, a)
		}
	}
	return out, nil
}

// simpleStrtoul10 is simple_strtoul(s, &tail, 10).
func simpleStrtoul10(s string) (uint64, string) {
	i := 0
	var v uint64
	for ; i < len(s) && isDigit(s[i]); i++ {
		v = v*10 + uint64(s[i]-'0')
	}
	return v, s[i:]
}

// dentryArgs is traceprobe_expand_dentry_args: an argument typed %pd (a
// struct dentry *) or %pD (a struct file *) becomes the string of the
// dentry's name. The offsets are those of x86-64 Linux 6.12 (the kernel
// logs errors against the expanded text, whose length they set).
func dentryArgs(args []string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasSuffix(a, ":%pd") && !strings.HasSuffix(a, ":%pD") {
			out = append(out, a)
			continue
		}
		name, body, named := strings.Cut(a, "=")
		if !named {
			name, body = "", a
		}
		fetch := body[:len(body)-4]
		const dName, fPathDentry = 0x28, 0x48
		var s string
		if a[len(a)-1] == 'd' {
			s = "+0x0(+0x" + strconv.FormatInt(dName, 16) + "(" + fetch + ")):string"
		} else {
			s = "+0x0(+0x" + strconv.FormatInt(dName, 16) + "(+0x" + strconv.FormatInt(fPathDentry, 16) + "(" + fetch + "))):string"
		}
		if named {
			s = name + "=" + s
		}
		out = append(out, s)
	}
	return out
}
