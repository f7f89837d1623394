package dwarfinfo

import (
	"errors"
	"fmt"

	"github.com/gprobe/gprobe/internal/dwbuf"
)

// The CFA rule at an address is computed here rather than with delve's
// FrameContext: delve stops at opcodes it does not know, such as arm64's
// DW_CFA_AARCH64_negate_ra_state (0x2d) that every pointer-authenticated
// function carries, and panics on truncated programs. Only the CFA rule is
// tracked; register rules are skipped over. The CIE and FDE come from
// cfi.go.

// cfaRule is a def_cfa rule: CFA = reg + off. expr marks a
// DW_CFA_def_cfa_expression rule (not register based).
type cfaRule struct {
	reg  uint64
	off  int64
	expr bool
}

var errBadCFI = errors.New("truncated or unknown call frame instruction")

// cfaAt runs the CIE's initial instructions and the FDE's instructions up to
// pc and returns the CFA rule in effect there.
func cfaAt(fde *fdeEntry, pc uint64, f *File) (cfaRule, error) {
	var st cfaState
	st.big, st.addrSize = f.big(), 8
	if f.ELF.Class == 1 { // ELFCLASS32
		st.addrSize = 4
	}
	st.caf, st.daf = fde.cie.codeAlign, fde.cie.dataAlign
	st.loc = fde.begin
	if err := st.run(fde.cie.initial, ^uint64(0)); err != nil {
		return cfaRule{}, err
	}
	st.initial = st.rule
	if err := st.run(fde.instructions, pc); err != nil {
		return cfaRule{}, err
	}
	return st.rule, nil
}

type cfaState struct {
	big           bool
	addrSize      int
	caf           uint64
	daf           int64
	loc           uint64
	rule, initial cfaRule
	stack         []cfaRule
}

// run executes instructions while the row's location is <= pc.
func (s *cfaState) run(ins []byte, pc uint64) error {
	r := dwbuf.Cursor{Data: ins, Big: s.big}
	for r.Pos < len(r.Data) {
		op := r.U8()
		switch op & 0xc0 {
		case 0x40: // advance_loc
			if !s.advance(uint64(op&0x3f)*s.caf, pc) {
				return nil
			}
			continue
		case 0x80: // offset: register rule, ULEB operand
			r.Uleb()
			continue
		case 0xc0: // restore
			continue
		}
		switch op {
		case 0x00, 0x2d, 0x0a, 0x0b: // nop, AARCH64_negate_ra_state / GNU_window_save, remember/restore handled below
			switch op {
			case 0x0a:
				s.stack = append(s.stack, s.rule)
			case 0x0b:
				if n := len(s.stack); n > 0 {
					s.rule, s.stack = s.stack[n-1], s.stack[:n-1]
				}
			}
		case 0x01: // set_loc
			a := r.Uint(s.addrSize)
			if r.Err() != nil {
				return errBadCFI
			}
			if a > pc {
				return nil
			}
			s.loc = a
		case 0x02, 0x03, 0x04: // advance_loc1/2/4
			d := r.Uint(1 << (op - 0x02))
			if r.Err() != nil {
				return errBadCFI
			}
			if !s.advance(d*s.caf, pc) {
				return nil
			}
		case 0x05, 0x09, 0x14: // offset_extended, register, val_offset: 2 ULEB
			r.Uleb()
			r.Uleb()
		case 0x06, 0x07, 0x08: // restore_extended, undefined, same_value: 1 ULEB
			r.Uleb()
		case 0x0c: // def_cfa
			s.rule = cfaRule{reg: r.Uleb(), off: int64(r.Uleb())}
		case 0x0d: // def_cfa_register
			s.rule.reg, s.rule.expr = r.Uleb(), false
		case 0x0e: // def_cfa_offset
			s.rule.off = int64(r.Uleb())
		case 0x0f: // def_cfa_expression
			n := r.Uleb()
			r.Skip(n)
			s.rule = cfaRule{expr: true}
		case 0x10, 0x16: // expression, val_expression: ULEB reg, block
			r.Uleb()
			r.Skip(r.Uleb())
		case 0x11, 0x15: // offset_extended_sf, val_offset_sf
			r.Uleb()
			r.Sleb()
		case 0x12: // def_cfa_sf
			s.rule = cfaRule{reg: r.Uleb(), off: r.Sleb() * s.daf}
		case 0x13: // def_cfa_offset_sf
			s.rule.off = r.Sleb() * s.daf
		case 0x2e: // GNU_args_size
			r.Uleb()
		case 0x2f: // GNU_negative_offset_extended
			r.Uleb()
			r.Uleb()
		default:
			return fmt.Errorf("%w: opcode %#x", errBadCFI, op)
		}
		if r.Err() != nil {
			return errBadCFI
		}
	}
	return nil
}

// advance moves the row location by d; false once the new row starts
// beyond pc (the current rule is the answer).
func (s *cfaState) advance(d, pc uint64) bool {
	if s.loc+d > pc {
		return false
	}
	s.loc += d
	return true
}
