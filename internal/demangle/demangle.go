// Package demangle gives ELF symbol names the names perf probe 6.1 shows
// and matches: Itanium C++ without parameters, Rust's legacy and v0
// manglings without hashes, OCaml and Java names (util/symbol-elf.c
// demangle_sym).
//
// Debian's perf 6.1 is linked with libiberty: demangle_sym calls
// cplus_demangle(name, DMGL_NO_OPTS) — DMGL_PARAMS|DMGL_ANSI under -v —
// in libiberty's automatic style, which tries Rust (legacy `_ZN...17h<hash>E`
// and v0 `_R...`) and then the C++ ABI. A name neither demangles goes to
// perf's OCaml demangler (`camlModule__name_123` → `Module.name_123`),
// then to its Java one (`Lpkg/Class;method(I)V` → `pkg.Class.method(int)`).
// A name none of them takes keeps its spelling.
//
// The C++ and Rust grammars are github.com/ianlancetaylor/demangle's,
// with the options that make its output libiberty's; where the two still
// differ the tests (against perf itself, on every symbol of libstdc++,
// libjvm, LLVM and Rust's standard library) say so.
package demangle

import (
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// Version changes whenever a name's demangling changes: names kept from
// an earlier run (a DSO's -F listing in the index cache) carry it.
const Version = 1

// Options select how names are shown.
type Options struct {
	// Params shows C++ function parameters and clone suffixes (perf -v
	// asks libiberty for DMGL_PARAMS).
	Params bool
}

// Name returns the name perf 6.1 shows for the ELF symbol name sym, and
// whether it differs from sym because a demangler took it.
func Name(sym string, o Options) (string, bool) {
	if !Maybe(sym) {
		return sym, false
	}
	if s, ok := mangled(sym, o); ok {
		return s, true
	}
	if s, ok := ocaml(sym); ok {
		return s, true
	}
	if s, ok := java(sym); ok {
		return s, true
	}
	return sym, false
}

// Maybe reports whether some demangler could take sym; false means Name
// returns sym unchanged. It looks at a few bytes (and, for a name that
// could be Java's, searches for ')').
func Maybe(sym string) bool {
	if len(sym) < 2 {
		return false
	}
	switch {
	case sym[0] == '_' && (sym[1] == 'Z' || sym[1] == 'R' || sym[1] == 'G' || sym[1] == '_'):
		return true
	case isOCaml(sym):
		return true
	}
	return strings.IndexByte(sym, ')') >= 0
}

// mangled is libiberty's cplus_demangle in the automatic style: Rust
// first, then the C++ ABI (the GNU v3 demangler also takes the
// `_GLOBAL_[._$][ID]_` names of global constructors and destructors);
// then perf's own Rust step on what came out.
func mangled(sym string, o Options) (string, bool) {
	s, ok := rust(sym)
	if !ok {
		s, ok = cxx(sym, o)
	}
	if !ok {
		return "", false
	}
	if r, ok := perfRust(s); ok {
		return r, true
	}
	return s, true
}

// cxx demangles an Itanium C++ ABI name as libiberty 2.40 does.
func cxx(sym string, o Options) (string, bool) {
	if !strings.HasPrefix(sym, "_Z") && !strings.HasPrefix(sym, "_GLOBAL_") {
		return "", false
	}
	// Not the library's Rust demangler: libiberty's refused the name.
	opts := []demangle.Option{demangle.NoRust}
	if !o.Params {
		opts = append(opts, demangle.NoParams)
	}
	a, err := demangle.ToAST(sym, opts...)
	if err != nil {
		return "", false
	}
	if strings.Contains(sym, "adL") {
		// The address of a function in a template argument (ad L_Z...E).
		a = addressOfFunctions(a)
	}
	marked := false
	if strings.IndexByte(sym, 'J') >= 0 {
		// Only an argument pack (J...E) makes an empty one.
		a, marked = markEmptyPacks(a)
	}
	s := demangle.ASTToString(a, opts...)
	if marked {
		s = dropEmptyPacks(s)
	}
	return s, true
}

// addressOfFunctions makes the address of a function in an expression
// print as libiberty 2.40 prints it: only a qualified name (&ns::f) loses
// its signature; any other (&f, &ns::f<int>) is printed whole, return
// type and parameters in parentheses: "&(bool eq<int>(int const&))".
// The library drops every such signature, as newer libiberty does.
func addressOfFunctions(a demangle.AST) demangle.AST {
	r := a.Copy(func(n demangle.AST) demangle.AST {
		u, ok := n.(*demangle.Unary)
		if !ok || u.Suffix {
			return nil
		}
		if op, ok := u.Op.(*demangle.Operator); !ok || op.Name != "&" {
			return nil
		}
		t, ok := u.Expr.(*demangle.Typed)
		if !ok {
			return nil
		}
		if _, ok := t.Type.(*demangle.FunctionType); !ok {
			return nil
		}
		if _, ok := t.Name.(*demangle.Qualified); ok {
			return nil
		}
		// A name, not an operator: the library then prints the
		// operand whole, in parentheses.
		return &demangle.Unary{Op: &demangle.Name{Name: "&"}, Expr: t}
	}, func(demangle.AST) bool { return false })
	if r == nil {
		return a
	}
	return r
}

// isOCaml is perf's ocaml_is_mangled: "caml" and an upper-case letter.
func isOCaml(sym string) bool {
	return len(sym) > 4 && strings.HasPrefix(sym, "caml") && sym[4] >= 'A' && sym[4] <= 'Z'
}

// ocaml is perf's ocaml_demangle_sym (util/demangle-ocaml.c): "caml" is
// dropped, "__" becomes ".", "$xx" the byte 0xxx; the "_NNN" stamp is
// kept (perf removed its stripping before 6.1).
func ocaml(sym string) (string, bool) {
	if !isOCaml(sym) {
		return "", false
	}
	b := make([]byte, 0, len(sym))
	for i := 4; i < len(sym); {
		switch {
		case sym[i] == '_' && i+1 < len(sym) && sym[i+1] == '_':
			b = append(b, '.')
			i += 2
		case sym[i] == '$' && i+2 < len(sym) && isXDigit(sym[i+1]) && isXDigit(sym[i+2]):
			b = append(b, unhex(sym[i+1])<<4|unhex(sym[i+2]))
			i += 3
		default:
			b = append(b, sym[i])
			i++
		}
	}
	return string(b), true
}

func isXDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// emptyMark stands for an empty pack in a list while the library prints.
const emptyMark = "\x01"

// markEmptyPacks replaces the empty argument packs and pack expansions of
// template argument and parameter lists by a name of its own, for
// dropEmptyPacks to remove as libiberty does. The library leaves them out
// of a list; libiberty prints the ", " before each and takes it back only
// when nothing follows in the list ("f<a, , b>", "f(int, , char)"), and
// then no space separates a '>' before it from the list's '>':
// "A<B<int>>", where "A<B<int> >" has no pack.
func markEmptyPacks(a demangle.AST) (demangle.AST, bool) {
	found := false
	a.Traverse(func(n demangle.AST) bool {
		switch n := n.(type) {
		case *demangle.ArgumentPack, *demangle.PackExpansion:
			found = true
		case *demangle.ExprList:
			found = len(n.Exprs) == 0
		}
		return !found
	})
	if !found {
		return a, false
	}
	marked := false
	mark := func(args []demangle.AST) []demangle.AST {
		var out []demangle.AST
		for i, x := range args {
			if isEmptyPack(x) {
				if out == nil {
					out = append([]demangle.AST{}, args...)
				}
				out[i] = &demangle.Name{Name: emptyMark}
				marked = true
			}
		}
		return out
	}
	r := a.Copy(func(n demangle.AST) demangle.AST {
		switch n := n.(type) {
		case *demangle.Template:
			if args := mark(n.Args); args != nil {
				return &demangle.Template{Name: n.Name, Args: args}
			}
		case *demangle.FunctionType:
			if args := mark(n.Args); args != nil {
				c := *n
				c.Args = args
				return &c
			}
		}
		return nil
	}, func(demangle.AST) bool { return false })
	if r == nil {
		return a, marked
	}
	return r, marked
}

// isEmptyPack is the library's test for a list element it leaves out.
func isEmptyPack(a demangle.AST) bool {
	switch a := a.(type) {
	case *demangle.ArgumentPack:
		for _, x := range a.Args {
			if !isEmptyPack(x) {
				return false
			}
		}
		return true
	case *demangle.PackExpansion:
		return a.Pack != nil && isEmptyPack(a.Pack)
	case *demangle.ExprList:
		// A pack expansion the parser expanded to nothing.
		return len(a.Exprs) == 0
	}
	return false
}

// dropEmptyPacks removes the marks: with the ", " before them where only
// marks follow in the list, alone elsewhere.
func dropEmptyPacks(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], ", "+emptyMark) {
			j := i
			for strings.HasPrefix(s[j:], ", "+emptyMark) {
				j += 2 + len(emptyMark)
			}
			if j == len(s) || s[j] == '>' || s[j] == ')' {
				i = j
				continue
			}
		}
		if strings.HasPrefix(s[i:], emptyMark) {
			i += len(emptyMark)
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}
