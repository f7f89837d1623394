package perfprobe

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestSettings: the resolve options carry the flags; -q silences
// warnings and the search's trace; the debug lines follow the verbose
// level.
func TestSettings(t *testing.T) {
	t.Setenv("DEBUGINFOD_URLS", "")
	home := t.TempDir() // a command opening a target makes HOME/.cache/gprobe
	t.Setenv("HOME", home)
	var w strings.Builder
	s := Settings{Target: Target{Exec: "/bin/true"}, Symfs: "/sys", Source: "/src", Verbose: true, Level: 1, NoCache: true, NoInlines: true,
		ReturnInsn: true, Uretprobe: true, NoDemangle: true, DemangleKernel: true, MaxProbes: 7, Stderr: &w}
	o := s.ResolveOptions(true)
	if !o.Target.BTF || o.Target.Symfs != "/sys" || o.SourcePrefix != "/src" || !o.Target.NoCache || !o.NoInlines || !o.ReturnInsn ||
		!o.Uretprobe || !o.Names.NoDemangle || !o.Names.DemangleKernel || !o.Names.Params || o.MaxProbes != 7 || o.KernelText == nil {
		t.Errorf("ResolveOptions = %+v", o)
	}
	if o.Target.PerfCache == nil || o.Target.PerfCache.Root != home+"/.debug" || o.Target.Debuginfod != nil {
		t.Errorf("PerfCache %+v, Debuginfod %v", o.Target.PerfCache, o.Target.Debuginfod)
	}
	if o.Target.Trace == nil || o.Debug == nil {
		t.Fatal("-v: no trace or debug lines")
	}
	o.Warn("w1")
	o.Target.Trace("t1")
	o.Debug("d1")
	if got := w.String(); got != "w1\nt1\nd1\n" {
		t.Errorf("printed %q", got)
	}
	w.Reset()
	s.Quiet, s.Level, s.Verbose = true, 0, true
	o = s.ResolveOptions(false)
	if o.Target.BTF || o.Target.Trace != nil || o.Debug != nil {
		t.Errorf("-q -v level 0: BTF %v, trace %v, debug %v", o.Target.BTF, o.Target.Trace != nil, o.Debug != nil)
	}
	o.Warn("w2")
	o.Target.Warn("w3")
	if w.Len() != 0 {
		t.Errorf("-q printed %q", w.String())
	}
}

// TestOpen: a target opened, with perf -v's lines at a verbose level
// above 0 only; a context that ends during the open is ErrInterrupted.
func TestOpen(t *testing.T) {
	t.Setenv("DEBUGINFOD_URLS", "")
	t.Setenv("HOME", t.TempDir()) // opening /bin/true makes HOME/.cache/gprobe
	t.Setenv("XDG_CACHE_HOME", "")
	for _, level := range []int{0, 1} {
		var w strings.Builder
		s := Settings{Target: Target{Exec: "/bin/true"}, Level: level, MaxProbes: MaxProbes, Stderr: &w}
		r, err := s.Open(context.Background(), s.ResolveOptions(false), true)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Target().User {
			t.Errorf("level %d: opened %+v, not the binary", level, r.Target())
		}
		r.Close()
		want := ""
		if level > 0 {
			want = "No kprobe blacklist support, ignored\n"
		}
		if w.String() != want {
			t.Errorf("level %d: printed %q, want %q", level, w.String(), want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := Settings{Target: Target{Exec: "/bin/true"}, Level: 1, Stderr: &strings.Builder{}}
	if r, err := s.Open(ctx, s.ResolveOptions(false), false); r != nil || !errors.Is(err, ErrInterrupted) {
		t.Errorf("an ended context: %v, %v", r, err)
	}
}

// TestVerboseWarn: warnings only with -v, and then not with -q.
func TestVerboseWarn(t *testing.T) {
	var w strings.Builder
	if f := (Settings{Stderr: &w}).VerboseWarn(); f != nil {
		t.Error("a warning function without -v")
	}
	(Settings{Verbose: true, Stderr: &w}).VerboseWarn()("skipped x")
	(Settings{Verbose: true, Quiet: true, Stderr: &w}).VerboseWarn()("skipped y")
	if w.String() != "skipped x\n" {
		t.Errorf("printed %q", w.String())
	}
}
