package mountns

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gprobe/gprobe/internal/testenv"
	"golang.org/x/sys/unix"
)

func TestSame(t *testing.T) {
	if same, err := Same(os.Getpid()); err != nil || !same {
		t.Errorf("Same(self) = %v, %v", same, err)
	}
	if _, err := Same(1 << 30); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Same(no process) = %v, want ErrNoProcess", err)
	}
	if err := Do(1<<30, func() error { return nil }); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Do(no process) = %v, want ErrNoProcess", err)
	}
	if _, err := Stat(1<<30, "/"); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Stat(no process) = %v, want ErrNoProcess", err)
	}
}

// Do sees what a process in its own mount namespace (unshare -m) mounted,
// which gprobe's namespace does not.
func TestDoInAnotherNamespace(t *testing.T) {
	testenv.Heavy(t, "a mount namespace made with unshare")
	unshare := testenv.Tool(t, "unshare")
	if os.Geteuid() != 0 {
		testenv.Missing(t, "root, to make a mount namespace")
	}
	dir := t.TempDir()
	cmd := exec.Command(unshare, "-m", "--propagation", "private", "sh", "-c",
		"mount -t tmpfs gprobe-mountns-test "+dir+" && echo inside > "+dir+"/marker && cp "+testenv.Tool(t, "sleep")+" "+dir+"/nap && echo ready && exec "+dir+"/nap 60")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil || string(buf) != "ready\n" {
		t.Fatalf("the namespace did not start: %q %v", buf, err)
	}
	pid := cmd.Process.Pid
	if same, err := Same(pid); err != nil || same {
		t.Fatalf("Same(unshared) = %v, %v", same, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
		t.Fatal("the marker is visible outside the namespace")
	}
	// Threads that entered the namespace end with their function, but the
	// main thread cannot end: if a Do ran there, it stays in the
	// namespace, and /proc/self/ns/mnt (the main thread's) names it. Same
	// still answers for gprobe.
	for i := 0; i < 200; i++ {
		if err := Do(pid, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
		if same, err := Same(pid); err != nil || same {
			t.Fatalf("Same(unshared) after %d Do = %v, %v", i+1, same, err)
		}
	}
	if same, err := Same(os.Getpid()); err != nil || !same {
		t.Errorf("Same(self) after Do = %v, %v", same, err)
	}
	var inside []byte
	if err := Do(pid, func() error {
		var err error
		inside, err = os.ReadFile(filepath.Join(dir, "marker"))
		return err
	}); err != nil || strings.TrimSpace(string(inside)) != "inside" {
		t.Errorf("Do: %q, %v", inside, err)
	}
	if st, err := Stat(pid, filepath.Join(dir, "marker")); err != nil || st.Size() != int64(len("inside\n")) {
		t.Errorf("Stat(marker) in the namespace: %v, %v", st, err)
	}
	if _, err := Stat(pid, filepath.Join(dir, "nosuch")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Stat(nosuch) in the namespace = %v, want ErrNotExist", err)
	}
	// The shell execs a copy of sleep in the namespace's tmpfs: its path
	// as the namespace sees it (from here, the kernel names it from the
	// tmpfs's own root, which is not reachable from gprobe's).
	var outside string
	for i := 0; i < 100; i++ {
		if outside, _ = os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); filepath.Base(outside) == "nap" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if exe, err := Exe(pid); err != nil || exe != filepath.Join(dir, "nap") {
		t.Errorf("Exe = %q, %v; want %s (seen from outside: %s)", exe, err, filepath.Join(dir, "nap"), outside)
	}
	t.Logf("the executable seen from outside: %s", outside)
	// Other goroutines stay in gprobe's namespace.
	time.Sleep(10 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
		t.Error("the marker is visible after Do")
	}
}

// TestOnOwnThread: fn never runs on the main thread (which the runtime
// would keep, changed, after fn), though goroutines do land there.
func TestOnOwnThread(t *testing.T) {
	for i := 0; i < 300; i++ {
		var main bool
		if err := onOwnThread(func() error { main = unix.Gettid() == unix.Getpid(); return nil }); err != nil {
			t.Fatal(err)
		}
		if main {
			t.Fatalf("run %d: fn ran on the main thread", i)
		}
	}
}
