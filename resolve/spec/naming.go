package spec

import (
	"strings"
	"unicode/utf8"
)

// DefaultGroup is perf's group for kernel probes (PERFPROBE_GROUP).
const DefaultGroup = "probe"

// IsCFuncName is perf's is_c_func_name(): a letter or '_' followed by
// letters, digits or '_' (letters per the kernel tools' Latin-1 ctype, so
// bytes 0xC0-0xFF except 0xD7/0xF7 count as letters). Used for event, group
// and -L function names.
func IsCFuncName(s string) bool {
	s = cString(s)
	if s == "" || (!toolsIsAlpha(s[0]) && s[0] != '_') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !toolsIsAlnum(s[i]) && s[i] != '_' {
			return false
		}
	}
	return true
}

// eventBase is the base-name part of perf's get_new_event_name(): a leading
// '.' is skipped, then the name is cut at the first '.' or '@' (unless that
// is its first byte), dropping ".isra.0", ".constprop.N", "@GLIBC_2.2.5".
func eventBase(base string) string {
	base = strings.TrimPrefix(cString(base), ".")
	if i := strings.IndexAny(base, ".@"); i > 0 {
		base = base[:i]
	}
	return base
}

// EventName is the event name perf 6.1 derives from base (a function or
// symbol name, or the user's EVENT) for C targets when it is not taken yet:
// see eventBase, plus "__return" for return probes.
//
// Where perf 6.1 would stop with "Internal error: ... is an invalid event
// name." because that is no C name (a C++ or Rust name: ns::Klass::method,
// Vec<u8>::push), the name is made as newer perf makes it for other
// languages: each run of bytes that are neither letters nor digits becomes
// one '_', none at the start (ns_Klass_method, Vec_u8_push); a glob keeps
// perf 6.1's failure (the event of "ksys_[rw]*:2" is "ksys_[rw]*_L2",
// which the caller refuses, as perf does). The result is not validated
// further; perf then requires IsCFuncName ("Internal error: \"%s\" is an
// invalid event name.") and a length the kernel takes
// (probedef.EventNameCode).
func EventName(base string, ret bool) string {
	n := eventBase(base)
	if !IsCFuncName(n) && !IsGlob(n) {
		n = sanitizeEventName(cString(base))
	}
	if ret {
		n += "__return"
	}
	return n
}

// LanguageEventName is name as newer perf makes an event name of a name
// that is not C's, glob bytes included (a C++ signature's "char*"): see
// EventName.
func LanguageEventName(name string) string { return sanitizeEventName(cString(name)) }

// sanitizeEventName is newer perf's get_new_event_name rule for names that
// are not C's: runs of non-alphanumeric bytes (per the tools' ctype, '_'
// included) become one '_', and none is put first.
func sanitizeEventName(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if toolsIsAlnum(s[i]) {
			b = append(b, s[i])
		} else if len(b) > 0 && b[len(b)-1] != '_' {
			b = append(b, '_')
		}
	}
	return string(b)
}

// UprobeGroup is perf's default group for uprobes on the binary at path
// (convert_exec_to_group): "probe_" + the POSIX basename of path cut at the
// first byte that is not alphanumeric or '_' ("/lib/x86_64-linux-gnu/libc.so.6"
// gives "probe_libc"). perf fails if the result is not shorter than
// probedef.MaxEventNameLen.
//
// Unlike perf, the cut never splits a UTF-8 character: perf's ctype takes
// the lead byte of a two- to four-byte sequence for a Latin-1 letter and
// its next byte for punctuation, so "/opt/dä" gave "probe_d\xc3", a name
// the kernel's checks then refuse; here it gives "probe_d".
func UprobeGroup(path string) string {
	b := xpgBasename(cString(path))
	for i := 0; i < len(b); i++ {
		if !toolsIsAlnum(b[i]) && b[i] != '_' {
			b = b[:i]
			break
		}
	}
	// Drop a UTF-8 sequence the cut left incomplete.
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRuneInString(b[i:]) {
				b = b[:i]
			}
			break
		}
	}
	return DefaultGroup + "_" + b
}
