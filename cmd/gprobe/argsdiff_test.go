package main

// Differential tests of fetch arguments and -V: for every function of every
// kernel fixture and of a C program built for x86-64 and arm64 (DWARF 4 and
// 5, -O0 and -O2), argument specs are generated from the image's own DWARF,
// read here with the standard library (an oracle independent of gprobe's
// decoders): each parameter and local, its members through '->' and '.',
// array elements, strings, casts and names. Each spec is answered by perf
// probe and by gprobe, and the answers must be identical, except where perf
// is wrong and the difference is checked:
//   - bitfields: perf 6.1 prints DWARF 2-4 DW_AT_bit_offset, counted from the
//     most significant bit, where the kernel counts from the least
//     significant (so perf's offset equals size-offset-width of the right
//     one), and cannot read DWARF 5's DW_AT_data_bit_offset at all ("Failed
//     to get the offset"). gprobe's type must equal the layout computed here
//     from debug/dwarf.
//   - values wider than 64 bits named explicitly: perf truncates them to
//     64 bits with an info line; gprobe refuses.

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/internal/testenv"
)

// argSpec is one generated argument and, for a bitfield, the kprobe type
// the oracle computes for it.
type argSpec struct {
	text     string
	bitfield string // "b3@1/32" when the final value is a bitfield
}

// argGen generates argument specs from DWARF with debug/dwarf.
type argGen struct {
	d     *dwarf.Data
	v5    bool
	seen  map[string]bool
	limit int
}

func newArgGen(t *testing.T, path string) *argGen {
	t.Helper()
	return &argGen{d: dwarfOf(t, path)}
}

// funcVars returns, per function name (first definition), its parameters
// and outermost locals with their types.
func (g *argGen) funcVars(t *testing.T) map[string][]*dwarf.Entry {
	t.Helper()
	out := map[string][]*dwarf.Entry{}
	r := g.d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			return out
		}
		if e.Tag == dwarf.TagCompileUnit {
			if cu, ok := e.Val(dwarf.AttrName).(string); ok {
				_ = cu
			}
			continue
		}
		if e.Tag != dwarf.TagSubprogram || !e.Children {
			if e.Children && e.Tag != dwarf.TagCompileUnit {
				r.SkipChildren()
			}
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		_, hasLow := e.Val(dwarf.AttrLowpc).(uint64)
		if name == "" || !hasLow || out[name] != nil {
			r.SkipChildren()
			continue
		}
		var vars []*dwarf.Entry
		for {
			c, err := r.Next()
			if err != nil || c == nil || c.Tag == 0 {
				break
			}
			if (c.Tag == dwarf.TagFormalParameter || c.Tag == dwarf.TagVariable) && c.Val(dwarf.AttrName) != nil && c.Val(dwarf.AttrType) != nil {
				vars = append(vars, c)
			}
			if c.Children {
				r.SkipChildren()
			}
		}
		out[name] = vars
	}
}

func (g *argGen) typ(off dwarf.Offset) dwarf.Type {
	t, err := g.d.Type(off)
	if err != nil {
		return nil
	}
	return t
}

// strip removes typedefs and qualifiers.
func strip(t dwarf.Type) dwarf.Type {
	for {
		switch x := t.(type) {
		case *dwarf.TypedefType:
			t = x.Type
		case *dwarf.QualType:
			t = x.Type
		default:
			return t
		}
	}
}

func isCharType(t dwarf.Type) bool {
	switch x := strip(t).(type) {
	case *dwarf.CharType, *dwarf.UcharType:
		return true
	case *dwarf.IntType:
		return x.Name == "char"
	}
	return false
}

// bitfieldType is the layout the kernel needs, computed independently of
// gprobe from debug/dwarf's StructField.
func (g *argGen) bitfieldType(f *dwarf.StructField) string {
	if f.BitSize == 0 {
		return ""
	}
	if f.DataBitOffset != 0 || f.BitOffset == 0 && f.ByteSize == 0 {
		size := strip(f.Type).Size()
		start := f.DataBitOffset / (size * 8) * size
		return fmt.Sprintf("b%d@%d/%d", f.BitSize, f.DataBitOffset-start*8, size*8)
	}
	return fmt.Sprintf("b%d@%d/%d", f.BitSize, f.ByteSize*8-f.BitOffset-f.BitSize, f.ByteSize*8)
}

// specs generates argument specs for a variable.
func (g *argGen) specs(name string, t dwarf.Type) []argSpec {
	var out []argSpec
	add := func(s argSpec) {
		if !g.seen[s.text] && len(out) < g.limit {
			g.seen[s.text] = true
			out = append(out, s)
		}
	}
	add(argSpec{text: name})
	add(argSpec{text: "v_" + name + "=" + name})
	casts := []string{"x", "s", "u", "u8", "x16", "s32", "string", "symbol"}
	add(argSpec{text: name + ":" + casts[len(name)%len(casts)]})
	var walk func(prefix string, t dwarf.Type, depth int)
	walk = func(prefix string, t dwarf.Type, depth int) {
		switch x := strip(t).(type) {
		case *dwarf.PtrType:
			if isCharType(x.Type) {
				add(argSpec{text: prefix + ":string"})
			}
			if depth == 0 {
				add(argSpec{text: prefix + "[1]"})
			}
			if st, ok := strip(x.Type).(*dwarf.StructType); ok && depth < 2 {
				for i, f := range st.Field {
					if i >= 6 {
						break
					}
					if f.Name == "" {
						continue
					}
					p := prefix + "->" + f.Name
					add(argSpec{text: p, bitfield: g.bitfieldType(f)})
					walk(p, f.Type, depth+1)
				}
			}
		case *dwarf.StructType:
			for i, f := range x.Field {
				if i >= 6 || depth >= 2 {
					break
				}
				if f.Name == "" {
					// Anonymous member: its fields are reachable by name.
					if inner, ok := strip(f.Type).(*dwarf.StructType); ok && len(inner.Field) > 0 {
						add(argSpec{text: prefix + "." + inner.Field[0].Name})
					}
					continue
				}
				p := prefix + "." + f.Name
				add(argSpec{text: p, bitfield: g.bitfieldType(f)})
				walk(p, f.Type, depth+1)
			}
		case *dwarf.ArrayType:
			if isCharType(x.Type) {
				add(argSpec{text: prefix + ":string"})
			}
			add(argSpec{text: prefix + "[1]"})
		}
	}
	walk(name, t, 0)
	return out
}

var bitfieldRE = regexp.MustCompile(`:b(\d+)@(\d+)/(\d+)`)

// classifyArgs explains a difference that is perf's mistake (see the file
// comment), or returns "".
func classifyArgs(t *testing.T, args []string, want string, p, g result) string {
	t.Helper()
	if want != "" && g.Code == 0 && strings.Contains(g.Stdout, ":"+want) {
		if p.Code != 0 && strings.Contains(p.Stderr, "Failed to get the offset of") {
			return "perf cannot read DW_AT_data_bit_offset"
		}
		flipped := bitfieldRE.ReplaceAllStringFunc(g.Stdout, func(m string) string {
			s := bitfieldRE.FindStringSubmatch(m)
			w, _ := strconv.Atoi(s[1])
			o, _ := strconv.Atoi(s[2])
			n, _ := strconv.Atoi(s[3])
			return fmt.Sprintf(":b%d@%d/%d", w, n-o-w, n)
		})
		if p.Code == 0 && p.Stdout == flipped {
			return "perf counts the bitfield offset from the MSB"
		}
	}
	if g.Code == exitEOPNOTSUPP && strings.Contains(g.Stderr, "is computed at this address") && p.Code == 0 {
		m := regexp.MustCompile(`reads memory at (\S+) instead`).FindStringSubmatch(g.Stderr)
		// perf's fetch starts from the same register (field offsets
		// may be added to it).
		if m != nil {
			if reg := regexp.MustCompile(`[%@][\w.]+`).FindString(m[1]); reg != "" && strings.Contains(p.Stdout, reg) {
				return "perf reads a computed value as memory"
			}
		}
	}
	if strings.Contains(g.Stderr, "is left out of $") && g.Code == 0 && p.Code == 0 {
		// Line by line, perf's line without some of the warned-about
		// variables must be gprobe's.
		left := map[string]bool{}
		for _, m := range regexp.MustCompile(`(\S+) is left out of \$\w+: it is computed`).FindAllStringSubmatch(g.Stderr, -1) {
			left[m[1]] = true
		}
		pl, gl := strings.Split(p.Stdout, "\n"), strings.Split(g.Stdout, "\n")
		ok := len(pl) == len(gl)
		for i := 0; ok && i < len(pl); i++ {
			have := map[string]bool{}
			for _, tok := range strings.Fields(gl[i]) {
				have[tok] = true
			}
			var kept []string
			for _, tok := range strings.Fields(pl[i]) {
				name, _, _ := strings.Cut(tok, "=")
				if have[tok] || !left[name] {
					kept = append(kept, tok)
				}
			}
			ok = strings.Join(kept, " ") == strings.Join(strings.Fields(gl[i]), " ")
		}
		if ok {
			return "perf reads a computed value as memory"
		}
	}
	if g.Code == exitEINVAL && strings.Contains(g.Stderr, "bits wide") && p.Code == 0 && strings.Contains(p.Stderr, "exceeds max-bitwidth") {
		return "perf truncates a value wider than 64 bits"
	}
	return ""
}

// checkArgSpecs compares -D answers for generated argument specs at a
// function's entry and at one of its lines, and -V (plain and --range) at
// both.
func (c *checker) checkArgSpecs(base []string, fn string, line int, specs []argSpec) {
	points := []string{fn}
	if line > 0 {
		points = append(points, fmt.Sprintf("%s:%d", fn, line))
	}
	var all [][]string
	for i, pt := range points {
		all = append(all, []string{"-V", pt}, []string{"--range", "-V", pt})
		if i > 0 && len(specs) > 3 {
			// At a line inside the function: fewer specs, $vars last.
			specs = append(specs[:2:2], specs[len(specs)-2])
		}
		for _, s := range specs {
			d := pt + " " + s.text
			if s.bitfield != "" {
				c.stats.mu.Lock()
				if c.bitfields == nil {
					c.bitfields = map[string]string{}
				}
				c.bitfields[d] = s.bitfield
				c.stats.mu.Unlock()
			}
			all = append(all, []string{"-D", d})
		}
	}
	c.checkAll(base, all)
}

func argSpecsFor(t *testing.T, img string, funcs []string, perFunc int) map[string][]argSpec {
	t.Helper()
	g := newArgGen(t, img)
	return g.argSpecs(funcs, g.funcVars(t), perFunc)
}

// argSpecsNamed is argSpecsFor for a few functions of a large image (a
// distribution vmlinux): only the units holding them are read.
func argSpecsNamed(t *testing.T, img string, funcs []string, perFunc int) map[string][]argSpec {
	t.Helper()
	g := newArgGen(t, img)
	return g.argSpecs(funcs, g.funcVarsNamed(t, img, funcs), perFunc)
}

// funcVarsNamed is funcVars for the named functions only: each one's unit
// is found from its symbol's address (debug/dwarf's SeekPC), and the
// subprogram at that address gives the variables (through its abstract
// origin when the out-of-line copy carries no names).
func (g *argGen) funcVarsNamed(t *testing.T, img string, names []string) map[string][]*dwarf.Entry {
	t.Helper()
	syms := testenv.ELFSymbols(t, img)
	addrs := map[string]uint64{}
	for _, n := range names {
		addrs[n] = 0
	}
	for _, s := range syms {
		if a, ok := addrs[s.Name]; ok && a == 0 && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			addrs[s.Name] = s.Value
		}
	}
	out := map[string][]*dwarf.Entry{}
	for _, name := range names {
		if addrs[name] == 0 {
			t.Fatalf("%s: no function symbol %s", img, name)
		}
		r := g.d.Reader()
		if _, err := r.SeekPC(addrs[name]); err != nil {
			t.Fatalf("%s: no unit covers %s: %v", img, name, err)
		}
		sub := g.subprogramAt(t, r, addrs[name])
		if sub == nil {
			t.Fatalf("%s: no subprogram at %s's address %#x", img, name, addrs[name])
		}
		vars := g.children(t, sub)
		if origin, ok := sub.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok && len(vars) == 0 {
			r.Seek(origin)
			abstract, err := r.Next()
			if err != nil || abstract == nil {
				t.Fatalf("%s: abstract origin of %s: %v", img, name, err)
			}
			vars = g.children(t, abstract)
		}
		out[name] = vars
	}
	return out
}

// subprogramAt reads the unit r is positioned in (after SeekPC) until the
// subprogram whose low_pc is addr.
func (g *argGen) subprogramAt(t *testing.T, r *dwarf.Reader, addr uint64) *dwarf.Entry {
	t.Helper()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil || e.Tag == dwarf.TagCompileUnit {
			return nil
		}
		if low, ok := e.Val(dwarf.AttrLowpc).(uint64); ok && low == addr && e.Tag == dwarf.TagSubprogram {
			return e
		}
		if e.Children && e.Tag != 0 {
			r.SkipChildren()
		}
	}
}

// children returns the named, typed parameters and outermost locals of a
// subprogram entry, as funcVars collects them.
func (g *argGen) children(t *testing.T, sub *dwarf.Entry) []*dwarf.Entry {
	t.Helper()
	if !sub.Children {
		return nil
	}
	r := g.d.Reader()
	r.Seek(sub.Offset)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	var vars []*dwarf.Entry
	for {
		c, err := r.Next()
		if err != nil || c == nil || c.Tag == 0 {
			return vars
		}
		if (c.Tag == dwarf.TagFormalParameter || c.Tag == dwarf.TagVariable) && c.Val(dwarf.AttrName) != nil && c.Val(dwarf.AttrType) != nil {
			vars = append(vars, c)
		}
		if c.Children {
			r.SkipChildren()
		}
	}
}

// argSpecs generates up to perFunc specs per variable of each function,
// then $params, $vars and a name no function has.
func (g *argGen) argSpecs(funcs []string, vars map[string][]*dwarf.Entry, perFunc int) map[string][]argSpec {
	out := map[string][]argSpec{}
	for _, fn := range funcs {
		g.seen = map[string]bool{}
		g.limit = perFunc
		var specs []argSpec
		for _, v := range vars[fn] {
			name, _ := v.Val(dwarf.AttrName).(string)
			off, _ := v.Val(dwarf.AttrType).(dwarf.Offset)
			if typ := g.typ(off); typ != nil {
				specs = append(specs, g.specs(name, typ)...)
			}
		}
		specs = append(specs, argSpec{text: "$params"}, argSpec{text: "$vars"}, argSpec{text: "nosuch_var"})
		out[fn] = specs
	}
	return out
}

// TestPerfDiffArgsFixtures compares fetch arguments and -V on the kernel
// fixtures.
func TestPerfDiffArgsFixtures(t *testing.T) {
	eachFixture(t, func(t *testing.T, c *checker, base []string) {
		// Every other function keeps the suite's time in check; all of
		// them run with GPROBE_DIFF_ALL=1.
		var funcs []string
		for i, fn := range perfFuncs(t, c.perf, "-k", c.image) {
			if i%2 == 0 || os.Getenv("GPROBE_DIFF_ALL") == "1" {
				funcs = append(funcs, fn)
			}
		}
		specs := argSpecsFor(t, c.image, funcs, 6)
		for _, fn := range funcs {
			lines := numberedLines(runGprobe(append(base, "-L", fn)...).Stdout, 4)
			line := 0
			if len(lines) > 2 {
				line = lines[2]
			}
			c.checkArgSpecs(base, fn, line, specs[fn])
		}
		for _, extra := range [][]string{
			{"--externs", "-V", "vfs_read"}, {"-V", "vfs_read", "--filter", "f*"}, {"-V", "nosuch"},
			{"--externs", "--range", "-V", "vfs_read"}, {"--range", "-V", "vfs_read", "--filter", "*count*"},
			{"--no-inlines", "-V", "build_open_how"}, {"-V", "build_open_how"},
			{"-V", "vfs_read a"}, {"-D", "vfs_read jiffies"},
		} {
			c.check(append(append([]string{}, base...), extra...)...)
		}
	})
}

// TestPerfDiffArgsUser compiles testdata/uprobe/vars.c (structs, unions,
// bitfields, arrays, char buffers, nested pointers, a 128-bit value) and
// compares -x answers.
func TestPerfDiffArgsUser(t *testing.T) {
	perf := testenv.RequirePerf(t)
	type build struct{ cc, opt, dwarf string }
	var builds []build
	for _, o := range []string{"-O0", "-O2"} {
		for _, d := range []string{"-gdwarf-4", "-gdwarf-5"} {
			builds = append(builds, build{"gcc", o, d})
		}
	}
	builds = append(builds, build{"aarch64-linux-gnu-gcc", "-O2", "-gdwarf-5"}, build{"aarch64-linux-gnu-gcc", "-O0", "-gdwarf-4"},
		build{"clang", "-O0", "-gdwarf-4"}, build{"clang", "-O2", "-gdwarf-5"},
		build{"gcc", "-O2 -flto", "-gdwarf-4"}, build{"gcc", "-O2 -flto", "-gdwarf-5"})
	for i, b := range builds {
		b := b
		name := strings.ReplaceAll(fmt.Sprintf("%s%s%s", strings.TrimSuffix(b.cc, "-linux-gnu-gcc"), b.opt, b.dwarf), " ", "")
		t.Run(name, func(t *testing.T) {
			bin := testenv.BuildC(t, b.cc, "testdata/uprobe/vars.c", "vars"+name, append(strings.Fields(b.opt), b.dwarf)...)
			stats := &diffStats{}
			c := &checker{t: t, perf: perf, image: bin, user: true, stats: stats}
			base := []string{"-x", bin, "-s", "testdata/uprobe"}
			funcs := []string{"visit", "by_value", "fill", "main", "square"}
			specs := argSpecsFor(t, bin, funcs, 40)
			var jobs []func()
			for _, fn := range funcs {
				lines := numberedLines(runGprobe(append(base, "-L", fn)...).Stdout, 5)
				line := 0
				if len(lines) > 3 {
					line = lines[3]
				}
				c.checkArgSpecs(base, fn, line, specs[fn])
			}
			jobs = append(jobs, func() {
				c.check(append(base, "--externs", "-V", "visit")...)
				c.check(append(base, "--externs", "--range", "-V", "visit")...)
				c.check(append(base, "-D", "visit counter banner:string global_root->key")...)
				c.check(append(base, "-D", "visit n->fl.nosuch")...)
				c.check(append(base, "-D", "visit n.key")...)
				c.check(append(base, "-D", "visit depth->x")...)
				c.check(append(base, "-D", "visit n->key[1]")...)
				c.check(append(base, "-D", "visit depth:string")...)
				c.check(append(base, "-D", "visit n->hist:string")...)
			})
			runParallel(2, jobs)
			stats.report(t)
			c.checkVariants(variants(t, bin, i))
			var notes []string
			for _, n := range stats.notes {
				if strings.Contains(n, "bitfield") || strings.Contains(n, "data_bit_offset") {
					notes = append(notes, n)
				}
			}
			sort.Strings(notes)
			// The spec generator's DWARF oracle (argSpecsFor) does not follow
			// GCC -flto's abstract origins into the early debug units, so
			// it reaches no struct flags there.
			if len(notes) == 0 && !strings.Contains(name, "arm64") && !strings.Contains(name, "flto") {
				t.Error("no bitfield case was generated: the generator is not reaching struct flags")
			}
		})
	}
}
