package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/resolve/target"
)

const fixture = fixtureDir + "/x86_64-dwarf5-O2.elf"

func TestAliases(t *testing.T) {
	for _, c := range [][2][]string{
		{{"-k", fixture, "-s", fixtureDir + "/src", "line", "vfs_read"}, {"-k", fixture, "-s", fixtureDir + "/src", "-L", "vfs_read"}},
		{{"-k", fixture, "funcs", "vfs_*"}, {"-k", fixture, "-F", "vfs_*"}},
	} {
		a, b := runGprobe(c[0]...), runGprobe(c[1]...)
		if a != b || a.Code != 0 || a.Stdout == "" {
			t.Errorf("%q and %q differ:\n%s\n%s", c[0], c[1], a, b)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-L"}, " Error: switch `L' requires a value"},
		{[]string{"-D", "vfs_read", "-L", "vfs_read"}, " Error: switch `L' cannot be used with switch `D'"},
		{[]string{"-k", fixture, "-L", "vfs_read:3-1"}, "Semantic error :Start line must be smaller than end line."},
		{[]string{"-k", fixture, "-D", "vfs_read:x"}, "Semantic error :There is non-digit char in line number."},
	} {
		r := runGprobe(c.args...)
		if r.Code != exitUsage || firstLine(r.Stderr) != c.want {
			t.Errorf("%q: %s\nwant exit %d and %q", c.args, r, exitUsage, c.want)
		}
	}
}

// TestBadImages: truncated, random and non-ELF files give a clear error
// and a non-zero exit, never a panic (run() turns a panic into status 70).
func TestBadImages(t *testing.T) {
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rnd := make([]byte, 4096)
	for i := range rnd {
		rnd[i] = byte(i*7 + i/13)
	}
	files := map[string][]byte{
		"text":       []byte("not an ELF\n"),
		"random":     rnd,
		"truncated1": data[:100],
		"truncated2": data[:len(data)/4],
		"truncated3": data[:len(data)*3/4],
		"noDWARF":    stripDebug(t, data),
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"-k", p, "-D", "vfs_read:3"}, {"-k", p, "-L", "vfs_read"}, {"-k", p, "-D", "vfs_read"}} {
			r := runGprobe(args...)
			if r.Code == 70 {
				t.Errorf("%s %q panicked: %s", name, args, r)
			}
			if r.Code == 0 && name != "noDWARF" && name != "truncated3" {
				t.Errorf("%s %q succeeded on a broken image: %s", name, args, r)
			}
			if r.Code != 0 && strings.TrimSpace(r.Stderr) == "" {
				t.Errorf("%s %q failed without a message", name, args)
			}
		}
	}
	r := runGprobe("-k", filepath.Join(dir, "does-not-exist"), "-D", "vfs_read")
	if r.Code == 0 || !strings.Contains(r.Stderr, "does-not-exist") {
		t.Errorf("missing file: %s", r)
	}
}

// stripDebug zeroes the name of .debug_info so the image has no DWARF.
func stripDebug(t *testing.T, data []byte) []byte {
	t.Helper()
	out := append([]byte(nil), data...)
	i := strings.Index(string(out), ".debug_info")
	if i < 0 {
		t.Fatal("no .debug_info name")
	}
	copy(out[i:], ".xxxxx_info")
	return out
}

func TestNoKernelDebuginfo(t *testing.T) {
	path, tried := target.FindKernelDebuginfo()
	if path != "" {
		t.Skipf("this machine has kernel debuginfo at %s", path)
	}
	if len(tried) < 7 {
		t.Errorf("tried %d paths, perf tries 7", len(tried))
	}
	// A line probe needs DWARF: the error names the paths tried (and, when
	// the running kernel's BTF stood in, why BTF cannot answer).
	r := runGprobe("-D", "vfs_read:3")
	if r.Code != exitENOENT || !strings.Contains(r.Stderr, "/usr/lib/debug/boot/vmlinux-") {
		t.Errorf("without -k and without debuginfo: %s", r)
	}
}

// FuzzDefinitionAndLine runs arbitrary -D and -L arguments through the
// whole resolver on a fixture: any input gets an answer or an error, never
// a panic (run() reports a panic as status 70).
func FuzzDefinitionAndLine(f *testing.F) {
	for _, s := range []string{"vfs_read", "vfs_read:3", "do_sys_open%return", "fs/open.c:20", "vfs_*;*ret*",
		"vfs_read+3", "account_io@fs/read_write.c", "x=vfs_read:1", "0x10", "%sdt_a:b", "vfs_read:-1", "fs/open.c;*",
		"vfs_read file->f_path.dentry->d_name.name:string count", "vfs_read $params", "do_sys_openat2:5 $vars",
		"vfs_read file->f_pos:x16 buf[3] count:s pos->x", "do_sys_open how.flags jiffies", "vfs_read file.x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		for _, mode := range []string{"-D", "-L", "-V"} {
			r := runGprobe("-k", fixture, "-s", fixtureDir+"/src", mode, spec)
			if r.Code == 70 {
				t.Fatalf("%s %q: %s", mode, spec, r)
			}
		}
		if r := runGprobe("-k", fixture, "-s", fixtureDir+"/src", "--range", "-V", spec); r.Code == 70 {
			t.Fatalf("--range -V %q: %s", spec, r)
		}
	})
}

// TestVarsSubcommand: `vars` is -V spelled as a subcommand (perf has no
// subcommands, so this is not a differential test).
func TestVarsSubcommand(t *testing.T) {
	for _, spec := range []string{"vfs_read", "vfs_read:3", "do_sys_open", "nosuch"} {
		v := runGprobe("-k", fixture, "-V", spec)
		for _, args := range [][]string{{"-k", fixture, "vars", spec}, {"vars", "-k", fixture, spec}} {
			if s := runGprobe(args...); s != v {
				t.Errorf("%q: %s\n-V gives: %s", args, s, v)
			}
		}
	}
	if r := runGprobe("-k", fixture, "-V", "vfs_read"); r.Code != 0 || !strings.Contains(r.Stdout, "struct file*\tfile") {
		t.Errorf("-V vfs_read: %s", r)
	}
	// --range reaches the subcommand too.
	if a, b := runGprobe("-k", fixture, "--range", "-V", "vfs_read"), runGprobe("vars", "-k", fixture, "--range", "vfs_read"); a != b || !strings.Contains(a.Stdout, "[VAL]\tstruct file*\tfile\t@<vfs_read+[") {
		t.Errorf("--range -V: %s\nvars --range: %s", a, b)
	}
}

// TestRangeNeedsDWARF: BTF has no locations, so -V --range refuses on the
// running kernel's BTF (and on an image's own .BTF) with the reason.
func TestRangeNeedsDWARF(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skip("no /sys/kernel/btf/vmlinux")
	}
	if path, _ := target.FindKernelDebuginfo(); path != "" {
		t.Skipf("this machine has kernel debuginfo at %s", path)
	}
	r := runGprobe("--range", "-V", "vfs_read")
	if r.Code == 0 || !strings.HasPrefix(r.Stderr, "--range needs DWARF: BTF has no variable locations") {
		t.Errorf("--range on BTF: %s", r)
	}
	if r := runGprobe("-V", "vfs_read"); r.Code != 0 || !strings.Contains(r.Stdout, "file") {
		t.Errorf("-V on BTF: %s", r)
	}
}

// TestIndexCache: the first run writes the image's index under
// $XDG_CACHE_HOME/gprobe, later runs use it and answer the same; a damaged
// index costs one line on stderr and is rebuilt; --no-cache neither reads
// nor writes it.
func TestIndexCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	args := []string{"-k", fixture, "-s", fixtureDir + "/src", "-D", "vfs_read:3 file"}
	want := runGprobe(append([]string{"--no-cache"}, args...)...)
	root := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "gprobe")
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("--no-cache wrote %s", root)
	}
	for i := 0; i < 2; i++ {
		if g := runGprobe(args...); g != want {
			t.Fatalf("run %d with the index cache: %s\nwant %s", i, g, want)
		}
	}
	idx, _ := filepath.Glob(filepath.Join(root, "*", "*", "index-v*"))
	if len(idx) != 1 {
		t.Fatalf("index files: %q", idx)
	}
	if err := os.WriteFile(idx[0], []byte("damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := runGprobe(args...)
	warning, rest, _ := strings.Cut(g.Stderr, "\n")
	if g.Stdout != want.Stdout || g.Code != want.Code || rest != want.Stderr ||
		!strings.HasPrefix(warning, "gprobe: ignoring the index "+idx[0]) || !strings.HasSuffix(warning, "; rebuilding it") {
		t.Fatalf("with a damaged index: %s\nwant one warning line, then %s", g, want)
	}
	if g := runGprobe(args...); g != want {
		t.Fatalf("after rebuilding the index: %s\nwant %s", g, want)
	}
}
