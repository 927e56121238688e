#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ember collapse perf vs stackcollapse-perf.pl, side by side in one run, on
#  1. the corpus: the 13 FlameGraph test inputs and example-perf-stacks, concatenated (5 MB);
#  2. a large file (BIG_MB, default 1024 MiB) made in /tmp by repeating the corpus in 8
#     variants (comm renamed per variant, so there are 8x the unique stacks); deleted at exit.
# Prints throughput (MB/s of input, wall clock), CPU time and peak RSS for ember on one thread,
# ember --jobs 2 and the perl script, the ratios, and checks that the three outputs are
# byte-identical. Not part of `make test`.
#   OUTPUT=$PWD/build SRCDIR=$PWD SHARED=../shared tests/bench/bench_collapse.sh
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
SHARED=${SHARED:-$SRCDIR/../shared}
FG=${FLAMEGRAPH_DIR:-/opt/FlameGraph}
EMBER=${EMBER:-$OUTPUT/ember}
BIG_MB=${BIG_MB:-1024}
RUNS=${RUNS:-5}
REPS=1
[ -f "$FG/stackcollapse-perf.pl" ] || { echo "no $FG/stackcollapse-perf.pl (set FLAMEGRAPH_DIR)" >&2; exit 2; }
[ -x "$EMBER" ] || { echo "no $EMBER (make all)" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/ember-bench-collapse.XXXXXX")
trap 'rm -rf "$W"' EXIT

# the corpus, each file ending with a blank line so no record is lost at the joins
{
	zcat "$SHARED/corpus/examples/example-perf-stacks.txt.gz"
	for f in "$SHARED"/corpus/flamegraph-test/*.txt; do cat "$f"; echo; done
} >"$W/corpus.txt"
for v in 0 1 2 3 4 5 6 7; do
	sed "s/^\([^[:space:]#][^[:space:]]*\)/\1~$v/" "$W/corpus.txt" >"$W/v$v.txt"
done
target=$((BIG_MB * 1024 * 1024)) size=0
: >"$W/big.txt"
while [ "$size" -lt "$target" ]; do
	cat "$W"/v?.txt >>"$W/big.txt"
	size=$(stat -c %s "$W/big.txt")
done

# one measured run of REPS back-to-back invocations (so short runs are above /usr/bin/time's
# 10 ms resolution): wall s, user s, sys s, max RSS KiB per invocation -> stdout; output in $1
measure() {
	local out=$1; shift
	/usr/bin/time -f '%e %U %S %M' -o "$W/time" \
		bash -c 'for ((r = 0; r < '"$REPS"'; r++)); do "$@" >"'"$out"'" 2>/dev/null; done' _ "$@"
	awk -v n="$REPS" '{ printf "%.4f %.4f %.4f %d\n", $1 / n, $2 / n, $3 / n, $4 }' "$W/time"
}

row() { # label size_bytes "wall user sys rss" ref_wall ref_cpu
	awk -v label="$1" -v size="$2" -v m="$3" -v rw="$4" -v rc="$5" 'BEGIN {
		split(m, a, " "); cpu = a[2] + a[3]
		printf "| %s | %.3f s | %.0f MB/s | %.3f s | %.1fx | %.1fx | %d KiB |\n", label, a[1],
			size / 1e6 / a[1], cpu, rw / a[1], rc / cpu, a[4] }'
}

run_input() { # name file runs reps
	local name=$1 f=$2 runs=$3 size e1 e2 pl
	REPS=$4
	size=$(stat -c %s "$f")
	# interleave the three so load changes hit all of them alike
	: >"$W/e1" ; : >"$W/e2" ; : >"$W/pl"
	for ((i = 0; i < runs; i++)); do
		measure "$W/out.pl" perl "$FG/stackcollapse-perf.pl" "$f" >>"$W/pl"
		measure "$W/out.e1" "$EMBER" collapse perf "$f" >>"$W/e1"
		measure "$W/out.e2" "$EMBER" collapse perf --jobs 2 "$f" >>"$W/e2"
	done
	med() { sort -n "$1" | awk -v n="$runs" '{ l[NR] = $0 } END { print l[int((n + 1) / 2)] }'; }
	pl=$(med "$W/pl"); e1=$(med "$W/e1"); e2=$(med "$W/e2")
	local same=identical
	cmp -s "$W/out.pl" "$W/out.e1" && cmp -s "$W/out.pl" "$W/out.e2" || same=DIFFERENT
	local rw rc
	rw=$(echo "$pl" | awk '{ print $1 }'); rc=$(echo "$pl" | awk '{ print $2 + $3 }')
	echo
	echo "$name: $(awk -v s="$size" 'BEGIN { printf "%.1f MB", s / 1e6 }'), $(grep -c '^$' "$f") records, median of $runs runs of $REPS; outputs $same"
	echo
	echo "| tool | wall | throughput | CPU (user+sys) | speed-up (wall) | speed-up (CPU) | peak RSS |"
	echo "| --- | --- | --- | --- | --- | --- | --- |"
	row "stackcollapse-perf.pl" "$size" "$pl" "$rw" "$rc"
	row "ember collapse perf" "$size" "$e1" "$rw" "$rc"
	row "ember collapse perf --jobs 2" "$size" "$e2" "$rw" "$rc"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
run_input "corpus" "$W/corpus.txt" "$RUNS" "${CORPUS_REPS:-10}"
run_input "large file" "$W/big.txt" "${BIG_RUNS:-1}" 1
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
