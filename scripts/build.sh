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
#
# `gprobe --version` prints the git revision Go stamps into the build; Go
# does not stamp it in a git worktree or with -buildvcs=false, so the
# revision and whether the tree had changes are also given to the linker
# (Go's own stamp wins where there is one).
set -eu
cd "$(dirname "$0")/.."
rev=$(git rev-parse HEAD 2>/dev/null || true)
mod=false
if [ -n "$rev" ] && [ -n "$(git status --porcelain 2>/dev/null)" ]; then
	mod=true
fi
CGO_ENABLED=0 exec go build -trimpath -tags urfave_cli_no_docs \
	-ldflags "-X main.revision=$rev -X main.modified=$mod" -o "${1:-gprobe}" ./cmd/gprobe
