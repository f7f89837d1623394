// Package mountns runs code in another process's mount namespace (a
// container's), as perf probe --target-ns does around its file lookups and
// its writes to uprobe_events: the kernel resolves a uprobe's path with
// the root of the process writing the definition.
//
// A Go program always has several threads, and setns(CLONE_NEWNS) refuses
// a thread whose filesystem context (root, working directory) is shared
// with others; Do gives a locked thread a context of its own
// (unshare(CLONE_FS)) before entering the namespace, and lets that thread
// end with the function instead of returning it to the scheduler.
package mountns

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrNoProcess: the process does not exist, or its namespace cannot be
// read.
var ErrNoProcess = errors.New("no such process")

// path is /proc/PID/ns/mnt.
func path(pid int) string { return "/proc/" + strconv.Itoa(pid) + "/ns/mnt" }

// Same reports whether process pid is in gprobe's own mount namespace
// (then nothing needs entering, as perf's nsinfo__need_setns decides).
func Same(pid int) (bool, error) {
	if pid <= 0 {
		return false, fmt.Errorf("%d: %w", pid, ErrNoProcess)
	}
	theirs, err := os.Stat(path(pid))
	if err != nil {
		return false, fmt.Errorf("process %d: %w (%v)", pid, ErrNoProcess, err)
	}
	ours, err := os.Stat("/proc/self/ns/mnt")
	if err != nil {
		return false, err
	}
	return os.SameFile(theirs, ours), nil
}

// Do runs fn on a thread in the mount namespace of process pid and
// returns its error. fn must not start goroutines that expect to be in the
// namespace (they run on other threads); files it opens stay usable
// outside.
func Do(pid int, fn func() error) error {
	ns, err := os.Open(path(pid))
	if err != nil {
		return fmt.Errorf("process %d: %w (%v)", pid, ErrNoProcess, err)
	}
	defer ns.Close()
	return onOwnThread(func() error {
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			return fmt.Errorf("unshare(CLONE_FS): %w", err)
		}
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNS); err != nil {
			return fmt.Errorf("entering the mount namespace of process %d: %w", pid, err)
		}
		return fn()
	})
}

// onOwnThread runs fn on a thread that ends with it, so that no other
// goroutine ever runs on what fn changed, and returns fn's error. That
// thread is never the main one: the runtime cannot end the main thread
// and keeps it, changed, for good; its mount namespace is the process's
// in /proc/self (Same's, /proc/mounts). Landed there, the goroutine holds
// the main thread while another runs fn.
func onOwnThread(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			err := onOwnThread(fn) // elsewhere: this goroutine holds the main thread
			runtime.UnlockOSThread()
			done <- err
			return
		}
		// Not unlocked: the thread ends with this goroutine.
		done <- fn()
	}()
	return <-done
}

// Stat is os.Stat of path in the mount namespace of process pid.
func Stat(pid int, path string) (st iofs.FileInfo, err error) {
	if derr := Do(pid, func() error { st, err = os.Stat(path); return nil }); derr != nil {
		return nil, derr
	}
	return st, err
}

// Exe is the path of process pid's executable as its mount namespace sees
// it (what perf probe --target-ns -x would be given inside a container).
func Exe(pid int) (string, error) {
	dir, err := unix.Open("/proc/"+strconv.Itoa(pid), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("process %d: %w (%v)", pid, ErrNoProcess, err)
	}
	defer unix.Close(dir)
	var exe string
	// The kernel names the executable relative to the reader's root: read
	// the link from inside the namespace, through a directory opened here
	// (the namespace's /proc may be another PID namespace's).
	err = Do(pid, func() error {
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(dir, "exe", buf)
		if err != nil {
			return fmt.Errorf("process %d's executable: %w", pid, err)
		}
		exe = string(buf[:n])
		return nil
	})
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(exe, "/") || strings.HasSuffix(exe, " (deleted)") {
		return "", fmt.Errorf("process %d's executable is %q: not a file its namespace can open", pid, exe)
	}
	return exe, nil
}
