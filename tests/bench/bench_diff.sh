#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Differential analysis: `ember diff` against FlameGraph's difffolded.pl doing the same work side
# by side on the same pair of large folded files (with and without -n -s), and
# `ember diff --flamegraph` against `difffolded.pl | flamegraph.pl`. Prints a Markdown table of
# median times (hyperfine) and peak RSS (/usr/bin/time -v), with ratios (reference / ember).
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
SHARED=${SHARED:-$SRCDIR/../shared}
EMBER=${EMBER:-$OUTPUT/ember}
FG=${FLAMEGRAPH_DIR:-/opt/FlameGraph}
[ -n "$FG" ] || FG=/opt/FlameGraph
RUNS=${RUNS:-5}
command -v hyperfine >/dev/null || { echo "no hyperfine (make deps)"; exit 1; }
[ -f "$FG/difffolded.pl" ] || { echo "no difffolded.pl in $FG"; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/ember-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

# A and B: every folded file of the corpus 10 times over with a distinct root per copy; B drops
# every 7th line (vanished paths), renames every 5th root (new paths) and changes counts.
for i in $(seq 10); do
	for f in "$SHARED"/corpus/flamegraph-test/results/*.txt "$SHARED"/corpus/examples/*.collapsed; do
		sed "s/^/host$i;/" "$f"
	done
done >"$W/a.folded"
awk 'NR % 7 != 0 { if (NR % 5 == 0) sub(/^host/, "new"); $NF = $NF + NR % 3; print }' "$W/a.folded" >"$W/b.folded"
echo "input: A $(wc -l <"$W/a.folded") lines, B $(wc -l <"$W/b.folded") lines, $(wc -c <"$W/a.folded") bytes"

median() { /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(" ".join("%.4f" % x["median"] for x in r))' "$1"; }
rss() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident/ {print $2}'; }
row() { # name ember_cmd reference_cmd
	hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$W/h.json" "$2" "$3" >/dev/null 2>&1 ||
		{ echo "| $1 | failed | | | | |"; return; }
	read -r te tr < <(median "$W/h.json")
	re=$(rss sh -c "$2"); rr=$(rss sh -c "$3")
	printf '| %s | %.3f s | %.3f s | %.2fx | %s KiB | %s KiB |\n' "$1" "$te" "$tr" \
		"$(echo "$tr / $te" | bc -l)" "$re" "$rr"
}
echo
echo "| work | ember | reference | speed-up | ember RSS | reference RSS |"
echo "| --- | --- | --- | --- | --- | --- |"
row "diff A B (difffolded.pl)" "sh -c '$EMBER diff $W/a.folded $W/b.folded >/dev/null'" \
	"sh -c 'perl $FG/difffolded.pl $W/a.folded $W/b.folded >/dev/null'"
row "diff -n -s A B (difffolded.pl -n -s)" "sh -c '$EMBER diff -n -s $W/a.folded $W/b.folded >/dev/null'" \
	"sh -c 'perl $FG/difffolded.pl -n -s $W/a.folded $W/b.folded >/dev/null'"
row "diff --flamegraph (difffolded.pl | flamegraph.pl)" "sh -c '$EMBER diff --flamegraph $W/a.folded $W/b.folded >/dev/null'" \
	"sh -c 'perl $FG/difffolded.pl $W/a.folded $W/b.folded | perl $FG/flamegraph.pl >/dev/null'"
