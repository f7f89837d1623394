package core

import "github.com/gprobe/gprobe/emit/probedef"

// Options tune resolution: perf probe's options that change an answer
// (resolve.Options carries them from the command line).
type Options struct {
	NoInlines bool
	MaxProbes int // default 128 (perf's --max-probes)
	// Features are the target kernel's probe-event features (tracefs
	// README); perf's output depends on MultiProbe, HexTypes,
	// KretprobeOffset and Immediates.
	Features probedef.Features
	// Warn receives perf's non-fatal messages, one line or block at a time.
	Warn func(string)
	// Debug, when set, receives what perf -v prints of a search (what
	// was looked at: "Matched function: ...", "Probe point found: ..."),
	// one line at a time.
	Debug func(string)
	// SourcePrefix is -s: where source files are looked up (lazy patterns).
	SourcePrefix string
	// TargetFeatures, when set, are the features of the kernel the probes
	// are for (a vmlinux's own README), which decide what perf 6.1 cannot
	// write: fprobes, tracepoint probes, entry values at return, BTF
	// arguments. perf's kprobe text follows Features (perf reads the
	// running kernel's README even for another kernel's vmlinux).
	TargetFeatures *probedef.Features
	// KernelBTFArgs writes the arguments of fprobes, tprobes and entry
	// values at return in the kernel's BTF syntax (count, file->f_pos,
	// $arg*), which the kernel resolves through its own BTF, instead of
	// fetches on $argN. They are still resolved here, to refuse what the
	// kernel could not find.
	KernelBTFArgs bool
	// Blacklist is the running kernel's kprobe blacklist (debugfs): kernel
	// probes it covers are skipped with perf's warning. Its addresses are
	// the running kernel's; an image's are mapped onto them through a
	// symbol both know, else names are compared.
	Blacklist *probedef.Blacklist
	// ImageBlacklist checks kernel probes against the image's own
	// blacklist (its NOKPROBE_SYMBOL list and __kprobes, noinstr and entry
	// text) instead: the probes are for the kernel the image is (-D -k).
	ImageBlacklist bool
	// KernelText says whether a function of the running kernel is in its
	// text (kallsyms' _stext to _etext), for kernel probes resolved
	// without an image: perf skips the others ("FUNC is out of .text, skip
	// it."). nil checks nothing.
	KernelText interface {
		InText(sym string) (in, known bool)
	}
	// Names says how symbol names are shown (-F) and matched (FUNC found
	// in the symbol table): perf's --no-demangle, --demangle-kernel, and
	// -v's C++ parameters.
	Names Names
}

// Names are perf's demangling options. The zero value is perf's default:
// a user binary's mangled names are demangled, a kernel's are not, and
// C++ names carry no parameters.
type Names struct {
	// NoDemangle keeps a user binary's ELF names (--no-demangle).
	NoDemangle bool
	// DemangleKernel demangles the names of a kernel image or module
	// (--demangle-kernel).
	DemangleKernel bool
	// Params shows C++ parameters, as perf -v does.
	Params bool
}
