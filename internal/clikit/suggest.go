package clikit

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// Suggest returns the name among names that word was most likely meant to
// be, or "" when none is close: the name at the least edit distance from
// word (Distance, ignoring case; word itself excluded), when that distance
// is at most a third of the name's length, or 1 (one typo in a name of up
// to five letters, two in analyze or record). Of names equally close, the
// first.
func Suggest(word string, names []string) string {
	best, bestD := "", 0
	w := strings.ToLower(word)
	for _, n := range names {
		d := Distance(w, strings.ToLower(n))
		if word == n || d > max(1, len(n)/3) {
			continue
		}
		if best == "" || d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// Distance is the optimal string alignment distance between a and b: the
// least number of one-byte insertions, deletions, substitutions and swaps
// of adjacent bytes that turn a into b (recrod is one swap from record).
func Distance(a, b string) int {
	// d[i][j] is the distance between a[:i] and b[:j]; three rows kept.
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// SuggestCommand is Suggest among app's command names: the command a
// mistyped first operand was probably meant to be, "" when none is close.
func SuggestCommand(app *cli.App, word string) string {
	var names []string
	for _, c := range app.Commands {
		names = append(names, c.Name)
	}
	return Suggest(word, names)
}

// Finish completes app's command tree for its command line: onUsageError
// answers a flag that does not parse, on app and on every command, and a
// command without a UsageText gets "APP COMMAND [options] ARGSUSAGE".
func Finish(app *cli.App, onUsageError cli.OnUsageErrorFunc) {
	app.OnUsageError = onUsageError
	for _, c := range app.Commands {
		c.OnUsageError = onUsageError
		if c.UsageText == "" {
			c.UsageText = strings.TrimSpace(app.Name + " " + c.Name + " [options] " + c.ArgsUsage)
		}
	}
}
