// Package follow starts and stops the command a tracing session follows.
//
// A session must filter the command's events from its very first one, its
// own execve included, yet cannot name a process before it exists. Start
// therefore runs the command under ptrace, as trace-cmd's forked child
// writes its pid before exec: the session sets its filter to the forking
// thread just before the fork (the kernel's event-fork option then adds the
// child the moment it is created), the child stops right after its execve,
// before the command's first instruction, and the session narrows the
// filter to the command before letting it go. End asks a command to end as
// perf record does when the session is interrupted.
package follow

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// StopSignals are the signals that end a session (a recording, a latency
// measurement, a download) the way Ctrl-C does, so that what it created
// is removed: SIGINT, SIGTERM, SIGHUP (the terminal or SSH session
// closed), SIGQUIT and SIGPIPE (stdout or stderr closed; without it a Go
// program dies at its next write there). Callers pass them to
// signal.Notify (Notify) or signal.NotifyContext.
var StopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE}

// Notify relays StopSignals to the channel it returns (a session's
// Signals) instead of letting them end the process, until stop is
// called.
func Notify() (sigs <-chan os.Signal, stop func()) {
	c := make(chan os.Signal, 2)
	signal.Notify(c, StopSignals...)
	return c, func() { signal.Stop(c) }
}

// Command is the command to follow: path run with argv (argv[0] as its
// name), its standard streams those given, the process's own where nil.
func Command(path string, argv []string, stdin io.Reader, stdout, stderr io.Writer) *exec.Cmd {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	if cmd.Stdin == nil {
		cmd.Stdin = os.Stdin
	}
	if cmd.Stdout == nil {
		cmd.Stdout = os.Stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	return cmd
}

// Start starts cmd under ptrace and lets it go once it has stopped after
// its execve. beforeFork runs just before the fork, on the thread that
// forks (its thread id is tid; a filter naming it catches the child's
// first events); stopped runs once the command is stopped, before its
// first instruction. Either may be nil. If a step fails, the command is
// killed and reaped, and the error returned.
func Start(cmd *exec.Cmd, beforeFork func(tid int) error, stopped func(pid int) error) error {
	// The filter names this thread, and ptrace requests must come from the
	// thread that started the child.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Ptrace = true
	if beforeFork != nil {
		if err := beforeFork(unix.Gettid()); err != nil {
			return err
		}
	}
	name := cmd.Args[0]
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	pid := cmd.Process.Pid
	fail := func(err error) error {
		_ = cmd.Process.Kill()
		_ = unix.PtraceDetach(pid)
		_ = cmd.Wait()
		return err
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
		return fail(fmt.Errorf("wait for %s to start: %w", name, err))
	}
	if !ws.Stopped() {
		return fail(fmt.Errorf("%s did not start (status %v)", name, ws))
	}
	if stopped != nil {
		if err := stopped(pid); err != nil {
			return fail(err)
		}
	}
	if err := unix.PtraceDetach(pid); err != nil {
		return fail(fmt.Errorf("release %s: %w", name, err))
	}
	return nil
}

// End asks a started command to end, as perf record does when it is
// interrupted: SIGTERM, then SIGKILL at a second signal from signals. done
// delivers cmd.Wait's result. It returns the command's exit status.
func End(cmd *exec.Cmd, done <-chan error, signals <-chan os.Signal) int {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-signals:
		_ = cmd.Process.Kill()
		<-done
	}
	return ExitCode(cmd)
}

// ExitCode is the exit status of a command cmd.Wait returned for: its exit
// code, or 128+signal when a signal killed it (1 when it never ran).
func ExitCode(cmd *exec.Cmd) int {
	if cmd.ProcessState == nil {
		return 1
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}
