//go:build !linux

package refcount

import "github.com/gprobe/gprobe/internal/hugepage"

// chunkMemory is Go's heap where anonymous mappings are not at hand.
type chunkMemory struct{}

func newChunkMemory() *chunkMemory { return &chunkMemory{} }

func (m *chunkMemory) objects(n int, huge bool) []obj {
	if huge {
		return hugepage.Slice[obj](n)
	}
	return make([]obj, n)
}

func (m *chunkMemory) releases(n int) []released { return make([]released, n) }

func (m *chunkMemory) entries(n int) []entry { return hugepage.Slice[entry](n) }

func (m *chunkMemory) drop([]entry) {}

func (m *chunkMemory) tables() int { return 1 }
