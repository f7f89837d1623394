#!/bin/sh
# build.sh: build gprobe as it is released and benchmarked.
#
#   scripts/build.sh [OUT]        # default ./gprobe
#
# Statically linked (CGO_ENABLED=0: the same file runs on any Linux host
# and in a minimal guest, and no dynamic loader runs at each start) and
# without urfave/cli's man-page and Markdown generators, which gprobe never
# calls and whose package initialisation would run at every start. A plain
# `go build ./cmd/gprobe` gives the same program, starting a few
# milliseconds slower.
set -eu
cd "$(dirname "$0")/.."
CGO_ENABLED=0 exec go build -trimpath -tags urfave_cli_no_docs -o "${1:-gprobe}" ./cmd/gprobe
