package main

import (
	"debug/elf"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

// With DEBUGINFOD_URLS set, a module without debug information is looked
// up by its build-id; when no server has it, the resolution that needs
// DWARF fails with one line naming the build-id and what each server said,
// and one that needs none is not disturbed. (The fetches themselves are
// tested against Debian's debuginfod in resolve/target and
// resolve/debuginfod.)
func TestDebuginfodNotFoundMessage(t *testing.T) {
	_, tree, _ := moduleCache(t)
	ko := filepath.Join(tree, "kernel", "drivers", "block", "loop.ko")
	a := httptest.NewServer(http.NotFoundHandler())
	defer a.Close()
	b := httptest.NewServer(http.NotFoundHandler())
	defer b.Close()
	t.Setenv("DEBUGINFOD_URLS", a.URL+" "+b.URL)
	t.Setenv("DEBUGINFOD_CACHE_PATH", t.TempDir())
	id := buildID(t, ko)

	got := runGprobe("-m", ko, "-D", "loop_queue_rq bd->rq")
	want := result{Code: exitENOENT, Stderr: fmt.Sprintf("debuginfod: no debuginfo for build-id %s: %s: 404 Not Found; %s: 404 Not Found\n", id, a.URL, b.URL) +
		"The " + ko + " file has no debug information.\nRebuild with CONFIG_DEBUG_INFO=y, or install an appropriate debuginfo package.\n" +
		"  Error: Failed to add events.\n"}
	if got != want {
		t.Errorf("gprobe -m %s -D 'loop_queue_rq bd->rq':\n%v\nwant\n%v", ko, got, want)
	}
	// A cached miss: the same line, without asking the servers again.
	a.Close()
	b.Close()
	if again := runGprobe("-m", ko, "-D", "loop_queue_rq bd->rq"); again.Code != exitENOENT || !strings.HasPrefix(again.Stderr, "debuginfod: no debuginfo for build-id "+id+": no server had it when last asked") {
		t.Errorf("second run:\n%v", again)
	}
	// Symbols suffice: no message.
	if got := runGprobe("-m", ko, "-D", "loop_queue_rq"); got.Code != exitOK || got.Stderr != "" {
		t.Errorf("gprobe -m %s -D loop_queue_rq:\n%v", ko, got)
	}
}

// buildID is the GNU build-id of the ELF file path, read with debug/elf.
func buildID(t *testing.T, path string) string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		t.Fatalf("%s has no build-id", path)
	}
	b, err := s.Data()
	if err != nil || len(b) < 16 {
		t.Fatalf("%s: build-id note: %v", path, err)
	}
	return hex.EncodeToString(b[16:]) // after namesz, descsz, type and "GNU\0"
}

// -k with a vmlinux without DWARF (Debian's image, --strip-debug'ed: its
// symbols and build-id remain) and DEBUGINFOD_URLS set: the image's debug
// information is fetched by its build-id, as perf probe 6.1 (libdw) does;
// the answers are perf's, and those of the -dbg vmlinux itself.
func TestPerfDiffKernelImageDebuginfod(t *testing.T) {
	perf := testenv.RequirePerf(t)
	k := testenv.Linux61
	vmlinux, _ := testenv.RequireVmlinux(t, k)
	stripped, _ := testenv.BTFForms(t, k)
	srv := testenv.StartDebuginfod(t, []string{testenv.DebianDeb(t, "linux-image-"+k.Release+"-dbg")})
	specs := [][]string{
		{"-D", "vfs_read file->f_pos count"}, {"-D", "do_sys_openat2:10 filename"},
		{"-D", "tcp_sendmsg%return $retval"}, {"-D", "vfs_read:8"}, {"-V", "vfs_read"},
	}
	t.Setenv("DEBUGINFOD_URLS", srv.URL)
	t.Setenv("DEBUGINFOD_CACHE_PATH", t.TempDir())
	stats := &diffStats{}
	for _, s := range specs {
		args := append([]string{"-k", stripped}, s...)
		g := runGprobe(args...)
		local := runGprobe(append([]string{"-k", vmlinux}, s...)...)
		if g != local {
			t.Errorf("gprobe %s through debuginfod:\n%s\nwith the -dbg vmlinux:\n%s", strings.Join(args, " "), g, local)
		}
		if p := perf.Live(args...); !same(p, g) {
			t.Errorf("gprobe %s differs from perf probe:\nperf: %s\ngprobe: %s", strings.Join(args, " "), p, g)
			continue
		}
		stats.add(&stats.same, "")
	}
	stats.report(t)
}
