package target_test

import (
	"context"
	"debug/elf"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gprobe/gprobe/emit/tracefs"
	"github.com/gprobe/gprobe/internal/testenv"
	"github.com/gprobe/gprobe/lines"
	"github.com/gprobe/gprobe/resolve/debuginfod"
	"github.com/gprobe/gprobe/resolve/internal/resolver"
	"github.com/gprobe/gprobe/resolve/spec"
	"github.com/gprobe/gprobe/resolve/target"
)

// Debug information fetched from Debian's debuginfod serving Debian's -dbg
// packages must give the answers the same files give from disk, byte for
// byte.

// answers opens o and resolves each spec as -D does on this machine: a
// definition per line, or the error.
func answers(t *testing.T, o target.Options, specs ...string) string {
	t.Helper()
	tg, err := target.Open(o)
	if err != nil {
		t.Fatalf("target.Open(%+v): %v", o, err)
	}
	defer tg.Close()
	if tg.FetchErr != nil {
		t.Fatalf("target.Open(%+v): %v", o, tg.FetchErr)
	}
	feat, _ := tracefs.RunningFeatures()
	var b strings.Builder
	for _, s := range specs {
		p, err := spec.ParseProbe(s)
		if err != nil {
			t.Fatal(err)
		}
		var warnings strings.Builder
		r, err := resolver.New(tg, resolver.Options{Features: feat, Warn: func(s string) { warnings.WriteString(s + "\n") }})
		if err != nil {
			t.Fatal(err)
		}
		ps, err := r.Probes(p)
		b.WriteString("# " + s + "\n" + warnings.String())
		if err != nil {
			b.WriteString("error: " + err.Error() + "\n")
		}
		for _, p := range ps {
			b.WriteString(p.String() + "\n")
		}
	}
	return b.String()
}

// atHost points host at fixtures for the test.
func atHost(t *testing.T, sysfs, debugRoot string) {
	t.Cleanup(target.SetHost(sysfs, debugRoot))
}

func client(url, cache string) *debuginfod.Client {
	// The server extracts a file from its package before it answers:
	// seconds for a module, a minute for the vmlinux on a busy machine.
	return &debuginfod.Client{Servers: []string{url}, Cache: cache, Timeout: 5 * time.Minute}
}

// deadServer is the URL of a server that no longer runs.
func deadServer(t *testing.T) string {
	s := httptest.NewServer(http.NotFoundHandler())
	s.Close()
	return s.URL
}

const libc = "/lib/x86_64-linux-gnu/libc.so.6"

// TestBinaryDebuginfo: -x libc.so.6 (stripped) with its debuginfo from
// libc6-dbg, installed under a debug root, then fetched by build-id, then
// read from the cache with no server.
func TestBinaryDebuginfo(t *testing.T) {
	deb := testenv.DebianDeb(t, "libc6-dbg")
	f, err := elf.Open(libc)
	if err != nil {
		t.Skipf("no %s: %v", libc, err)
	}
	f.Close()
	tg, err := target.Open(target.Options{Exec: libc})
	if err != nil {
		t.Fatal(err)
	}
	id := tg.File().BuildID()
	tg.Close()
	member := "./usr/lib/debug/.build-id/" + id[:2] + "/" + id[2:] + ".debug"
	root := t.TempDir()
	if out, err := exec.Command("sh", "-c", `dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2" "$3"`, "sh", deb, root, member).CombinedOutput(); err != nil {
		testenv.MissingKernel(t, "%s is not the libc6-dbg of the installed libc6 (no %s: %v: %s)", deb, member, err, out)
	}
	specs := []string{"malloc bytes", "__libc_malloc bytes", "__libc_calloc n elem_size", "__libc_free mem", "__libc_malloc:3", "malloc"}

	atHost(t, t.TempDir(), filepath.Join(root, "usr/lib/debug"))
	local := answers(t, target.Options{Exec: libc}, specs...)
	if !strings.Contains(local, " bytes=%di:") {
		t.Fatalf("the local debug file did not give DWARF answers:\n%s", local)
	}

	atHost(t, t.TempDir(), t.TempDir())
	stripped := answers(t, target.Options{Exec: libc}, specs...)
	if stripped == local {
		t.Fatal("the stripped binary alone answers as its debug file does: the test proves nothing")
	}
	srv := testenv.StartDebuginfod(t, []string{deb})
	cache := t.TempDir()
	if got := answers(t, target.Options{Exec: libc, Debuginfod: client(srv.URL, cache)}, specs...); got != local {
		t.Errorf("through debuginfod:\n%s\nfrom the local debug file:\n%s", got, local)
	}
	if got := answers(t, target.Options{Exec: libc, Debuginfod: client(deadServer(t), cache)}, specs...); got != local {
		t.Errorf("from the cache, no server:\n%s\nfrom the local debug file:\n%s", got, local)
	}
}

// TestBinaryDebuginfoNotFound: every server answers 404; the binary opens
// with its symbols and FetchErr says what each server said.
func TestBinaryDebuginfoNotFound(t *testing.T) {
	atHost(t, t.TempDir(), t.TempDir())
	a := httptest.NewServer(http.NotFoundHandler())
	defer a.Close()
	tg, err := target.Open(target.Options{Exec: libc, Debuginfod: &debuginfod.Client{Servers: []string{a.URL}, Cache: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if tg.FetchErr == nil || !errors.Is(tg.FetchErr, debuginfod.ErrNotFound) ||
		!strings.HasSuffix(tg.FetchErr.Error(), ": "+a.URL+": 404 Not Found") {
		t.Errorf("FetchErr %v", tg.FetchErr)
	}
	if tg.File().HasDWARF() {
		t.Error("opened with DWARF")
	}
}

// noteSection is the contents of an ELF file's note section, what
// /sys/kernel/notes and /sys/module/NAME/notes/SECTION hold.
func noteSection(t *testing.T, path, name string) []byte {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(name)
	if s == nil {
		t.Fatalf("%s has no %s", path, name)
	}
	b, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o444); err != nil {
		t.Fatal(err)
	}
}

// TestKernelDebuginfo serves Debian's linux-image-6.1.0-56-cloud-amd64-dbg
// package: a module by name (the build-id of the image's stripped .ko), a
// loaded module that is not on disk (/sys/module/NAME/notes), and the
// running kernel's vmlinux (/sys/kernel/notes); the answers are those of
// the package's files on disk.
func TestKernelDebuginfo(t *testing.T) {
	k := testenv.Linux61
	vmlinux, _ := testenv.RequireVmlinux(t, k)
	dir := filepath.Join(k.Dir(), "modules")
	debugKO := filepath.Join(dir, "debug", "drivers", "block", "loop.ko")
	tree := filepath.Join(dir, "lib", "modules", k.Release)
	for _, p := range []string{debugKO, filepath.Join(tree, "modules.dep")} {
		if _, err := os.Stat(p); err != nil {
			testenv.MissingKernel(t, "Debian modules (%v)", err)
		}
	}
	// Each request makes the server decompress the package up to the file
	// asked for (the vmlinux is its 10th entry) and the next
	// --fdcache-prefetch files into its cache: loop.ko, 133 files after
	// the vmlinux, then comes without a second pass.
	srv := testenv.StartDebuginfod(t, []string{testenv.DebianDeb(t, "linux-image-"+k.Release+"-dbg")},
		"--fdcache-prefetch=160", "--fdcache-prefetch-fds=400")
	cache := t.TempDir()
	sysfs := t.TempDir()
	atHost(t, sysfs, t.TempDir())

	t.Run("vmlinux", func(t *testing.T) {
		writeFile(t, filepath.Join(sysfs, "kernel", "notes"), noteSection(t, vmlinux, ".notes"))
		specs := []string{"vfs_read file->f_pos count", "do_sys_openat2:10 filename", "tcp_sendmsg%return $retval"}
		local := answers(t, target.Options{Vmlinux: vmlinux}, specs...)
		c := client(srv.URL, cache)
		var last debuginfod.Progress
		c.Progress = func(p debuginfod.Progress) { last = p }
		start := time.Now()
		got := answers(t, target.Options{Debuginfod: c}, specs...)
		t.Logf("vmlinux through debuginfod in %s (%d bytes)", time.Since(start).Round(time.Millisecond), last.Received)
		if got != local {
			t.Errorf("the running kernel through debuginfod:\n%s\n-k %s:\n%s", got, vmlinux, local)
		}
		if st, err := os.Stat(vmlinux); err != nil || !last.Done || last.Err != nil || last.Received != st.Size() || last.Total != st.Size() {
			t.Errorf("last progress %+v, want all of %s", last, vmlinux)
		}
	})
	moduleSpecs := []string{"loop_queue_rq bd->rq", "lo_rw_aio:5 cmd pos", "loop_configure%return $retval", "loop_set_status:10"}
	t.Run("module", func(t *testing.T) {
		t.Setenv("GPROBE_MODULES", tree)
		local := answers(t, target.Options{Module: debugKO}, moduleSpecs...)
		start := time.Now()
		got := answers(t, target.Options{Module: "loop", Debuginfod: client(srv.URL, cache)}, moduleSpecs...)
		t.Logf("loop.ko through debuginfod in %s", time.Since(start).Round(time.Millisecond))
		if got != local {
			t.Errorf("-m loop through debuginfod:\n%s\n-m %s:\n%s", got, debugKO, local)
		}
	})
	t.Run("loaded module not on disk", func(t *testing.T) {
		t.Setenv("GPROBE_MODULES", t.TempDir())
		writeFile(t, filepath.Join(sysfs, "module", "loop", "notes", ".note.gnu.build-id"),
			noteSection(t, filepath.Join(tree, "kernel", "drivers", "block", "loop.ko"), ".note.gnu.build-id"))
		local := answers(t, target.Options{Module: debugKO}, moduleSpecs...)
		// Fetched by the test above: a cache hit, with no server.
		if got := answers(t, target.Options{Module: "loop", Debuginfod: client(deadServer(t), cache)}, moduleSpecs...); got != local {
			t.Errorf("-m loop from sysfs and the cache:\n%s\n-m %s:\n%s", got, debugKO, local)
		}
	})
}

// demoDeb packages the program testdata/debuginfod/demo.c (built with
// -g, its DWARF naming the source under /usr/src/gprobe-demo) with that
// source, as a distribution's package with sources would; the same bytes
// every run (SOURCE_DATE_EPOCH), so debuginfod's index of it is reused.
func demoDeb(t *testing.T) (bin, src, deb string) {
	t.Helper()
	testenv.Tool(t, "dpkg-deb")
	src = filepath.Join("testdata", "debuginfod", "demo.c")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	bin = testenv.BuildC(t, "gcc", src, "gprobe-demo", "-g", "-O0", "-fdebug-prefix-map="+wd+"=/usr/src/gprobe-demo")
	root := filepath.Join(t.TempDir(), "pkg")
	code, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "DEBIAN", "control"), []byte("Package: gprobe-demo\nVersion: 1\nArchitecture: amd64\n"+
		"Maintainer: gprobe <dev@gprobe>\nDescription: a program and its source, for debuginfod\n"))
	writeFile(t, filepath.Join(root, "usr", "bin", "gprobe-demo"), exe)
	writeFile(t, filepath.Join(root, "usr", "src", "gprobe-demo", src), code)
	epoch := time.Unix(1700000000, 0)
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		return os.Chtimes(p, epoch, epoch)
	})
	deb = filepath.Join(t.TempDir(), "gprobe-demo_1_amd64.deb")
	cmd := exec.Command("dpkg-deb", "--root-owner-group", "-Zxz", "--build", root, deb)
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=1700000000")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb: %v\n%s", err, out)
	}
	return bin, src, deb
}

// TestSourceFromDebuginfod: -L finds a source file that is not on disk on
// the server, by the binary's build-id and the path its DWARF names.
func TestSourceFromDebuginfod(t *testing.T) {
	bin, src, deb := demoDeb(t)
	srv := testenv.StartDebuginfod(t, []string{deb})
	tg, err := target.Open(target.Options{Exec: bin, Debuginfod: client(srv.URL, t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	r, err := resolver.New(tg, resolver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lr, err := spec.ParseLineRange("twice")
	if err != nil {
		t.Fatal(err)
	}
	l, err := r.LineRange(lr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lines.SourcePath(l.Path, l.CompDir, ""); err == nil {
		t.Fatalf("%s is on disk: the test proves nothing", l.Path)
	}
	p, err := tg.SourcePath(context.Background(), l, "")
	if err != nil {
		t.Fatal(err)
	}
	var got, want strings.Builder
	if err := lines.Render(&got, l, p, false); err != nil {
		t.Fatal(err)
	}
	if err := lines.Render(&want, l, src, false); err != nil {
		t.Fatal(err)
	}
	body := func(s string) string { _, b, _ := strings.Cut(s, "\n"); return b }
	if body(got.String()) != body(want.String()) || !strings.Contains(want.String(), "return y;") {
		t.Errorf("-L twice with the server's source:\n%s\nwith the local one:\n%s", got.String(), want.String())
	}
	// Not on the server either: perf's message, then the server's answer.
	l.Path = "/usr/src/gprobe-demo/other.c"
	_, err = tg.SourcePath(context.Background(), l, "")
	msg := "Failed to find source file path.\ndebuginfod: no source /usr/src/gprobe-demo/other.c for build-id " + tg.File().BuildID() + ": " + srv.URL + ": 404 Not Found"
	if err == nil || err.Error() != msg || !errors.Is(err, lines.ErrSourceNotFound) || !errors.Is(err, debuginfod.ErrNotFound) {
		t.Errorf("error\n%v\nwant\n%s", err, msg)
	}
}
