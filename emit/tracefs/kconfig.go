package tracefs

import (
	"bufio"
	"compress/gzip"
	"os"
	"strings"
	"sync"
)

// configProc is where a kernel built with CONFIG_IKCONFIG_PROC shows its
// configuration.
const configProc = "/proc/config.gz"

// runningConfigOff lists the options the running kernel's /proc/config.gz
// says are "not set" (empty when there is no such file).
var runningConfigOff = sync.OnceValue(func() map[string]bool {
	off := map[string]bool{}
	f, err := os.Open(configProc)
	if err != nil {
		return off
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return off
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), "# "); ok {
			if name, ok = strings.CutSuffix(name, " is not set"); ok {
				off[name] = true
			}
		}
	}
	return off
})
