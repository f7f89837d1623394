package perfprobe

// Misplaced is the usage error of an extension of perf's options given
// where it does not apply, "" when none is: --boot or --bootconfig
// without -D, both at once, --ret-insn without -D, -a, -L or a
// definition, --cache without -l or -d. on says whether a flag is on (a
// boolean given true, any other given at all); operands whether the
// command line has operands (definitions).
func Misplaced(on func(name string) bool, operands bool) string {
	switch {
	case on("boot") && !on("definition"):
		return "--boot prints definitions: use it with -D"
	case on("bootconfig") && !on("definition"):
		return "--bootconfig prints definitions: use it with -D"
	case on("bootconfig") && on("boot"):
		return "--boot and --bootconfig: choose one"
	case on("ret-insn") && !on("definition") && !on("add") && !on("line") && !operands:
		return "--ret-insn goes with -D, -a or -L"
	case on("cache") && !on("list") && !on("del"):
		return "--cache goes with -l or -d: gprobe adds no probes to perf's probe cache"
	}
	return ""
}
