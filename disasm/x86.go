package disasm

import (
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// maxX86Len is the architectural limit on x86 instruction length.
const maxX86Len = 15

// decodeX86 returns the length of the x86-64 instruction at the start of b.
func decodeX86(b []byte) (int, bool) {
	l, _, ok := x86Insn(b, false)
	return l, ok
}

// textX86 renders the instruction that is exactly b.
func textX86(b []byte) string {
	if l, text, ok := x86Insn(b, true); ok && l == len(b) {
		return text
	}
	return "(bad)"
}

// x86Insn decodes the x86-64 instruction at the start of b, returning its
// length and, if wantText, a rendering in GNU syntax.
//
// x86asm v0.32.0 does the work for ordinary instructions, with these
// exceptions, each found by comparing against objdump:
//   - VEX (c4, c5) lengths are computed here from the architectural rules,
//     because x86asm takes a ModRM byte for vzeroupper/vzeroall when one
//     follows (c5 f8 77 c5 ... decodes as 4 bytes); x86asm must still
//     recognise the opcode and agree on the length. EVEX (62) is handled
//     the same way.
//   - mov to/from control and debug registers (0f 20..0f 23) ignore ModRM.mod;
//     x86asm decodes mod != 3 as a memory operand with a displacement.
//   - A 66 prefix on a near relative call, jmp or jcc (e8, e9, 0f 80..0f 8f)
//     means rel16 on AMD and is ignored on Intel, so the length is not known.
//   - x86asm reports a lone prefix (Op == 0, err == nil) both for a prefix
//     followed by bytes it cannot decode and for an instruction cut off by the
//     end of b; that is never counted as an instruction, but such bytes are
//     looked up in extras, the instructions x86asm does not know.
func x86Insn(b []byte, wantText bool) (length int, text string, ok bool) {
	p, ok := scanPrefixes(b)
	if !ok {
		return 0, "", false
	}
	i := p.n
	switch op := b[i]; {
	case op == 0xc4 || op == 0xc5 || op == 0x62:
		return vexInsn(b, p, wantText)
	case p.has66 && (op == 0xe8 || op == 0xe9):
		return 0, "", false
	case op == 0x0f && i+1 < len(b):
		switch op2 := b[i+1]; {
		case p.has66 && op2 >= 0x80 && op2 <= 0x8f:
			return 0, "", false
		case op2 >= 0x20 && op2 <= 0x23:
			if i+3 > len(b) || i+3 > maxX86Len {
				return 0, "", false
			}
			if wantText {
				// The CPU treats any ModRM as a register form.
				c := append([]byte(nil), b[:i+3]...)
				c[i+2] |= 0xc0
				text = x86asmText(c)
			}
			return i + 3, text, true
		}
	}
	if inst, ok := x86asmDecode(b); ok {
		if wantText {
			text = gnuSyntax(inst)
		}
		return inst.Len, text, true
	}
	return decodeExtra(b, p, wantText)
}

// prefixes summarises the prefix bytes at the start of an instruction.
type prefixes struct {
	n     int  // number of prefix bytes, REX included
	rex   byte // REX prefix or 0; it is always the last prefix
	rep   byte // last f2 or f3, or 0
	has66 bool
	lock  bool
}

// scanPrefixes reads legacy prefixes and at most one REX prefix, which must
// come last, as the CPU requires for it to take effect. ok is false if no
// opcode byte follows within b and the 15-byte limit, or if a REX prefix is
// followed by another prefix (then the REX is ignored by the CPU; such code is
// rare enough not to be worth modelling).
func scanPrefixes(b []byte) (p prefixes, ok bool) {
	for ; p.n < len(b) && p.n < maxX86Len; p.n++ {
		c := b[p.n]
		if p.rex != 0 {
			if c&0xf0 == 0x40 || isLegacyPrefix(c) {
				return p, false
			}
			return p, true
		}
		switch {
		case c == 0x66:
			p.has66 = true
		case c == 0xf2 || c == 0xf3:
			p.rep = c
		case c == 0xf0:
			p.lock = true
		case isLegacyPrefix(c):
		case c&0xf0 == 0x40:
			p.rex = c
		default:
			return p, true
		}
	}
	return p, false
}

// vexInsn decodes a VEX- or EVEX-encoded instruction at b[p.n]. The length
// follows from the encoding alone: the 2- or 3-byte VEX or 4-byte EVEX
// prefix, one opcode byte, a ModRM byte (and SIB and displacement; EVEX
// scales disp8 but it is still one byte) except for vzeroupper/vzeroall
// (map 0f, opcode 77), and an 8-bit immediate for every opcode of map 0f3a and
// for opcodes 70..73 and c2, c4..c6 of map 0f. Only maps 0f, 0f38 and 0f3a are
// accepted.
func vexInsn(b []byte, p prefixes, wantText bool) (int, string, bool) {
	if p.has66 || p.rep != 0 || p.rex != 0 || p.lock {
		return 0, "", false // #UD
	}
	i := p.n
	m := 1 // opcode map: 1 = 0f, 2 = 0f38, 3 = 0f3a
	switch b[i] {
	case 0xc4:
		if i+1 >= len(b) {
			return 0, "", false
		}
		m = int(b[i+1] & 0x1f)
		i += 3
	case 0x62:
		if i+1 >= len(b) {
			return 0, "", false
		}
		m = int(b[i+1] & 0x0f) // mmm and a must-be-zero bit, so 8+ is rejected
		i += 4
	default:
		i += 2
	}
	if m < 1 || m > 3 || i >= len(b) {
		return 0, "", false
	}
	op := b[i]
	i++
	if !(m == 1 && op == 0x77) {
		l, ok := modrmLen(b[min(i, len(b)):])
		if !ok {
			return 0, "", false
		}
		i += l
	}
	if m == 3 || (m == 1 && (op >= 0x70 && op <= 0x73 || op == 0xc2 || op >= 0xc4 && op <= 0xc6)) {
		i++
	}
	if i > len(b) || i > maxX86Len {
		return 0, "", false
	}
	// Only opcodes x86asm knows are accepted, and it must agree on the
	// length when given exactly these bytes.
	inst, ok := x86asmDecode(b[:i])
	if !ok || inst.Len != i {
		return 0, "", false
	}
	text := ""
	if wantText {
		text = gnuSyntax(inst)
	}
	return i, text, true
}

// x86asmDecode wraps x86asm.Decode, counting only results with an opcode.
func x86asmDecode(b []byte) (inst x86asm.Inst, ok bool) {
	defer func() {
		if recover() != nil {
			inst, ok = x86asm.Inst{}, false
		}
	}()
	inst, err := x86asm.Decode(b, 64)
	if err != nil || inst.Op == 0 || inst.Len <= 0 || inst.Len > len(b) || inst.Len > maxX86Len {
		return x86asm.Inst{}, false
	}
	return inst, true
}

// x86asmText renders b with x86asm if it decodes b as exactly one
// instruction, and returns "" otherwise.
func x86asmText(b []byte) string {
	if inst, ok := x86asmDecode(b); ok && inst.Len == len(b) {
		return gnuSyntax(inst)
	}
	return ""
}

func gnuSyntax(inst x86asm.Inst) (text string) {
	defer func() {
		if recover() != nil {
			text = "(bad)"
		}
	}()
	return x86asm.GNUSyntax(inst, 0, nil)
}

// Mandatory-prefix constraints of table entries.
type mandatory uint8

const (
	pAny  mandatory = iota // any legacy prefixes
	pNone                  // none of 66, f2, f3
	p66
	pF3
	pF2
)

// ModRM constraints of table entries.
type modForm uint8

const (
	mAny  modForm = iota // ModRM byte, any mod
	mMem                 // ModRM byte with mod != 3
	mReg                 // ModRM byte with mod == 3
	mNone                // no ModRM byte
)

// extra is an instruction in the legacy 0f, 0f 38 maps that x86asm v0.32.0
// fails to decode. None of them has an immediate, so the length is prefixes +
// opcode + ModRM/SIB/displacement, which is certain once the opcode is.
type extra struct {
	esc   byte // 0 for the 0f map, or 0x38 for the 0f 38 map
	op    byte
	pfx   mandatory
	mod   modForm
	reg   int8   // ModRM.reg required, or -1
	rm    int8   // ModRM.rm required (with mReg), or -1
	name  string // mnemonic, for messages
	wname string // mnemonic with REX.W, if it differs
}

// r01 is a register form of 0f 01 (group 7): exactly 3 bytes plus prefixes.
func r01(modrm byte, p mandatory, name string) extra {
	return extra{op: 0x01, pfx: p, mod: mReg, reg: int8(modrm >> 3 & 7), rm: int8(modrm & 7), name: name}
}

// extras is searched in order; prefix-specific entries precede pAny ones.
var extras = []extra{
	// 0f 01 register forms.
	r01(0xc0, pAny, "enclv"),
	r01(0xc1, pAny, "vmcall"),
	r01(0xc2, pAny, "vmlaunch"),
	r01(0xc3, pAny, "vmresume"),
	r01(0xc4, pAny, "vmxoff"),
	r01(0xc5, pAny, "pconfig"),
	r01(0xc6, pF2, "rdmsrlist"),
	r01(0xc6, pF3, "wrmsrlist"),
	r01(0xc6, pAny, "wrmsrns"),
	r01(0xc8, pAny, "monitor"),
	r01(0xc9, pAny, "mwait"),
	r01(0xca, pF3, "eretu"),
	r01(0xca, pF2, "erets"),
	r01(0xca, pAny, "clac"),
	r01(0xcb, pAny, "stac"),
	r01(0xcf, pAny, "encls"),
	r01(0xd0, pAny, "xgetbv"),
	r01(0xd1, pAny, "xsetbv"),
	r01(0xd4, pAny, "vmfunc"),
	r01(0xd5, pAny, "xend"),
	r01(0xd6, pAny, "xtest"),
	r01(0xd7, pAny, "enclu"),
	r01(0xd8, pAny, "vmrun"),
	r01(0xd9, pF3, "vmgexit"),
	r01(0xd9, pAny, "vmmcall"),
	r01(0xda, pAny, "vmload"),
	r01(0xdb, pAny, "vmsave"),
	r01(0xdc, pAny, "stgi"),
	r01(0xdd, pAny, "clgi"),
	r01(0xde, pAny, "skinit"),
	r01(0xdf, pAny, "invlpga"),
	{op: 0x01, pfx: pAny, mod: mReg, reg: 4, rm: -1, name: "smsw"},
	r01(0xe8, pF3, "setssbsy"),
	r01(0xe8, pF2, "xsusldtrk"),
	r01(0xe8, pAny, "serialize"),
	r01(0xe9, pF2, "xresldtrk"),
	r01(0xea, pF3, "saveprevssp"),
	r01(0xec, pF3, "uiret"),
	r01(0xed, pF3, "testui"),
	r01(0xee, pF3, "clui"),
	r01(0xee, pAny, "rdpkru"),
	r01(0xef, pF3, "stui"),
	r01(0xef, pAny, "wrpkru"),
	{op: 0x01, pfx: pAny, mod: mReg, reg: 6, rm: -1, name: "lmsw"},
	r01(0xf8, pAny, "swapgs"),
	r01(0xf9, pAny, "rdtscp"),
	r01(0xfa, pF3, "mcommit"),
	r01(0xfa, pAny, "monitorx"),
	r01(0xfb, pAny, "mwaitx"),
	r01(0xfc, pAny, "clzero"),
	r01(0xfd, pF3, "rmpquery"),
	r01(0xfd, pAny, "rdpru"),
	r01(0xfe, pF3, "rmpadjust"),
	r01(0xfe, pF2, "rmpupdate"),
	r01(0xfe, pAny, "invlpgb"),
	r01(0xff, pF3, "psmash"),
	r01(0xff, pF2, "pvalidate"),
	r01(0xff, pAny, "tlbsync"),
	// 0f 01 memory forms.
	{op: 0x01, pfx: pF3, mod: mMem, reg: 5, rm: -1, name: "rstorssp"},

	// Prefetches and the hint-NOP space 0f 18..0f 1f.
	{op: 0x0d, pfx: pAny, mod: mMem, reg: 1, rm: -1, name: "prefetchw"},
	{op: 0x0d, pfx: pAny, mod: mMem, reg: 2, rm: -1, name: "prefetchwt1"},
	{op: 0x0d, pfx: pAny, mod: mMem, reg: -1, rm: -1, name: "prefetch"},
	{op: 0x18, pfx: pAny, mod: mAny, reg: -1, rm: -1, name: "nop"},
	{op: 0x19, pfx: pAny, mod: mAny, reg: -1, rm: -1, name: "nop"},
	{op: 0x1a, pfx: pAny, mod: mAny, reg: -1, rm: -1, name: "nop"},
	{op: 0x1b, pfx: pAny, mod: mAny, reg: -1, rm: -1, name: "nop"},
	{op: 0x1c, pfx: pAny, mod: mAny, reg: -1, rm: -1, name: "nop"},
	{op: 0x1d, pfx: pAny, mod: mAny, reg: -1, rm: -1, name: "nop"},
	{op: 0x1e, pfx: pF3, mod: mReg, reg: 7, rm: 2, name: "endbr64"},
	{op: 0x1e, pfx: pF3, mod: mReg, reg: 7, rm: 3, name: "endbr32"},
	{op: 0x1e, pfx: pF3, mod: mReg, reg: 1, rm: -1, name: "rdsspd", wname: "rdsspq"},
	{op: 0x1e, pfx: pAny, mod: mAny, reg: -1, rm: -1, name: "nop"},
	{op: 0x1f, pfx: pAny, mod: mAny, reg: -1, rm: -1, name: "nop"},

	{op: 0x37, pfx: pAny, mod: mNone, reg: -1, rm: -1, name: "getsec"},
	{op: 0xb9, pfx: pAny, mod: mAny, reg: -1, rm: -1, name: "ud1"},
	{op: 0x78, pfx: pNone, mod: mAny, reg: -1, rm: -1, name: "vmread"},
	{op: 0x79, pfx: pNone, mod: mAny, reg: -1, rm: -1, name: "vmwrite"},

	// 0f ae (group 15).
	{op: 0xae, pfx: pF3, mod: mAny, reg: 4, rm: -1, name: "ptwrite"},
	{op: 0xae, pfx: pF3, mod: mReg, reg: 5, rm: -1, name: "incsspd", wname: "incsspq"},
	{op: 0xae, pfx: p66, mod: mReg, reg: 6, rm: -1, name: "tpause"},
	{op: 0xae, pfx: pF3, mod: mReg, reg: 6, rm: -1, name: "umonitor"},
	{op: 0xae, pfx: pF2, mod: mReg, reg: 6, rm: -1, name: "umwait"},
	{op: 0xae, pfx: pF3, mod: mMem, reg: 6, rm: -1, name: "clrssbsy"},
	{op: 0xae, pfx: p66, mod: mMem, reg: 6, rm: -1, name: "clwb"},
	{op: 0xae, pfx: p66, mod: mMem, reg: 7, rm: -1, name: "clflushopt"},

	// 0f c7 (group 9).
	{op: 0xc7, pfx: pAny, mod: mMem, reg: 3, rm: -1, name: "xrstors", wname: "xrstors64"},
	{op: 0xc7, pfx: pAny, mod: mMem, reg: 4, rm: -1, name: "xsavec", wname: "xsavec64"},
	{op: 0xc7, pfx: pAny, mod: mMem, reg: 5, rm: -1, name: "xsaves", wname: "xsaves64"},
	{op: 0xc7, pfx: pNone, mod: mMem, reg: 6, rm: -1, name: "vmptrld"},
	{op: 0xc7, pfx: p66, mod: mMem, reg: 6, rm: -1, name: "vmclear"},
	{op: 0xc7, pfx: pF3, mod: mMem, reg: 6, rm: -1, name: "vmxon"},
	{op: 0xc7, pfx: pNone, mod: mMem, reg: 7, rm: -1, name: "vmptrst"},
	{op: 0xc7, pfx: pF3, mod: mReg, reg: 6, rm: -1, name: "senduipi"},
	{op: 0xc7, pfx: pAny, mod: mReg, reg: 6, rm: -1, name: "rdrand"},
	{op: 0xc7, pfx: pF3, mod: mReg, reg: 7, rm: -1, name: "rdpid"},
	{op: 0xc7, pfx: pAny, mod: mReg, reg: 7, rm: -1, name: "rdseed"},

	// 0f 38 map.
	{esc: 0x38, op: 0x80, pfx: p66, mod: mMem, reg: -1, rm: -1, name: "invept"},
	{esc: 0x38, op: 0x81, pfx: p66, mod: mMem, reg: -1, rm: -1, name: "invvpid"},
	{esc: 0x38, op: 0x82, pfx: p66, mod: mMem, reg: -1, rm: -1, name: "invpcid"},
	{esc: 0x38, op: 0xf5, pfx: p66, mod: mMem, reg: -1, rm: -1, name: "wrussd", wname: "wrussq"},
	{esc: 0x38, op: 0xf6, pfx: p66, mod: mAny, reg: -1, rm: -1, name: "adcx"},
	{esc: 0x38, op: 0xf6, pfx: pF3, mod: mAny, reg: -1, rm: -1, name: "adox"},
	{esc: 0x38, op: 0xf6, pfx: pNone, mod: mMem, reg: -1, rm: -1, name: "wrssd", wname: "wrssq"},
	{esc: 0x38, op: 0xf8, pfx: p66, mod: mMem, reg: -1, rm: -1, name: "movdir64b"},
	{esc: 0x38, op: 0xf8, pfx: pF2, mod: mMem, reg: -1, rm: -1, name: "enqcmd"},
	{esc: 0x38, op: 0xf8, pfx: pF3, mod: mMem, reg: -1, rm: -1, name: "enqcmds"},
	{esc: 0x38, op: 0xf9, pfx: pNone, mod: mMem, reg: -1, rm: -1, name: "movdiri"},
	{esc: 0x38, op: 0xfc, pfx: pNone, mod: mMem, reg: -1, rm: -1, name: "aadd"},
	{esc: 0x38, op: 0xfc, pfx: p66, mod: mMem, reg: -1, rm: -1, name: "aand"},
	{esc: 0x38, op: 0xfc, pfx: pF2, mod: mMem, reg: -1, rm: -1, name: "aor"},
	{esc: 0x38, op: 0xfc, pfx: pF3, mod: mMem, reg: -1, rm: -1, name: "axor"},
}

func isLegacyPrefix(c byte) bool {
	switch c {
	case 0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65, 0x66, 0x67, 0xf0, 0xf2, 0xf3:
		return true
	}
	return false
}

// prefixNames spells legacy prefixes as x86asm does.
var prefixNames = map[byte]string{
	0x66: "data16", 0x67: "addr32", 0xf0: "lock", 0xf2: "repn", 0xf3: "rep",
	0x26: "es", 0x2e: "cs", 0x36: "ss", 0x3e: "ds", 0x64: "fs", 0x65: "gs",
}

// decodeExtra decodes b, whose prefixes are p, against extras.
func decodeExtra(b []byte, p prefixes, wantText bool) (length int, text string, ok bool) {
	i := p.n
	if i+1 >= len(b) || b[i] != 0x0f {
		return 0, "", false
	}
	i++
	var esc byte
	if b[i] == 0x38 {
		esc = 0x38
		i++
	}
	if i >= len(b) {
		return 0, "", false
	}
	op := b[i]
	i++

	mand := pNone
	switch {
	case p.rep == 0xf3:
		mand = pF3
	case p.rep == 0xf2:
		mand = pF2
	case p.has66:
		mand = p66
	}

	for _, e := range extras {
		if e.esc != esc || e.op != op || (e.pfx != pAny && e.pfx != mand) {
			continue
		}
		n := i
		if e.mod != mNone {
			if n >= len(b) {
				return 0, "", false
			}
			modrm := b[n]
			mod, reg, rm := modrm>>6, int8(modrm>>3&7), int8(modrm&7)
			if (e.mod == mMem && mod == 3) || (e.mod == mReg && mod != 3) ||
				(e.reg >= 0 && e.reg != reg) || (e.rm >= 0 && e.rm != rm) {
				continue
			}
			l, ok := modrmLen(b[n:])
			if !ok {
				return 0, "", false
			}
			n += l
		}
		if n > maxX86Len || n > len(b) {
			return 0, "", false
		}
		if wantText {
			text = render(b[:p.n], p.rex, e, mand)
		}
		return n, text, true
	}
	return 0, "", false
}

// modrmLen returns the number of bytes taken by the ModRM byte at b[0] and the
// SIB byte and displacement it implies (64-bit mode; a 67 prefix selects
// 32-bit addressing, which has the same layout).
func modrmLen(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	mod, rm := b[0]>>6, b[0]&7
	n := 1
	if mod == 3 {
		return n, true
	}
	if rm == 4 {
		if len(b) < 2 {
			return 0, false
		}
		if mod == 0 && b[1]&7 == 5 {
			n += 4 // SIB with no base: disp32
		}
		n++
	}
	switch {
	case mod == 0 && rm == 5:
		n += 4 // RIP-relative
	case mod == 1:
		n++
	case mod == 2:
		n += 4
	}
	if n > len(b) {
		return 0, false
	}
	return n, true
}

// render names a table instruction, listing prefixes that are not part of the
// opcode the way x86asm does.
func render(prefixes []byte, rex byte, e extra, mand mandatory) string {
	var sb strings.Builder
	for _, p := range prefixes {
		name := prefixNames[p]
		if name == "" {
			continue // REX
		}
		if (p == 0xf3 && mand == pF3 && e.pfx == pF3) ||
			(p == 0xf2 && mand == pF2 && e.pfx == pF2) ||
			(p == 0x66 && mand == p66 && e.pfx == p66) {
			continue
		}
		sb.WriteString(name)
		sb.WriteByte(' ')
	}
	if rex&0x08 != 0 && e.wname != "" {
		sb.WriteString(e.wname)
	} else {
		sb.WriteString(e.name)
	}
	return sb.String()
}
