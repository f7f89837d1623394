//go:build !linux

package refcount

import "unsafe"

func adviseHuge(unsafe.Pointer, uintptr) {}
