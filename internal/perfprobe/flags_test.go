package perfprobe

import (
	"slices"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestRootFlags: the root command takes every option of perf probe (those
// of -V's and the probe cache's given as extra), each once; TargetFlags
// leaves out what it is told to.
func TestRootFlags(t *testing.T) {
	extra := []cli.Flag{&cli.BoolFlag{Name: "externs"}, &cli.BoolFlag{Name: "range"}, &cli.StringFlag{Name: "filter"}, &cli.BoolFlag{Name: "cache"}}
	seen := map[string]bool{}
	for _, f := range append(RootFlags(extra...), DynamicFlags()...) {
		for _, n := range f.Names() {
			if seen[n] {
				t.Errorf("flag %s twice", n)
			}
			seen[n] = true
		}
	}
	for long := range options {
		if !seen[long] {
			t.Errorf("perf's --%s is not a root flag", long)
		}
	}
	names := func(fs []cli.Flag) (out []string) {
		for _, f := range fs {
			out = append(out, f.Names()[0])
		}
		return out
	}
	all, some := names(TargetFlags()), names(TargetFlags("no-inlines", "symfs"))
	if len(some) != len(all)-2 || slices.Contains(some, "no-inlines") || slices.Contains(some, "symfs") || !slices.Contains(all, "no-inlines") {
		t.Errorf("TargetFlags(no-inlines, symfs) = %v of %v", some, all)
	}
}

// TestCommandFlags: add, del and list take TargetFlags and their own
// options, each name once.
func TestCommandFlags(t *testing.T) {
	for name, tc := range map[string]struct {
		flags []cli.Flag
		want  []string
	}{
		"add":     {AddFlags(), []string{"vmlinux", "from", "dry-run", "force", "max-probes", "maxactive", "fprobe", "kernel-btf-args"}},
		"del":     {DelFlags(), []string{"exec", "dry-run", "cache"}},
		"list":    {ListFlags(), []string{"quiet", "cache", "sdt"}},
		"vars":    {VarsCommandFlags(), []string{"exec", "externs", "range", "filter", "max-probes"}},
		"record":  {RecordFlags(), []string{"event", "output", "buffer-size", "all", "pid"}},
		"check":   {CheckFlags(), []string{"probes", "json", "out", "jobs", "max-probes"}},
		"cleanup": {CleanupFlags(), []string{"dry-run", "pid"}},
		"analyze": {AnalyzeFlags(), []string{"refcount", "json", "all-objects", "by", "unit", "rank"}},
		"export":  {FormatFlags("export"), []string{"parquet"}},
		"latency": {LatencyFlags(), []string{"vmlinux", "by", "all", "json", "unit", "bootconfig", "boot-report"}},
	} {
		seen := map[string]bool{}
		for _, f := range tc.flags {
			for _, n := range f.Names() {
				if seen[n] {
					t.Errorf("%s: flag %s twice", name, n)
				}
				seen[n] = true
			}
		}
		for _, n := range tc.want {
			if !seen[n] {
				t.Errorf("%s: no --%s", name, n)
			}
		}
	}
	if slices.ContainsFunc(DelFlags(), func(f cli.Flag) bool { return f.Names()[0] == "force" }) {
		t.Error("del takes --force")
	}
	if slices.ContainsFunc(LatencyFlags(), func(f cli.Flag) bool { return f.Names()[0] == "no-inlines" }) {
		t.Error("latency takes --no-inlines")
	}
}
