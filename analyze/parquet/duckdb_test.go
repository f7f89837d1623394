package parquet_test

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/gprobe/gprobe/analyze"
	"github.com/gprobe/gprobe/analyze/internal/golden"
	"github.com/gprobe/gprobe/analyze/parquet"
	"github.com/gprobe/gprobe/analyze/refcount"
	"github.com/gprobe/gprobe/analyze/report"
	"github.com/gprobe/gprobe/analyze/trace"
)

// The golden recordings of analyze's tests: refprog with 30 calls of work
// (recursing to depth i%3), 10 objects of which 3 leak and 2 are put twice,
// recorded through real uprobes by trace-cmd (v7 zstd, converted to v6 and
// v7 uncompressed), by gprobe record, and as the kernel's text outputs.
// analyzed is gprobe analyze's report on path (latency and refcount).
func analyzed(t *testing.T, path string) *report.Report {
	t.Helper()
	rec, err := analyze.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	spec, err := refcount.ParseSpec(golden.RefSpec)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := analyze.Run(rec, analyze.Config{Refcount: &spec, RefSpec: golden.RefSpec})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func export(t *testing.T, files []string, opts parquet.Options) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "events.parquet")
	fh, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	w, err := parquet.New(fh, files, analyze.Scan, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := analyze.RunFiles(files, analyze.Config{Exporters: []analyze.Exporter{w}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func duck(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// The queries docs/export.md shows.
const (
	eventCounts = `SELECT event, count(*) FROM read_parquet(?) GROUP BY event ORDER BY event`

	// Calls of work: entries and returns pair per thread by nesting level
	// (the running count of open calls), the k-th entry at a level with
	// the k-th return at that level.
	latencyQuery = `
WITH ev AS (
  SELECT tid, ts, event,
         sum(CASE WHEN event = 'work' THEN 1 ELSE -1 END)
           OVER (PARTITION BY tid ORDER BY ts, file_row_number) AS open
  FROM read_parquet(?, file_row_number = true)
  WHERE event IN ('work', 'work__return')
), lv AS (
  SELECT tid, ts, event, CASE WHEN event = 'work' THEN open ELSE open + 1 END AS level
  FROM ev
), k AS (
  SELECT *, row_number() OVER (PARTITION BY tid, level, event ORDER BY ts) AS k FROM lv
)
SELECT count(*), min(r.ts - e.ts), max(r.ts - e.ts)
FROM k e JOIN k r ON e.tid = r.tid AND e.level = r.level AND e.k = r.k
WHERE e.event = 'work' AND r.event = 'work__return'`

	// Objects still referenced at the end: references taken less those
	// dropped, per process and address.
	leakQuery = `
SELECT count(*) FROM (
  SELECT pid, obj, sum(CASE event WHEN 'obj_get' THEN 1 ELSE -1 END) AS refs
  FROM read_parquet(?) WHERE event IN ('obj_get', 'obj_put') GROUP BY pid, obj
) WHERE refs > 0`
)

// TestDuckDB exports each golden recording and has DuckDB count its
// events, pair its calls and find its leaks: the answers are gprobe
// analyze's on the same recording.
func TestDuckDB(t *testing.T) {
	db := duck(t)
	work := 0
	for i := 0; i < golden.Calls; i++ {
		work += i%3 + 1
	}
	balanced := golden.Objects - golden.Leaked - golden.Double
	wantEvents := map[string]int64{
		"work":         int64(work),
		"work__return": int64(work),
		// leaked: take + get, put; released twice: take, put, put;
		// balanced: take + get, put + put.
		"obj_get": int64(2*golden.Leaked + golden.Double + 2*balanced),
		"obj_put": int64(golden.Leaked + 2*golden.Double + 2*balanced),
	}
	for _, name := range golden.Files {
		t.Run(name, func(t *testing.T) {
			path := golden.Path(t, name)
			rep := analyzed(t, path)
			// A few rows per row group: the queries span many.
			pq := export(t, []string{path}, parquet.Options{Host: "h1", RowGroupRows: 50})

			rows, err := db.Query(eventCounts, pq)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			var total int64
			for rows.Next() {
				var ev string
				var n int64
				if err := rows.Scan(&ev, &n); err != nil {
					t.Fatal(err)
				}
				got[ev] = n
				total += n
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if total != rep.Events {
				t.Errorf("DuckDB counts %d events, analyze %d", total, rep.Events)
			}
			if len(rep.Latency) != 1 {
				t.Fatalf("analyze found %d functions, want 1 (work)", len(rep.Latency))
			}
			lat := rep.Latency[0]
			if n := uint64(got["work"]); n != lat.Count+lat.UnmatchedEntries {
				t.Errorf("DuckDB counts %d entries of work, analyze %d calls + %d without return", n, lat.Count, lat.UnmatchedEntries)
			}
			if n := uint64(got["work__return"]); n != lat.Count+lat.UnmatchedReturns {
				t.Errorf("DuckDB counts %d returns of work, analyze %d calls + %d without entry", n, lat.Count, lat.UnmatchedReturns)
			}
			for ev, n := range wantEvents {
				if got[ev] != n {
					t.Errorf("%s: %d rows, refprog made %d", ev, got[ev], n)
				}
			}
			if len(got) != len(wantEvents) {
				t.Errorf("events %v, want %v", got, wantEvents)
			}

			var calls, minNs, maxNs int64
			if err := db.QueryRow(latencyQuery, pq).Scan(&calls, &minNs, &maxNs); err != nil {
				t.Fatal(err)
			}
			if uint64(calls) != lat.Count || uint64(minNs) != lat.MinNs || uint64(maxNs) != lat.MaxNs {
				t.Errorf("DuckDB pairs %d calls, %d..%d ns; analyze %d calls, %d..%d ns", calls, minNs, maxNs, lat.Count, lat.MinNs, lat.MaxNs)
			}
			var leaks int
			if err := db.QueryRow(leakQuery, pq).Scan(&leaks); err != nil {
				t.Fatal(err)
			}
			if leaks != rep.Refcount.Outstanding {
				t.Errorf("DuckDB finds %d objects still referenced, analyze %d", leaks, rep.Refcount.Outstanding)
			}
		})
	}
}

// TestDuckDBSchema checks the column types and the metadata as DuckDB
// reads them.
func TestDuckDBSchema(t *testing.T) {
	db := duck(t)
	bin, text := golden.Path(t, "gprobe.dat.zst"), golden.Path(t, "trace.txt")
	pq := export(t, []string{bin, text}, parquet.Options{Host: "h1"})
	rows, err := db.Query(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(?))`, pq)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, name+" "+typ)
	}
	want := "ts BIGINT, cpu INTEGER, pid INTEGER, tid INTEGER, comm VARCHAR, system VARCHAR, event VARCHAR, host VARCHAR, file VARCHAR, " +
		"depth BIGINT, ret BIGINT, obj UBIGINT, site UBIGINT"
	if got := strings.Join(cols, ", "); got != want {
		t.Errorf("columns\n %s\nwant\n %s", got, want)
	}

	// Rows keep their recording: the file column, and system only where
	// the recording says it (text does not).
	var binRows, textRows, textSystems int64
	q := `SELECT count(*) FILTER (WHERE file = ?), count(*) FILTER (WHERE file = ?),
	             count(system) FILTER (WHERE file = ?) FROM read_parquet(?) WHERE host = 'h1'`
	if err := db.QueryRow(q, bin, text, text, pq).Scan(&binRows, &textRows, &textSystems); err != nil {
		t.Fatal(err)
	}
	binRep, textRep := analyzed(t, bin), analyzed(t, text)
	if binRows != binRep.Events || textRows != textRep.Events || textSystems != 0 {
		t.Errorf("rows per file %d, %d (systems in text: %d); analyze %d, %d", binRows, textRows, textSystems, binRep.Events, textRep.Events)
	}

	meta := map[string]string{}
	mrows, err := db.Query(`SELECT decode(key), decode(value) FROM parquet_kv_metadata(?)`, pq)
	if err != nil {
		t.Fatal(err)
	}
	for mrows.Next() {
		var k, v string
		if err := mrows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		meta[k] = v
	}
	if meta["gprobe.schema"] != parquet.SchemaVersion || meta["gprobe.lost_events"] != "0" {
		t.Errorf("metadata %v", meta)
	}
	var recs []parquet.Recording
	if err := json.Unmarshal([]byte(meta["gprobe.recordings"]), &recs); err != nil {
		t.Fatalf("gprobe.recordings: %v", err)
	}
	if len(recs) != 2 || recs[0].File != bin || recs[0].Events != binRep.Events || recs[0].Host != "h1" ||
		len(recs[0].Probes) == 0 || recs[1].File != text || recs[1].Format != "ftrace text" {
		t.Errorf("gprobe.recordings %+v", recs)
	}
}

// TestDuckDBFilters: filters DuckDB answers from the row groups'
// statistics (minimum, maximum, null count) count what the recording
// holds, so the statistics gprobe writes are true.
func TestDuckDBFilters(t *testing.T) {
	db := duck(t)
	path := golden.Path(t, "gprobe.dat.zst")
	pq := export(t, []string{path}, parquet.Options{Host: "h1", RowGroupRows: 16})
	rec, err := analyze.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	type ev struct {
		ts      uint64
		name    string
		obj     bool
		objAddr uint64
	}
	var evs []ev
	if err := rec.Run(func(e *trace.Event) error {
		if e.Kind == trace.Data {
			o := ev{ts: e.TS, name: e.Name}
			if fl := e.Format.Field("obj"); fl != nil {
				o.objAddr, o.obj = fl.Uint(e.Data, e.Order)
			}
			evs = append(evs, o)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{0, 1, len(evs) / 3, len(evs) / 2, len(evs) - 1} {
		at := evs[k]
		var want, wantObj, wantNull int64
		for _, e := range evs {
			if e.ts >= at.ts && e.name == "work" {
				want++
			}
			if e.obj && at.obj && e.objAddr > at.objAddr {
				wantObj++
			}
			if e.ts < at.ts && !e.obj {
				wantNull++
			}
		}
		// Each filter is the query's WHERE, which DuckDB pushes into
		// the scan (an aggregate's FILTER it would not).
		var n, nObj, nNull int64
		for _, q := range []struct {
			dst   *int64
			where string
			args  []any
		}{
			{&n, "ts >= ? AND event = 'work'", []any{at.ts}},
			{&nObj, "obj > ?", []any{at.objAddr}},
			{&nNull, "ts < ? AND obj IS NULL", []any{at.ts}},
		} {
			if err := db.QueryRow("SELECT count(*) FROM read_parquet(?) WHERE "+q.where, append([]any{pq}, q.args...)...).Scan(q.dst); err != nil {
				t.Fatal(err)
			}
		}
		if at.obj && nObj != wantObj || n != want || nNull != wantNull {
			t.Errorf("at event %d: %d work events from ts %d, want %d; %d with obj > %#x, want %d; %d earlier without obj, want %d",
				k, n, at.ts, want, nObj, at.objAddr, wantObj, nNull, wantNull)
		}
	}
}
