package perfprobe

import (
	"io"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/gprobe/gprobe/analyze"
)

// TargetFlags are the flags of every command that opens a target: what
// is probed (-k, -x, -m, --symfs, --target-ns, --target), where its
// source is (-s), how its names are read and -v, -q; without those named
// in omit.
func TargetFlags(omit ...string) []cli.Flag {
	all := []cli.Flag{
		&cli.StringFlag{Name: "vmlinux", Aliases: []string{"k"}, Usage: "vmlinux `PATH` with debug information"},
		&cli.StringFlag{Name: "source", Aliases: []string{"s"}, Usage: "source `DIR` (path prefix of the DWARF source paths)"},
		&cli.StringFlag{Name: "exec", Aliases: []string{"x"}, Usage: "user-space `BINARY` (uprobes)"},
		&cli.StringFlag{Name: "module", Aliases: []string{"m"}, Usage: "kernel `MODULE` name or .ko path"},
		&cli.BoolFlag{Name: "no-inlines", Usage: "ignore inlined instances"},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors"},
		&cli.BoolFlag{Name: "no-cache", Usage: "neither read nor write the index cache ($XDG_CACHE_HOME/gprobe)"},
		&cli.BoolFlag{Name: "demangle", Value: true, Usage: "demangle C++, Rust, OCaml and Java symbol names (--no-demangle: ELF names)"},
		&cli.BoolFlag{Name: "no-demangle", Hidden: true},
		&cli.BoolFlag{Name: "demangle-kernel", Usage: "demangle kernel symbol names too"},
		&cli.BoolFlag{Name: "no-demangle-kernel", Hidden: true},
		&cli.StringFlag{Name: "symfs", Usage: "look for the -x binary and debug information under `DIR` (a copy of the probed system's files)"},
		&cli.StringFlag{Name: "target-ns", Usage: "look up the -x binary in the mount namespace of process `PID` (a container's) and install its probes there"},
		&cli.StringFlag{Name: "target", Usage: "--target-ns PID, and without -x the executable of process `PID`"},
	}
	if len(omit) == 0 {
		return all // every command builds these at start: skip urfave's Names
	}
	return slices.DeleteFunc(all, func(f cli.Flag) bool { return slices.Contains(omit, f.Names()[0]) })
}

// RootFlags are the root command's flags: TargetFlags, perf probe's modes
// and options, gprobe's extensions of them (--ret-insn, --boot,
// --bootconfig, --uretprobe), then extra (the flags of the root command
// that other commands share).
func RootFlags(extra ...cli.Flag) []cli.Flag {
	return append(append(TargetFlags(),
		&cli.StringFlag{Name: "line", Aliases: []string{"L"}, Usage: "show probe-able source lines of `FUNC[:RLN[+NUM|-RLN2]]|SRC:ALN[+NUM|-ALN2]`"},
		&cli.StringSliceFlag{Name: "definition", Aliases: []string{"D"}, Usage: "print the probe event `DEFINITION`(s) instead of installing"},
		&cli.StringSliceFlag{Name: "add", Aliases: []string{"a"}, Usage: "add a probe event"},
		&cli.StringSliceFlag{Name: "del", Aliases: []string{"d"}, Usage: "delete probe events"},
		&cli.BoolFlag{Name: "list", Aliases: []string{"l"}, Usage: "list probe events"},
		&cli.StringFlag{Name: "vars", Aliases: []string{"V"}, Usage: "show accessible variables at a `PROBEPOINT`"},
		&cli.BoolFlag{Name: "funcs", Aliases: []string{"F"}, Usage: "list functions"},
		&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "do not install anything"},
		&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "allow duplicate event names"},
		&cli.IntFlag{Name: "max-probes", Value: MaxProbes, Usage: "maximum probe points per event"},
		&cli.BoolFlag{Name: "ret-insn", Usage: "with -D/-a FUNC%return: plain probes on each return instruction and tail call of FUNC instead of a return probe; with -L FUNC: list FUNC's exits"},
		&cli.BoolFlag{Name: "boot", Usage: "with -D: print the kernel command-line parameter (kprobe_event=) that defines the probes at boot"},
		&cli.BoolFlag{Name: "bootconfig", Usage: "with -D: print the Extra Boot Config (bootconfig -a) that defines and enables the probes at boot"},
		&cli.BoolFlag{Name: "uretprobe", Usage: "with -D/-a FUNC%return in a Go program: a uretprobe as perf writes, not probes on the return instructions (a uretprobe kills a Go program when a goroutine's stack moves)"},
	), extra...)
}

// DynamicFlags select the kinds perf probe 6.1 does not write, for -D
// and -a: fprobes, tracepoint probes and event probes.
func DynamicFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "fprobe", Usage: "define fprobe events (f:): 'FUNC [ARGS]' at a function's entry, 'FUNC%return [ARGS]' at its return"},
		&cli.BoolFlag{Name: "tracepoint", Usage: "define tracepoint probes (t:): 'TRACEPOINT [ARGS]', C expressions on the tracepoint's parameters"},
		&cli.StringFlag{Name: "event", Usage: "define an event probe (e:) on the trace event `SYSTEM/EVENT`; -D/-a give its ARGS ('FIELD[:TYPE] (STRUCT)FIELD->MEMBER ... [if FILTER]')"},
		&cli.StringFlag{Name: "format", Usage: "the --event's format description `FILE` (events/SYSTEM/EVENT/format), for another machine"},
		&cli.BoolFlag{Name: "kernel-btf-args", Usage: "write arguments in the kernel's BTF syntax (count, file->f_pos) for the kernel to resolve, instead of $argN fetches"},
	}
}

// CacheFlags are the flags that point -l and -d (and list and del) at
// perf's probe cache instead of the installed events.
func CacheFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "cache", Usage: "with -l: list perf's probe cache (~/.debug: the SDT markers of the binaries probed with -x or added by perf); with -d: remove events from it"},
	}
}

// AddFlags are the add command's flags: TargetFlags, --from, the options
// of -a (-n, -f, --max-probes), --maxactive, then DynamicFlags.
func AddFlags() []cli.Flag {
	return append(append(TargetFlags(),
		&cli.StringFlag{Name: "from", Usage: "install the definitions in `FILE` (one kprobe_events/uprobe_events line each, as -D prints them; - for stdin)"},
		&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "do not install anything"},
		&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "allow duplicate event names"},
		&cli.IntFlag{Name: "max-probes", Value: MaxProbes, Usage: "maximum probe points per event"},
		&cli.IntFlag{Name: "maxactive", Usage: "kernel return probes get `N` instances for concurrent calls (r<N>:, f<N>:, 1 to 4096; perf 6.1 has no option for it)"},
	), DynamicFlags()...)
}

// DelFlags are the del command's flags: TargetFlags, -n and CacheFlags.
func DelFlags() []cli.Flag {
	return append(append(TargetFlags(), &cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "do not delete anything"}), CacheFlags()...)
}

// ListFlags are the list command's flags: TargetFlags, CacheFlags and
// --sdt.
func ListFlags() []cli.Flag {
	return append(append(TargetFlags(), CacheFlags()...),
		&cli.BoolFlag{Name: "sdt", Usage: "list SDT markers as `perf list sdt` does: those of the -x BINARY, else of every binary in perf's build-id cache"})
}

// LatencyFlags are the latency command's flags: TargetFlags without
// --no-inlines (latency always measures the function itself: an inlined
// copy has no return to probe), and how to count and report.
func LatencyFlags() []cli.Flag {
	return append(TargetFlags("no-inlines"),
		&cli.StringFlag{Name: "by", Usage: "split the histogram by `comm|pid`"},
		&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "count every process, not only CMD and its children (without CMD: until Ctrl-C)"},
		&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
		&cli.StringFlag{Name: "unit", Value: "us", Usage: "time `unit` of the text report: ns, us or ms"},
		&cli.BoolFlag{Name: "bootconfig", Usage: "print the Extra Boot Config (bootconfig -a) measuring FUNC from boot instead of measuring now"},
		&cli.BoolFlag{Name: "boot-report", Usage: "print what a --bootconfig measurement counted since boot"},
	)
}

// VarsFlags are -V's options, which the root command takes too:
// --externs, --range and --filter.
func VarsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "externs", Usage: "show external variables too"},
		&cli.BoolFlag{Name: "range", Usage: "show variables' location ranges in scope (with -V only)"},
		&cli.StringFlag{Name: "filter", Usage: "variable name `FILTER` (default \"" + DefaultVarFilter + "\")"},
	}
}

// VarsCommandFlags are the vars command's flags: TargetFlags, VarsFlags
// and --max-probes.
func VarsCommandFlags() []cli.Flag {
	return append(TargetFlags(), append(VarsFlags(), &cli.IntFlag{Name: "max-probes", Value: MaxProbes})...)
}

// RecordFlags are the record command's flags: the events, the output
// file and its ring buffers, and what is followed (-a, -p).
func RecordFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "event", Aliases: []string{"e"}, Usage: "record `GROUP:EVENT` (GROUP:* and static SYSTEM:EVENT too); default: every probe event"},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "trace.out", Usage: "write the trace to `FILE`"},
		&cli.IntFlag{Name: "buffer-size", Usage: "per-CPU ring buffer size in `KB`"},
		&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "record every process, not only CMD and its children"},
		&cli.IntFlag{Name: "pid", Aliases: []string{"p"}, Usage: "follow process `PID` (and its new children) until it exits or Ctrl-C"},
	}
}

// CheckFlags are the check command's flags: the probe list, the report
// (--json, --out), --jobs and --max-probes.
func CheckFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "probes", Usage: "the probe list: one PROBEDEF per line, '#' comments (`FILE`, - for stdin)", Required: true},
		&cli.BoolFlag{Name: "json", Usage: "print the matrix as JSON"},
		&cli.StringFlag{Name: "out", Usage: "write each kernel's definitions (for add --from) to `DIR`"},
		&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "resolve `N` kernels at once (default: the number of CPUs)"},
		&cli.IntFlag{Name: "max-probes", Value: MaxProbes, Usage: "maximum probe points per event"},
	}
}

// CleanupFlags are the cleanup command's flags: -n and --pid.
func CleanupFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "only list them"},
		&cli.IntFlag{Name: "pid", Usage: "only what process `PID` left"},
	}
}

// AnalyzeFlags are the analyze command's flags: the reports (--refcount,
// --json, --json-lines, --all-objects), the files for other tools
// (FormatFlags), then how reports are split, measured and ranked.
func AnalyzeFlags() []cli.Flag {
	return append(append([]cli.Flag{
		&cli.StringFlag{Name: "refcount", Usage: "follow objects by key: `SPEC` is get=EV[,EV..],put=EV[,EV..][,key=FIELD][,new=EV][,free=EV]"},
		&cli.BoolFlag{Name: "json", Usage: "print the report as JSON (summaries, totals and the --max-objects first objects and sites)"},
		&cli.BoolFlag{Name: "json-lines", Usage: "print JSON lines: every outstanding object, then the report"},
		&cli.BoolFlag{Name: "all-objects", Usage: "list every outstanding object in the text or JSON report (streamed)"},
	}, FormatFlags("analyze")...),
		&cli.StringFlag{Name: "by", Usage: "split latency by `comm|pid`; report several recordings by file|host (comma-separated, e.g. host,comm)"},
		&cli.StringFlag{Name: "unit", Value: "us", Usage: "time `unit` of the text report: ns, us or ms"},
		&cli.StringFlag{Name: "probes", Usage: "`FILE` of probe definitions (uprobe_events/kprobe_events lines) to pair entry and return probes"},
		&cli.IntFlag{Name: "max-objects", Value: 20, Usage: "objects and sites listed per section of the text and JSON reports"},
		&cli.StringFlag{Name: "object", Usage: "print every event whose arguments carry the address `ADDR` (kernel) or PID:ADDR (user space), and its life"},
		&cli.IntFlag{Name: "objects", Usage: "rank the `N` objects seen most (addresses in pointer-like arguments, or with --refcount its key)"},
		&cli.StringFlag{Name: "rank", Value: "events", Usage: "rank --objects by `events|lifetime`"},
	)
}

// FormatFlags are the flags of command's output formats (analyze.Formats):
// each format's file, then its own options.
func FormatFlags(command string) []cli.Flag {
	var out []cli.Flag
	for _, f := range analyze.Formats {
		if f.Command != command {
			continue
		}
		out = append(out, &cli.StringFlag{Name: f.Flag, Usage: f.Usage})
		for _, o := range f.Options {
			if o.Int {
				out = append(out, &cli.IntFlag{Name: o.Name, Value: o.Default, Usage: o.Usage})
			} else {
				out = append(out, &cli.StringFlag{Name: o.Name, Usage: o.Usage})
			}
		}
	}
	return out
}

// RootParser is the Parser of a root command with RootFlags (flags), w
// for perf's reports, isCommand naming its subcommands and raw its own
// definitions: the modern kinds may follow -D and -a, --ret-insn makes
// -L take a function, --ret-insn and --boot are modes of their own, and
// --target-ns and --target name the mount namespace.
func RootParser(flags []cli.Flag, w io.Writer, isCommand, raw func(string) bool) *Parser {
	return &Parser{Flags: flags, W: w, IsCommand: isCommand, Raw: raw,
		Dynamic: []string{"fprobe", "tracepoint", "event"}, LineFunc: []string{"ret-insn"}, Modes: []string{"ret-insn", "boot"},
		Namespace: []string{"target-ns", "target"}}
}
