package lines

// WalkFunc receives one (file, line, address) tuple of a line walk. A
// non-nil error stops the walk and is returned by [Unit.WalkLines].
type WalkFunc func(file string, line int, addr uint64) error

// WalkLines is perf's die_walk_lines. With root == nil it walks the whole
// unit: every is_stmt row, then each function's declaration line at its
// entry and each inlined call site at the inline's entry. With a function
// root it keeps only rows inside the function that do not belong to an
// inlined callee, then adds the function's declaration line and the call
// sites of its directly inlined callees.
func (u *Unit) WalkLines(root *Scope, fn WalkFunc) error {
	var decl, declFile int
	declFile = -1
	if root != nil {
		decl, declFile = root.DeclLine, root.DeclFile
	}
	rows, err := u.AllRows()
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.EndSeq || !r.IsStmt {
			continue
		}
		if root != nil {
			if !root.HasPC(r.Addr) {
				continue
			}
			if in := FindInnermostInline(root, r.Addr); in != nil {
				inf := u.File(in.CallFile)
				decf := u.File(declFile)
				sameCall := in.CallFile >= 0 && declFile >= 0 && inf == decf && in.CallLine == r.Line
				if !sameCall && (in.DeclLine != decl || in.DeclFile != declFile) {
					continue
				}
			}
		}
		if err := fn(u.File(r.File), r.Line, r.Addr); err != nil {
			return err
		}
	}
	if root != nil {
		return u.walkFuncLines(root, false, fn)
	}
	for _, f := range u.Funcs {
		if f.Declaration {
			continue
		}
		if err := u.walkFuncLines(f, true, fn); err != nil {
			return err
		}
	}
	return nil
}

// walkFuncLines is perf's __die_walk_funclines: the declaration line of sp
// at its entry, then inlined call sites below it (and, when recursive, the
// declaration line of each inlined callee at its entry).
func (u *Unit) walkFuncLines(sp *Scope, recursive bool, fn WalkFunc) error {
	if f := u.File(sp.DeclFile); f != "" && sp.DeclLine > 0 {
		if addr, ok := sp.LowestPC(); ok {
			if err := fn(f, sp.DeclLine, addr); err != nil {
				return err
			}
		}
	}
	var walk func(s *Scope) error
	walk = func(s *Scope) error {
		for _, c := range s.Children {
			var addr uint64
			if c.Kind == Inlined {
				fname := u.File(c.CallFile)
				a, ok := c.LowestPC()
				if fname != "" && c.CallLine > 0 && ok {
					addr = a
					if err := fn(fname, c.CallLine, addr); err != nil {
						return err
					}
				}
				if !recursive {
					continue
				}
			}
			if addr != 0 {
				if f := u.File(c.DeclFile); f != "" && c.DeclLine > 0 {
					if err := fn(f, c.DeclLine, addr); err != nil {
						return err
					}
				}
			}
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(sp)
}

// LineInfo is perf's cu_find_lineinfo: the (file, line) an address belongs
// to. A function's entry address maps to its declaration line; any other
// address maps to the first is_stmt row among the rows at the address
// (libdw cu_getsrc_die). ok is false when no line is found.
func (u *Unit) LineInfo(addr uint64) (file string, line int, ok bool) {
	if f := u.FindRealFunc(addr); f != nil {
		if e, has := f.LowestPC(); has && e == addr {
			file, line = u.File(f.DeclFile), f.DeclLine
			return file, line, line != 0
		}
	}
	r := u.stmtRowAt(addr)
	if r == nil {
		return "", 0, false
	}
	file = u.File(r.File)
	if file == "" {
		return "", 0, false
	}
	return file, r.Line, r.Line != 0
}

// stmtRowAt reproduces libdw-based cu_getsrc_die, including its quirks: a
// binary search for the last row at or below addr, a step back over rows
// at exactly addr (failing when that walks off the front of the table),
// then the first is_stmt row not beyond addr.
func (u *Unit) stmtRowAt(addr uint64) *Row {
	rows, err := u.AllRows()
	if err != nil || len(rows) == 0 {
		return nil
	}
	l, h := 0, len(rows)-1
	for l < h {
		n := h - (h-l)/2
		if addr < rows[n].Addr {
			h = n - 1
		} else {
			l = n
		}
	}
	for {
		l--
		if l < 0 {
			return nil
		}
		if rows[l].Addr != addr {
			break
		}
	}
	l++
	for ; l < len(rows); l++ {
		if rows[l].Addr > addr {
			return nil
		}
		if rows[l].IsStmt {
			return &rows[l]
		}
	}
	return nil
}

// TailCmp is perf's strtailcmp: it compares two paths from their ends and
// reports whether the shorter one is a suffix of the longer one.
func TailCmp(a, b string) bool {
	i, j := len(a)-1, len(b)-1
	for i >= 0 && j >= 0 {
		if a[i] != b[j] {
			return false
		}
		i--
		j--
	}
	return true
}
