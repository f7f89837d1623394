package tracefmt

import (
	"sync"

	"github.com/klauspost/compress/zstd"
)

var (
	zstdMu  sync.Mutex
	zstdDec *zstd.Decoder
)

// sharedZstd returns one decoder for the process: DecodeAll is safe for
// concurrent use, and a decoder is costly to build.
func sharedZstd() (*zstd.Decoder, error) {
	zstdMu.Lock()
	defer zstdMu.Unlock()
	if zstdDec == nil {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxMetaSection))
		if err != nil {
			return nil, err
		}
		zstdDec = d
	}
	return zstdDec, nil
}
