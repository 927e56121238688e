#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ember collapse against FlameGraph's own regression suite: each of the 13 perf script inputs
# with each of --pid --tid --kernel --jit --all --addrs must be byte-identical to the result file
# stackcollapse-perf.pl printed (78 cases), with one thread and with --jobs 2; the two example
# inputs (perf, gzip'ed; DTrace) must give exactly the .collapsed files beside them (both
# sorted by stack, as the scripts print them), named and auto-detected.
. "$(dirname "$0")/../lib.sh"
suite=$SHARED/corpus/flamegraph-test
examples=$SHARED/corpus/examples
[ -d "$suite/results" ] || skip_all "no corpus at $suite"

n=0 failed=0
for f in "$suite"/*.txt; do
	name=$(basename "$f" .txt)
	for opt in pid tid kernel jit all addrs; do
		want=$suite/results/$name-collapsed-$opt.txt
		n=$((n + 1))
		if ! "$EMBER" collapse perf --"$opt" "$f" >"$TMP/out" 2>"$TMP/err"; then
			not_ok "$name --$opt: exit status"; sed 's/^/# /' "$TMP/err"; failed=$((failed + 1)); continue
		fi
		if ! cmp -s "$want" "$TMP/out"; then
			not_ok "$name --$opt: differs from stackcollapse-perf.pl"
			diff "$want" "$TMP/out" | head -6 | sed 's/^/# /'; failed=$((failed + 1)); continue
		fi
		# the same through the threaded path (and auto-detection)
		if ! "$EMBER" collapse --jobs 2 --"$opt" "$f" 2>/dev/null | cmp -s "$want" -; then
			not_ok "$name --$opt --jobs 2: differs from stackcollapse-perf.pl"
			failed=$((failed + 1)); continue
		fi
		ok "$name --$opt"
	done
done
check "all 78 FlameGraph regression cases ran ($n)" [ "$n" -eq 78 ]
check "no regression case failed" [ "$failed" -eq 0 ]

# the examples: gzip input read as is; reference outputs are sorted by stack
check "example-perf-stacks.txt.gz -> example-perf-stacks.collapsed" \
	cmp -s "$examples/example-perf-stacks.collapsed" <("$EMBER" collapse perf "$examples/example-perf-stacks.txt.gz")
check "example-perf-stacks auto-detected" \
	cmp -s "$examples/example-perf-stacks.collapsed" <("$EMBER" collapse "$examples/example-perf-stacks.txt.gz")
check "example-perf-stacks from stdin with --jobs 2" \
	cmp -s "$examples/example-perf-stacks.collapsed" <("$EMBER" collapse perf --jobs 2 - <"$examples/example-perf-stacks.txt.gz")
zcat "$examples/example-perf-stacks.txt.gz" >"$TMP/ex.txt"
check "example-perf-stacks mapped file with --jobs 2" \
	cmp -s "$examples/example-perf-stacks.collapsed" <("$EMBER" collapse --jobs 2 "$TMP/ex.txt")
check "example-dtrace-stacks.txt.gz -> example-dtrace-stacks.collapsed" \
	cmp -s "$examples/example-dtrace-stacks.collapsed" <("$EMBER" collapse dtrace "$examples/example-dtrace-stacks.txt.gz")
check "example-dtrace-stacks auto-detected" \
	cmp -s "$examples/example-dtrace-stacks.collapsed" <("$EMBER" collapse "$examples/example-dtrace-stacks.txt.gz")
check "reference outputs are sorted by stack (C locale)" \
	bash -c "LC_ALL=C sort -c -t' ' -k1,1 '$examples/example-perf-stacks.collapsed' 2>/dev/null || cut -d' ' -f1 '$examples/example-perf-stacks.collapsed' | LC_ALL=C sort -c"

# --timestamps keeps every sample: as many lines as sample records, same total weight
"$EMBER" collapse perf --timestamps "$TMP/ex.txt" >"$TMP/ts" 2>"$TMP/err"
# a record starts with an unindented line (comm ...); the file ends with a blank line
records=$(grep -c '^[^[:space:]#]' "$TMP/ex.txt")
lines=$(grep -vc '^#' "$TMP/ts")
check "--timestamps header line" [ "$(head -1 "$TMP/ts")" = "# ember-samples v1" ]
check "--timestamps: one line per sample ($lines lines, $records records)" [ "$lines" -eq "$records" ]
check "--timestamps: every count is 1 (ember-samples counts samples)" \
	awk '!/^#/ && $NF != 1 { exit 1 }' "$TMP/ts"
check "--timestamps lines are TIME STACK COUNT" \
	awk '!/^#/ && !($1 ~ /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]$/ && $NF ~ /^[0-9]+$/) { exit 1 }' "$TMP/ts"
check "--timestamps with --jobs 2 writes the same lines in the same order" \
	cmp -s "$TMP/ts" <("$EMBER" collapse perf --timestamps --jobs 2 "$TMP/ex.txt" 2>/dev/null)
done_testing
