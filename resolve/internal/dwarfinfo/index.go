package dwarfinfo

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/gprobe/gprobe/resolve/dwarfindex"
)

// With a cache (Options.Cache), the answers that otherwise take a pass
// over every unit come from the image's index: the unit headers, the
// function names (FindFuncs, EachFuncs), the line tables' file names
// (UnitsWithFile) and the symbol table's address order (SymbolsByAddr).
// A part missing from the index is computed in full the first time it is
// needed (a full pass even where the streaming walk would have stopped
// early) and written back at once. Without a cache, the walks stream as
// before. Both ways give the same answers: an index part is computed with
// the very matching rules the walks apply, and an image whose DWARF a
// walk finds malformed gets no index part (the walk reports the error).

// index is the image's dwarfindex.Index as this run knows it.
type index struct {
	mu sync.Mutex
	x  *dwarfindex.Index // nil: nothing loaded or computed yet
}

// loadIndex reads the image's index from the cache, reporting a damaged
// one (it is rebuilt part by part as parts are needed).
func (f *File) loadIndex() {
	x, err := f.cache.Load(f.key)
	switch {
	case err == nil:
		f.idx.x = x
	case errors.Is(err, dwarfindex.ErrDamaged):
		f.warn(fmt.Sprintf("gprobe: ignoring the index %s (%v); rebuilding it", f.cache.IndexPath(f.key), err))
	case errors.Is(err, dwarfindex.ErrUnsafe):
		// The image's directory: this image goes without the cache.
		f.warn(fmt.Sprintf("gprobe: %v; not using it for %s", err, f.Path))
		f.cache = nil
	}
}

// indexed returns the index when there is a cache (nil without one).
func (f *File) indexed() *dwarfindex.Index {
	if f.cache == nil {
		return nil
	}
	f.idx.mu.Lock()
	defer f.idx.mu.Unlock()
	if f.idx.x == nil {
		f.idx.x = &dwarfindex.Index{Key: f.key}
	}
	return f.idx.x
}

// storeIndex sets a part of the index with set and writes the index to the
// cache. A failed write only means the next run computes the part again.
func (f *File) storeIndex(set func(x *dwarfindex.Index)) {
	f.idx.mu.Lock()
	defer f.idx.mu.Unlock()
	set(f.idx.x)
	_ = f.cache.Store(f.idx.x)
}

// storedFuncIndex is the function-name part of the index when the cache
// had it or a walk built it; nil otherwise.
func (f *File) storedFuncIndex() *dwarfindex.Names {
	x := f.indexed()
	if x == nil {
		return nil
	}
	f.idx.mu.Lock()
	defer f.idx.mu.Unlock()
	return x.Funcs
}

// eachIndexing is EachFuncs without a function index yet: the units are
// walked listing every definition's names (what the index holds), fn is
// answered from those lists as the walk goes, and the index is built and
// kept once the walk has seen every unit. When fn stops the walk in the
// first half of the units (-L vfs_read stops at the first unit with the
// function, a fifth of the 6.1 vmlinux's), the rest is not walked and no
// index kept: this answer does not pay for it, a later one through every
// unit builds it. Stopped later, the walk goes on for the index: finishing
// costs less than what was walked.
func (f *File) eachIndexing(units []unitHeader, match NameMatcher, fn func(refs []FuncRef) (bool, error)) error {
	var b dwarfindex.NamesBuilder
	answered := false // fn stopped the walk
	seen := 0         // units whose names b holds
	err := scanUnits(f, units, func(s *scanner, i int, u *unitHeader) (unitNames, error) {
		return s.unitNames(i, u)
	}, func(i int, un unitNames) (bool, error) {
		seen++
		for _, n := range un.refs {
			b.Add(un.names[n.start:n.end], dwarfindex.Ref{Unit: uint32(i), Off: n.off})
		}
		if answered {
			return false, nil
		}
		refs := un.matching(i, match)
		if len(refs) == 0 {
			return false, nil
		}
		stop, err := fn(refs)
		if err != nil {
			return true, err
		}
		answered = stop
		return stop && 2*(i+1) < len(units), nil
	})
	if err != nil {
		return err
	}
	if seen == len(units) {
		t := b.Build()
		f.storeIndex(func(x *dwarfindex.Index) { x.Funcs = t })
	}
	return nil
}

// eachIndexed is EachFuncs through the function index: the definitions of
// every name that matches, per unit in unit order. ok is false when the
// index does not fit the image (then the units are walked instead).
func (f *File) eachIndexed(t *dwarfindex.Names, units []unitHeader, match NameMatcher, fn func(refs []FuncRef) (bool, error)) (ok bool, err error) {
	var refs []dwarfindex.Ref
	for i := 0; i < t.Len(); i++ {
		if !match(t.Name(i)) {
			continue
		}
		if refs, err = t.Refs(i, refs); err != nil {
			return false, nil
		}
	}
	// A definition matching under both its name and its linkage name is
	// listed twice.
	slices.SortFunc(refs, func(a, b dwarfindex.Ref) int {
		if a.Unit != b.Unit {
			return cmp.Compare(a.Unit, b.Unit)
		}
		return cmp.Compare(a.Off, b.Off)
	})
	refs = slices.Compact(refs)
	for _, r := range refs {
		if int(r.Unit) >= len(units) || r.Off < units[r.Unit].dieOff || r.Off >= units[r.Unit].end {
			return false, nil
		}
	}
	for start := 0; start < len(refs); {
		out := []FuncRef{}
		end := start
		for ; end < len(refs) && refs[end].Unit == refs[start].Unit; end++ {
			out = append(out, FuncRef{Unit: int(refs[end].Unit), Offset: refs[end].Off})
		}
		start = end
		if stop, err := fn(out); err != nil || stop {
			return true, err
		}
	}
	return true, nil
}

// fileIndex returns the file-name part of the index, computing it if
// needed; nil when there is no cache or a line table cannot be read.
func (f *File) fileIndex(units []unitHeader) *dwarfindex.Names {
	x := f.indexed()
	if x == nil {
		return nil
	}
	f.idx.mu.Lock()
	t := x.Files
	f.idx.mu.Unlock()
	if t != nil {
		return t
	}
	var b dwarfindex.NamesBuilder
	err := scanUnits(f, units, func(s *scanner, i int, u *unitHeader) ([]string, error) {
		return s.unitFiles(u)
	}, func(i int, files []string) (bool, error) {
		for _, name := range files {
			b.Add([]byte(name), dwarfindex.Ref{Unit: uint32(i)})
		}
		return false, nil
	})
	if err != nil {
		return nil
	}
	t = b.Build()
	f.storeIndex(func(x *dwarfindex.Index) { x.Files = t })
	return t
}
