package tracefmt

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// compressionVersion is written after the compression name of a v7 file.
// trace-cmd compares its major number with its own library's: gprobe's
// zlib streams and zstd frames are those of both libraries' version 1.
const compressionVersion = "1"

// decompressor inflates one block whose uncompressed size is known,
// appending to dst (which may be nil).
type decompressor func(z []byte, size int, dst []byte) ([]byte, error)

// compressor deflates one block, appending to dst.
type compressor func(src, dst []byte) ([]byte, error)

// codecs returns the functions of a v7 compression name; none for "none".
func codecs(name string) (compressor, decompressor, error) {
	switch name {
	case "", "none":
		return nil, nil, nil
	case "zstd":
		return zstdCompress, zstdDecompress, nil
	case "zlib":
		return zlibCompress, zlibDecompress, nil
	}
	return nil, nil, fmt.Errorf("%w: compression %q", ErrUnsupported, name)
}

// The zstd decoder and encoder are built once for the process, on first
// use: DecodeAll and EncodeAll are safe for concurrent use, and both are
// costly to build.
var (
	zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxMetaSection))
	})
	zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) { return zstd.NewWriter(nil) })
)

func zstdDecompress(z []byte, size int, dst []byte) ([]byte, error) {
	d, err := zstdDecoder()
	if err != nil {
		return nil, err
	}
	if dst == nil {
		// Room for the declared size, within what the compressed
		// bytes can plausibly hold, so that a damaged size costs
		// nothing and a real one no regrowing.
		dst = make([]byte, 0, min(size, 64*len(z)+1<<16))
	}
	out, err := d.DecodeAll(z, dst)
	if err != nil {
		return nil, err
	}
	if len(out) != size {
		return nil, fmt.Errorf("zstd block inflates to %d bytes, header says %d", len(out), size)
	}
	return out, nil
}

func zstdCompress(src, dst []byte) ([]byte, error) {
	e, err := zstdEncoder()
	if err != nil {
		return nil, err
	}
	return e.EncodeAll(src, dst), nil
}

func zlibDecompress(z []byte, size int, dst []byte) ([]byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, err
	}
	out := bytes.NewBuffer(dst)
	n, err := io.Copy(out, io.LimitReader(zr, int64(size)+1))
	if err != nil {
		return nil, err
	}
	if n != int64(size) {
		return nil, fmt.Errorf("zlib block inflates to %d bytes, header says %d", n, size)
	}
	return out.Bytes(), nil
}

func zlibCompress(src, dst []byte) ([]byte, error) {
	out := bytes.NewBuffer(dst)
	zw := zlib.NewWriter(out)
	if _, err := zw.Write(src); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
