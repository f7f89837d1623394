package probedef

import (
	"bufio"
	"io"
	"os"
	"strings"
)

// KallsymsSymbols reads /proc/kallsyms (or r) and returns an
// Options.Symbols counting the symbols of each name, of any type and
// including module symbols ("name [mod]"), as the kernel's
// number_of_same_symbols counts them for NON_UNIQ_SYMBOL.
func KallsymsSymbols(r io.Reader) func(string) int {
	counts := map[string]int{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			continue
		}
		counts[f[2]]++
	}
	return func(s string) int { return counts[s] }
}

// RunningKernelSymbols is KallsymsSymbols of /proc/kallsyms, or nil when it
// cannot be read (the symbol checks are then left to the kernel).
func RunningKernelSymbols() func(string) int {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return nil
	}
	defer f.Close()
	return KallsymsSymbols(f)
}
