#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ember flamegraph vs flamegraph.pl, side by side in one run: wall time, CPU time (user+sys) and
# peak RSS (/usr/bin/time), on the corpus examples and on 100k and 1M unique stacks generated
# from the corpus (every distinct corpus stack with numbered leaf frames, random counts).
# "gen order" is the generated order (stacks interleaved, so ember sorts); "sorted" is the same
# file through sort(1), as stackcollapse and ember merge write folded files (ember's presorted
# fast path). flamegraph.pl sorts internally, so it runs once per size on the generated order.
# Prints a Markdown table for docs/benchmarks.md. Env: OUTPUT, SRCDIR, SHARED, EMBER,
# FLAMEGRAPH_DIR (default /opt/FlameGraph), SIZES (default "100000 1000000"), RUNS (ember, 3).
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
: "${SHARED:=$SRCDIR/../shared}" "${EMBER:=$OUTPUT/ember}" "${FLAMEGRAPH_DIR:=/opt/FlameGraph}"
: "${SIZES:=100000 1000000}" "${RUNS:=3}"
FG=$FLAMEGRAPH_DIR/flamegraph.pl
C=$SHARED/corpus
[ -x "$EMBER" ] || { echo "no ember at $EMBER" >&2; exit 2; }
[ -f "$FG" ] || { echo "no flamegraph.pl in $FLAMEGRAPH_DIR" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/ember-bench-fg.XXXXXX")
trap 'rm -rf "$W"' EXIT

# measure CMD...: one run; prints "wall cpu rss_kb"
measure() {
	/usr/bin/time -f '%e %U %S %M' -o "$W/t" "$@" >"$W/out.svg" 2>/dev/null
	awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$W/t"
}
# median of N runs, by wall time
median() {
	local n=$1 i
	shift
	for ((i = 0; i < n; i++)); do measure "$@"; done | sort -n | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }'
}

cat "$C"/flamegraph-test/results/*-collapsed-all.txt "$C"/examples/*.collapsed |
	awk '{ sub(/ [0-9.]+$/, ""); if (!seen[$0]++) print }' >"$W/base.txt"
inputs=("$C/examples/example-perf-stacks.collapsed" "$C/examples/example-dtrace-stacks.collapsed")
for n in $SIZES; do
	awk -v N="$n" 'BEGIN { srand(42) } { b[NR - 1] = $0 }
		END { for (i = 0; i < N; i++) printf "%s;leaf_%d %d\n", b[i % NR], int(i / NR), 1 + int(rand() * 100) }' \
		"$W/base.txt" >"$W/gen-$n.txt"
	LC_ALL=C sort "$W/gen-$n.txt" >"$W/sorted-$n.txt"
	inputs+=("$W/gen-$n.txt")
done

echo "| input | unique stacks | MB | flamegraph.pl wall s / CPU s / peak MB | ember wall s / CPU s / peak MB | speedup wall (CPU) | memory | SVG bytes pl / ember |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for in in "${inputs[@]}"; do
	name=$(basename "$in")
	stacks=$(wc -l <"$in")
	mb=$(awk -v b="$(stat -c %s "$in")" 'BEGIN { printf "%.1f", b / 1048576 }')
	pruns=3
	[ "$stacks" -gt 200000 ] && pruns=1
	read -r pw pc pm < <(median $pruns perl "$FG" "$in")
	psize=$(stat -c %s "$W/out.svg")
	variants=("$in")
	case $name in gen-*) variants+=("$W/sorted-${name#gen-}") ;; esac
	for v in "${variants[@]}"; do
		label=$name
		case $v in */sorted-*) label="$name, sorted" ;; */gen-*) label="$name, gen order" ;; esac
		read -r ew ec em < <(median "$RUNS" "$EMBER" flamegraph "$v")
		esize=$(stat -c %s "$W/out.svg")
		awk -v l="$label" -v s="$stacks" -v mb="$mb" -v pw="$pw" -v pc="$pc" -v pm="$pm" \
			-v ew="$ew" -v ec="$ec" -v em="$em" -v ps="$psize" -v es="$esize" 'BEGIN {
			ewd = ew > 0.005 ? ew : 0.005; ecd = ec > 0.005 ? ec : 0.005
			printf "| %s | %d | %s | %.2f / %.2f / %.0f | %.2f / %.2f / %.0f | %.0fx (%.0fx) | %.1fx less | %d / %d |\n",
				l, s, mb, pw, pc, pm / 1024, ew, ec, em / 1024, pw / ewd, pc / ecd, pm / em, ps, es }'
	done
done
