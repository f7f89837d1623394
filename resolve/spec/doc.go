// Package spec parses the input grammar of `perf probe` exactly as perf 6.1
// does: probe definitions (-a/-D/-V and positional PROBEDEF), probe arguments,
// and -L line ranges, perf's globs and filters (-F, -V --filter, -l, -d:
// Filter, GlobMatch, LazyMatch), plus perf's naming helpers.
//
// The parsers follow perf's tools/perf/util/probe-event.c behaviour byte for
// byte, including its quirks, because gprobe must accept and reject the same
// inputs and print the same messages. Notable quirks reproduced here (all
// confirmed against the real perf 6.1 binary):
//
//   - Numbers are parsed with glibc strtoul/strtol base 0: "0x10" is hex,
//     "010" is octal (8), "08" is rejected, "0x" alone is rejected, no "0b"
//     binary prefix (glibc 2.36). An empty number is 0 without error for
//     probe points ("vfs_read:" and "vfs_read+" are the function entry) but is
//     an error for -L. A line number is truncated to a C int
//     ("vfs_read:4294967297" is line 1, "vfs_read:-1" is line -1); an offset
//     wraps as unsigned long ("vfs_read+-1" is offset 2^64-1).
//   - Backslash escapes use perf's strpbrk_esc, which only looks at the two
//     preceding bytes: "\:" is escaped, "\\:" is not, and "\\\:" is NOT
//     escaped either. Names are unescaped with strdup_esc (each "\x" becomes
//     "x", a trailing lone backslash is dropped); a lazy pattern keeps its
//     backslashes.
//   - Character classes use the kernel tools' Latin-1 ctype table, not the C
//     library's: bytes 0xC0-0xFF except 0xD7 and 0xF7 are letters, and 0xA0
//     is white space when a probe definition is split into words.
//   - A GROUP is checked as a C name before unescaping (so any backslash
//     rejects it), the EVENT after unescaping ("e\x=f" names the event "ex").
//   - "%return" may be repeated; "FUNC@" gives an empty (but present) file;
//     "@SRC:LN" (no function) is accepted; "@*" has no special meaning in 6.1.
//
// # Errors
//
// Every grammar error is a *SyntaxError, and errors.Is(err, ErrSyntax) holds
// for it. Its Error() string is exactly the text perf's parser itself prints
// to stderr (the "Semantic error :..." line, without the trailing newline).
// What perf's command driver prints after that line is NOT included; the CLI
// must add it itself:
//
//   - positional PROBEDEF (`perf probe [opts] SPEC`): the line
//     "  Error: Command Parse Error." (exit status 234 = -EINVAL&0xff);
//   - option callbacks (-a/--add, -D/--definition, -V/--vars, -L/--line): an
//     empty line, the " Usage: perf probe ..." block, an empty line and the
//     help text of the failing option (exit status 129).
//
// SDT/cached-event specs ("%[sdt_PROV:]EV[@TARGET]", "sdt_PROV:EV") parse
// into a Point with SDT set (resolve/sdt resolves them); their perf syntax
// errors are reported as perf reports them.
package spec
