#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Unwind-table benchmark: for libc, python3.11, the largest binary on the machine
# (chromium) and the largest .eh_frame found (gcc's lto1 here), tests/bench/bench_cfi.c builds
# the table (cfi_table__open: file opened, CFI read and compiled) and looks up each row's first
# address and one inside it, in the table and with libdw's dwarf_cfi_addrframe (what unwinding
# in userspace with libdw pays per frame, with a fresh Dwarf_CFI and warm). Build time three ways:
#  - instructions of cfi_table__open (valgrind --tool=callgrind), steady on a loaded host;
#  - wall time of the one build of a fresh process (the daemon's case), RUNS processes;
#  - wall time of RUNS builds in one process (its heap reused).
#   RUNS=11 FILES="/path/a /path/b" tests/bench/bench_cfi.sh
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
RUNS=${RUNS:-11}
CC=${CC:-cc}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$SRCDIR" || exit 1
[ -f "$OUTPUT/obj/libember-daemon.a" ] || { echo "bench_cfi: build first (make all)" >&2; exit 1; }
$CC -O2 -g -std=gnu11 -D_GNU_SOURCE -Iinclude tests/bench/bench_cfi.c \
	"$OUTPUT/obj/libember-daemon.a" "$OUTPUT/obj/libember-core.a" \
	$(pkg-config --libs libelf libdw zlib) -o "$TMP/bench" || exit 1
if [ -z "${FILES:-}" ]; then
	FILES="/lib/x86_64-linux-gnu/libc.so.6 /usr/bin/python3.11"
	[ -f /usr/lib/chromium/chromium ] && FILES="$FILES /usr/lib/chromium/chromium"
	for f in /usr/lib/gcc/x86_64-linux-gnu/*/lto1; do [ -f "$f" ] && FILES="$FILES $f" && break; done
fi

echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs; RUNS=$RUNS"
for f in $FILES; do
	[ -f "$f" ] || { echo "bench_cfi: no $f" >&2; continue; }
	cat "$f" >/dev/null # in the page cache: the figures are CPU, not disk
	out=$TMP/$(basename "$f").txt
	eh=$(readelf -SW "$f" | awk '$2 == ".eh_frame" { print $6 }')
	{ echo "file $f"; echo "size $(stat -c %s "$f")"; echo "eh_frame $((16#${eh:-0}))"; } >"$out"
	"$TMP/bench" "$f" "$RUNS" >>"$out" || exit 1
	for _ in $(seq "$RUNS"); do
		"$TMP/bench" "$f" 1 build | awk '/^first_ms/ { print $2 }'
	done | sort -n | awk '{ v[NR] = $1 } END { printf "fresh_median_ms %s\nfresh_min_ms %s\n",
		v[int((NR + 1) / 2)], v[1] }' >>"$out"
	if command -v valgrind >/dev/null; then
		valgrind --tool=callgrind --toggle-collect=cfi_table__open \
			--callgrind-out-file=/dev/null "$TMP/bench" "$f" 1 build 2>&1 >/dev/null |
			awk '/Collected :/ { print "instructions", $NF }' >>"$out"
	fi
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$TMP"/*.txt <<'PY'
import sys
def size(x): return "%.1f MB" % (x / 1e6) if x >= 1e6 else "%.0f KB" % (x / 1e3)
files = []
for path in sys.argv[1:]:
    d = {}
    for line in open(path):
        k, _, v = line.rstrip("\n").partition(" ")
        d[k] = v
    d["name"] = d["file"].split("/")[-1]
    files.append(d)
print("| file | size, .eh_frame | FDEs | rows | table (rows x 12 B) | builder peak | NONE rows by reason |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for d in files:
    print("| %s | %s, %s | %s | %s | %s | %s | %s |" % (
        d["name"], size(int(d["size"])), size(int(d["eh_frame"])), d["fdes"], d["rows"],
        size(int(d["bytes"])), size(int(d["build_bytes"])), d["none"].strip() or "-"))
print()
print("| file | build: instructions | build ms, fresh process: median (min) | build ms, repeated in one "
      "process: median (min) | lookup: table | lookup: libdw fresh / warm |")
print("| --- | --- | --- | --- | --- | --- |")
for d in files:
    ins = "%.1f M" % (int(d["instructions"]) / 1e6) if "instructions" in d else "-"
    print("| %s | %s | %s (%s) | %s (%s) | %s ns | %s / %s us |" % (
        d["name"], ins, d["fresh_median_ms"], d["fresh_min_ms"], d["median_ms"], d["min_ms"],
        d["ours_ns_per_lookup"], d["libdw_cold_us_per_lookup"], d["libdw_warm_us_per_lookup"]))
PY
