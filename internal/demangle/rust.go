package demangle

import (
	"math"
	"strconv"
	"strings"
)

// rust is libiberty's rust_demangle (rust-demangle.c, binutils 2.40)
// without DMGL_VERBOSE: the legacy mangling `_ZN...17h<hash>E` without
// its hash, and v0 `_R...` without crate disambiguators. ok is false for
// a name that is not Rust's, which libiberty then hands to the C++
// demangler.
//
// It is written here rather than taken from github.com/ianlancetaylor/demangle,
// whose Rust demangler reads a length after an empty identifier as one
// number ("0" then "8Deferred" as 08) and lets a legacy identifier start
// with a '_' separator, both unlike libiberty and rustc; about one v0 name
// in twenty of a real Rust program has an empty identifier before another.
func rust(sym string) (string, bool) {
	switch {
	case strings.HasPrefix(sym, "_ZN"):
		return rustLegacy(sym[3:])
	case strings.HasPrefix(sym, "_R"):
		return rustV0(sym[2:])
	}
	return "", false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool { return isDigit(c) || isLower(c) || isUpper(c) }

// rustLegacy demangles the part of a legacy name after "_ZN".
func rustLegacy(s string) (string, bool) {
	// Only [_0-9a-zA-Z$.:] in the name, '@' in a ".suffix".
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && !isAlnum(c) && c != '$' && c != '.' && c != ':' && c != '@' {
			return "", false
		}
	}
	// The name ends with E, before an optional .suffix.
	n := len(s)
	dotSuffix := true
	for n > 0 && !(dotSuffix && s[n-1] == 'E') {
		dotSuffix = s[n-1] == '.'
		n--
	}
	if n == 0 || s[n-1] != 'E' {
		return "", false
	}
	s = s[:n-1]
	if !(len(s) > 19 && s[len(s)-19:len(s)-16] == "17h") {
		return "", false
	}
	// First pass: every segment parses, the last is the hash.
	var last string
	for rest := s; rest != ""; {
		id, r, ok := legacyIdent(rest)
		if !ok || id == "" {
			return "", false
		}
		last, rest = id, r
	}
	if !isLegacyHash(last) {
		return "", false
	}
	s = s[:len(s)-19]
	var b strings.Builder
	for rest := s; rest != ""; {
		if b.Len() > 0 {
			b.WriteString("::")
		}
		id, r, _ := legacyIdent(rest)
		printLegacyIdent(&b, id)
		rest = r
	}
	return b.String(), true
}

// legacyIdent reads <decimal length><bytes>; a length has no leading zero
// (a "0" is an empty identifier).
func legacyIdent(s string) (id, rest string, ok bool) {
	if s == "" || !isDigit(s[0]) {
		return "", s, false
	}
	n, i := int(s[0]-'0'), 1
	if n != 0 {
		for i < len(s) && isDigit(s[i]) {
			n = n*10 + int(s[i]-'0')
			if n > len(s) {
				return "", s, false
			}
			i++
		}
	}
	if n > len(s)-i {
		return "", s, false
	}
	return s[i : i+n], s[i+n:], true
}

// isLegacyHash: 'h' and 16 lower-case hex digits, at least 5 of them
// distinct.
func isLegacyHash(id string) bool {
	if len(id) != 17 || id[0] != 'h' {
		return false
	}
	for i := 1; i < len(id); i++ {
		if lowerHex(id[i]) < 0 {
			return false
		}
	}
	return distinctHex(id[1:]) >= 5
}

// distinctHex counts the distinct digits of a lower-case hex string.
func distinctHex(s string) int {
	var seen uint16
	for i := 0; i < len(s); i++ {
		if v := lowerHex(s[i]); v >= 0 {
			seen |= 1 << v
		}
	}
	n := 0
	for ; seen != 0; seen &= seen - 1 {
		n++
	}
	return n
}

// printLegacyIdent writes one segment with its escapes decoded: "$LT$" is
// '<', "$u7b$" '{', ".." "::"; an escape it does not know ends decoding,
// the rest written as it is. A '_' before a leading escape is dropped.
func printLegacyIdent(b *strings.Builder, id string) {
	if len(id) >= 2 && id[0] == '_' && id[1] == '$' {
		id = id[1:]
	}
	for len(id) > 0 {
		switch id[0] {
		case '$':
			c, n := legacyEscape(id)
			if n == 0 {
				b.WriteString(id)
				return
			}
			b.WriteByte(c)
			id = id[n:]
		case '.':
			if len(id) >= 2 && id[1] == '.' {
				b.WriteString("::")
				id = id[2:]
			} else {
				b.WriteByte('.')
				id = id[1:]
			}
		default:
			n := strings.IndexAny(id, "$.")
			if n < 0 {
				n = len(id)
			}
			b.WriteString(id[:n])
			id = id[n:]
		}
	}
}

// legacyEscape decodes the escape at the start of e ("$C$", "$SP$",
// "$u20$", ...): the byte and the escape's length, 0 if not one.
func legacyEscape(e string) (byte, int) {
	if len(e) < 3 || e[0] != '$' {
		return 0, 0
	}
	e = e[1:]
	var c byte
	n := 0
	switch {
	case e[0] == 'C':
		c, n = ',', 1
	case len(e) > 2:
		n = 2
		switch e[:2] {
		case "SP":
			c = '@'
		case "BP":
			c = '*'
		case "RF":
			c = '&'
		case "LT":
			c = '<'
		case "GT":
			c = '>'
		case "LP":
			c = '('
		case "RP":
			c = ')'
		default:
			if e[0] == 'u' && len(e) > 3 {
				n = 3
				hi, lo := lowerHex(e[1]), lowerHex(e[2])
				if hi < 0 || lo < 0 || hi > 7 {
					return 0, 0
				}
				c = byte(hi<<4 | lo)
				if c < 0x20 {
					return 0, 0
				}
			}
		}
	}
	if c == 0 || len(e) <= n || e[n] != '$' {
		return 0, 0
	}
	return c, n + 2
}

func lowerHex(c byte) int {
	switch {
	case isDigit(c):
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return -1
}

// maxRecursion is libiberty's RUST_MAX_RECURSION_COUNT.
const maxRecursion = 1024

// maxOutput bounds a demangled name, as rustc-demangle's MAX_SIZE does: a
// binder of 2^50 lifetimes or backrefs nested into each other would
// otherwise print without end (libiberty has no bound). A symbol that
// needs more is left as it is.
const maxOutput = 1 << 20

// v0 is the state of libiberty's v0 demangler: the symbol after "_R"
// (without a ".suffix"), the read position, and what it printed.
type v0 struct {
	sym       string
	next      int
	errored   bool
	skipping  bool // printing suppressed (an impl's own path, the instantiating crate)
	depth     uint64
	recursion int
	out       strings.Builder
}

// rustV0 demangles the part of a v0 name after "_R".
func rustV0(s string) (string, bool) {
	if s == "" || !isUpper(s[0]) {
		return "", false
	}
	n := 0
	for ; n < len(s) && s[n] != '.'; n++ {
		if c := s[n]; c != '_' && !isAlnum(c) {
			return "", false
		}
	}
	d := &v0{sym: s[:n]}
	d.path(true)
	if !d.errored && d.next < len(d.sym) {
		// The instantiating crate.
		d.skipping = true
		d.path(false)
	}
	if d.errored || d.next != len(d.sym) {
		return "", false
	}
	return d.out.String(), true
}

func (d *v0) print(s string) {
	if !d.errored && !d.skipping {
		if d.out.Len()+len(s) > maxOutput {
			d.errored = true
			return
		}
		d.out.WriteString(s)
	}
}

func (d *v0) peek() byte {
	if d.next < len(d.sym) {
		return d.sym[d.next]
	}
	return 0
}

func (d *v0) eat(c byte) bool {
	if d.peek() == c {
		d.next++
		return true
	}
	return false
}

func (d *v0) nextByte() byte {
	c := d.peek()
	if c == 0 {
		d.errored = true
	} else {
		d.next++
	}
	return c
}

// integer62 is <base-62-number>: "_" is 0, digits then "_" are the
// number plus one.
func (d *v0) integer62() uint64 {
	if d.eat('_') {
		return 0
	}
	var x uint64
	for !d.eat('_') && !d.errored {
		c := d.nextByte()
		if x > (math.MaxUint64-61)/62 { // rustc-demangle's overflow check
			d.errored = true
			return 0
		}
		x *= 62
		switch {
		case isDigit(c):
			x += uint64(c - '0')
		case isLower(c):
			x += 10 + uint64(c-'a')
		case isUpper(c):
			x += 36 + uint64(c-'A')
		default:
			d.errored = true
			return 0
		}
	}
	return x + 1
}

func (d *v0) optInteger62(tag byte) uint64 {
	if !d.eat(tag) {
		return 0
	}
	return 1 + d.integer62()
}

func (d *v0) disambiguator() uint64 { return d.optInteger62('s') }

// v0Ident is an identifier: its ASCII part and, for a "u" identifier,
// the Punycode deltas after the last '_'.
type v0Ident struct {
	ascii, puny string
	isPuny      bool
}

func (id v0Ident) empty() bool { return id.ascii == "" && !id.isPuny }

func (d *v0) ident() v0Ident {
	var id v0Ident
	puny := d.eat('u')
	c := d.nextByte()
	if !isDigit(c) {
		d.errored = true
		return id
	}
	n := int(c - '0')
	if c != '0' {
		for isDigit(d.peek()) {
			n = n*10 + int(d.nextByte()-'0')
			if n > len(d.sym) {
				d.errored = true
				return id
			}
		}
	}
	d.eat('_')
	start := d.next
	if n > len(d.sym)-start {
		d.errored = true
		return id
	}
	d.next += n
	id.ascii = d.sym[start:d.next]
	if puny {
		i := strings.LastIndexByte(id.ascii, '_')
		if i < 0 {
			i = -1
		}
		if i == len(id.ascii)-1 {
			d.errored = true
			return id
		}
		id.puny = id.ascii[i+1:]
		if i < 0 {
			id.ascii = ""
		} else {
			id.ascii = id.ascii[:i]
		}
		id.isPuny = true
	}
	return id
}

func (d *v0) printIdent(id v0Ident) {
	if d.errored || d.skipping {
		return
	}
	if !id.isPuny {
		d.print(id.ascii)
		return
	}
	s, ok := punycode(id.ascii, id.puny)
	if !ok {
		d.errored = true
		return
	}
	d.print(s)
}

// punycode decodes Rust's Punycode (RFC 3492 with '_' as the delimiter)
// as libiberty does, into UTF-8.
func punycode(ascii, deltas string) (string, bool) {
	const (
		base, tMin, tMax, skew = 36, 1, 26, 38
	)
	out := []rune(ascii)
	damp, bias := uint64(700), uint64(72)
	var i uint64
	n := uint64(0x80)
	for len(deltas) > 0 {
		var delta, w, k uint64 = 0, 1, 0
		for {
			k += base
			t := uint64(0)
			if k >= bias {
				t = k - bias
			}
			t = min(max(t, tMin), tMax)
			if len(deltas) == 0 {
				return "", false
			}
			c := deltas[0]
			deltas = deltas[1:]
			var dg uint64
			switch {
			case isLower(c):
				dg = uint64(c - 'a')
			case isDigit(c):
				dg = 26 + uint64(c-'0')
			default:
				return "", false
			}
			delta += dg * w
			w *= base - t
			if dg < t {
				break
			}
		}
		l := uint64(len(out)) + 1
		i += delta
		n += i / l
		i %= l
		if n > 0x10FFFF {
			return "", false
		}
		out = append(out, 0)
		copy(out[i+1:], out[i:])
		out[i] = rune(n)
		i++
		if len(deltas) == 0 {
			break
		}
		delta /= damp
		damp = 2
		delta += delta / l
		k = 0
		for delta > ((base-tMin)*tMax)/2 {
			delta /= base - tMin
			k += base
		}
		bias = k + ((base-tMin+1)*delta)/(delta+skew)
	}
	return string(out), true
}

func (d *v0) enter() bool {
	d.recursion++
	if d.recursion > maxRecursion {
		d.errored = true
		return false
	}
	return true
}

func (d *v0) leave() { d.recursion-- }

// path is demangle_path; inValue prints generic arguments as ::<...>.
func (d *v0) path(inValue bool) {
	if d.errored {
		return
	}
	if !d.enter() {
		d.leave()
		return
	}
	defer d.leave()
	switch tag := d.nextByte(); tag {
	case 'C':
		d.disambiguator()
		d.printIdent(d.ident())
	case 'N':
		ns := d.nextByte()
		if !isLower(ns) && !isUpper(ns) {
			d.errored = true
			return
		}
		d.path(inValue)
		dis := d.disambiguator()
		name := d.ident()
		if isUpper(ns) {
			d.print("::{")
			switch ns {
			case 'C':
				d.print("closure")
			case 'S':
				d.print("shim")
			default:
				d.print(string(ns))
			}
			if !name.empty() {
				d.print(":")
				d.printIdent(name)
			}
			d.print("#" + strconv.FormatUint(dis, 10) + "}")
		} else if !name.empty() {
			d.print("::")
			d.printIdent(name)
		}
	case 'M', 'X', 'Y':
		if tag != 'Y' {
			// The impl's own path is not shown.
			d.disambiguator()
			was := d.skipping
			d.skipping = true
			d.path(inValue)
			d.skipping = was
		}
		d.print("<")
		d.typ()
		if tag != 'M' {
			d.print(" as ")
			d.path(false)
		}
		d.print(">")
	case 'I':
		d.path(inValue)
		if inValue {
			d.print("::")
		}
		d.print("<")
		for i := 0; !d.errored && !d.eat('E'); i++ {
			if i > 0 {
				d.print(", ")
			}
			d.genericArg()
		}
		d.print(">")
	case 'B':
		d.backref(func() { d.path(inValue) })
	default:
		d.errored = true
	}
}

// backref reads a <backref> and, unless printing is suppressed, runs fn
// at the position it names.
func (d *v0) backref(fn func()) {
	at := d.integer62()
	if d.skipping || d.errored {
		return
	}
	if at > uint64(len(d.sym)) {
		d.errored = true
		return
	}
	old := d.next
	d.next = int(at)
	fn()
	d.next = old
}

func (d *v0) genericArg() {
	switch {
	case d.eat('L'):
		d.lifetime(d.integer62())
	case d.eat('K'):
		d.constant()
	default:
		d.typ()
	}
}

func (d *v0) lifetime(lt uint64) {
	d.print("'")
	if lt == 0 {
		d.print("_")
		return
	}
	depth := d.depth - lt
	if depth < 26 {
		d.print(string(rune('a' + depth)))
	} else {
		d.print("_" + strconv.FormatUint(depth, 10))
	}
}

func (d *v0) binder() {
	if d.errored {
		return
	}
	n := d.optInteger62('G')
	if n == 0 || d.errored {
		return
	}
	if d.skipping { // nothing printed: only the depth counts
		d.depth += n
		return
	}
	d.print("for<")
	for i := uint64(0); i < n && !d.errored; i++ {
		if i > 0 {
			d.print(", ")
		}
		d.depth++
		d.lifetime(1)
	}
	d.print("> ")
}

var basicTypes = [256]string{
	'b': "bool", 'c': "char", 'e': "str", 'u': "()", 'a': "i8", 's': "i16",
	'l': "i32", 'x': "i64", 'n': "i128", 'i': "isize", 'h': "u8", 't': "u16",
	'm': "u32", 'y': "u64", 'o': "u128", 'j': "usize", 'f': "f32", 'd': "f64",
	'z': "!", 'p': "_", 'v': "...",
}

// typ is demangle_type.
func (d *v0) typ() {
	if d.errored {
		return
	}
	tag := d.nextByte()
	if b := basicTypes[tag]; b != "" {
		d.print(b)
		return
	}
	if !d.enter() {
		d.leave()
		return
	}
	defer d.leave()
	switch tag {
	case 'R', 'Q':
		d.print("&")
		if d.eat('L') {
			if lt := d.integer62(); lt != 0 {
				d.lifetime(lt)
				d.print(" ")
			}
		}
		if tag != 'R' {
			d.print("mut ")
		}
		d.typ()
	case 'P', 'O':
		if tag == 'P' {
			d.print("*const ")
		} else {
			d.print("*mut ")
		}
		d.typ()
	case 'A', 'S':
		d.print("[")
		d.typ()
		if tag == 'A' {
			d.print("; ")
			d.constant()
		}
		d.print("]")
	case 'T':
		d.print("(")
		i := 0
		for ; !d.errored && !d.eat('E'); i++ {
			if i > 0 {
				d.print(", ")
			}
			d.typ()
		}
		if i == 1 {
			d.print(",")
		}
		d.print(")")
	case 'F':
		old := d.depth
		d.fnType()
		d.depth = old
	case 'D':
		d.print("dyn ")
		old := d.depth
		d.binder()
		for i := 0; !d.errored && !d.eat('E'); i++ {
			if i > 0 {
				d.print(" + ")
			}
			d.dynTrait()
		}
		d.depth = old
		if !d.eat('L') {
			d.errored = true
			return
		}
		if lt := d.integer62(); lt != 0 {
			d.print(" + ")
			d.lifetime(lt)
		}
	case 'B':
		d.backref(d.typ)
	default:
		d.next--
		d.path(false)
	}
}

func (d *v0) fnType() {
	d.binder()
	if d.eat('U') {
		d.print("unsafe ")
	}
	if d.eat('K') {
		var abi string
		if d.eat('C') {
			abi = "C"
		} else {
			id := d.ident()
			if id.ascii == "" || id.isPuny {
				d.errored = true
				return
			}
			abi = id.ascii
		}
		d.print(`extern "`)
		// libiberty's loop rejoins the parts between '_' with '-',
		// looking for the next '_' from the second byte of each part.
		for i := 0; i < len(abi); i++ {
			if abi[i] == '_' {
				d.print(abi[:i] + "-")
				abi = abi[i+1:]
				i = 0
			}
		}
		d.print(abi)
		d.print(`" `)
	}
	d.print("fn(")
	for i := 0; !d.errored && !d.eat('E'); i++ {
		if i > 0 {
			d.print(", ")
		}
		d.typ()
	}
	d.print(")")
	if !d.eat('u') {
		d.print(" -> ")
		d.typ()
	}
}

// pathOpenGenerics is demangle_path_maybe_open_generics: a trait path
// whose "<..." is left open for associated type bindings.
func (d *v0) pathOpenGenerics() bool {
	open := false
	if d.errored {
		return false
	}
	if !d.enter() {
		d.leave()
		return false
	}
	defer d.leave()
	switch {
	case d.eat('B'):
		d.backref(func() { open = d.pathOpenGenerics() })
	case d.eat('I'):
		d.path(false)
		d.print("<")
		open = true
		for i := 0; !d.errored && !d.eat('E'); i++ {
			if i > 0 {
				d.print(", ")
			}
			d.genericArg()
		}
	default:
		d.path(false)
	}
	return open
}

func (d *v0) dynTrait() {
	if d.errored {
		return
	}
	open := d.pathOpenGenerics()
	for d.eat('p') {
		if !open {
			d.print("<")
		} else {
			d.print(", ")
		}
		open = true
		d.printIdent(d.ident())
		d.print(" = ")
		d.typ()
	}
	if open {
		d.print(">")
	}
}

// constant is demangle_const: placeholders, integers, bools and chars.
func (d *v0) constant() {
	if d.errored {
		return
	}
	if !d.enter() {
		d.leave()
		return
	}
	defer d.leave()
	if d.eat('B') {
		d.backref(d.constant)
		return
	}
	switch tag := d.nextByte(); tag {
	case 'p':
		d.print("_")
	case 'h', 't', 'm', 'y', 'o', 'j':
		d.constUint()
	case 'a', 's', 'l', 'x', 'n', 'i':
		if d.eat('n') {
			d.print("-")
		}
		d.constUint()
	case 'b':
		v, n := d.hexNibbles()
		switch {
		case n != 1:
			d.errored = true
		case v == 0:
			d.print("false")
		case v == 1:
			d.print("true")
		default:
			d.errored = true
		}
	case 'c':
		v, n := d.hexNibbles()
		if n == 0 || n > 8 {
			d.errored = true
			return
		}
		d.print("'")
		switch {
		case v == '\t':
			d.print(`\t`)
		case v == '\r':
			d.print(`\r`)
		case v == '\n':
			d.print(`\n`)
		case v > ' ' && v < '~':
			d.print(string(rune(v)))
		default:
			d.print(`\u{` + strconv.FormatUint(v, 16) + "}")
		}
		d.print("'")
	default:
		d.errored = true
	}
}

func (d *v0) constUint() {
	if d.errored {
		return
	}
	start := d.next
	v, n := d.hexNibbles()
	switch {
	case d.errored:
	case n > 16:
		d.print("0x" + d.sym[start:start+n])
	case n > 0:
		d.print(strconv.FormatUint(v, 10))
	default:
		d.errored = true
	}
}

// hexNibbles reads lower-case hex digits up to '_': the value (of the
// last 16) and how many there were.
func (d *v0) hexNibbles() (uint64, int) {
	var v uint64
	n := 0
	for !d.eat('_') {
		c := d.nextByte()
		v <<= 4
		switch {
		case isDigit(c):
			v |= uint64(c - '0')
		case c >= 'a' && c <= 'f':
			v |= uint64(c-'a') + 10
		default:
			d.errored = true
			return 0, 0
		}
		n++
	}
	return v, n
}

// perfRust is perf's own rust_demangle_sym, applied to what libiberty's
// C++ demangler made of a legacy Rust name libiberty's Rust demangler
// refused ("a::b::h0123456789abcdef" from "_ZN1a1b17h0123456789abcdefEv"),
// when perf's rust_is_mangled takes it (a hash of 5 to 15 distinct
// lower-case digits):
// the "::h" hash is cut and the legacy escapes decoded. ok is false when
// perf's rust_is_mangled says the name is not Rust's. The name is cut
// short at a character or escape perf does not know (after printing "demangle-rust: unexpected ...",
// which gprobe does not print).
func perfRust(s string) (string, bool) {
	const hashLen = 3 + 16 // "::h" + 16 hex digits
	if len(s) <= hashLen {
		return "", false
	}
	body, hash := s[:len(s)-hashLen], s[len(s)-hashLen:]
	if !strings.HasPrefix(hash, "::h") {
		return "", false
	}
	if !isLegacyHash(hash[2:]) || distinctHex(hash[3:]) > 15 {
		return "", false
	}
	if !looksLikeRust(body) {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '$':
			e, n := perfRustEscape(body[i:])
			if n == 0 {
				return b.String(), true
			}
			b.WriteByte(e)
			i += n
		case c == '_':
			if (i == 0 || body[i-1] == ':') && i+1 < len(s) && s[i+1] == '$' {
				i++
			} else {
				b.WriteByte(c)
				i++
			}
		case c == '.':
			if i+1 < len(s) && s[i+1] == '.' {
				b.WriteString("::")
				i += 2
			} else {
				b.WriteByte('-')
				i++
			}
		case isAlnum(c) || c == ':':
			b.WriteByte(c)
			i++
		default:
			return b.String(), true
		}
	}
	return b.String(), true
}

var perfRustEscapes = []struct {
	esc string
	c   byte
}{
	{"$C$", ','}, {"$SP$", '@'}, {"$BP$", '*'}, {"$RF$", '&'}, {"$LT$", '<'},
	{"$GT$", '>'}, {"$LP$", '('}, {"$RP$", ')'}, {"$u7e$", '~'}, {"$u20$", ' '},
	{"$u27$", '\''}, {"$u5b$", '['}, {"$u5d$", ']'}, {"$u7b$", '{'},
	{"$u7d$", '}'}, {"$u3b$", ';'}, {"$u2b$", '+'}, {"$u22$", '"'},
}

func perfRustEscape(s string) (byte, int) {
	for _, e := range perfRustEscapes {
		if strings.HasPrefix(s, e.esc) {
			return e.c, len(e.esc)
		}
	}
	return 0, 0
}

// looksLikeRust is perf's looks_like_rust: only the escapes it knows,
// letters, digits, '_', ':' and '.' (not three in a row).
func looksLikeRust(s string) bool {
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '$':
			_, n := perfRustEscape(s[i:])
			if n == 0 {
				return false
			}
			i += n
		case c == '.':
			if strings.HasPrefix(s[i:], "...") {
				return false
			}
			i++
		case isAlnum(c) || c == '_' || c == ':':
			i++
		default:
			return false
		}
	}
	return true
}
