#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Conformance with flamegraph.pl: for every input and variant in the corpus' flamegraph-frames/
# (what flamegraph.pl draws with default options, --reverse and --inverted), ember draws the
# same frames: names, sample counts, depths (y) and pixel positions (x, width), row for row.
. "$(dirname "$0")/../lib.sh"
C=$SHARED/corpus
[ -d "$C/flamegraph-frames" ] || skip_all "no corpus at $C"
n=0
for t in "$C"/flamegraph-frames/*.tsv; do
	base=$(basename "$t" .tsv)
	variant=${base##*.}
	name=${base%.*}
	if [ -f "$C/examples/$name.collapsed" ]; then
		in=$C/examples/$name.collapsed
	else
		in=$C/flamegraph-test/results/$name.txt
	fi
	case $variant in
	default) opt=() ;;
	reverse) opt=(--reverse) ;;
	inverted) opt=(--inverted) ;;
	*) not_ok "$base: unknown variant"; continue ;;
	esac
	if ! "$EMBER" flamegraph --frames-tsv "${opt[@]}" "$in" >"$TMP/out.tsv" 2>"$TMP/err"; then
		not_ok "$base: ember failed"; sed 's/^/# /' "$TMP/err"; continue
	fi
	if diff "$t" "$TMP/out.tsv" >"$TMP/diff"; then
		ok "$base: $(wc -l <"$t") frames identical"
	else
		not_ok "$base: $(grep -c '^[<>]' "$TMP/diff") rows differ"
		head -20 "$TMP/diff" | sed 's/^/# /'
	fi
	n=$((n + 1))
done
check "all $n corpus cases compared (at least 45)" test "$n" -ge 45
done_testing
