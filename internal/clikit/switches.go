package clikit

import (
	"fmt"
	"strings"
)

// Switches are perf's parse-options checks that urfave/cli does not make:
// a value switch given without a value, and two mutually exclusive mode
// switches.
type Switches struct {
	// Value names the flags (short and long names) that take a value.
	Value map[string]bool
	// Exclusive maps each mode flag (short and long names) to the short
	// name of its mode; two different modes exclude each other.
	Exclusive map[string]string
	// Short maps the other long names to the short name perf's messages
	// give them.
	Short map[string]string
	// Command reports whether an operand names a subcommand, whose flags
	// are not checked.
	Command func(string) bool
}

// Check returns perf's message for the first violation in args (args[0] is
// the program's name): "switch `k' requires a value", "switch `D' cannot be
// used with switch `L'"; "" when there is none. A cluster of short flags
// ("-nD") is read as perf reads it: a value flag takes the rest.
func (s Switches) Check(args []string) string {
	seen := ""
	for i := 1; i < len(args); i++ {
		arg := args[i]
		if arg == "--" || !strings.HasPrefix(arg, "-") || arg == "-" {
			if s.Command != nil && s.Command(arg) {
				return ""
			}
			continue
		}
		names, hasValue := s.names(arg)
		for k, n := range names {
			if s.Value[n] && k == len(names)-1 && !hasValue {
				if i+1 >= len(args) {
					return fmt.Sprintf("switch `%s' requires a value", s.short(n))
				}
				i++
			}
			if m, ok := s.Exclusive[n]; ok {
				if seen != "" && seen != m {
					return fmt.Sprintf("switch `%s' cannot be used with switch `%s'", m, seen)
				}
				seen = m
			}
		}
	}
	return ""
}

// names are the flags one argument gives, and whether its last one has its
// value in the argument.
func (s Switches) names(arg string) ([]string, bool) {
	if strings.HasPrefix(arg, "--") {
		name, _, eq := strings.Cut(arg[2:], "=")
		return []string{name}, eq
	}
	var names []string
	for j := 1; j < len(arg); j++ {
		n := string(arg[j])
		names = append(names, n)
		if s.Value[n] {
			return names, j+1 < len(arg)
		}
	}
	return names, false
}

func (s Switches) short(n string) string {
	if m, ok := s.Exclusive[n]; ok {
		return m
	}
	if m, ok := s.Short[n]; ok {
		return m
	}
	return n
}
