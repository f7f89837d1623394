//go:build !linux

package hugepage

import "unsafe"

func adviseHuge(unsafe.Pointer, uintptr) {}

func populate(p, n uintptr) {}
