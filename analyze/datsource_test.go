package analyze

import "testing"

func TestStatsLost(t *testing.T) {
	stats := []string{
		"CPU: 0\nentries: 0\noverrun: 7\ncommit overrun: 0\nbytes: 0\noldest event ts:     0.000000\nnow ts: 10284.333147\ndropped events: 2\nread events: 155\n",
		"\nBuffer: x\n\n",
		"CPU: 1\nentries: 0\noverrun: 0\ncommit overrun: 9\ndropped events: 0\n",
	}
	if o, d := statsLost(stats); o != 7 || d != 2 {
		t.Errorf("statsLost = %d overrun, %d dropped, want 7 overrun + 2 dropped", o, d)
	}
}
