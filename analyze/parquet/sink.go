package parquet

import (
	"io"
	"os"
)

// sink is a Parquet library behind one interface.
type sink interface {
	writeRowGroup(b *batch) error
	close(meta [][2]string) error
}

func newSink(out io.Writer, cols []Column) (sink, error) {
	codec := os.Getenv("PQ_CODEC")
	if os.Getenv("PQ_LIB") == "arrow" {
		return newArrowSink(out, cols, codec)
	}
	return newPqgoSink(out, cols, codec)
}
