package main

import (
	"debug/elf"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// blacklistOracle is the kprobe blacklist of a vmlinux worked out with
// debug/elf alone, independently of resolve's (symtab.ImageBlacklist): the
// function symbol holding each word between __start_kprobe_blacklist and
// __stop_kprobe_blacklist (NOKPROBE_SYMBOL), and the whole __kprobes,
// noinstr and entry text areas (kernel/kprobes.c,
// arch/x86/kernel/kprobes/core.c).
type blacklistOracle struct {
	syms   []elf.Symbol // named code and data symbols by address
	byName map[string][]uint64
	ranges [][2]uint64
}

var (
	oracleMu    sync.Mutex
	oracleCache = map[string]*blacklistOracle{}
)

func newBlacklistOracle(t *testing.T, path string) *blacklistOracle {
	t.Helper()
	oracleMu.Lock()
	defer oracleMu.Unlock()
	if o := oracleCache[path]; o != nil {
		return o
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	o := &blacklistOracle{byName: map[string][]uint64{}}
	for _, s := range syms {
		if s.Section == elf.SHN_UNDEF || s.Section >= elf.SHN_LORESERVE || s.Name == "" {
			continue
		}
		switch elf.ST_TYPE(s.Info) {
		case elf.STT_FUNC, elf.STT_NOTYPE, elf.STT_OBJECT:
			o.byName[s.Name] = append(o.byName[s.Name], s.Value)
			o.syms = append(o.syms, s)
		}
	}
	sort.SliceStable(o.syms, func(i, j int) bool { return o.syms[i].Value < o.syms[j].Value })
	first := func(n string) uint64 {
		if v := o.byName[n]; len(v) > 0 {
			return v[0]
		}
		return 0
	}
	for _, a := range [][2]string{{"__kprobes_text_start", "__kprobes_text_end"}, {"__noinstr_text_start", "__noinstr_text_end"}, {"__entry_text_start", "__entry_text_end"}} {
		if lo, hi := first(a[0]), first(a[1]); lo != 0 && hi > lo {
			o.ranges = append(o.ranges, [2]uint64{lo, hi})
		}
	}
	// Each NOKPROBE_SYMBOL address, to the next symbol (kallsyms' size).
	lo, hi := first("__start_kprobe_blacklist"), first("__stop_kprobe_blacklist")
	for _, sec := range f.Sections {
		if lo < sec.Addr || hi > sec.Addr+sec.Size || sec.Type == elf.SHT_NOBITS {
			continue
		}
		data, err := sec.Data()
		if err != nil {
			t.Fatal(err)
		}
		for off := lo - sec.Addr; off+8 <= hi-sec.Addr; off += 8 {
			addr := f.ByteOrder.Uint64(data[off:])
			i := sort.Search(len(o.syms), func(i int) bool { return o.syms[i].Value > addr })
			if i < len(o.syms) {
				o.ranges = append(o.ranges, [2]uint64{addr, o.syms[i].Value})
			}
		}
	}
	if len(o.ranges) == 0 {
		t.Fatalf("%s: no kprobe blacklist found", path)
	}
	oracleCache[path] = o
	return o
}

// symbol is the name of the last symbol at or before addr.
func (o *blacklistOracle) symbol(addr uint64) string {
	i := sort.Search(len(o.syms), func(i int) bool { return o.syms[i].Value > addr }) - 1
	if i < 0 {
		return ""
	}
	return o.syms[i].Name
}

func (o *blacklistOracle) inRange(addr uint64) bool {
	for _, r := range o.ranges {
		if addr >= r[0] && addr < r[1] {
			return true
		}
	}
	return false
}

// listed is the kernel's within_kprobe_blacklist: the address, or the
// symbol a suffixed symbol (foo.cold) was split from.
func (o *blacklistOracle) listed(addr uint64) bool {
	if o.inRange(addr) {
		return true
	}
	if base, _, cut := strings.Cut(o.symbol(addr), "."); cut {
		if a := o.byName[base]; len(a) > 0 {
			return o.inRange(a[0])
		}
	}
	return false
}

var kernelPlaceRE = regexp.MustCompile(`^[pr]:\S+ (\S+)\+(\d+)(?: |$)`)

// place is the address of a definition line's SYM+OFF.
func (o *blacklistOracle) place(line string) (uint64, error) {
	m := kernelPlaceRE.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
	if m == nil {
		return 0, fmt.Errorf("no SYM+OFF in %q", line)
	}
	a := o.byName[m[1]]
	if len(a) == 0 {
		return 0, fmt.Errorf("no symbol %s", m[1])
	}
	off, _ := strconv.ParseUint(m[2], 10, 64)
	return a[0] + off, nil
}

var skippedRE = regexp.MustCompile(`^\S+ is blacklisted function, skip it\.$`)

// blacklistedByPerf accounts for a disagreement where perf printed
// definitions on kernel places the image's kprobe blacklist covers (perf
// checks no blacklist for an offline -k; the kernel refuses them) and
// gprobe left exactly those out, each with perf's warning: gprobe's lines
// are perf's minus those, and when none is left it failed as perf does
// when all are skipped.
func (c *checker) blacklistedByPerf(p, g result) (string, bool) {
	if p.Code != 0 || !strings.Contains(g.Stderr, " is blacklisted function, skip it.") {
		return "", false
	}
	o := newBlacklistOracle(c.t, c.image)
	want := strings.SplitAfter(g.Stdout, "\n")
	skipped := 0
	for _, l := range strings.SplitAfter(p.Stdout, "\n") {
		if l == "" {
			continue
		}
		if len(want) > 0 && want[0] == l {
			want = want[1:]
			continue
		}
		addr, err := o.place(l)
		if err != nil || !o.listed(addr) {
			c.t.Errorf("gprobe left out %q, which the blacklist oracle does not cover (%v)", l, err)
			return "", false
		}
		skipped++
	}
	if strings.Join(want, "") != "" {
		return "", false
	}
	for _, l := range strings.Split(strings.TrimSuffix(g.Stderr, "\n"), "\n") {
		if !skippedRE.MatchString(l) && !strings.HasPrefix(l, "Probe point '") && l != "  Error: Failed to add events." {
			return "", false
		}
	}
	if (g.Code == 0) != (g.Stdout != "") || skipped != strings.Count(g.Stderr, "is blacklisted function") {
		return "", false
	}
	return fmt.Sprintf("perf printed %d places the kernel's kprobe blacklist covers", skipped), true
}

// TestBlacklistOracle: the image's blacklist gprobe works out agrees with
// the oracle on the real 6.1 vmlinux (NOKPROBE_SYMBOL functions, noinstr
// and entry text, a suffixed clone, and functions outside it), and a
// blacklisted function is skipped as perf skips it.
func TestBlacklistOracle(t *testing.T) {
	vmlinux, _ := vmlinuxPath(t)
	o := newBlacklistOracle(t, vmlinux)
	for _, c := range []struct {
		fn, spec string // spec: gprobe's -D for fn
		want     bool
	}{
		{"notify_die", "notify_die", true}, {"do_int3", "do_int3", true}, {"exc_int3", "exc_int3", true},
		{"asm_exc_int3", "", true},          // entry text (no function symbol: nothing to probe)
		{"exc_nmi", "exc_nmi%return", true}, // noinstr, from the symbol table
		{"kprobe_int3_handler", "kprobe_int3_handler", true},
		{"vfs_read", "vfs_read", false}, {"do_sys_openat2", "do_sys_openat2%return", false},
	} {
		if got := o.listed(o.byName[c.fn][0]); got != c.want {
			t.Errorf("oracle: %s listed %v, want %v", c.fn, got, c.want)
		}
		if c.spec == "" {
			continue
		}
		r := runGprobe("-k", vmlinux, "-D", c.spec)
		if skipped := strings.Contains(r.Stderr, c.fn+" is blacklisted function, skip it."); skipped != c.want || (r.Code == 0) == c.want {
			t.Errorf("-D %s: %s", c.spec, r)
		}
	}
}

var repeatWarningRE = regexp.MustCompile(`^\$(vars|params) at \S+\+0x[0-9a-f]+: two variables are named (\w+); the second is written (\w+) \(the kernel refuses an argument name twice\)\.$`)

// renamedRepeats accounts for a disagreement where perf printed lines
// naming an argument twice (two variables of one name from $vars or
// $params: the kernel refuses such a line) and gprobe printed the same
// lines with each repeat renamed NAME_1 (NAME_2, ...), one warning each.
// A repeat's value may differ from perf's only where perf gave it the
// first one's value (perf looks the name up again and finds the first
// variable of that name; gprobe reads the variable itself).
func renamedRepeats(p, g result) (string, bool) {
	if p.Code != 0 || g.Code != 0 {
		return "", false
	}
	pl, gl := strings.Split(p.Stdout, "\n"), strings.Split(g.Stdout, "\n")
	if len(pl) != len(gl) {
		return "", false
	}
	renamed := 0
	for i := range pl {
		words := strings.Fields(pl[i])
		used := map[string]bool{}
		for _, w := range words[min(2, len(words)):] {
			if n, _, ok := strings.Cut(w, "="); ok {
				used[n] = true
			}
		}
		seen := map[string]string{} // name -> perf's first value
		gw := strings.Fields(gl[i])
		if len(gw) != len(words) {
			return "", false
		}
		for j := 2; j < len(words); j++ {
			n, v, ok := strings.Cut(words[j], "=")
			if !ok {
				continue
			}
			if first, dup := seen[n]; dup {
				name := n
				for k := 1; used[name]; k++ {
					name = fmt.Sprintf("%s_%d", n, k)
				}
				used[name] = true
				words[j] = name + "=" + v
				if gn, gv, _ := strings.Cut(gw[j], "="); gn == name && gv != v && v == first {
					words[j] = gw[j] // perf read the first variable again
				}
				renamed++
				n = name
			}
			seen[n] = v
		}
		if strings.Join(words, " ") != gl[i] {
			return "", false
		}
	}
	warnings := 0
	for _, l := range strings.Split(strings.TrimSuffix(g.Stderr, "\n"), "\n") {
		if l == "" {
			continue
		}
		if !repeatWarningRE.MatchString(l) {
			if p.Stderr == "" || !strings.Contains(p.Stderr, l) {
				return "", false
			}
			continue
		}
		warnings++
	}
	if renamed == 0 || warnings != renamed {
		return "", false
	}
	return fmt.Sprintf("perf names %d arguments twice; gprobe renames the repeats", renamed), true
}
