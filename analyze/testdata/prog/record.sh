#!/bin/sh
# record.sh OUTDIR CALLS OBJECTS LEAKED DOUBLE [BUFFER_KB]
#
# Builds refprog, puts uprobes on work (entry and return), obj_get and
# obj_put (obj=%di, site=return address), enables them in a private
# tracefs instance, runs refprog, and writes into OUTDIR:
#   trace.txt       the instance's `trace` text (default columns)
#   trace-tgid.txt  ... with options/record-tgid (TGID column)
#   trace-noirq.txt ... with options/irq-info off (no flag columns)
#   trace-lat.txt   ... with options/latency-format
#   v7-zstd.dat     `trace-cmd extract` (v7, its default compression)
#   v7-none.dat     `trace-cmd convert --compression none`
#   v7-zlib.dat     `trace-cmd convert --compression zlib` (if supported)
#   v6.dat          `trace-cmd convert --file-version 6`
#   report.txt      `trace-cmd report` of v7-zstd.dat
#   trace-pipe.txt  `trace_pipe` of a second run, in a second instance
#   gprobe.dat      `$GPROBE record` of a second run (when GPROBE names a
#                   gprobe binary)
# Probes and instance carry a unique name and are removed on every exit.
# With DAT_ONLY=1 only v7-zstd.dat and gprobe.dat are written (benchmark
# recordings of millions of events, whose text would take gigabytes).
# With KALLSYMS_EMPTY=1, trace-cmd runs in a private mount namespace where
# /proc/kallsyms is empty, so that the files stay small (golden set).
set -eu
out=$1 calls=$2 objs=$3 leaked=$4 dbl=$5 bufkb=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
T=/sys/kernel/tracing
[ -w $T/uprobe_events ] || { echo "record.sh: $T/uprobe_events not writable" >&2; exit 1; }
mkdir -p "$out"
prog=$(cd "$out" && pwd)/refprog
gcc -O0 -g -no-pie -o "$prog" "$here/refprog.c"

tag=$(basename "$out" | tr -c 'a-zA-Z0-9_\n' _)
group=gpa_${tag}_$$
inst=gprobe_analyze_${tag}_$$
added=""
cleanup() {
	for i in $inst ${inst}_pipe; do
		[ -d $T/instances/$i ] && { echo 0 > $T/instances/$i/events/$group/enable 2>/dev/null || true; rmdir $T/instances/$i 2>/dev/null || true; }
	done
	for ev in $added; do echo "-:$group/$ev" >> $T/uprobe_events 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM

# File offset of a symbol: its address minus its LOAD segment's vaddr plus offset.
fileoff() {
	addr=0x$(nm "$prog" | awk -v s="$1" '$3 == s { print $1 }')
	readelf -lW "$prog" | awk '$1 == "LOAD" { print $2, $3, $6 }' | while read -r off vaddr memsz; do
		if [ $((addr)) -ge $((vaddr)) ] && [ $((addr)) -lt $((vaddr + memsz)) ]; then
			printf '0x%x\n' $((addr - vaddr + off))
			break
		fi
	done
}
probe() { # probe NAME DEF
	echo "$2" >> $T/uprobe_events
	added="$added $1"
}
probe work "p:$group/work $prog:$(fileoff work) depth=%di:s32"
probe work__return "r:$group/work__return $prog:$(fileoff work) ret=\$retval:s64"
probe obj_get "p:$group/obj_get $prog:$(fileoff obj_get) obj=%di:x64 site=+0(%sp):x64"
probe obj_put "p:$group/obj_put $prog:$(fileoff obj_put) obj=%di:x64 site=+0(%sp):x64"

mkdir $T/instances/$inst
[ -n "$bufkb" ] && echo "$bufkb" > $T/instances/$inst/buffer_size_kb
I=$T/instances/$inst
echo 1 > $I/options/record-tgid
echo 1 > $I/events/$group/enable
"$prog" "$calls" "$objs" "$leaked" "$dbl" > /dev/null
echo 0 > $T/instances/$inst/events/$group/enable
if [ "${DAT_ONLY:-}" = 1 ]; then
	trace-cmd extract -B "$inst" -o "$out/v7-zstd.dat" > "$out/extract.log" 2>&1
	rm -f "$out"/*.dat.cpu*
	if [ -d $I ]; then rmdir $I; fi
else
cat $I/trace > "$out/trace-tgid.txt"
echo 0 > $I/options/record-tgid
cat $I/trace > "$out/trace.txt"
echo 0 > $I/options/irq-info
cat $I/trace > "$out/trace-noirq.txt"
echo 1 > $I/options/irq-info
echo 1 > $I/options/latency-format
cat $I/trace > "$out/trace-lat.txt"
echo 0 > $I/options/latency-format
if [ "${KALLSYMS_EMPTY:-}" = 1 ]; then
	: > "$out/empty"
	unshare -m sh -c "mount --bind '$out/empty' /proc/kallsyms && trace-cmd extract -B '$inst' -o '$out/v7-zstd.dat'" > "$out/extract.log" 2>&1
	rm -f "$out/empty"
else
	trace-cmd extract -B "$inst" -o "$out/v7-zstd.dat" > "$out/extract.log" 2>&1
fi
trace-cmd convert -i "$out/v7-zstd.dat" --compression none -o "$out/v7-none.dat" >> "$out/extract.log" 2>&1
trace-cmd convert -i "$out/v7-zstd.dat" --file-version 6 -o "$out/v6.dat" >> "$out/extract.log" 2>&1
if trace-cmd list -c 2>/dev/null | grep -q zlib; then
	trace-cmd convert -i "$out/v7-zstd.dat" --compression zlib -o "$out/v7-zlib.dat" >> "$out/extract.log" 2>&1
fi
rm -f "$out"/*.dat.cpu*
trace-cmd report "$out/v7-zstd.dat" > "$out/report.txt" 2>> "$out/extract.log"

# trace_pipe consumes what it prints: a second run in its own instance.
P=$T/instances/${inst}_pipe
mkdir $P
[ -n "$bufkb" ] && echo "$bufkb" > $P/buffer_size_kb
echo 1 > $P/events/$group/enable
"$prog" "$calls" "$objs" "$leaked" "$dbl" > /dev/null
echo 0 > $P/events/$group/enable
timeout 2 cat $P/trace_pipe > "$out/trace-pipe.txt" || [ $? = 124 ]
rmdir $P
fi
if [ -n "${GPROBE:-}" ]; then
	rec="'$GPROBE' record -e '$group:*' -o '$out/gprobe.dat' ${bufkb:+--buffer-size $bufkb} -- '$prog' $calls $objs $leaked $dbl"
	if [ "${KALLSYMS_EMPTY:-}" = 1 ]; then
		: > "$out/empty"
		unshare -m sh -c "mount --bind '$out/empty' /proc/kallsyms && $rec" > /dev/null 2> "$out/record.log"
		rm -f "$out/empty"
	else
		sh -c "$rec" > /dev/null 2> "$out/record.log"
	fi
fi
