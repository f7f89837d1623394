package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gprobe/gprobe/internal/testenv"
)

// openPTY returns a pseudo-terminal's two ends, the slave in raw output
// mode (no newline translation).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no pseudo-terminals:", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Oflag &^= unix.OPOST
	if err := unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	return m, s
}

// onTerminal runs gprobe with stdout and stderr a terminal and returns
// what the terminal got.
func onTerminal(t *testing.T, args ...string) (string, int) {
	t.Helper()
	m, s := openPTY(t)
	defer m.Close()
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(m) // ends with EIO once the slave is closed
		got <- b
	}()
	st := run(append([]string{"gprobe"}, args...), s, s)
	s.Close()
	return string(<-got), st
}

// TestTerminalEscapes: a source line and a symbol name carrying terminal
// control sequences (retitle, clear the screen) are shown escaped on a
// terminal, while -L keeps perf's colours there, and written as they are
// elsewhere (a file, a pipe: perf's bytes).
func TestTerminalEscapes(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "evil.c")
	os.WriteFile(src, []byte("int work(int x)\n{\n\treturn x + 1; /* \x1b]0;pwned\x07\x1b[2J\x9b */\n}\nint main(void) { return work(1); }\n"), 0o644)
	bin := testenv.BuildC(t, "gcc", src, "evil", "-g", "-O0")
	evil := filepath.Join(dir, "evil")
	if out, err := exec.Command(testenv.Tool(t, "objcopy"), "--add-symbol", "evil\x1b[2Jname=.text:0,function,global", bin, evil).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}

	out, st := onTerminal(t, "-x", evil, "-L", "work")
	if st != 0 {
		t.Fatalf("-L on a terminal: %d\n%q", st, out)
	}
	if !strings.Contains(out, `/* \x1b]0;pwned\x07\x1b[2J\x9b */`) || strings.Contains(out, "\x1b]") || strings.Contains(out, "\x1b[2J") {
		t.Errorf("-L on a terminal shows the control characters:\n%q", out)
	}
	if !strings.Contains(out, "\x1b[34m") || !strings.Contains(out, "\x1b[m") {
		t.Errorf("-L on a terminal lost its colours:\n%q", out)
	}
	out, st = onTerminal(t, "-x", evil, "-F", "evil*")
	if st != 0 || out != `evil\x1b[2Jname`+"\n" {
		t.Errorf("-F on a terminal: %d %q", st, out)
	}

	// Elsewhere: the bytes as they are, as perf writes them.
	r := runGprobe("-x", evil, "-L", "work")
	if r.Code != 0 || !strings.Contains(r.Stdout, "/* \x1b]0;pwned\x07\x1b[2J\x9b */") {
		t.Errorf("-L to a pipe: %s", r)
	}
	if r := runGprobe("-x", evil, "-F", "evil*"); r.Stdout != "evil\x1b[2Jname\n" {
		t.Errorf("-F to a pipe: %q", r.Stdout)
	}
	var b bytes.Buffer
	if isTerminal(&b) {
		t.Error("a buffer taken for a terminal")
	}
}
