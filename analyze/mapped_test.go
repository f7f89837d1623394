package analyze_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gprobe/gprobe/analyze"
	recordings "github.com/gprobe/gprobe/analyze/internal/golden"
	"github.com/gprobe/gprobe/internal/tracefmt"
)

// TestMappedSameAsRead: a recording opened from its file (read in place
// through a mapping) gives the report it gives read through ReadAt.
func TestMappedSameAsRead(t *testing.T) {
	for _, name := range recordings.Files {
		t.Run(name, func(t *testing.T) {
			path := recordings.Path(t, name)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			src, err := analyze.Detect(bytes.NewReader(raw), int64(len(raw)))
			if err != nil {
				t.Fatal(err)
			}
			spec := refSpec
			rep, err := analyze.Run(src, analyze.Config{Refcount: &spec, RefSpec: recordings.RefSpec})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := jsonOf(t, analyzeFile(t, path)), jsonOf(t, rep); !bytes.Equal(got, want) {
				t.Errorf("mapped:\n%s\nread:\n%s", got, want)
			}
		})
	}
}

// TestMappedFileShrinks truncates recordings while they are open, at
// their first event page and to nothing: the run ends with ErrFileChanged
// (metadata read in place is gone) or says the stream was cut, and never
// crashes.
func TestMappedFileShrinks(t *testing.T) {
	for _, name := range recordings.Files {
		if !strings.Contains(name, ".dat") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(recordings.Path(t, name))
			if err != nil {
				t.Fatal(err)
			}
			f, err := tracefmt.Open(bytes.NewReader(raw), int64(len(raw)))
			if err != nil {
				t.Fatal(err)
			}
			first := int64(len(raw))
			for _, b := range f.Buffers {
				for _, c := range b.CPUs {
					if c.Size > 0 {
						first = min(first, c.Offset)
					}
				}
			}
			for _, cut := range []int64{first &^ 4095, 0} {
				path := filepath.Join(t.TempDir(), "shrinking.dat")
				if err := os.WriteFile(path, raw, 0o644); err != nil {
					t.Fatal(err)
				}
				rec, err := analyze.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(path, cut); err != nil {
					t.Fatal(err)
				}
				n, err := runAll(rec)
				if !errors.Is(err, tracefmt.ErrFileChanged) && !rec.Info().Truncated {
					t.Errorf("cut to %d bytes: %d events, error %v, not marked truncated", cut, n, err)
				}
				rec.Close()
			}
		})
	}
}
