package portability

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestLabels(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"/a/6.1/vmlinux", "/a/6.12/vmlinux", "/b/btf"}, []string{"6.1/vmlinux", "6.12/vmlinux", "b/btf"}},
		{[]string{"x/k/vmlinux", "y/k/vmlinux"}, []string{"x/k/vmlinux", "y/k/vmlinux"}},
		{[]string{"vmlinux"}, []string{"vmlinux"}},
		{[]string{"/k1", "k1"}, []string{"k1", "k1"}}, // no longer suffix tells them apart
	} {
		if got := Labels(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Labels(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestReadProbes(t *testing.T) {
	pts, err := ReadProbes(strings.NewReader("# list\n\n  vfs_read count  \nfoo:3\n"), "l")
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 2 || pts[0].Text != "vfs_read count" || pts[0].Line != 3 || pts[1].Line != 4 {
		t.Errorf("ReadProbes: %+v", pts)
	}
	for in, want := range map[string]string{
		"vfs_read\n%return\n": `l:2: "%return": `,
		"":                    "l: no probe definitions",
		"a\nvfs_read:x y\n":   `l:2: "vfs_read:x y": Semantic error`,
	} {
		_, err := ReadProbes(strings.NewReader(in), "l")
		if !errors.Is(err, ErrBadProbeList) || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ReadProbes(%q): %v, want %q... on one line", in, err, want)
		}
	}
}

// FuzzReadProbes: a probe list never panics the reader, errors are one
// line, and every point is a line of the input.
func FuzzReadProbes(f *testing.F) {
	f.Add("vfs_read file->f_pos count\n# c\ndo_sys_openat2:22\n")
	f.Add("a\n%return\n")
	f.Add("fs/open.c;*getname*\nx=vfs_read%return $retval\n")
	f.Fuzz(func(t *testing.T, in string) {
		pts, err := ReadProbes(strings.NewReader(in), "f")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error: %q", err)
			}
			return
		}
		for _, p := range pts {
			if !strings.Contains(in, p.Text) || p.probe == nil {
				t.Errorf("point %+v is not a line of %q", p, in)
			}
		}
	})
}
