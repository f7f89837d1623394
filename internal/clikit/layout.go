package clikit

import (
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// nameWidth is the width of the help's option column (names and value
// placeholder) when the usage follows on the same line, as in perf's
// help; longer names put the usage on the next line.
const nameWidth = 24

// Layout makes urfave/cli's help (App.Writer) fit width columns: every
// text it wraps (usages, descriptions, commands) is wrapped there, and
// each flag is FlagString's. It sets urfave/cli's package-wide help hooks.
func Layout(width int) {
	cli.FlagStringer = func(f cli.Flag) string { return FlagString(f, width) }
	cli.HelpPrinter = func(w io.Writer, templ string, data any) {
		cli.HelpPrinterCustom(w, templ, data, map[string]any{"wrapAt": func() int { return width }})
	}
}

// FlagString is a flag's help entry as urfave/cli's templates place it
// (after three spaces, later lines after six): "-k, --vmlinux PATH" in a
// column of nameWidth, then the usage with its default value, wrapped so
// that no line passes width.
func FlagString(f cli.Flag, width int) string {
	df, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return f.String()
	}
	placeholder, usage := unquoteUsage(df.GetUsage())
	if df.TakesValue() {
		if placeholder == "" {
			placeholder = "VALUE"
		}
		if d := df.GetDefaultText(); d != "" && d != "0" {
			usage += " (default: " + d + ")"
		}
	}
	var short, long []string
	for _, n := range f.Names() {
		if len(n) == 1 {
			short = append(short, "-"+n)
		} else {
			long = append(long, "--"+n)
		}
	}
	names := strings.Join(append(short, long...), ", ")
	if len(short) == 0 {
		names = "    " + names
	}
	if placeholder != "" {
		names += " " + placeholder
	}
	// urfave/cli indents the first line by three and the rest by six, and
	// wraps again a line longer than width less six.
	lines := wrapWords(usage, width-6-nameWidth-2)
	pad := strings.Repeat(" ", 3+nameWidth+2-6)
	var b strings.Builder
	b.WriteString(names)
	if len(names) > nameWidth && len(lines) > 0 {
		b.WriteString("\n" + pad)
	} else if len(lines) > 0 {
		b.WriteString(strings.Repeat(" ", nameWidth+2-len(names)))
	}
	b.WriteString(strings.Join(lines, "\n"+pad))
	return b.String()
}

// unquoteUsage splits a usage into the word it quotes with backquotes (the
// value's placeholder) and the usage with the quotes removed, as
// urfave/cli reads it.
func unquoteUsage(usage string) (placeholder, text string) {
	i := strings.IndexByte(usage, '`')
	if i < 0 {
		return "", usage
	}
	j := strings.IndexByte(usage[i+1:], '`')
	if j < 0 {
		return "", usage
	}
	placeholder = usage[i+1 : i+1+j]
	return placeholder, usage[:i] + placeholder + usage[i+1+j+1:]
}

// wrapWords breaks s at spaces into lines of at most width bytes (a word
// longer than width stays whole).
func wrapWords(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
