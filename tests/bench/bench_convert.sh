#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Format conversion: ember's pprof reader and writer against Go's pprof (the reference
# implementation, `go tool pprof` from Debian's golang-go) doing the same work side by side on the
# same file: pprof -> pprof (decode + encode: `ember convert --from pprof --to pprof` vs
# `go tool pprof -proto`) and pprof -> text (`ember convert --from pprof` to folded vs
# `go tool pprof -raw`). Also folded -> pprof/speedscope/d3 throughput. Prints a Markdown table of
# median times (hyperfine) and peak RSS (/usr/bin/time -v), with ratios.
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
SHARED=${SHARED:-$SRCDIR/../shared}
EMBER=${EMBER:-$OUTPUT/ember}
RUNS=${RUNS:-7}
command -v hyperfine >/dev/null || { echo "no hyperfine (make deps)"; exit 1; }
command -v go >/dev/null || { echo "no go (make deps)"; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/ember-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
export HOME=${HOME:-/root} GOCACHE=${GOCACHE:-$OUTPUT/go-cache} PPROF_TMPDIR=$W/pprof GOFLAGS=

# Input: every folded file of the corpus, 20 times over with a distinct root per copy, so that
# the profile has many unique stacks (about 200k) and frames shared across them.
for i in $(seq 20); do
	for f in "$SHARED"/corpus/flamegraph-test/results/*.txt "$SHARED"/corpus/examples/*.collapsed; do
		sed "s/^/host$i;/" "$f"
	done
done >"$W/big.folded"
"$EMBER" convert --to pprof "$W/big.folded" -o "$W/big.pb.gz"
stacks=$("$EMBER" merge "$W/big.folded" | wc -l)
echo "input: $stacks unique stacks, $(wc -c <"$W/big.folded") bytes folded, $(wc -c <"$W/big.pb.gz") bytes pprof"

# per command: median wall time, then mean CPU time (user + system: steadier on a busy machine)
median() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(" ".join("%.4f %.4f" % (x["median"], x["user"] + x["system"]) for x in r))' "$1"; }
rss() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident/ {print $2}'; }

row() { # name ember_cmd reference_cmd
	hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$W/h.json" "$2" "$3" >/dev/null 2>&1 ||
		{ echo "| $1 | failed | | | | | | |"; return; }
	read -r te ce tr cr < <(median "$W/h.json")
	re=$(rss sh -c "$2"); rr=$(rss sh -c "$3")
	printf '| %s | %.3f s | %.3f s | %.2fx | %.3f s | %.3f s | %.2fx | %s KiB | %s KiB |\n' "$1" \
		"$te" "$tr" "$(echo "$tr / $te" | bc -l)" "$ce" "$cr" "$(echo "$cr / $ce" | bc -l)" "$re" "$rr"
}
echo
echo "| task | ember wall | pprof wall | ratio | ember CPU | pprof CPU | ratio | ember peak RSS | pprof peak RSS |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
row "pprof -> pprof" "$EMBER convert --from pprof --to pprof -o $W/o1.pb.gz $W/big.pb.gz" \
	"go tool pprof -symbolize=none -proto -output $W/o2.pb.gz $W/big.pb.gz"
row "pprof -> text" "$EMBER convert --from pprof -o $W/o1.txt $W/big.pb.gz" \
	"go tool pprof -symbolize=none -raw -output $W/o2.txt $W/big.pb.gz"
echo
echo "| ember convert (folded input, $stacks stacks) | median wall | mean CPU | peak RSS |"
echo "| --- | --- | --- | --- |"
for to in pprof speedscope d3; do
	hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$W/h.json" \
		"$EMBER convert --to $to -o $W/o.$to $W/big.folded" >/dev/null 2>&1
	read -r t c < <(median "$W/h.json")
	printf '| --to %s | %.3f s | %.3f s | %s KiB |\n' "$to" "$t" "$c" \
		"$(rss "$EMBER" convert --to $to -o "$W/o.$to" "$W/big.folded")"
done
