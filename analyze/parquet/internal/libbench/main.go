// Command libbench times parquet.Export with the library PQ_LIB names
// (pqgo or arrow) and codec PQ_CODEC (zstd or snappy):
//
//	PQ_LIB=arrow /usr/bin/time -v go run ./analyze/parquet/internal/libbench OUT.parquet FILES...
package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/gprobe/gprobe/analyze/parquet"
)

func main() {
	out, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	if p := os.Getenv("PROF"); p != "" {
		f, _ := os.Create(p)
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	t := time.Now()
	sum, err := parquet.Export(bw, os.Args[2:], parquet.Options{})
	if err != nil {
		panic(err)
	}
	bw.Flush()
	if p := os.Getenv("HEAP"); p != "" {
		f, _ := os.Create(p)
		runtime.GC()
		pprof.WriteHeapProfile(f)
		f.Close()
	}
	out.Close()
	st, _ := os.Stat(os.Args[1])
	fmt.Fprintf(os.Stderr, "%d rows %d groups %d cols %d bytes in %v\n", sum.Rows, sum.RowGroups, len(sum.Columns), st.Size(), time.Since(t))
}
