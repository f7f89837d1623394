package folded

import (
	"strings"
	"testing"

	"github.com/gprobe/gprobe/analyze/latency"
)

func fold(t *testing.T, calls []latency.Call) string {
	t.Helper()
	b := New()
	for _, c := range calls {
		b.Call(c)
	}
	var s strings.Builder
	if err := b.Write(&s); err != nil {
		t.Fatal(err)
	}
	return s.String()
}

// TestNesting: calls arrive innermost first, as returns happen; each
// stack's weight is its self time.
func TestNesting(t *testing.T) {
	// Thread 1: f [0,100] holds g [10,30] (holding h [12,20]) and
	// g [40,50]; then f [200,210] alone. Thread 2 (comm "b;x", the ';'
	// must not split a frame): g [5,8] whose caller never returned.
	got := fold(t, []latency.Call{
		{Function: "h", PID: 1, Comm: "a", Start: 12, End: 20, Open: 2},
		{Function: "g", PID: 1, Comm: "a", Start: 10, End: 30, Open: 1},
		{Function: "g", PID: 2, Comm: "b;x", Start: 5, End: 8, Open: 1},
		{Function: "g", PID: 1, Comm: "a", Start: 40, End: 50, Open: 1},
		{Function: "f", PID: 1, Comm: "a", Start: 0, End: 100, Open: 0},
		{Function: "f", PID: 1, Comm: "a", Start: 200, End: 210, Open: 0},
	})
	// f: 100-20-10 = 70, plus the second f's 10; g: 20-8 + 10.
	want := "a;f 80\na;f;g 22\na;f;g;h 8\nb_x;g 3\n"
	if got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
}

// TestRecursion: f calling f calling f.
func TestRecursion(t *testing.T) {
	got := fold(t, []latency.Call{
		{Function: "f", PID: 1, Comm: "a", Start: 2, End: 3, Open: 2},
		{Function: "f", PID: 1, Comm: "a", Start: 1, End: 5, Open: 1},
		{Function: "f", PID: 1, Comm: "a", Start: 0, End: 10, Open: 0},
	})
	if want := "a;f 6\na;f;f 3\na;f;f;f 1\n"; got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
}

// TestBounded: a thread whose outer call never returns keeps at most
// maxPending calls waiting; the weights still add up.
func TestBounded(t *testing.T) {
	b := New()
	n := 3 * maxPending
	for i := 0; i < n; i++ {
		b.Call(latency.Call{Function: "g", PID: 1, Comm: "a", Start: uint64(10 * i), End: uint64(10*i + 4), Open: 1})
	}
	if p := len(b.threads[threadKey{pid: 1}].pending); p > maxPending {
		t.Errorf("%d calls pending, bound %d", p, maxPending)
	}
	var s strings.Builder
	b.Write(&s)
	if want := "a;g " + itoa(4*n) + "\n"; s.String() != want {
		t.Errorf("got %q, want %q", s.String(), want)
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
