#!/bin/sh
# gen.sh regenerates perfettopb/ from the Perfetto .proto files under
# protos/ (a trimmed subset of google/perfetto's, see their headers):
#   sh analyze/perfetto/gen.sh
# It needs protoc (Debian's protobuf-compiler) and builds protoc-gen-go at
# the google.golang.org/protobuf version go.mod names.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v protoc > /dev/null || { echo "gen.sh: needs protoc (apt-get install protobuf-compiler)" >&2; exit 1; }
(cd "$here" && go build -o "$tmp/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go)
pkg=github.com/gprobe/gprobe/analyze/perfetto/perfettopb
cd "$here/protos"
files=$(find perfetto -name '*.proto' | sort)
# Every file goes to the one Go package; upstream's files name none.
maps=""
for f in $files; do
	maps="$maps,Mprotos/$f=$pkg"
done
rm -f "$here"/perfettopb/*.pb.go
mkdir -p "$tmp/out"
# The files import each other as protos/perfetto/...: a root one level up.
ln -s "$here/protos" "$tmp/protos"
(cd "$tmp" && protoc --plugin=protoc-gen-go="$tmp/protoc-gen-go" --go_out="$tmp/out" \
	--go_opt=paths=import${maps} $(for f in $files; do echo "protos/$f"; done))
mkdir -p "$here/perfettopb"
cp "$tmp/out/$pkg"/*.pb.go "$here/perfettopb/"
echo "gen.sh: wrote $(ls "$here"/perfettopb/*.pb.go | wc -l) files to $here/perfettopb"
