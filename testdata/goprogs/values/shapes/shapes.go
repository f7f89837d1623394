// Package shapes gives the test program functions whose names carry an
// import path: gprobetest/values/shapes.(*Box).Area.
package shapes

// Box is a rectangle.
type Box struct {
	W, H  int
	Label string
}

// Area is a method on a pointer receiver in a package with a path.
//
//go:noinline
func (b *Box) Area(scale int) int { return b.W * b.H * scale }
