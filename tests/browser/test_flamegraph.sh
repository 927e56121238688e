#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ember flamegraph's SVG in headless Chromium: hover details, click zoom, search with Matched %,
# Ctrl-I, URL state, and a graph of 100k unique stacks; see test_flamegraph.mjs.
. "$(dirname "$0")/../lib.sh"
require_browser
C=$SHARED/corpus
IN=$C/examples/example-perf-stacks.collapsed
[ -f "$IN" ] || skip_all "no corpus at $C"
"$EMBER" flamegraph --title "browser test" "$IN" >"$TMP/fg.svg" || { not_ok "ember flamegraph"; done_testing; }
"$EMBER" flamegraph --inverted "$IN" >"$TMP/icicle.svg" || { not_ok "ember flamegraph --inverted"; done_testing; }
"$EMBER" flamegraph --search '^ext4_' "$IN" >"$TMP/preset.svg" || { not_ok "ember flamegraph --search"; done_testing; }
# 100k unique stacks generated from the corpus (each corpus stack with numbered leaves)
cat "$C"/flamegraph-test/results/*-collapsed-all.txt "$IN" |
	awk '{ sub(/ [0-9.]+$/, ""); if (!seen[$0]++) b[n++] = $0 }
	     END { srand(7); for (i = 0; i < 100000; i++) printf "%s;leaf_%d %d\n", b[i % n], int(i / n), 1 + int(rand() * 50) }' \
	>"$TMP/big.txt"
"$EMBER" flamegraph "$TMP/big.txt" >"$TMP/big.svg" || { not_ok "ember flamegraph 100k stacks"; done_testing; }
# expected values computed here from the frame table, independently of the page
"$EMBER" flamegraph --frames-tsv "$IN" >"$TMP/frames.tsv"
SVG=$TMP/fg.svg ICICLE=$TMP/icicle.svg PRESET=$TMP/preset.svg BIG=$TMP/big.svg \
	FRAMES=$TMP/frames.tsv node "$SRCDIR/tests/browser/test_flamegraph.mjs"
