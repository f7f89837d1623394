package tracefmt

import (
	"bytes"
	"testing"
)

// The stored kallsyms text reads back from every version and compression,
// and a file without it has none.
func TestKallsyms(t *testing.T) {
	const text = "ffffffff81000000 T _stext\nffffffff81234560 t foo_open\n"
	for _, v := range variants {
		for _, stored := range []string{text, ""} {
			c := testFile(t, roundTripCPUs())
			c.Version, c.Compression, c.Kallsyms = v.version, v.comp, []byte(stored)
			var out bytes.Buffer
			if _, err := c.WriteTo(&out); err != nil {
				t.Fatal(err)
			}
			f, err := Open(bytes.NewReader(out.Bytes()), int64(out.Len()))
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.Kallsyms()
			if err != nil || string(got) != stored {
				t.Errorf("%s: Kallsyms() = %q, %v; want %q", v.name, got, err, stored)
			}
		}
	}
}
