package termsafe

import (
	"bytes"
	"io"
	"os"
	"testing"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"int main(void)\n":         "int main(void)\n",
		"\tx = 1;\r\n":             "\tx = 1;\r\n",
		"a\rb":                     `a\x0db`,
		"\x1b]0;pwned\x07title":    `\x1b]0;pwned\x07title`,
		"\x1b[2J\x1b[H":            `\x1b[2J\x1b[H`,
		"caf\u00e9 \u65e5\u672c":   "caf\u00e9 \u65e5\u672c",
		"csi\u009b31m":             `csi\u009b31m`,
		"raw\x9b31m":               `raw\x9b31m`,
		"latin1 \xe9t\xe9":         "latin1 \xe9t\xe9",
		"del\x7f nul\x00 bell\x07": `del\x7f nul\x00 bell\x07`,
		"\x1b[34mblue\x1b[m":       `\x1b[34mblue\x1b[m`, // String allows nothing
		"\u202eevil":               "\u202eevil",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

// The Writer gives, however its input is cut into writes, what String
// gives for the whole, but for the sequences it lets through.
func TestWriterSplits(t *testing.T) {
	in := "ok \x1b[34mblue\x1b[m \r\x1b[Kprogress \x1b]0;t\x07 caf\u00e9 \u65e5 \u009b \x9b\r\nend\r"
	want := "ok \x1b[34mblue\x1b[m \r\x1b[Kprogress " + `\x1b]0;t\x07` + " caf\u00e9 \u65e5 " + `\u009b \x9b` + "\r\nend" + `\x0d`
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			var b bytes.Buffer
			w := NewWriter(&b)
			for _, part := range []string{in[:i], in[i:j], in[j:]} {
				if n, err := w.Write([]byte(part)); n != len(part) || err != nil {
					t.Fatalf("Write: %d, %v", n, err)
				}
			}
			w.Flush()
			if b.String() != want {
				t.Fatalf("cut at %d and %d:\n%q\nwant\n%q", i, j, b.String(), want)
			}
		}
	}
}

func FuzzWriter(f *testing.F) {
	f.Add([]byte("\x1b[34mx\x1b[m\r\n\xe6\x97"), 3)
	f.Fuzz(func(t *testing.T, p []byte, cut int) {
		var whole, parts bytes.Buffer
		w := NewWriter(&whole)
		w.Write(p)
		w.Flush()
		if cut < 0 || cut > len(p) {
			cut = len(p) / 2
		}
		w2 := NewWriter(&parts)
		w2.Write(p[:cut])
		w2.Write(p[cut:])
		w2.Flush()
		if whole.String() != parts.String() {
			t.Fatalf("%q cut at %d: %q, whole %q", p, cut, parts.String(), whole.String())
		}
		for _, c := range whole.Bytes() {
			if c < 0x20 && c != '\n' && c != '\t' && c != '\r' && c != 0x1b || c == 0x7f {
				t.Fatalf("control byte %#x in %q", c, whole.String())
			}
		}
	})
}

// TestGuard: a buffer or a pipe gets the bytes as they are; Raw finds the
// writer under a Writer.
func TestGuard(t *testing.T) {
	var b bytes.Buffer
	if w, flush := Guard(&b); w != io.Writer(&b) || IsTerminal(&b) {
		t.Errorf("a buffer wrapped: %T", w)
	} else {
		flush()
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if g, _ := Guard(w); g != io.Writer(w) {
		t.Errorf("a pipe wrapped: %T", g)
	}
	if x := NewWriter(w); Raw(x) != io.Writer(w) || Raw(w) != io.Writer(w) {
		t.Error("Raw does not find the writer under a Writer")
	}
}
