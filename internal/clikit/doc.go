// Package clikit is what gprobe's command line needs of urfave/cli beyond
// what urfave/cli does, none of it about gprobe's commands: flags whose
// names are derived once (FixNames), operands that may come before a
// command's flags as perf takes them (Interspersed), perf's wording of
// option errors (OptionError), perf's parse-options itself for a command
// that must accept and refuse what perf probe does (Options: clusters,
// abbreviations, negations, exclusive modes, perf's messages, usage and
// option help), a help whose lines fit a terminal's width (Layout), and
// the name a mistyped one was meant to be (Suggest).
package clikit
