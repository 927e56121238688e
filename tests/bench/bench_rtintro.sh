#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What reading a Node binary's V8 facts (its v8dbg_ symbols) costs emberd, once per file: the
# CPU time of the file's image as the symbolizer reads it (elfsym__open(): paid for any sampled
# Node, to name its native frames) and of the V8 reader's own work on that image
# (rtintro_v8_read_image()), in a fresh process (the first round: what a daemon pays) and warm
# (later rounds), RUNS processes each, for Debian's node and the npm builds make deps installs
# (node18/22/24).
#   RUNS=5 ROUNDS=3 tests/bench/bench_rtintro.sh
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
RUNS=${RUNS:-5}
ROUNDS=${ROUNDS:-3}
CC=${CC:-cc}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$SRCDIR" || exit 1
[ -f "$OUTPUT/obj/libember-daemon.a" ] || { echo "bench_rtintro: build first (make all)" >&2; exit 1; }
$CC -O2 -std=gnu11 -D_GNU_SOURCE -Iinclude tests/bench/bench_rtintro.c \
	"$OUTPUT/obj/libember-daemon.a" "$OUTPUT/obj/libember-core.a" \
	$(pkg-config --libs libelf libdw) -lz -lpthread -o "$TMP/bench" || exit 1
nodes=$(command -v node)
for v in 18 22 24; do
	[ -x "$OUTPUT/node/node_modules/node$v/bin/node" ] && nodes="$nodes $OUTPUT/node/node_modules/node$v/bin/node"
done
echo "| binary | v8dbg_ symbols | image, first round, ms (min-max of $RUNS) | image, warm | V8 reader on the image, first round, ms | reader, warm |"
echo "| --- | --- | --- | --- | --- | --- |"
for b in $nodes; do
	: >"$TMP/first"
	: >"$TMP/warm"
	: >"$TMP/rfirst"
	: >"$TMP/rwarm"
	for _ in $(seq "$RUNS"); do
		"$TMP/bench" "$b" "$ROUNDS" >"$TMP/out" || exit 1
		awk '$1 == "round" && $2 == 1 { print $4 }' "$TMP/out" >>"$TMP/first"
		awk '$1 == "round" && $2 > 1 { print $4 }' "$TMP/out" >>"$TMP/warm"
		awk '$1 == "round" && $2 == 1 { print $6 }' "$TMP/out" >>"$TMP/rfirst"
		awk '$1 == "round" && $2 > 1 { print $6 }' "$TMP/out" >>"$TMP/rwarm"
	done
	syms=$(awk '$1 == "symbols" { print $2 }' "$TMP/out")
	range() { sort -n "$1" | awk 'NR == 1 { a = $1 } { b = $1 } END { printf "%s-%s", a, b }'; }
	echo "| $b | $syms | $(range "$TMP/first") | $(range "$TMP/warm") | $(range "$TMP/rfirst") | $(range "$TMP/rwarm") |"
done
