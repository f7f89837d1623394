package dwarfinfo

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// unitHeader is a .debug_info unit header.
type unitHeader struct {
	off       uint64 // start of the unit (its length field)
	end       uint64 // one past the last byte
	dieOff    uint64 // first DIE
	version   uint16
	unitType  uint8
	addrSize  uint8
	dwarf64   bool
	abbrevOff uint64
}

// DWARF 5 unit types.
const (
	utCompile      = 0x01
	utType         = 0x02
	utPartial      = 0x03
	utSkeleton     = 0x04
	utSplitCompile = 0x05
	utSplitType    = 0x06
)

// Units parses every unit header of .debug_info (cheap: one jump per unit).
func (f *File) unitHeaders() ([]unitHeader, error) {
	f.unitsOnce.Do(func() {
		sec := f.ELF.Section(".debug_info")
		if sec == nil || sec.Size == 0 {
			f.unitsErr = fmt.Errorf("%s: %w", f.Path, ErrNoDWARF)
			return
		}
		size := sec.Size
		if sec.Flags&elf.SHF_COMPRESSED != 0 {
			size = uint64(len(f.Section(".debug_info")))
		}
		big := f.Order == binary.BigEndian
		// Headers are read with pread: touching one byte of each unit
		// through the mapping would fault in 64 KiB around it.
		var hdr []byte
		var off uint64
		for off < size {
			end := off + 48
			if end > size {
				end = size
			}
			var err error
			if hdr, err = f.readSection(".debug_info", off, end, hdr); err != nil {
				f.unitsErr = err
				return
			}
			r := reader{b: hdr}
			h := unitHeader{off: off}
			n := r.uint(4, big)
			if n == 0xffffffff {
				h.dwarf64 = true
				n = r.uint(8, big)
			} else if n >= 0xfffffff0 {
				f.unitsErr = fmt.Errorf("%s: %w: reserved unit length at %#x", f.Path, ErrBadDWARF, off)
				return
			}
			h.end = off + uint64(r.pos) + n
			if h.end > size || h.end < off+uint64(r.pos) {
				f.unitsErr = fmt.Errorf("%s: %w: unit at %#x runs past .debug_info", f.Path, ErrBadDWARF, off)
				return
			}
			h.version = uint16(r.uint(2, big))
			offSize := 4
			if h.dwarf64 {
				offSize = 8
			}
			switch {
			case h.version >= 2 && h.version <= 4:
				h.abbrevOff = r.uint(offSize, big)
				h.addrSize = r.u8()
				h.unitType = utCompile
			case h.version == 5:
				h.unitType = r.u8()
				h.addrSize = r.u8()
				h.abbrevOff = r.uint(offSize, big)
				switch h.unitType {
				case utSkeleton, utSplitCompile:
					r.skip(8)
				case utType, utSplitType:
					r.skip(8)
					r.skip(uint64(offSize))
				}
			default:
				f.unitsErr = fmt.Errorf("%s: %w: unsupported DWARF version %d at %#x", f.Path, ErrBadDWARF, h.version, off)
				return
			}
			if r.bad || (h.addrSize != 4 && h.addrSize != 8) {
				f.unitsErr = fmt.Errorf("%s: %w: bad unit header at %#x", f.Path, ErrBadDWARF, off)
				return
			}
			h.dieOff = off + uint64(r.pos)
			if h.dieOff > h.end {
				f.unitsErr = fmt.Errorf("%s: %w: bad unit header at %#x", f.Path, ErrBadDWARF, off)
				return
			}
			f.units = append(f.units, h)
			off = h.end
		}
	})
	return f.units, f.unitsErr
}

// FuncRef identifies a subprogram DIE found by [File.FindFuncs].
type FuncRef struct {
	Unit   int    // index of the unit in .debug_info order
	Offset uint64 // DIE offset in .debug_info
}

// NameMatcher reports whether a function name matches.
type NameMatcher func(name []byte) bool

// ExactName matches one name.
func ExactName(name string) NameMatcher {
	b := []byte(name)
	return func(n []byte) bool { return bytes.Equal(n, b) }
}

// FindFuncs walks the compile units in order and returns, per unit, every
// top-level subprogram definition (perf's die_is_func_def: not a
// declaration, and inline or with code) whose name or linkage name,
// integrated through DW_AT_abstract_origin / DW_AT_specification, matches.
// With firstUnitOnly it stops after the first unit that has a match, as
// perf's -L search does. Results are in unit order, then DIE order.
//
// GNU C nested function definitions (subprograms inside subprograms) are
// not searched; the kernel has none.
func (f *File) FindFuncs(match NameMatcher, firstUnitOnly bool) ([]FuncRef, error) {
	var out []FuncRef
	err := f.EachFuncs(match, func(refs []FuncRef) (bool, error) {
		out = append(out, refs...)
		return firstUnitOnly, nil
	})
	return out, err
}

// EachFuncs is the streaming form of FindFuncs: fn receives the matches of
// each unit that has some, in unit order, while later units are still being
// scanned in the background. fn returning stop (or an error) ends the walk
// early; the error is returned.
func (f *File) EachFuncs(match NameMatcher, fn func(refs []FuncRef) (stop bool, err error)) error {
	units, err := f.unitHeaders()
	if err != nil {
		return err
	}
	workers := runtime.GOMAXPROCS(0)
	if workers > 8 {
		workers = 8
	}
	if len(units) < 64 {
		workers = 1
	}
	var (
		results = make([][]FuncRef, len(units))
		errs    = make([]error, len(units))
		done    = make([]bool, len(units))
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		next    atomic.Int64
		cancel  atomic.Bool
		wg      sync.WaitGroup
		// consumed is the next unit fn will see; workers stay at most
		// window units ahead of it, so a walk that stops early has not
		// read (from disk, when the cache is cold) much more than it used.
		consumed int
	)
	const batch, window = 16, 64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := scanner{f: f, big: f.Order == binary.BigEndian,
				str: f.Section(".debug_str"), lineStr: f.Section(".debug_line_str"), strOffs: f.Section(".debug_str_offsets")}
			for !cancel.Load() {
				start := int(next.Add(batch)) - batch
				if start >= len(units) {
					return
				}
				mu.Lock()
				for start > consumed+window && !cancel.Load() {
					cond.Wait()
				}
				mu.Unlock()
				for i := start; i < start+batch && i < len(units); i++ {
					var refs []FuncRef
					var err error
					if !cancel.Load() {
						refs, err = s.scanUnit(i, &units[i], match)
					}
					mu.Lock()
					results[i], errs[i], done[i] = refs, err, true
					cond.Broadcast()
					mu.Unlock()
				}
			}
		}()
	}
	defer func() {
		cancel.Store(true)
		mu.Lock()
		cond.Broadcast()
		mu.Unlock()
		wg.Wait()
	}()
	for i := range units {
		mu.Lock()
		for !done[i] {
			cond.Wait()
		}
		refs, err := results[i], errs[i]
		results[i] = nil
		consumed = i + 1
		cond.Broadcast()
		mu.Unlock()
		if err != nil {
			return err
		}
		if len(refs) == 0 {
			continue
		}
		stop, err := fn(refs)
		if err != nil || stop {
			return err
		}
	}
	return nil
}

// scanner decodes just enough of each DIE to find subprogram definitions.
type scanner struct {
	f                     *File
	info                  []byte // the current unit, from its first byte
	str, lineStr, strOffs []byte
	big                   bool

	u          *unitHeader
	tab        abbrevTable
	strOffBase uint64
}

// dieAttrs are the attributes the scanner keeps for one DIE.
type dieAttrs struct {
	nameForm, linkForm uint32
	name, link         uint64 // form-specific value (string offset, index or position)
	origin, spec       uint64 // absolute DIE offsets, 0 if absent
	sibling            uint64 // absolute, 0 if absent
	declaration        bool
	inline             bool
	code               bool // low_pc, entry_pc or ranges
}

func (s *scanner) scanUnit(idx int, u *unitHeader, match NameMatcher) ([]FuncRef, error) {
	if u.unitType != utCompile && u.unitType != utPartial {
		return nil, nil
	}
	s.u, s.strOffBase = u, 0
	if err := s.tab.parse(s.f.Section(".debug_abbrev"), u.abbrevOff, u); err != nil {
		return nil, fmt.Errorf("%s: unit at %#x: %w", s.f.Path, u.off, err)
	}
	var err error
	if s.info, err = s.f.readSection(".debug_info", u.off, u.end, s.info); err != nil {
		return nil, err
	}
	r := reader{b: s.info, pos: int(u.dieOff - u.off)}
	code := r.uleb()
	if code == 0 {
		return nil, nil
	}
	cu := s.tab.get(code)
	if cu == nil {
		return nil, s.bad(r.pos, "unknown abbrev code %d", code)
	}
	// Read the unit DIE for DW_AT_str_offsets_base.
	for _, a := range cu.attrs {
		v := s.value(&r, a)
		if a.attr == atStrOffsetsBase {
			s.strOffBase = v
		}
	}
	if r.bad {
		return nil, s.bad(r.pos, "truncated unit DIE")
	}
	if !cu.children {
		return nil, nil
	}
	var out []FuncRef
	for {
		dieOff := uint64(r.pos)
		code := r.uleb()
		if r.bad {
			return out, s.bad(r.pos, "truncated DIE")
		}
		if code == 0 {
			return out, nil
		}
		a := s.tab.get(code)
		if a == nil {
			return out, s.bad(int(dieOff), "unknown abbrev code %d", code)
		}
		if a.tag != tagSubprogram {
			if err := s.skipDIE(&r, a); err != nil {
				return out, err
			}
			continue
		}
		var d dieAttrs
		s.readAttrs(&r, a, &d)
		if r.bad {
			return out, s.bad(int(dieOff), "truncated subprogram DIE")
		}
		if !d.declaration && (d.inline || d.code) && s.matches(&d, match, 0) {
			out = append(out, FuncRef{Unit: idx, Offset: u.off + dieOff})
		}
		if a.children {
			if err := s.skipChildren(&r, &d); err != nil {
				return out, err
			}
		}
		if uint64(r.pos) >= u.end {
			return out, nil
		}
	}
}

func (s *scanner) bad(pos int, format string, args ...any) error {
	return fmt.Errorf("%s: %w: unit at %#x, offset %#x: %s", s.f.Path, ErrBadDWARF, s.u.off, s.u.off+uint64(pos), fmt.Sprintf(format, args...))
}

// skipDIE moves past a DIE and all its children.
func (s *scanner) skipDIE(r *reader, a *abbrev) error {
	var d dieAttrs
	if a.fixed >= 0 && !a.hasSibling {
		r.skip(uint64(a.fixed))
	} else {
		s.readAttrs(r, a, &d)
	}
	if r.bad {
		return s.bad(r.pos, "truncated DIE")
	}
	if a.children {
		return s.skipChildren(r, &d)
	}
	return nil
}

// skipChildren moves past the children of a DIE whose attributes were just
// read: through DW_AT_sibling when present, else by walking them.
func (s *scanner) skipChildren(r *reader, d *dieAttrs) error {
	if d.sibling > uint64(r.pos) && d.sibling <= uint64(len(r.b)) {
		r.pos = int(d.sibling)
		return nil
	}
	for depth := 1; depth > 0; {
		code := r.uleb()
		if r.bad {
			return s.bad(r.pos, "truncated DIE tree")
		}
		if code == 0 {
			depth--
			continue
		}
		a := s.tab.get(code)
		if a == nil {
			return s.bad(r.pos, "unknown abbrev code %d", code)
		}
		var cd dieAttrs
		if a.fixed >= 0 && !a.hasSibling {
			r.skip(uint64(a.fixed))
		} else {
			s.readAttrs(r, a, &cd)
		}
		if a.children {
			if cd.sibling > uint64(r.pos) && cd.sibling <= uint64(len(r.b)) {
				r.pos = int(cd.sibling)
			} else {
				depth++
			}
		}
	}
	return nil
}

func (s *scanner) readAttrs(r *reader, a *abbrev, d *dieAttrs) {
	for _, sp := range a.attrs {
		form, v := s.attrValue(r, sp)
		switch sp.attr {
		case atName:
			d.nameForm, d.name = form, v
		case atLinkageName, atMIPSLinkage:
			d.linkForm, d.link = form, v
		case atAbstractOrigin:
			d.origin = s.ref(form, v)
		case atSpecification:
			d.spec = s.ref(form, v)
		case atSibling:
			d.sibling = s.ref(form, v)
		case atDeclaration:
			d.declaration = form == formFlagPresent || v != 0
		case atInline:
			d.inline = true
		case atLowPC, atEntryPC, atRanges:
			d.code = true
		}
	}
}

// ref converts a reference to a position in the current unit buffer, or 0
// when it points outside the unit.
func (s *scanner) ref(form uint32, v uint64) uint64 {
	switch form {
	case formRef1, formRef2, formRef4, formRef8, formRefUdata:
		return v
	case formRefAddr:
		if v >= s.u.off && v < s.u.end {
			return v - s.u.off
		}
	}
	return 0
}

// attrValue resolves DW_FORM_indirect and decodes one attribute value,
// returning the effective form with it.
func (s *scanner) attrValue(r *reader, sp attrSpec) (uint32, uint64) {
	if sp.form == formIndirect {
		sp.form = uint32(r.uleb())
	}
	return sp.form, s.value(r, sp)
}

// value decodes one attribute value. Strings yield their offset, index or
// (for DW_FORM_string) position; blocks are skipped and yield 0.
func (s *scanner) value(r *reader, sp attrSpec) uint64 {
	u := s.u
	off := 4
	if u.dwarf64 {
		off = 8
	}
	switch sp.form {
	case formAddr:
		return r.uint(int(u.addrSize), s.big)
	case formData1, formRef1, formFlag, formStrx1, formAddrx1:
		return r.uint(1, s.big)
	case formData2, formRef2, formStrx2, formAddrx2:
		return r.uint(2, s.big)
	case formStrx3, formAddrx3:
		return r.uint(3, s.big)
	case formData4, formRef4, formRefSup4, formStrx4, formAddrx4:
		return r.uint(4, s.big)
	case formData8, formRef8, formRefSig8, formRefSup8:
		return r.uint(8, s.big)
	case formData16:
		r.skip(16)
	case formFlagPresent:
		return 1
	case formImplicitConst:
		return uint64(sp.implicit)
	case formStrp, formLineStrp, formSecOffset, formStrpSup, formGNURefAlt, formGNUStrpAlt:
		return r.uint(off, s.big)
	case formRefAddr:
		if u.version <= 2 {
			return r.uint(int(u.addrSize), s.big)
		}
		return r.uint(off, s.big)
	case formSdata:
		return uint64(r.sleb())
	case formUdata, formRefUdata, formStrx, formAddrx, formLoclistx, formRnglistx, formGNUAddrIndex, formGNUStrIndex:
		return r.uleb()
	case formString:
		p := r.pos
		i := bytes.IndexByte(r.b[r.pos:], 0)
		if i < 0 {
			r.bad = true
			r.pos = len(r.b)
			return 0
		}
		r.pos += i + 1
		return uint64(p)
	case formBlock1:
		r.skip(uint64(r.uint(1, s.big)))
	case formBlock2:
		r.skip(uint64(r.uint(2, s.big)))
	case formBlock4:
		r.skip(uint64(r.uint(4, s.big)))
	case formBlock, formExprloc:
		r.skip(r.uleb())
	default:
		r.bad = true
		r.pos = len(r.b)
	}
	return 0
}

// strBytes returns the string an attribute value refers to, without
// copying, or nil.
func (s *scanner) strBytes(form uint32, v uint64) []byte {
	var sec []byte
	switch form {
	case formString:
		sec = s.info
	case formStrp:
		sec = s.str
	case formLineStrp:
		sec = s.lineStr
	case formStrx, formStrx1, formStrx2, formStrx3, formStrx4, formGNUStrIndex:
		size := uint64(4)
		if s.u.dwarf64 {
			size = 8
		}
		base := s.strOffBase
		if base == 0 && s.u.version >= 5 {
			base = 8 // header of the contribution when no base is given
		}
		p := base + v*size
		if p+size > uint64(len(s.strOffs)) {
			return nil
		}
		r := reader{b: s.strOffs, pos: int(p)}
		v, sec = r.uint(int(size), s.big), s.str
	default:
		return nil
	}
	if v >= uint64(len(sec)) {
		return nil
	}
	b := sec[v:]
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return nil
}

// matches reports whether the DIE's integrated name or linkage name
// matches; depth bounds origin chains as libdw does.
func (s *scanner) matches(d *dieAttrs, match NameMatcher, depth int) bool {
	if d.nameForm != 0 {
		if n := s.strBytes(d.nameForm, d.name); n != nil && match(n) {
			return true
		}
	}
	if d.linkForm != 0 {
		if n := s.strBytes(d.linkForm, d.link); n != nil && match(n) {
			return true
		}
	}
	if d.nameForm != 0 && d.linkForm != 0 || depth > 16 {
		return false
	}
	target := d.origin
	if target == 0 {
		target = d.spec
	}
	if target == 0 || target < s.u.dieOff-s.u.off || target >= uint64(len(s.info)) {
		return false
	}
	r := reader{b: s.info, pos: int(target)}
	a := s.tab.get(r.uleb())
	if a == nil || r.bad {
		return false
	}
	var od dieAttrs
	s.readAttrs(&r, a, &od)
	if r.bad {
		return false
	}
	// An own attribute shadows the origin's, as dwarf_attr_integrate does.
	if d.nameForm != 0 {
		od.nameForm = 0
	}
	if d.linkForm != 0 {
		od.linkForm = 0
	}
	return s.matches(&od, match, depth+1)
}
