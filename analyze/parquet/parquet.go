// Package parquet exports recordings as Parquet: one row per recorded
// event, so that the engines people already run (DuckDB, Spark, Trino,
// pandas) query them with SQL. docs/export.md documents the schema.
//
// The schema is known before the first row is written: the fixed columns
// (ts, cpu, pid, tid, comm, system, event, host, file) and one typed column
// per probe field met in the inputs. So every input is read twice: once to
// learn its event types and fields, once to write the rows. Rows are
// buffered one row group at a time, so memory does not grow with the
// recordings. The recordings' loss counters go to the file's key-value
// metadata.
package parquet

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/gprobe/gprobe/analyze/latency"
	"github.com/gprobe/gprobe/analyze/trace"
	"github.com/gprobe/gprobe/internal/tracefmt/eventfmt"
)

// ErrNoInput: New was given no recording.
var ErrNoInput = errors.New("no recording to export")

// SchemaVersion is the value of the gprobe.schema metadata key; it
// changes when a column changes meaning.
const SchemaVersion = "1"

// DefaultRowGroupRows is the row group size unless Options say.
const DefaultRowGroupRows = 1 << 17

// Options tune an export.
type Options struct {
	// Host names the machine the recordings come from (host column and
	// metadata); "" means this machine's host name.
	Host string
	// RowGroupRows is the number of rows per row group (and so what is
	// held in memory); 0 means DefaultRowGroupRows.
	RowGroupRows int
}

// Recording describes one input in the metadata (gprobe.recordings).
type Recording struct {
	File   string `json:"file"`
	Host   string `json:"host"`
	Format string `json:"format"`
	Events int64  `json:"events"`
	// LostEvents are the events the ring buffer's page headers count as
	// lost; LostUnknown counts loss markers without a count.
	LostEvents  int64 `json:"lost_events"`
	LostUnknown int   `json:"lost_unknown"`
	// KernelStatsLost is what the kernel's per-CPU stats stored in the
	// file count as lost (overrun, dropped), when is not known.
	KernelStatsLost int64    `json:"kernel_stats_lost"`
	Truncated       bool     `json:"truncated"`
	Probes          []string `json:"probes,omitempty"`
}

// Summary is what a Writer wrote.
type Summary struct {
	Columns    []Column
	Rows       int64
	RowGroups  int
	Recordings []Recording
}

// Writer writes one Parquet file from a pass over recordings (it is an
// analyze.Exporter): New reads the recordings once for the schema, the
// pass then reads each through Source, which writes its events as rows,
// and Close writes the last row group and the footer.
type Writer struct {
	opts  Options
	files []string
	next  int // files[next] is the recording Source expects
	sum   Summary
	out   *bufio.Writer
	sink  *sink
	batch *batch
}

// Scan calls fn for every event of the recording at path, in order: how
// New reads the recordings for their schema (analyze.Scan reads every
// format gprobe analyzes).
type Scan func(path string, fn func(*trace.Event) error) error

// New reads the recordings in files through scan for the schema and
// starts the Parquet file on out. The pass must then read exactly these
// files, in this order.
func New(out io.Writer, files []string, scan Scan, opts Options) (*Writer, error) {
	if len(files) == 0 {
		return nil, ErrNoInput
	}
	if opts.Host == "" {
		opts.Host, _ = os.Hostname()
	}
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = DefaultRowGroupRows
	}
	sb := newSchemaBuilder()
	for _, f := range files {
		if err := scan(f, func(e *trace.Event) error { sb.event(e); return nil }); err != nil {
			return nil, err
		}
	}
	w := &Writer{opts: opts, files: files, sum: Summary{Columns: sb.columns()}, out: bufio.NewWriterSize(out, 1<<20)}
	w.sink = newSink(w.out, w.sum.Columns)
	w.batch = newBatch(w.sum.Columns, opts.RowGroupRows)
	return w, nil
}

// Source returns the recording src, read from path, with each of its
// data events written as a row as it is read, and the recording's counts
// kept for the metadata once it has been read.
func (w *Writer) Source(path string, src trace.Source) trace.Source {
	return &rows{Source: src, w: w, path: path}
}

type rows struct {
	trace.Source
	w    *Writer
	path string
}

func (r *rows) Run(fn func(*trace.Event) error) error {
	w := r.w
	if w.next >= len(w.files) || w.files[w.next] != r.path {
		return fmt.Errorf("parquet: %s is not the next of the recordings the schema was read from", r.path)
	}
	w.next++
	rw := newRowWriter(w.batch, w.sum.Columns, w.opts.Host, r.path)
	err := r.Source.Run(func(e *trace.Event) error {
		if e.Kind == trace.Data {
			rw.row(e)
			if w.batch.n == w.opts.RowGroupRows {
				if err := w.flush(); err != nil {
					return err
				}
			}
		}
		return fn(e)
	})
	if err != nil {
		return err
	}
	info := r.Source.Info()
	w.sum.Recordings = append(w.sum.Recordings, Recording{File: r.path, Host: w.opts.Host, Format: info.Format, Events: info.Events,
		LostEvents: info.Lost, LostUnknown: info.LostUnknown, KernelStatsLost: info.StatsLost,
		Truncated: info.Truncated, Probes: info.Probes})
	return nil
}

// flush writes the batch as a row group.
func (w *Writer) flush() error {
	w.sum.Rows += int64(w.batch.n)
	w.sum.RowGroups++
	err := w.sink.writeRowGroup(w.batch)
	w.batch.reset()
	return err
}

// Call does nothing: rows are events.
func (w *Writer) Call(latency.Call) {}

// Close writes the last row group, the metadata and the footer, once
// every recording has been read.
func (w *Writer) Close() error {
	if w.next != len(w.files) {
		return fmt.Errorf("parquet: %d of %d recordings read", w.next, len(w.files))
	}
	if w.batch.n > 0 {
		if err := w.flush(); err != nil {
			return err
		}
	}
	meta, err := metadata(&w.sum)
	if err != nil {
		return err
	}
	if err := w.sink.close(meta); err != nil {
		return err
	}
	return w.out.Flush()
}

// Summary is what was written.
func (w *Writer) Summary() *Summary { return &w.sum }

// metadata is the file's key-value metadata.
func metadata(sum *Summary) ([][2]string, error) {
	recs, err := json.Marshal(sum.Recordings)
	if err != nil {
		return nil, err
	}
	var events, lost, statsLost int64
	var unknown int
	for _, r := range sum.Recordings {
		events += r.Events
		lost += r.LostEvents
		unknown += r.LostUnknown
		statsLost += r.KernelStatsLost
	}
	return [][2]string{
		{"gprobe.schema", SchemaVersion},
		{"gprobe.recordings", string(recs)},
		{"gprobe.events", strconv.FormatInt(events, 10)},
		{"gprobe.lost_events", strconv.FormatInt(lost, 10)},
		{"gprobe.lost_unknown", strconv.Itoa(unknown)},
		{"gprobe.kernel_stats_lost", strconv.FormatInt(statsLost, 10)},
	}, nil
}

// batch holds one row group, column by column. Integer columns keep their
// values as int64 (unsigned ones by their bits); optional columns keep a
// definition level per row (1 present, 0 null) and a zero value for nulls.
type batch struct {
	n    int
	ints [][]int64
	strs [][]string
	defs [][]int16
}

func newBatch(cols []Column, rows int) *batch {
	b := &batch{ints: make([][]int64, len(cols)), strs: make([][]string, len(cols)), defs: make([][]int16, len(cols))}
	for i, c := range cols {
		if c.Type == String {
			b.strs[i] = make([]string, 0, rows)
		} else {
			b.ints[i] = make([]int64, 0, rows)
		}
		if c.Optional {
			b.defs[i] = make([]int16, 0, rows)
		}
	}
	return b
}

func (b *batch) reset() {
	b.n = 0
	for i := range b.ints {
		if b.ints[i] != nil {
			b.ints[i] = b.ints[i][:0]
		}
		if b.strs[i] != nil {
			clear(b.strs[i])
			b.strs[i] = b.strs[i][:0]
		}
		if b.defs[i] != nil {
			b.defs[i] = b.defs[i][:0]
		}
	}
}

// present returns the number of non-null values in column i.
func (b *batch) present(i int) int {
	if b.defs[i] == nil {
		return b.n
	}
	n := 0
	for _, d := range b.defs[i] {
		n += int(d)
	}
	return n
}

// rowWriter appends events of one recording to a batch.
type rowWriter struct {
	b       *batch
	cols    []Column
	host    string
	file    string
	fields  []int          // indexes of the field columns
	byField map[string]int // field name -> column index
	classes trace.TypeCache[*class]
}

// class is, per event type, where each of its fields goes.
type class struct {
	binary []binaryField
}

type binaryField struct {
	col int
	fl  *eventfmt.Field
	len *eventfmt.Field // a Go string's length (trace.GoStringLen), or nil
}

func newRowWriter(b *batch, cols []Column, host, file string) *rowWriter {
	w := &rowWriter{b: b, cols: cols, host: host, file: file, byField: map[string]int{}}
	for i, c := range cols {
		if c.Field != "" {
			w.fields = append(w.fields, i)
			w.byField[c.Field] = i
		}
	}
	return w
}

func (w *rowWriter) derive(e *trace.Event) *class {
	c := &class{}
	if e.Format == nil {
		return c
	}
	for _, fl := range e.Format.Args() {
		if col, ok := w.byField[fl.Name]; ok {
			c.binary = append(c.binary, binaryField{col, fl, trace.GoStringLen(e.Format, fl)})
		}
	}
	return c
}

func (w *rowWriter) row(e *trace.Event) {
	b := w.b
	b.n++
	b.ints[colTS] = append(b.ints[colTS], int64(e.TS))
	b.ints[colCPU] = append(b.ints[colCPU], int64(e.CPU))
	b.ints[colPID] = append(b.ints[colPID], int64(e.Process()))
	b.ints[colTID] = append(b.ints[colTID], int64(e.PID))
	b.strs[colComm] = append(b.strs[colComm], e.Comm)
	b.strs[colSystem] = append(b.strs[colSystem], e.System)
	b.defs[colSystem] = append(b.defs[colSystem], defOf(e.System != ""))
	b.strs[colEvent] = append(b.strs[colEvent], e.Name)
	b.strs[colHost] = append(b.strs[colHost], w.host)
	b.strs[colFile] = append(b.strs[colFile], w.file)
	for _, i := range w.fields {
		b.defs[i] = append(b.defs[i], 0)
		if w.cols[i].Type == String {
			b.strs[i] = append(b.strs[i], "")
		} else {
			b.ints[i] = append(b.ints[i], 0)
		}
	}
	last := b.n - 1
	if e.Format != nil {
		for _, f := range w.classes.Get(e, w.derive).binary {
			switch w.cols[f.col].Type {
			case String:
				b.strs[f.col][last] = trace.CutGoString(f.fl.Format(e.Data, e.Order), f.len, e.Data, e.Order)
			default:
				v, ok := f.fl.Uint(e.Data, e.Order)
				if !ok {
					continue
				}
				b.ints[f.col][last] = int64(v)
			}
			b.defs[f.col][last] = 1
		}
		return
	}
	for _, kv := range e.Fields {
		col, ok := w.byField[kv.Key]
		if !ok {
			continue
		}
		switch w.cols[col].Type {
		case String:
			b.strs[col][last] = kv.Val
		case Int64:
			v, err := strconv.ParseInt(kv.Val, 10, 64)
			if err != nil {
				continue
			}
			b.ints[col][last] = v
		default:
			v, ok := trace.ParseUint(kv.Val)
			if !ok {
				continue
			}
			b.ints[col][last] = int64(v)
		}
		b.defs[col][last] = 1
	}
}

func defOf(present bool) int16 {
	if present {
		return 1
	}
	return 0
}
