package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCheckCommand wires `gprobe check` on the kernel fixtures: the text
// matrix, the JSON shape, the exit statuses, the definitions files and the
// one-line errors. (That every cell agrees with perf probe is
// resolve/portability's TestCheckAgreesWithPerf, on the real kernels.)
func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "probes")
	write := func(text string) {
		if err := os.WriteFile(list, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o2 := filepath.Join(fixtureDir, "x86_64-dwarf5-O2.elf")
	o0 := filepath.Join(fixtureDir, "x86_64-dwarf4-O0.elf")

	write("# fixtures\nvfs_read file->f_pos count\n\ncopy_process\nIS_ERR\nvfs_read:4\nvfs_read file->nosuch\n")
	r := runGprobe("check", "--probes", list, o2, o0)
	want := "kernels:\n" +
		"  K1  " + o2 + "\n" +
		"  K2  " + o0 + "\n" +
		"\n" +
		"SPEC                        K1           K2\n" +
		"vfs_read file->f_pos count  ok 1         ok 1\n" +
		"copy_process                clone 1      ok 1\n" +
		"IS_ERR                      inlined 7    ok 4\n" +
		"vfs_read:4                  line-moved   ok 3\n" +
		"vfs_read file->nosuch       arg-missing  arg-missing\n" +
		"\n" +
		"not resolved:\n" +
		"  K1  vfs_read:4: Please try to probe at vfs_read:2 instead.\n" +
		"  K1  vfs_read file->nosuch: file(type:file) has no member nosuch.\n" +
		"  K2  vfs_read file->nosuch: file(type:file) has no member nosuch.\n" +
		"\n"
	if r.Code != exitUnresolved || r.Stdout != want || r.Stderr != "gprobe check: \"vfs_read file->nosuch\" resolves on no kernel\n" {
		t.Errorf("check: %s\nwant stdout:\n%s", r, want)
	}

	// --json: exactly the documented shape; --out: a definitions file per
	// kernel; every point resolving somewhere: exit 0.
	write("vfs_read file->f_pos count\ncopy_process\n")
	out := filepath.Join(dir, "defs")
	r = runGprobe("check", "--json", "--out", out, "--probes", list, o2, o0)
	if r.Code != exitOK {
		t.Fatalf("check --json: %s", r)
	}
	var doc struct {
		Kernels []string `json:"kernels"`
		Results []struct {
			Spec        string   `json:"spec"`
			Kernel      string   `json:"kernel"`
			Status      string   `json:"status"`
			Sites       int      `json:"sites"`
			Definitions []string `json:"definitions"`
		} `json:"results"`
	}
	dec := json.NewDecoder(strings.NewReader(r.Stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("check --json: %v\n%s", err, r.Stdout)
	}
	if !reflect.DeepEqual(doc.Kernels, []string{o2, o0}) || len(doc.Results) != 4 {
		t.Fatalf("check --json: %+v", doc)
	}
	if c := doc.Results[2]; c.Spec != "copy_process" || c.Kernel != o2 || c.Status != "clone" || c.Sites != 1 ||
		!reflect.DeepEqual(c.Definitions, []string{"p:probe/copy_process copy_process.constprop.0+0"}) {
		t.Errorf("check --json: cell %+v", c)
	}
	if !strings.Contains(r.Stdout, `"vfs_read file->f_pos count"`) {
		t.Errorf("check --json escapes the spec: %s", r.Stdout)
	}
	defs, err := os.ReadFile(filepath.Join(out, "x86_64-dwarf5-O2.elf.defs"))
	if err != nil {
		t.Fatalf("check --out: %v (stderr %q)", err, r.Stderr)
	}
	// The second point's event name is free: nothing to rename.
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(defs)), "\n") {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 || lines[0] != doc.Results[0].Definitions[0] || lines[1] != doc.Results[2].Definitions[0] {
		t.Errorf("check --out: %q", defs)
	}
	if !strings.Contains(r.Stderr, filepath.Join(out, "x86_64-dwarf4-O0.elf.defs")) {
		t.Errorf("check --out does not name its files: %q", r.Stderr)
	}

	// Two points naming one event: the second gets a suffix in the file.
	write("vfs_read\nvfs_read count\n")
	r = runGprobe("check", "--out", out, "--probes", list, o2)
	defs, _ = os.ReadFile(filepath.Join(out, "x86_64-dwarf5-O2.elf.defs"))
	if r.Code != exitOK || !bytes.Contains(defs, []byte("\np:probe/vfs_read vfs_read+0\np:probe/vfs_read_1 vfs_read+0 count=%dx:x64\n")) {
		t.Errorf("check --out: %s\n%s", r, defs)
	}

	// Bad input: one line naming what was wrong.
	for _, c := range []struct {
		list string
		args []string
		code int
		msg  string
	}{
		{"vfs_read\nvfs_read:x\n", []string{o2}, exitEINVAL, "gprobe check: " + list + `:2: "vfs_read:x": Semantic error :There is non-digit char in line number.: bad probe list` + "\n"},
		{"# nothing\n", []string{o2}, exitEINVAL, "gprobe check: " + list + ": no probe definitions: bad probe list\n"},
		{"vfs_read\n", []string{filepath.Join(dir, "nosuch")}, exitENOENT, "gprobe check: Invalid file: " + filepath.Join(dir, "nosuch") + "\n"},
		{"vfs_read\n", []string{o2, o2}, exitENOENT, "gprobe check: " + o2 + ": kernel given twice\n"},
		{"vfs_read\n", nil, exitUsage, "gprobe check: give the KERNEL files to check the probe list against\n"},
	} {
		write(c.list)
		r := runGprobe(append([]string{"check", "--probes", list}, c.args...)...)
		if r.Code != c.code || r.Stderr != c.msg || r.Stdout != "" {
			t.Errorf("check %q with %q: %s\nwant %d %q", c.args, c.list, r, c.code, c.msg)
		}
	}
	if r := runGprobe("check", o2); r.Code != exitUsage {
		t.Errorf("check without --probes: %s", r)
	}
}
