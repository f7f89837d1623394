package dwbuf

// DW_FORM codes (DWARF 5 section 7.5.6, and the GNU extensions for split
// and supplementary files).
const (
	FormAddr          = 0x01
	FormBlock2        = 0x03
	FormBlock4        = 0x04
	FormData2         = 0x05
	FormData4         = 0x06
	FormData8         = 0x07
	FormString        = 0x08
	FormBlock         = 0x09
	FormBlock1        = 0x0a
	FormData1         = 0x0b
	FormFlag          = 0x0c
	FormSdata         = 0x0d
	FormStrp          = 0x0e
	FormUdata         = 0x0f
	FormRefAddr       = 0x10
	FormRef1          = 0x11
	FormRef2          = 0x12
	FormRef4          = 0x13
	FormRef8          = 0x14
	FormRefUdata      = 0x15
	FormIndirect      = 0x16
	FormSecOffset     = 0x17
	FormExprloc       = 0x18
	FormFlagPresent   = 0x19
	FormStrx          = 0x1a
	FormAddrx         = 0x1b
	FormRefSup4       = 0x1c
	FormStrpSup       = 0x1d
	FormData16        = 0x1e
	FormLineStrp      = 0x1f
	FormRefSig8       = 0x20
	FormImplicitConst = 0x21
	FormLoclistx      = 0x22
	FormRnglistx      = 0x23
	FormRefSup8       = 0x24
	FormStrx1         = 0x25
	FormStrx2         = 0x26
	FormStrx3         = 0x27
	FormStrx4         = 0x28
	FormAddrx1        = 0x29
	FormAddrx2        = 0x2a
	FormAddrx3        = 0x2b
	FormAddrx4        = 0x2c
	FormGNUAddrIndex  = 0x1f01
	FormGNUStrIndex   = 0x1f02
	FormGNURefAlt     = 0x1f20
	FormGNUStrpAlt    = 0x1f21
)

// Format is what the encoding of forms depends on, from a unit header.
type Format struct {
	Version  uint16 // DWARF version (DW_FORM_ref_addr is address-sized before 3)
	AddrSize uint8
	Dwarf64  bool // 8-byte section offsets
}

// OffsetSize is the size of a section offset: 8 in 64-bit DWARF, else 4.
func (f Format) OffsetSize() int {
	if f.Dwarf64 {
		return 8
	}
	return 4
}

// FixedSize is the encoded size of form when the unit header alone fixes
// it, or -1 when it depends on the data (LEB128, strings, blocks,
// DW_FORM_indirect) or the form is unknown. DW_FORM_flag_present and
// DW_FORM_implicit_const take no bytes.
func (f Format) FixedSize(form uint32) int {
	switch form {
	case FormAddr:
		return int(f.AddrSize)
	case FormData1, FormRef1, FormFlag, FormStrx1, FormAddrx1:
		return 1
	case FormData2, FormRef2, FormStrx2, FormAddrx2:
		return 2
	case FormStrx3, FormAddrx3:
		return 3
	case FormData4, FormRef4, FormRefSup4, FormStrx4, FormAddrx4:
		return 4
	case FormData8, FormRef8, FormRefSig8, FormRefSup8:
		return 8
	case FormData16:
		return 16
	case FormFlagPresent, FormImplicitConst:
		return 0
	case FormStrp, FormLineStrp, FormSecOffset, FormStrpSup, FormGNURefAlt, FormGNUStrpAlt:
		return f.OffsetSize()
	case FormRefAddr:
		if f.Version <= 2 {
			return int(f.AddrSize)
		}
		return f.OffsetSize()
	}
	return -1
}

// Value reads an attribute value of form and returns what a scanner keeps
// of it, without allocating:
//
//   - addresses, constants, flags, references, section offsets and
//     indices (strx, addrx, loclistx, rnglistx): the number, with
//     DW_FORM_sdata sign-extended;
//   - DW_FORM_flag_present: 1;
//   - DW_FORM_string: the position of its first byte in Data;
//   - blocks, DW_FORM_exprloc and DW_FORM_data16: skipped, 0;
//   - DW_FORM_implicit_const: 0, its value is in the abbreviation.
//
// DW_FORM_indirect is the caller's to resolve (read the real form with
// [Cursor.Uleb] first); it and unknown forms fail with ErrUnknownForm.
func (c *Cursor) Value(form uint32, f Format) uint64 {
	switch form {
	case FormAddr:
		if f.AddrSize == 8 {
			return c.U64()
		}
		return c.Uint(int(f.AddrSize))
	case FormData1, FormRef1, FormFlag, FormStrx1, FormAddrx1:
		return uint64(c.U8())
	case FormData2, FormRef2, FormStrx2, FormAddrx2:
		return uint64(c.U16())
	case FormStrx3, FormAddrx3:
		return c.Uint(3)
	case FormData4, FormRef4, FormRefSup4, FormStrx4, FormAddrx4:
		return uint64(c.U32())
	case FormData8, FormRef8, FormRefSig8, FormRefSup8:
		return c.U64()
	case FormData16:
		c.Skip(16)
	case FormFlagPresent:
		return 1
	case FormImplicitConst:
	case FormStrp, FormLineStrp, FormSecOffset, FormStrpSup, FormGNURefAlt, FormGNUStrpAlt:
		if f.Dwarf64 {
			return c.U64()
		}
		return uint64(c.U32())
	case FormRefAddr:
		if f.Version <= 2 {
			return c.Uint(int(f.AddrSize))
		}
		if f.Dwarf64 {
			return c.U64()
		}
		return uint64(c.U32())
	case FormSdata:
		return uint64(c.Sleb())
	case FormUdata, FormRefUdata, FormStrx, FormAddrx, FormLoclistx, FormRnglistx, FormGNUAddrIndex, FormGNUStrIndex:
		return c.Uleb()
	case FormString:
		p := c.Pos
		c.CString()
		return uint64(p)
	case FormBlock1:
		c.Skip(uint64(c.U8()))
	case FormBlock2:
		c.Skip(uint64(c.U16()))
	case FormBlock4:
		c.Skip(uint64(c.U32()))
	case FormBlock, FormExprloc:
		c.Skip(c.Uleb())
	default:
		c.fail(ErrUnknownForm)
	}
	return 0
}
