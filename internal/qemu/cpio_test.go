package qemu

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestArchiveWithCpio: GNU cpio extracts what the newc writer wrote, with
// implied parent directories, odd sizes (padding), modes and a symlink.
func TestArchiveWithCpio(t *testing.T) {
	cpio, err := exec.LookPath("cpio")
	if err != nil {
		if os.Getenv("GPROBE_REQUIRE_VMLINUX") == "1" {
			t.Fatal("cpio not installed (scripts/provision.sh installs it)")
		}
		t.Skip("cpio not installed (scripts/provision.sh installs it)")
	}
	a := newArchive()
	files := map[string][]byte{"a/b/c/file1": []byte("x"), "top": []byte("hello\n"), "a/empty": nil, "a/b/seven": []byte("1234567")}
	for n, d := range files {
		a.add(entry{name: "/" + n, mode: modeRegular | 0o640, data: d})
	}
	a.add(entry{name: "a/link", mode: modeSymlink | 0o777, data: []byte("b/seven")})
	var buf bytes.Buffer
	if err := a.writeTo(&buf); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command(cpio, "-i", "-d", "--quiet", "--no-absolute-filenames")
	cmd.Dir, cmd.Stdin = dir, &buf
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio -i: %v\n%s", err, out)
	}
	for n, d := range files {
		p := filepath.Join(dir, n)
		got, err := os.ReadFile(p)
		st, serr := os.Stat(p)
		if err != nil || serr != nil || !bytes.Equal(got, d) || st.Mode().Perm() != 0o640 {
			t.Errorf("%s: %q %v %v", n, got, err, serr)
		}
	}
	if l, err := os.Readlink(filepath.Join(dir, "a/link")); err != nil || l != "b/seven" {
		t.Errorf("symlink: %q %v", l, err)
	}
	if st, err := os.Stat(filepath.Join(dir, "a/b/c")); err != nil || !st.IsDir() {
		t.Errorf("implied directory a/b/c: %v", err)
	}
}
