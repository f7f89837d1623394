package perfprobe

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/record"
	"github.com/gprobe/gprobe/record/khist"
)

// TestRecordStatus: record's errors as given are EINVAL, a missing or
// unwritable tracefs ENOENT, anything else 1.
func TestRecordStatus(t *testing.T) {
	for err, want := range map[error]int{
		fmt.Errorf("%w: -p and -a", record.ErrConfig):                   234,
		fmt.Errorf("%w \"x\": want GROUP:EVENT", record.ErrBadEvent):    234,
		fmt.Errorf("%w: no probe events installed", record.ErrNoEvents): 234,
		fmt.Errorf("open: %w", tracefs.ErrNoTracefs):                    254,
		fmt.Errorf("write: %w", tracefs.ErrPermission):                  254,
		errors.New("the command failed"):                                1,
	} {
		if got := RecordStatus(err); got != want {
			t.Errorf("RecordStatus(%v) = %d, want %d", err, got, want)
		}
	}
}

// TestLatencyStatus: a boot-time measurement not there is ENOENT
// whatever its cause, khist's refused settings are EINVAL, a kernel
// without hist triggers EOPNOTSUPP, other errors their errno's status.
func TestLatencyStatus(t *testing.T) {
	for err, no := range map[error]syscall.Errno{
		fmt.Errorf("%w: --by x", khist.ErrConfig):                                              syscall.EINVAL,
		errors.Join(fmt.Errorf("%w: tables for comm", khist.ErrConfig), khist.ErrNoBootReport): syscall.ENOENT,
		fmt.Errorf("README: %w", khist.ErrUnsupported):                                         syscall.EOPNOTSUPP,
		fmt.Errorf("open: %w", tracefs.ErrPermission):                                          syscall.EACCES,
		fmt.Errorf("open: %w", tracefs.ErrNoTracefs):                                           syscall.ENOENT,
		fmt.Errorf("write: %w", syscall.EBUSY):                                                 syscall.EBUSY,
		errors.New("something else"):                                                           syscall.EINVAL,
	} {
		if got := LatencyStatus(err); got != 256-int(no) {
			t.Errorf("LatencyStatus(%v) = %d, want %d", err, got, 256-int(no))
		}
	}
}
