package refcount

import (
	"encoding/binary"

	"github.com/gprobe/gprobe/internal/hugepage"
)

// The object store keeps every live and quarantined object in 64 bytes
// plus about 16 bytes of index, so that a recording with a million live
// objects costs tens of megabytes: keys and sites are interned, history
// is a ring of varint-packed steps inside the object, objects live in
// fixed-size chunks (growing never copies them) and the index holds only
// a hash and a slot number.

// key identifies an object: its address (or the id of an interned string
// key) and, for user-space probes, its process.
type key struct {
	addr uint64
	tag  uint32 // process id, with strKey set when addr is a string id
}

const strKey = 1 << 31

// histBytes holds the packed history, typically 4 to 6 bytes a step. A
// step too large for it (a time jump of years) leaves the history empty.
const histBytes = 21

// obj is one life of one key.
type obj struct {
	addr  uint64
	first uint64 // timestamp of the first reference
	last  uint64 // timestamp of the latest step
	tag   uint32
	count int32
	site  uint32
	death uint32 // serial of the latest release (quarantine)
	hlen  uint8  // bytes of hist in use
	steps uint8  // steps in hist
	flags uint8
	// hist holds the latest steps, oldest first, each as uvarint(time
	// since the step before), uvarint(event), uvarint(thread) and
	// varint(count after it); times are rebuilt backwards from last.
	hist [histBytes]byte
}

const (
	inUse uint8 = 1 << iota
	dead        // released: kept in quarantine for double-put detection
)

func (o *obj) key() key { return key{o.addr, o.tag} }

// step is one decoded history entry.
type step struct {
	ts            uint64
	event, thread uint32
	count         int32
}

// record appends a step, dropping the oldest ones beyond max steps or
// when the ring is full.
func (o *obj) record(ts uint64, event, thread uint32, count int32, max int) {
	var buf [4 * binary.MaxVarintLen64]byte
	var delta uint64
	if o.steps > 0 && ts > o.last {
		delta = ts - o.last
	}
	n := binary.PutUvarint(buf[:], delta)
	n += binary.PutUvarint(buf[n:], uint64(event))
	n += binary.PutUvarint(buf[n:], uint64(thread))
	n += binary.PutVarint(buf[n:], int64(count))
	o.last = ts
	if n > histBytes {
		o.hlen, o.steps = 0, 0
		return
	}
	drop := 0
	steps := int(o.steps)
	for steps > 0 && (steps >= max || int(o.hlen)-drop+n > histBytes) {
		drop += stepLen(o.hist[drop:o.hlen])
		steps--
	}
	if drop > 0 {
		copy(o.hist[:], o.hist[drop:o.hlen])
		o.hlen -= uint8(drop)
	}
	copy(o.hist[o.hlen:], buf[:n])
	o.hlen += uint8(n)
	o.steps = uint8(steps + 1)
}

// stepLen is the encoded length of the first step in b.
func stepLen(b []byte) int {
	n := 0
	for i := 0; i < 4; i++ {
		for b[n]&0x80 != 0 {
			n++
		}
		n++
	}
	return n
}

// history decodes the ring, oldest step first.
func (o *obj) history() []step {
	out := make([]step, 0, o.steps)
	deltas := make([]uint64, 0, o.steps)
	b := o.hist[:o.hlen]
	for len(b) > 0 {
		d, n1 := binary.Uvarint(b)
		ev, n2 := binary.Uvarint(b[n1:])
		th, n3 := binary.Uvarint(b[n1+n2:])
		c, n4 := binary.Varint(b[n1+n2+n3:])
		b = b[n1+n2+n3+n4:]
		deltas = append(deltas, d)
		out = append(out, step{event: uint32(ev), thread: uint32(th), count: int32(c)})
	}
	ts := o.last
	for i := len(out) - 1; i >= 0; i-- {
		out[i].ts = ts
		ts -= deltas[i]
	}
	return out
}

// slab holds objects in chunks of a huge page; a slot number names one
// for its life in the store. Chunks are allocated whole (chunkMemory):
// the first without asking for huge pages, so that a small recording
// costs the pages its objects cover, later ones as huge pages. Growing
// never copies (a copy would touch the old and the new memory). Free
// slots form a list through their first field.
type slab struct {
	mem    *chunkMemory
	chunks [][]obj
	n      uint32 // slots handed out so far
	backed int    // slots of the last chunk backed (hugepage.Ahead)
	free   uint32 // head of the free list, plus one (0: empty)
}

const (
	chunkBits = 15 // 32768 objects of 64 bytes: one huge page
	chunkLen  = 1 << chunkBits
	// New slots are backed ahead, 256 (16 KiB) to 2,048 (128 KiB) at a
	// time.
	backSlotsMin = 256
	backSlotsMax = 2048
)

func (s *slab) at(i uint32) *obj { return &s.chunks[i>>chunkBits][i&(chunkLen-1)] }

// alloc returns a free slot.
func (s *slab) alloc() uint32 {
	if s.free != 0 {
		i := s.free - 1
		o := s.at(i)
		s.free = uint32(o.first)
		*o = obj{}
		return i
	}
	if c := int(s.n >> chunkBits); c == len(s.chunks) {
		if s.mem == nil {
			s.mem = newChunkMemory()
		}
		s.chunks = append(s.chunks, s.mem.objects(chunkLen, c > 0))
		s.backed = 0
	}
	// Slots are handed out in order: the next ones are backed in one call
	// rather than a fault per page.
	hugepage.Ahead(s.chunks[s.n>>chunkBits], int(s.n&(chunkLen-1)), &s.backed, backSlotsMin, backSlotsMax)
	s.n++
	return s.n - 1
}

func (s *slab) release(i uint32) {
	o := s.at(i)
	*o = obj{first: uint64(s.free)}
	s.free = i + 1
}

// index maps keys to slots: open addressing with linear probing over
// (hash, slot+1) pairs, so that probing reads an object only on a 32-bit
// hash match, and deletion shifts entries back (no tombstones). The home
// position is the hash's low bits, so the stored 32 bits rebuild it
// (tables stay far below 2^32 entries).
type index struct {
	mem  *chunkMemory // tables live outside Go's heap, freed at each growth
	e    []entry
	n    int
	mask uint64
}

type entry struct {
	h    uint32
	slot uint32 // slot+1; 0 is an empty entry
}

func hashKey(k key) uint64 {
	x := k.addr ^ uint64(k.tag)*0x9e3779b97f4a7c15
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// find returns the slot of k.
func (ix *index) find(s *slab, k key) (uint32, bool) {
	if ix.n == 0 {
		return 0, false
	}
	h := hashKey(k)
	for i := h & ix.mask; ; i = (i + 1) & ix.mask {
		e := ix.e[i]
		if e.slot == 0 {
			return 0, false
		}
		if e.h == uint32(h) {
			if o := s.at(e.slot - 1); o.addr == k.addr && o.tag == k.tag {
				return e.slot - 1, true
			}
		}
	}
}

// insert adds the key of hash h (not present) at slot.
func (ix *index) insert(h uint64, slot uint32) {
	if (ix.n+1)*4 > len(ix.e)*3 {
		ix.grow()
	}
	ix.put(h, slot)
	ix.n++
}

func (ix *index) put(h uint64, slot uint32) {
	i := h & ix.mask
	for ix.e[i].slot != 0 {
		i = (i + 1) & ix.mask
	}
	ix.e[i] = entry{uint32(h), slot + 1}
}

func (ix *index) grow() {
	old := ix.e
	size := 1024
	if len(old) > 0 {
		size = 2 * len(old)
	}
	if ix.mem == nil {
		ix.mem = newChunkMemory()
	}
	ix.e, ix.mask = ix.mem.entries(size), uint64(size-1)
	for _, e := range old {
		if e.slot != 0 {
			ix.put(uint64(e.h), e.slot-1)
		}
	}
	if old != nil {
		ix.mem.drop(old)
	}
}

// remove deletes k of hash h, which must be present.
func (ix *index) remove(s *slab, k key, h uint64) {
	i := h & ix.mask
	for {
		e := ix.e[i]
		if e.h == uint32(h) && s.at(e.slot-1).addr == k.addr && s.at(e.slot-1).tag == k.tag {
			break
		}
		i = (i + 1) & ix.mask
	}
	// Shift back the entries of the cluster that may not stay behind the hole.
	for j := (i + 1) & ix.mask; ix.e[j].slot != 0; j = (j + 1) & ix.mask {
		home := uint64(ix.e[j].h) & ix.mask
		if (j-home)&ix.mask >= (j-i)&ix.mask {
			ix.e[i] = ix.e[j]
			i = j
		}
	}
	ix.e[i] = entry{}
	ix.n--
}
