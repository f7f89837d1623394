package perfprobe

import (
	"errors"
	"syscall"

	"github.com/gprobe/gprobe/emit/install"
	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/record"
	"github.com/gprobe/gprobe/record/khist"
)

// The exit statuses of gprobe's sessions, which perf probe does not have,
// in the same convention (256 - errno) where an errno fits.

// RecordStatus is gprobe record's exit status for record.Run's error err:
// EINVAL for settings or events that are wrong as given (record.ErrConfig,
// ErrBadEvent, ErrNoEvents), ENOENT for a tracefs that is not there or
// not writable, else 1.
func RecordStatus(err error) int {
	switch {
	case errors.Is(err, record.ErrConfig), errors.Is(err, record.ErrBadEvent), errors.Is(err, record.ErrNoEvents):
		return Status(syscall.EINVAL)
	case errors.Is(err, tracefs.ErrNoTracefs), errors.Is(err, tracefs.ErrPermission):
		return Status(syscall.ENOENT)
	}
	return 1
}

// LatencyStatus is gprobe latency's exit status for the error err of a
// measurement (khist.Open's, khist.Run's, khist.BootReport's, the
// report's): ENOENT for a boot-time measurement that is not there
// (khist.ErrNoBootReport), EINVAL for settings khist refuses
// (khist.ErrConfig), EOPNOTSUPP for a kernel without hist triggers or
// synthetic events (khist.ErrUnsupported), else 256 - install.Errno.
func LatencyStatus(err error) int {
	switch {
	case errors.Is(err, khist.ErrNoBootReport):
		return Status(syscall.ENOENT)
	case errors.Is(err, khist.ErrConfig):
		return Status(syscall.EINVAL)
	case errors.Is(err, khist.ErrUnsupported):
		return Status(syscall.EOPNOTSUPP)
	}
	return Status(install.Errno(err))
}
