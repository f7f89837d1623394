package install

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/gprobe/gprobe/emit/tracefs"
)

// TestErrno: each error of installing and deleting stands for the errno
// perf returns for it.
func TestErrno(t *testing.T) {
	for _, c := range []struct {
		err  error
		want syscall.Errno
	}{
		{fmt.Errorf("write: %w", syscall.EBUSY), syscall.EBUSY},
		{fmt.Errorf("x: %w", tracefs.ErrPermission), syscall.EACCES},
		{ErrHiddenAddresses, syscall.EACCES},
		{tracefs.ErrNoKprobes, syscall.ENOENT},
		{tracefs.ErrExist, syscall.EEXIST},
		{tracefs.ErrBusy, syscall.EBUSY},
		{ErrTooManyNames, syscall.ERANGE},
		{errors.New("other"), syscall.EINVAL},
	} {
		if got := Errno(c.err); got != c.want {
			t.Errorf("Errno(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
