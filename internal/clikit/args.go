package clikit

import "strings"

// Interspersed moves the operands of command (the first non-flag
// argument of args[1:] naming it) after its flags, so that flags may
// follow the operands as they may in perf; what follows "--" is left as
// it is. valueFlags names the command's flags that take a value (without
// dashes): the argument after one is its value, not an operand. Without
// command, args are returned as they are.
func Interspersed(args []string, command string, valueFlags map[string]bool) []string {
	at := -1
	for i, arg := range args[1:] {
		if arg == command {
			at = i + 1
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "--" {
			return args
		}
	}
	if at < 0 {
		return args
	}
	out := append([]string{}, args[:at+1]...)
	var pos []string
	rest := args[at+1:]
	for i := 0; i < len(rest); i++ {
		arg := rest[i]
		if arg == "--" {
			return append(append(out, pos...), rest[i:]...)
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			pos = append(pos, arg)
			continue
		}
		out = append(out, arg)
		name := strings.TrimLeft(arg, "-")
		if valueFlags[name] && !strings.Contains(arg, "=") && i+1 < len(rest) {
			i++
			out = append(out, rest[i])
		}
	}
	return append(out, pos...)
}
