package parquet

import "encoding/binary"

// appendHybrid appends vals in Parquet's RLE/bit-packing hybrid encoding
// with width bits per value (definition levels, dictionary indices): a
// run of 8 or more equal values that starts on a group boundary is one
// RLE run, everything else is bit-packed in groups of 8 (the last group
// padded with zeros; the reader knows how many values there are).
func appendHybrid(dst []byte, vals []uint32, width int) []byte {
	lit := 0 // vals[lit:i] wait to be bit-packed
	for i := 0; i < len(vals); {
		j := i + 1
		for j < len(vals) && vals[j] == vals[i] {
			j++
		}
		// Literals go out in whole groups: the run first fills the
		// pending group.
		if pad := (8 - (i-lit)%8) % 8; j-i-pad >= 8 {
			dst = appendPacked(dst, vals[lit:i+pad], width)
			dst = appendRun(dst, vals[i], j-i-pad, width)
			lit = j
		}
		i = j
	}
	return appendPacked(dst, vals[lit:], width)
}

// appendRun appends an RLE run of n times v.
func appendRun(dst []byte, v uint32, n, width int) []byte {
	dst = binary.AppendUvarint(dst, uint64(n)<<1)
	for b := 0; b < (width+7)/8; b++ {
		dst = append(dst, byte(v>>(8*b)))
	}
	return dst
}

// appendPacked appends vals bit-packed (least significant bit first) in
// groups of 8, the last one padded with zeros.
func appendPacked(dst []byte, vals []uint32, width int) []byte {
	if len(vals) == 0 {
		return dst
	}
	groups := (len(vals) + 7) / 8
	dst = binary.AppendUvarint(dst, uint64(groups)<<1|1)
	var acc uint64
	bits := 0
	for k := 0; k < groups*8; k++ {
		var v uint32
		if k < len(vals) {
			v = vals[k]
		}
		acc |= uint64(v) << bits
		bits += width
		for bits >= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
			bits -= 8
		}
	}
	return dst
}
