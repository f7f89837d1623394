package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/analyze"
)

// TestFormatTable: every format's flag is a flag of the command that
// offers it, once, with the usage the table gives.
func TestFormatTable(t *testing.T) {
	a := newApp(nil, nil)
	seen := map[string]bool{}
	for _, f := range analyze.Formats {
		key := f.Command + " --" + f.Flag
		if seen[key] {
			t.Errorf("%s: two rows", key)
		}
		seen[key] = true
		var cmd = a.cliApp().Command(f.Command)
		if cmd == nil {
			t.Fatalf("%s: no command %s", key, f.Command)
		}
		n := 0
		for _, fl := range cmd.Flags {
			if fl.Names()[0] == f.Flag {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d flags of that name", key, n)
		}
	}
}

// TestFormatsLeaveNothingOnFailure: a pass that fails, or a format that
// refuses, leaves no output file, not even the formats that could have
// been written.
func TestFormatsLeaveNothingOnFailure(t *testing.T) {
	dir := t.TempDir()
	tl, fl, pf := filepath.Join(dir, "t.json"), filepath.Join(dir, "f.folded"), filepath.Join(dir, "p.pftrace")
	os.WriteFile(filepath.Join(dir, "random"), []byte("not a recording at all\x00\x01"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--export-timeline", tl, "--folded", fl, "--export-perfetto", pf, goldenDir + "/trace.txt", goldenDir + "/v7-zstd.dat"},
			"--export-perfetto writes one recording's calls: give one file"},
		{[]string{"--export-timeline", tl, "--folded", fl, goldenDir + "/trace.txt", filepath.Join(dir, "random")},
			"not a trace.dat or ftrace text recording"},
	} {
		r := runGprobe(append([]string{"analyze"}, c.args...)...)
		if r.Code != exitEINVAL || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%q: %s\nwant exit %d and %q", c.args, r, exitEINVAL, c.want)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("%q left behind: %v", c.args, ents)
		}
	}
	// The same outputs from a pass that succeeds.
	if r := runGprobe("analyze", "--export-timeline", tl, "--folded", fl, goldenDir+"/trace.txt"); r.Code != 0 {
		t.Fatal(r)
	}
	for _, p := range []string{tl, fl} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 || st.Mode().Perm() != 0o644 {
			t.Errorf("%s: %v", p, err)
		}
	}
}
