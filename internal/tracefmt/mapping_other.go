//go:build !unix

package tracefmt

import (
	"errors"
	"os"
)

func mmap(*os.File, int) ([]byte, error) { return nil, errors.ErrUnsupported }

func munmap([]byte) error { return nil }
