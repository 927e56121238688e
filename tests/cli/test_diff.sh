#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ember diff against FlameGraph's difffolded.pl on pairs of corpus files, with and without -n
# and -s. difffolded prints in perl's hash order, which is random per run, so both outputs are
# sorted (C locale) before the byte comparison; ember's own output is sorted by stack text.
# Without difffolded.pl (a failure under CI; the corpus holds no output of it) that comparison is
# a counted skip; ember diff still runs on every case and must exit 0,
# print nothing on stderr, sort by stack and change its output with -n.
. "$(dirname "$0")/../lib.sh"
corpus=$SHARED/corpus/flamegraph-test/results
fg=$FLAMEGRAPH_DIR
[ -d "$corpus" ] || skip_all "no corpus at $corpus"
have_ref=1
have_flamegraph difffolded.pl || have_ref=0

# Pairs: same input collapsed two ways (stacks that vanish and appear), the --addrs variant
# (hex addresses: what -s is for), and pairs of different inputs (mostly disjoint).
pairs() {
	local b prev=
	for f in "$corpus"/*-collapsed-all.txt; do
		b=${f%-collapsed-all.txt}
		echo "$b-collapsed-all.txt $b-collapsed-pid.txt"
		echo "$b-collapsed-addrs.txt $b-collapsed-all.txt"
		echo "$b-collapsed-kernel.txt $b-collapsed-jit.txt"
		[ -n "$prev" ] && echo "$prev $f"
		prev=$f
	done
	echo "$SHARED/corpus/examples/example-perf-stacks.collapsed $SHARED/corpus/examples/example-dtrace-stacks.collapsed"
}

n=0 bad=0 normalized=0
while read -r a b; do
	for flags in "" "-n" "-s" "-n -s"; do
		n=$((n + 1))
		# shellcheck disable=SC2086
		[ $have_ref = 1 ] && perl "$fg/difffolded.pl" $flags "$a" "$b" | LC_ALL=C sort >"$TMP/ref"
		# shellcheck disable=SC2086
		"$EMBER" diff $flags "$a" "$b" >"$TMP/out" 2>"$TMP/err" || { bad=$((bad + 1)); not_ok "diff $flags $(basename "$a") $(basename "$b"): exit $?"; continue; }
		if [ $have_ref = 1 ] && ! LC_ALL=C sort "$TMP/out" | cmp -s - "$TMP/ref"; then
			bad=$((bad + 1))
			not_ok "diff $flags $(basename "$a") $(basename "$b") differs from difffolded.pl"
			LC_ALL=C sort "$TMP/out" | diff - "$TMP/ref" | head -5 | sed 's/^/# /'
		fi
		[ -s "$TMP/err" ] && { bad=$((bad + 1)); not_ok "unexpected messages"; sed 's/^/# /' "$TMP/err"; }
		# ember's own order: sorted by stack text (the part before the two counts)
		if ! sed 's/ [^ ]* [^ ]*$//' "$TMP/out" | LC_ALL=C sort -c 2>/dev/null; then
			bad=$((bad + 1)); not_ok "diff $flags output is not sorted by stack"
		fi
		if [ "$flags" = "-n" ] && ! cmp -s "$TMP/out" <("$EMBER" diff "$a" "$b"); then
			normalized=$((normalized + 1))
		fi
	done
done < <(pairs)
if [ $have_ref = 1 ]; then
	[ $bad -eq 0 ] && ok "ember diff equals difffolded.pl on $n corpus cases (sorted)"
else
	skip "ember diff equals difffolded.pl on $n corpus cases (sorted)" "no difffolded.pl in $fg"
	[ $bad -eq 0 ] && ok "ember diff exits 0, silently, sorted by stack on $n corpus cases"
fi
# -n must really have been exercised: most pairs have different totals
check "-n changed the output on $normalized pairs" test "$normalized" -gt 5

# errors: one file, a missing file, normalizing against an empty A
"$EMBER" diff "$corpus/perf-dd-stacks-01-collapsed-all.txt" >/dev/null 2>&1
check "one file is a usage error" test $? -eq 2
"$EMBER" diff "$TMP/missing" "$corpus/perf-dd-stacks-01-collapsed-all.txt" >/dev/null 2>&1
check "a missing file is an error" test $? -eq 2
: >"$TMP/empty"
"$EMBER" diff -n "$TMP/empty" "$corpus/perf-dd-stacks-01-collapsed-all.txt" >/dev/null 2>"$TMP/err"
check "-n with an empty A is an error (difffolded: division by zero)" test $? -eq 2
check "... that says why" grep -q "no samples" "$TMP/err"
# malformed lines: skipped, counted, and named
printf 'a;b 3\nnot a count\na;c 2\n' >"$TMP/bad"
"$EMBER" diff "$TMP/bad" "$TMP/bad" >"$TMP/out" 2>"$TMP/err"
check "malformed lines are skipped" test "$(cat "$TMP/out")" = "$(printf 'a;b 3 3\na;c 2 2')"
check "... and reported with file:line" grep -q "bad:2:" "$TMP/err"
done_testing
