// Package itanium is github.com/ianlancetaylor/demangle (BSD licence, see
// LICENSE), the C++ demangler internal/demangle builds libiberty's
// output on, with a Demangler that reuses its memory from one name to the
// next: the library allocates its parser state, a map for each
// simplification and a growing string builder at every name, about half
// of the 900 bytes of garbage a name that -F on a large C++ library left.
// Apart from Demangler (demangler.go) and the printer's []byte buffer,
// the code is the library's at the version go.mod named.
package itanium
