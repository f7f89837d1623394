package itanium

import "strings"

// A Demangler demangles names one after another with the same memory:
// the parser's tables and the printer's buffer are reused from one name
// to the next rather than allocated for each (a library's -F demangles
// tens of thousands). It is not safe for concurrent use; the zero value
// is ready.
type Demangler struct {
	st    state
	ps    printState
	nodes nodes
}

// ToAST is ToAST with d's memory: the AST is valid until d demangles
// again.
func (d *Demangler) ToAST(name string, options ...Option) (AST, error) {
	if strings.HasPrefix(name, "_Z") {
		d.st.nodes = &d.nodes
		a, err := d.st.demangle(name[2:], options...)
		return a, adjustErr(err, 2)
	}
	return ToAST(name, options...)
}

// Print prints a as ASTToString does, into d's buffer, which it returns:
// the bytes are valid until d prints again.
func (d *Demangler) Print(a AST, options ...Option) []byte {
	return d.ps.run(a, options)
}

// nodes hands out the parser's commonest nodes from blocks that a
// Demangler reuses for each name: an AST it returned is valid until it
// demangles again.
type nodes struct {
	q       slab[Qualified]
	n       slab[Name]
	mwq     slab[MethodWithQualifiers]
	tmpl    slab[Template]
	lit     slab[Literal]
	qual    slab[Qualifier]
	quals   slab[Qualifiers]
	builtin slab[BuiltinType]
	lists   listSlab
}

// list returns a zeroed list of n nodes, whose capacity is n (an append
// to it copies it).
func (ns *nodes) list(n int) []AST { return ns.lists.next(n) }

// qualified returns a Qualified node to fill in.
func (ns *nodes) qualified() *Qualified {
	if ns == nil {
		return new(Qualified)
	}
	return ns.q.next()
}

// name returns a Name node to fill in.
func (ns *nodes) name() *Name {
	if ns == nil {
		return new(Name)
	}
	return ns.n.next()
}

// reset makes every block free again.
func (ns *nodes) reset() {
	if ns != nil {
		ns.q.reset()
		ns.n.reset()
		ns.mwq.reset()
		ns.tmpl.reset()
		ns.lit.reset()
		ns.qual.reset()
		ns.quals.reset()
		ns.builtin.reset()
		ns.lists.i, ns.lists.j = 0, 0
	}
}

// slabBlock is the number of nodes in a block of a slab.
const slabBlock = 64

// A slab hands out Ts from blocks of slabBlock, reused after reset.
type slab[T any] struct {
	blocks [][]T
	i, j   int // the next T is blocks[i][j]
}

func (s *slab[T]) next() *T {
	if s.i == len(s.blocks) {
		s.blocks = append(s.blocks, make([]T, slabBlock))
	}
	p := &s.blocks[s.i][s.j]
	if s.j++; s.j == slabBlock {
		s.i, s.j = s.i+1, 0
	}
	return p
}

func (s *slab[T]) reset() { s.i, s.j = 0, 0 }

// A listSlab hands out lists of nodes from blocks of slabBlock, reused
// after a reset; a longer list is allocated.
type listSlab struct {
	blocks [][]AST
	i, j   int // the next list starts at blocks[i][j]
}

func (s *listSlab) next(n int) []AST {
	if n > slabBlock {
		return make([]AST, n)
	}
	if s.i < len(s.blocks) && s.j+n > slabBlock {
		s.i, s.j = s.i+1, 0
	}
	if s.i == len(s.blocks) {
		s.blocks = append(s.blocks, make([]AST, slabBlock))
	}
	l := s.blocks[s.i][s.j : s.j+n : s.j+n]
	clear(l)
	s.j += n
	return l
}
