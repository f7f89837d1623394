// Package itanium is github.com/ianlancetaylor/demangle (BSD licence, see
// LICENSE) at v0.0.0-20260724033716-83e58baca724, the C++ demangler that
// internal/demangle builds libiberty's output on, with a Demangler that
// reuses its memory from one name to the next (-F demangles a library's
// every symbol: libjvm's 58,000). The library allocates its parser state,
// a map for each simplification and substitution, every node and a
// growing string builder at each name: about 900 bytes of garbage a name,
// which made a library's first -F larger than perf's. A Demangler keeps
// its tables, its print buffer and blocks of the commonest nodes
// (demangler.go), and the parser skips the walks that cannot change
// anything (state.simplifiable); about 20 bytes a name are left.
//
// Changes from the library: its Rust demanglers (rust.go) are left out
// (ToString and Filter are C++ only; internal/demangle has libiberty's
// Rust demanglers); demangler.go; the state's reused tables,
// node blocks, nodeSet and simplifiable flag, the switch and table for
// qualifier and builtin-type codes, the gathering of template arguments
// (demangle.go); the printer's []byte buffer and printState.run (ast.go).
// The rest is the library's code, and its own tests (demangle_test.go,
// ast_test.go) run here too.
package itanium
