package probe

import "strconv"

// MaxSuffix bounds the _N suffixes tried for a taken event name (perf's
// MAX_EVENT_INDEX is 1024).
const MaxSuffix = 1023

// Suffixed is the name perf 6.1 tries, for i = 1..MaxSuffix, when an event
// name is taken and suffixes are allowed (-f, or the 2nd+ trace event of one
// probe): "<base>_<i>", where base is the name without a "__return" suffix
// (perf 6.1 does not keep it: the second return probe on vfs_read is
// "vfs_read_1").
func Suffixed(base string, i int) string { return base + "_" + strconv.Itoa(i) }

// FreeName returns the first Suffixed(base, i) that taken does not report,
// or false when all MaxSuffix are taken ("Too many events are on the same
// function").
func FreeName(base string, taken func(string) bool) (string, bool) {
	for i := 1; i <= MaxSuffix; i++ {
		if n := Suffixed(base, i); !taken(n) {
			return n, true
		}
	}
	return "", false
}
