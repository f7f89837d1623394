// Package clikit is what gprobe's command line needs of urfave/cli beyond
// what urfave/cli does, none of it about gprobe's commands: flags whose
// names are derived once (FixNames), operands that may come before a
// command's flags as perf takes them (Interspersed), perf's wording of
// option errors (OptionError), a help whose lines fit a terminal's width
// (Layout), and the name a mistyped one was meant to be (Suggest).
package clikit
