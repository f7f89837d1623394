package analyze

import (
	"runtime/debug"
	"testing"
)

// flagSet is FlagValues from a map (absent: unset, zero).
type flagSet map[string]string

func (f flagSet) String(name string) string { return f[name] }
func (f flagSet) Int(name string) int       { return 0 }
func (f flagSet) Bool(name string) bool     { return f[name] != "" }
func (f flagSet) IsSet(name string) bool    { _, ok := f[name]; return ok }

// TestPaceGC: one recording collects at 400%; several, or the object
// analyses, keep Go's pacing.
func TestPaceGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, c := range []struct {
		req  *Request
		want int
	}{
		{&Request{flags: flagSet{}}, 400},
		{&Request{flags: flagSet{}, Many: true}, 100},
		{&Request{flags: flagSet{"objects": "5"}}, 100},
	} {
		debug.SetGCPercent(100)
		c.req.PaceGC()
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("%+v: GOGC %d, want %d", c.req, got, c.want)
		}
	}
}
