package symbolize

import (
	"debug/dwarf"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// allRows is the line table read whole, the way the symbolizer read it
// before it read units on demand: the reference lineIndex must agree with.
func allRows(d *dwarf.Data) []row {
	var rows []row
	for _, cu := range compileUnits(d) {
		rows = unitRows(d, cu, rows)
	}
	sortRows(rows)
	return rows
}

// TestLineIndexSameAsWhole: on a C program (two units, gcc's DWARF 5)
// and on a Go program (Go's DWARF, a hundred units), the line of every
// fourth byte of code is the same looked up unit by unit as in the whole
// table.
func TestLineIndexSameAsWhole(t *testing.T) {
	var bins []string
	dir := t.TempDir()
	goProg := filepath.Join(dir, "goprog")
	if err := os.WriteFile(goProg+".go", []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hi\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", goProg, goProg+".go")
	build.Dir = dir
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	bins = append(bins, goProg)
	if gcc, err := exec.LookPath("gcc"); err == nil {
		for i, src := range []string{"int f(int x) { return x * 3; }\n", "int f(int);\nint g(int y) { return f(y) + 1; }\nint main(void) { return g(2); }\n"} {
			if err := os.WriteFile(filepath.Join(dir, string(rune('a'+i))+".c"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out := filepath.Join(dir, "prog")
		cmd := exec.Command(gcc, "-g", "-O1", "-o", out, filepath.Join(dir, "a.c"), filepath.Join(dir, "b.c"))
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, b)
		}
		bins = append(bins, out)
	} else if os.Getenv("GPROBE_REQUIRE_PERF") == "1" {
		t.Fatal("needs gcc")
	}
	for _, bin := range bins {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		d, err := f.DWARF()
		if err != nil {
			t.Fatal(err)
		}
		text := f.Section(".text")
		whole := allRows(d)
		x := newLineIndex(d)
		checked, found := 0, 0
		for addr := text.Addr; addr < text.Addr+text.Size; addr += 4 {
			want, wok := rowAt(whole, addr)
			got, gok := x.row(addr)
			if gok != wok || got != want {
				t.Fatalf("%s: %#x: unit by unit %+v %v, whole table %+v %v", bin, addr, got, gok, want, wok)
			}
			checked++
			if gok {
				found++
			}
		}
		t.Logf("%s: %d addresses, %d with a line, %d units", filepath.Base(bin), checked, found, len(x.units))
		if found == 0 {
			t.Fatalf("%s: no address has a line", bin)
		}
		f.Close()
	}
}
