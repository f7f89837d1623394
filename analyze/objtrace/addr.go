// Package objtrace follows objects by address through a recording: the
// life of one object across every event whose arguments carry its
// address (Tracer), and the objects most often seen or longest lived
// among the address-like arguments of all events (Ranker). Both stream:
// a Tracer keeps a summary, a Ranker a few dozen bytes per distinct
// object, never the events.
package objtrace

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrAddr is wrapped by errors about an object address.
var ErrAddr = errors.New("bad object address")

// Addr is an object's address: in the kernel (Proc 0), or in the user
// space of process Proc (a thread group id), where addresses are per
// process.
type Addr struct {
	Proc int
	Addr uint64
}

// ParseAddr reads "ADDR" (a kernel address) or "PID:ADDR" (an address in
// process PID's user space); ADDR is hexadecimal, with or without 0x, as
// the reports print it.
func ParseAddr(s string) (Addr, error) {
	var a Addr
	rest := s
	if p, addr, ok := strings.Cut(s, ":"); ok {
		pid, err := strconv.ParseUint(p, 10, 31)
		if err != nil || pid == 0 {
			return a, fmt.Errorf("%w %q: PID %q is not a process id", ErrAddr, s, p)
		}
		a.Proc, rest = int(pid), addr
	}
	hex := strings.TrimPrefix(strings.TrimPrefix(rest, "0x"), "0X")
	v, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		return a, fmt.Errorf("%w %q: want ADDR or PID:ADDR, ADDR in hex", ErrAddr, s)
	}
	if v == 0 {
		return a, fmt.Errorf("%w %q: address 0 is no object", ErrAddr, s)
	}
	a.Addr = v
	return a, nil
}

// String is "0xADDR", or "PID:0xADDR" in user space; ParseAddr reads it.
func (a Addr) String() string {
	s := "0x" + strconv.FormatUint(a.Addr, 16)
	if a.Proc != 0 {
		return strconv.Itoa(a.Proc) + ":" + s
	}
	return s
}
