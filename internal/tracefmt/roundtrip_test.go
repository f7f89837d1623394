package tracefmt

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/gprobe/gprobe/internal/tracefmt/ringbuf"
)

// roundTripCPUs are the pages of three CPUs: CPU 0 has more pages than
// one compressed chunk holds, CPU 1 none, CPU 2 a loss marker.
func roundTripCPUs() [][]byte {
	var cpu0 []byte
	for i := range 2*chunkPages + 3 {
		cpu0 = append(cpu0, page(uint64(1_000_000*(i+1)), 1234, []uint64{uint64(3 * i), uint64(3*i + 1), uint64(3*i + 2)}, 0)...)
	}
	cpu2 := append(page(1_500_000, 99, []uint64{7}, 0), page(2_500_000, 99, []uint64{8, 9}, 5)...)
	return [][]byte{cpu0, nil, cpu2}
}

// events decodes pages as analyze does, into comparable lines.
func events(t *testing.T, f *File, cpu int, pages [][]byte) []string {
	t.Helper()
	dec := ringbuf.NewDecoder(f.PageLayout, f.Order)
	var out []string
	for _, pg := range pages {
		p, err := dec.Decode(pg, func(r ringbuf.Record) {
			ef, err := f.Format(int(f.Order.Uint16(r.Data)))
			if err != nil {
				t.Fatal(err)
			}
			pid, _ := ef.Field("common_pid").Uint(r.Data, f.Order)
			v, _ := ef.Field("value").Uint(r.Data, f.Order)
			out = append(out, fmt.Sprintf("cpu%d %d %s pid=%d value=%d", cpu, r.TS, ef.FullName(), pid, v))
		})
		if err != nil {
			t.Fatal(err)
		}
		if p.Missed != 0 {
			out = append(out, fmt.Sprintf("cpu%d lost %d", cpu, p.Missed))
		}
	}
	return out
}

// splitPages cuts CPU data into pages.
func splitPages(data []byte) [][]byte {
	var out [][]byte
	for ; len(data) > 0; data = data[pageSize:] {
		out = append(out, data[:pageSize])
	}
	return out
}

// readPages reads every page of one CPU of a buffer.
func readPages(t *testing.T, f *File, b *Buffer, i int) [][]byte {
	t.Helper()
	p := f.Pages(b, i)
	var out [][]byte
	for {
		pg, err := p.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pg)
	}
	if p.Truncated {
		t.Errorf("cpu%d stream truncated", b.CPUs[i].CPU)
	}
	return out
}

// TestRoundTrip writes every variant with the shipped writer and reads it
// back with the reader: the same metadata, the same pages and so the same
// events.
func TestRoundTrip(t *testing.T) {
	cpus := roundTripCPUs()
	probe := Metadata{Tool: "gprobe record", Probes: []string{"p:g/e /bin/true:0x10"}, SavedTgids: "1234 1200\n99 99\n",
		Lost: Lost{PageMissed: 5, PerCPU: []CPULost{{CPU: 2, PageMissed: 5}}}}
	hp := testFile(t, nil).HeaderPage
	wantLayout, err := ringbuf.ParseHeaderPage(string(hp))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range variants {
		for _, inst := range []string{"", "traced"} {
			if v.version == 6 && inst != "" {
				continue
			}
			t.Run(v.name+"/"+cmp.Or(inst, "top"), func(t *testing.T) {
				c := testFile(t, cpus)
				c.Version, c.Compression, c.Instance = v.version, v.comp, inst
				opt, err := probe.Option()
				if err != nil {
					t.Fatal(err)
				}
				c.Options = append(c.Options, opt)
				var out bytes.Buffer
				if _, err := c.WriteTo(&out); err != nil {
					t.Fatal(err)
				}
				f, err := Open(bytes.NewReader(out.Bytes()), int64(out.Len()))
				if err != nil {
					t.Fatal(err)
				}
				comp := v.comp
				if v.version == 7 && comp == "" {
					comp = "none"
				}
				if f.Version != v.version || f.Compression != comp || f.PageSize != pageSize || f.LongSize != 8 || f.Truncated {
					t.Errorf("file v%d %q page %d long %d truncated %v", f.Version, f.Compression, f.PageSize, f.LongSize, f.Truncated)
				}
				if f.PageLayout != wantLayout || f.HeaderPageText != string(hp) {
					t.Errorf("page layout %+v", f.PageLayout)
				}
				if f.Cmdlines.All()[1234] != "hello-prog" || len(f.CPUStats) != 1 || f.CPUStats[0] != "CPU: 0\nentries: 0\noverrun: 0\n\x00" {
					t.Errorf("cmdlines %v, cpu stats %q", f.Cmdlines, f.CPUStats)
				}
				if f.Uname != "Linux test 6.1.0 x86_64" {
					t.Errorf("uname %q", f.Uname)
				}
				if ids := f.FormatIDs(); len(ids) != 1 || ids[0] != 4242 {
					t.Errorf("format ids %v", ids)
				}
				if sys, text, _ := f.FormatSource(4242); sys != "gprobe_test" || text != helloFormat {
					t.Errorf("format of 4242: %s %q", sys, text)
				}
				if m := f.Gprobe; m == nil || !slices.Equal(m.Probes, probe.Probes) || m.Lost.Total() != 5 || m.TGIDs().Int(1234) != 1200 {
					t.Errorf("gprobe metadata %+v", m)
				}
				if len(f.Buffers) != 1 {
					t.Fatalf("%d buffers", len(f.Buffers))
				}
				b := &f.Buffers[0]
				if b.Name != inst || b.Clock != "mono" || b.PageSize != pageSize || b.Latency {
					t.Errorf("buffer %q clock %q page %d latency %v", b.Name, b.Clock, b.PageSize, b.Latency)
				}
				var got, want []string
				seen := map[int]bool{}
				for i := range b.CPUs {
					cpu := b.CPUs[i].CPU
					seen[cpu] = true
					pages := readPages(t, f, b, i)
					if !slices.EqualFunc(pages, splitPages(cpus[cpu]), bytes.Equal) {
						t.Errorf("cpu%d: %d pages read differ from the %d written", cpu, len(pages), len(cpus[cpu])/pageSize)
					}
					got = append(got, events(t, f, cpu, pages)...)
				}
				for cpu, data := range cpus {
					if len(data) > 0 && !seen[cpu] {
						t.Errorf("cpu%d missing", cpu)
					}
					want = append(want, events(t, f, cpu, splitPages(data))...)
				}
				if len(want) != 3*(2*chunkPages+3)+3+1 || !slices.Equal(got, want) {
					t.Errorf("events read back:\n%v\nwritten:\n%v", got, want)
				}
			})
		}
	}
}

// TestRoundTripTruncated cuts written v7 files inside their CPU data, which
// loses the options section that locates it (written after the data, as
// trace-cmd does): the reader recovers the pages before the cut and says
// the file was cut.
func TestRoundTripTruncated(t *testing.T) {
	cpus := roundTripCPUs()
	for _, v := range variants[1:] {
		t.Run(v.name, func(t *testing.T) {
			c := testFile(t, cpus[:1])
			c.Version, c.Compression = v.version, v.comp
			var out bytes.Buffer
			if _, err := c.WriteTo(&out); err != nil {
				t.Fatal(err)
			}
			full, err := Open(bytes.NewReader(out.Bytes()), int64(out.Len()))
			if err != nil {
				t.Fatal(err)
			}
			data := full.Buffers[0].CPUs[0]
			cut := out.Bytes()[:data.Offset+data.Size*3/4]
			f, err := Open(bytes.NewReader(cut), int64(len(cut)))
			if err != nil {
				t.Fatal(err)
			}
			if !f.Truncated || len(f.Buffers) != 1 {
				t.Fatalf("truncated %v, %d buffers", f.Truncated, len(f.Buffers))
			}
			p := f.Pages(&f.Buffers[0], 0)
			var pages [][]byte
			for {
				pg, err := p.Next()
				if err != nil {
					break
				}
				pages = append(pages, pg)
			}
			written := splitPages(cpus[0])
			// Uncompressed, the pages up to the cut; compressed, the
			// chunks before the one cut.
			if len(pages) == 0 || len(pages) >= len(written) || !slices.EqualFunc(pages, written[:len(pages)], bytes.Equal) {
				t.Errorf("%d pages recovered of %d written, or they differ", len(pages), len(written))
			}
		})
	}
}
