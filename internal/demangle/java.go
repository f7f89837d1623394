package demangle

import "strings"

// The states of perf's Java demangler.
const (
	jPrefix = iota // before the class
	jClass         // in the class name
	jFunc          // in the method name
	jType          // in the parameter list
	jCType         // in a class-typed parameter
)

var javaBase = map[byte]string{
	'B': "byte", 'C': "char", 'D': "double", 'F': "float",
	'I': "int", 'J': "long", 'S': "short", 'Z': "boolean",
}

// java is perf's java_demangle_sym(sym, JAVA_DEMANGLE_NORET)
// (util/demangle-java.c): "Ljava/lang/String;indexOf(I)I" is
// "java.lang.String.indexOf(int)"; the return type after the last ')' is
// dropped. Anything its state machine refuses is not Java's.
func java(sym string) (string, bool) {
	p := strings.LastIndexByte(sym, ')')
	if p < 0 {
		return "", false
	}
	// perf's buffer holds three bytes per input byte and stops one short.
	max := len(sym) * 3
	var b strings.Builder
	put := func(s string) {
		if room := max - b.Len(); room > 0 {
			if len(s) > room {
				s = s[:room]
			}
			b.WriteString(s)
		}
	}
	mode, array, narg := jPrefix, 0, 0
	for i := 0; i <= p; i++ {
		if b.Len() >= max {
			break
		}
		c := sym[i]
		switch c {
		case 'L':
			if mode == jPrefix || mode == jType {
				if mode == jType {
					if narg > 0 {
						put(", ")
					}
					narg++
					mode = jCType
				} else {
					mode = jClass
				}
			} else {
				put(sym[i : i+1])
			}
		case 'B', 'C', 'D', 'F', 'I', 'J', 'S', 'Z':
			if mode == jType {
				if narg > 0 {
					put(", ")
				}
				put(javaBase[c])
				for ; array > 0; array-- {
					put("[]")
				}
				array = 0
				narg++
			} else {
				put(sym[i : i+1])
			}
		case 'V':
			if mode == jType {
				put("void")
				for ; array > 0; array-- {
					put("[]")
				}
				array = 0
			} else {
				put(sym[i : i+1])
			}
		case '[':
			if mode != jType {
				return "", false
			}
			array++
		case '(':
			if mode != jFunc {
				return "", false
			}
			put("(")
			mode = jType
		case ')':
			if mode != jType {
				return "", false
			}
			put(")")
			narg = 0
		case ';':
			if mode != jClass && mode != jCType {
				return "", false
			}
			if mode == jClass && i+1 < len(sym) && toolsIsAlpha(sym[i+1]) {
				put(".")
			}
			if mode == jClass {
				mode = jFunc
			} else {
				mode = jType
			}
		case '/':
			if mode != jClass && mode != jCType {
				return "", false
			}
			put(".")
		default:
			put(sym[i : i+1])
		}
	}
	return b.String(), true
}

// toolsIsAlpha is isalpha of the kernel tools' ctype table
// (tools/lib/ctype.c), which perf's demanglers use: Latin-1 letters count.
func toolsIsAlpha(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= 0xC0 && c != 0xD7 && c != 0xF7
}
