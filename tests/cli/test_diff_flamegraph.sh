#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ember diff --flamegraph / --elided / --both on corpus pairs: every frame (name, x, y, width,
# fill) equals what `difffolded.pl A B | flamegraph.pl [--negate]` draws; the stated elided share
# is the share of A's samples on stacks absent from B, computed here independently; --elided
# draws exactly those stacks (as flamegraph.pl draws them); --both holds both graphs. Without
# FlameGraph (a failure under CI; the corpus holds no differential graphs) the comparison with
# flamegraph.pl is a counted skip; the elided share is still checked,
# and --elided against ember flamegraph of the vanished stacks (its layout is checked against
# flamegraph.pl's in test_flamegraph_conformance.sh).
. "$(dirname "$0")/../lib.sh"
corpus=$SHARED/corpus/flamegraph-test/results
fg=$FLAMEGRAPH_DIR
[ -d "$corpus" ] || skip_all "no corpus at $corpus"
command -v perl >/dev/null || skip_all "no perl"
have_ref=1
have_flamegraph flamegraph.pl difffolded.pl || have_ref=0

# name, x, y, width, fill of every frame, sorted
frames() { perl -ne 'while (/<title>([^<]*?) \([^<]*<\/title><rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="[\d.]+" fill="([^"]+)"/g) { print "$1\t$2\t$3\t$4\t$5\n" }' "$1" | sort; }
# percent of A's samples on stacks that B lacks, with perl's regex, independent of ember
elided_pct() { perl -e 'my (%a, %b, $t, $g); open A, $ARGV[0]; while (<A>) { chomp; $a{$1} += $2, $t += $2 if /^(.*)\s+?(\d+(?:\.\d*)?)$/ }
	open B, $ARGV[1]; while (<B>) { chomp; $b{$1} += $2 if /^(.*)\s+?(\d+(?:\.\d*)?)$/ }
	for (keys %a) { $g += $a{$_} unless $b{$_} } printf "%.2f\n", $t ? 100 * $g / $t : 0' "$1" "$2"; }

n=0 bad=0 n_el=0
while read -r a b; do
	for flags in "" "--negate" "-n"; do
		n=$((n + 1))
		nflag=; neg=
		[ "$flags" = -n ] && nflag=-n
		[ "$flags" = --negate ] && neg=--negate
		# shellcheck disable=SC2086
		[ $have_ref = 1 ] && perl "$fg/difffolded.pl" $nflag "$corpus/$a" "$corpus/$b" | perl "$fg/flamegraph.pl" $neg >"$TMP/ref.svg" 2>/dev/null
		# shellcheck disable=SC2086
		"$EMBER" diff -f $flags "$corpus/$a" "$corpus/$b" >"$TMP/our.svg" 2>"$TMP/err" || { bad=$((bad + 1)); not_ok "diff -f $flags $a $b: exit $?"; continue; }
		if [ $have_ref = 1 ] && ! cmp -s <(frames "$TMP/ref.svg") <(frames "$TMP/our.svg"); then
			bad=$((bad + 1)); not_ok "diff -f $flags $a $b: frames differ from flamegraph.pl"
			diff <(frames "$TMP/ref.svg") <(frames "$TMP/our.svg") | head -4 | sed 's/^/# /'
		fi
		want=$(elided_pct "$corpus/$a" "$corpus/$b")
		grep -q ">$want% elided" "$TMP/our.svg" || { bad=$((bad + 1)); not_ok "diff -f $flags $a $b: does not state $want% elided"; }
	done
	# --elided: the vanished stacks alone, as flamegraph.pl draws them
	perl -e 'my (%a, %b); open A, $ARGV[0]; while (<A>) { chomp; $a{$1} += $2 if /^(.*)\s+?(\d+(?:\.\d*)?)$/ }
		open B, $ARGV[1]; while (<B>) { chomp; $b{$1} += $2 if /^(.*)\s+?(\d+(?:\.\d*)?)$/ }
		for (sort keys %a) { print "$_ $a{$_}\n" if $a{$_} && !$b{$_} }' "$corpus/$a" "$corpus/$b" >"$TMP/elided.folded"
	n=$((n + 1))
	"$EMBER" diff --elided "$corpus/$a" "$corpus/$b" >"$TMP/el.svg" 2>/dev/null
	if [ -s "$TMP/elided.folded" ]; then
		if [ $have_ref = 1 ]; then
			perl "$fg/flamegraph.pl" "$TMP/elided.folded" >"$TMP/elref.svg" 2>/dev/null
		else
			"$EMBER" flamegraph "$TMP/elided.folded" >"$TMP/elref.svg" 2>/dev/null
		fi
		n_el=$((n_el + 1))
		cmp -s <(frames "$TMP/elref.svg" | cut -f1-4) <(frames "$TMP/el.svg" | cut -f1-4) ||
			{ bad=$((bad + 1)); not_ok "diff --elided $a $b: frames differ from the vanished stacks"; }
	else
		grep -q "No valid input\|ERROR" "$TMP/el.svg" || { bad=$((bad + 1)); not_ok "diff --elided $a $b: nothing vanished, yet frames drawn"; }
	fi
done <<'EOT'
perf-vertx-stacks-01-collapsed-pid.txt perf-vertx-stacks-01-collapsed-all.txt
perf-java-stacks-01-collapsed-all.txt perf-java-stacks-01-collapsed-jit.txt
perf-cycles-instructions-01-collapsed-all.txt perf-cycles-instructions-01-collapsed-kernel.txt
perf-dd-stacks-01-collapsed-all.txt perf-iperf-stacks-pidtid-01-collapsed-all.txt
EOT
if [ $have_ref = 1 ]; then
	[ $bad -eq 0 ] && ok "diff -f, --negate, -n and --elided match flamegraph.pl on $n corpus cases"
else
	skip "diff -f, --negate, -n and --elided match flamegraph.pl" "no flamegraph.pl and difffolded.pl in $fg"
	[ $bad -eq 0 ] && ok "diff -f, --negate, -n state the elided share and --elided draws the vanished stacks (as ember flamegraph, $n_el pairs) on $n corpus cases"
fi

a=$corpus/perf-vertx-stacks-01-collapsed-pid.txt b=$corpus/perf-vertx-stacks-01-collapsed-all.txt
"$EMBER" diff --both --title "vertx" "$a" "$b" >"$TMP/both.html"
check "--both writes one HTML page" grep -q '^<!DOCTYPE html>' "$TMP/both.html"
check "... with the two graphs" test "$(grep -o 'iframe id=\\"g[12]\\"\|iframe id="g[12]"' "$TMP/both.html" | wc -l)" -eq 2
check "... and the hover link in each" test "$(grep -o "fg:'ready'" "$TMP/both.html" | wc -l)" -eq 2
"$EMBER" diff -f --fg minwidth=5 --title T "$a" "$b" >"$TMP/o.svg"
check "--fg passes flamegraph options" grep -q 'narrower than 5 px' "$TMP/o.svg"
"$EMBER" diff -f --fg cp=/tmp/x "$a" "$b" >/dev/null 2>&1
check "--fg refuses options that write files" test $? -eq 2
"$EMBER" diff --negate "$a" "$b" >/dev/null 2>&1
check "--negate without a flame graph is a usage error" test $? -eq 2
command -v xmllint >/dev/null && check "the SVG is well-formed XML" xmllint --noout "$TMP/o.svg"
done_testing
