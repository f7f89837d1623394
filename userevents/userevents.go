// Package userevents lets a Go program define trace events of its own and
// write them, through the kernel's user_events (Linux 6.4 and later, built
// with CONFIG_USER_EVENTS; Documentation/trace/user_events.rst):
//
//	ev, err := userevents.Register("request_end u32 id; u32 status", 0)
//	...
//	if ev.Enabled() { // a tracer has the event enabled
//		ev.Write(userevents.U32(id), userevents.U32(status))
//	}
//
// Registering gives the kernel the address of a word in the program's
// memory and a bit in it, which the kernel sets while any tracer (gprobe
// record -e 'user_events:*', perf, ftrace) has the event enabled, and
// clears when none has: Enabled is one atomic load, so an event nobody
// records costs nothing more. Write sends the payload with writev on the
// registration's file, after the write index the kernel gave; it writes
// only while the event is enabled.
//
// The event appears as user_events:NAME in tracefs, with the fields of its
// definition, and is traced, filtered, histogrammed and recorded like any
// other event. It is deleted when the last program that registered it
// exits (unless registered with Persist), so a recorder must save its
// format while it exists, as gprobe record does.
//
// The definition ("NAME[ FIELD[;FIELD...]]", each field "TYPE NAME" or
// "struct TYPE NAME SIZE") is checked with the kernel's own rules
// (emit/probedef, as for a u: line of dynamic_events) before the kernel
// sees it. The payload is the fields' bytes in order, in the machine's
// byte order: U32, U64 and the like encode one value, Chars a fixed char
// array.
package userevents

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gprobe/gprobe/emit/probe"
	"github.com/gprobe/gprobe/emit/probedef"
	"github.com/gprobe/gprobe/emit/tracefs"
)

// Flags change how an event is registered (include/uapi/linux/user_events.h).
type Flags uint16

const (
	// Persist keeps the event after the last program that registered it
	// exits (CAP_PERFMON).
	Persist Flags = 1 << 0
	// MultiFormat lets programs register one name with different fields:
	// the event is then user_events_multi:NAME.ID.
	MultiFormat Flags = 1 << 1
)

// The ioctls of user_events_data: _IOWR('*', 0, struct user_reg *) and
// _IOW('*', 2, struct user_unreg *) (the size in the number is a
// pointer's).
const (
	iocReg   uintptr = 3<<30 | 8<<16 | '*'<<8 | 0
	iocUnreg uintptr = 1<<30 | 8<<16 | '*'<<8 | 2
)

// userReg is struct user_reg (packed: 28 bytes; this layout has no holes
// before write_index).
type userReg struct {
	size       uint32
	enableBit  uint8
	enableSize uint8
	flags      uint16
	enableAddr uint64
	nameArgs   uint64
	writeIndex uint32
}

const userRegSize = 28

// userUnreg is struct user_unreg (16 bytes).
type userUnreg struct {
	size        uint32
	disableBit  uint8
	reserved    uint8
	reserved2   uint16
	disableAddr uint64
}

var (
	// ErrUnsupported: the kernel has no user_events (CONFIG_USER_EVENTS,
	// Linux 6.4 or later), or tracefs is not there.
	ErrUnsupported = errors.New("user events are not available")
	// ErrClosed: the event was closed.
	ErrClosed = errors.New("user event closed")
)

// Event is a registered user event.
type Event struct {
	name  string
	f     *os.File
	index [4]byte // the write index, in the machine's byte order
	// enabled is the word the kernel sets bit 0 of; its own allocation,
	// which the Go heap never moves, kept alive by the Event.
	enabled *uint32
	closed  atomic.Bool
}

// Register defines the event def ("NAME[ FIELD[;FIELD...]]") and returns
// it, disabled until a tracer enables it.
func Register(def string, flags Flags) (*Event, error) {
	p, err := probedef.Parse("u:"+strings.TrimSpace(def), nil)
	if err != nil {
		return nil, fmt.Errorf("user event %q: %w", def, err)
	}
	fs, err := tracefs.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	path := filepath.Join(fs.Root, "user_events_data")
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist (%s)", ErrUnsupported, path, probedef.KindRequirement(probe.UserEvent))
	}
	if err != nil {
		return nil, err
	}
	e := &Event{name: p.Event, f: f, enabled: new(uint32)}
	// The kernel reads the definition as written: the one checked.
	cmd := append([]byte(p.String()[len("u:"):]), 0)
	reg := userReg{
		size:       userRegSize,
		enableBit:  0,
		enableSize: 4,
		flags:      uint16(flags),
		enableAddr: uint64(uintptr(unsafe.Pointer(e.enabled))),
		nameArgs:   uint64(uintptr(unsafe.Pointer(&cmd[0]))),
	}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), iocReg, uintptr(unsafe.Pointer(&reg)))
	runtime.KeepAlive(cmd)
	if errno != 0 {
		f.Close()
		return nil, fmt.Errorf("registering user event %q: %w", p.String(), errno)
	}
	binary.NativeEndian.PutUint32(e.index[:], reg.writeIndex)
	return e, nil
}

// Name is the event's name (user_events:NAME).
func (e *Event) Name() string { return e.name }

// Enabled reports whether a tracer has the event enabled now.
func (e *Event) Enabled() bool { return atomic.LoadUint32(e.enabled)&1 != 0 }

// Write writes one event whose payload is the parts, in order, if the
// event is enabled; it reports whether it wrote. The kernel refuses a
// payload shorter than the fields (EINVAL) and, for a __data_loc or
// __rel_loc field, one that points outside the payload (EFAULT).
func (e *Event) Write(parts ...[]byte) (bool, error) {
	if e.closed.Load() {
		return false, ErrClosed
	}
	if !e.Enabled() {
		return false, nil
	}
	iov := make([][]byte, 0, 1+len(parts))
	iov = append(iov, e.index[:])
	iov = append(iov, parts...)
	if _, err := unix.Writev(int(e.f.Fd()), iov); err != nil {
		if errors.Is(err, unix.EBADF) && !e.Enabled() {
			// Disabled between the check and the write.
			return false, nil
		}
		return false, fmt.Errorf("writing user event %s: %w", e.name, err)
	}
	return true, nil
}

// Close unregisters the event (the kernel stops updating the enable word)
// and closes its file. A non-persistent event is deleted once no program
// has it registered and no tracer has it enabled.
func (e *Event) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	un := userUnreg{size: 16, disableBit: 0, disableAddr: uint64(uintptr(unsafe.Pointer(e.enabled)))}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, e.f.Fd(), iocUnreg, uintptr(unsafe.Pointer(&un)))
	cerr := e.f.Close()
	runtime.KeepAlive(e.enabled)
	if errno != 0 {
		return fmt.Errorf("unregistering user event %s: %w", e.name, errno)
	}
	return cerr
}

// U32 encodes a u32, s32 or int field.
func U32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }

// U64 encodes a u64 or s64 field.
func U64(v uint64) []byte { return binary.NativeEndian.AppendUint64(nil, v) }

// U16 encodes a u16, s16 or short field.
func U16(v uint16) []byte { return binary.NativeEndian.AppendUint16(nil, v) }

// Chars encodes s in a char[n] field: cut to n-1 bytes and NUL-padded.
func Chars(s string, n int) []byte {
	b := make([]byte, n)
	copy(b[:max(0, n-1)], s)
	return b
}
