#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ember stat similarity and decompose on corpus pairs, checked against perl computations of
# the paper's definitions: similarity 1 for identical and scaled profiles, 0 for disjoint ones;
# the four parts are disjoint, positive and add up to B/||B|| - A/||A|| (percent), or B - A
# exactly with --raw.
. "$(dirname "$0")/../lib.sh"
corpus=$SHARED/corpus/flamegraph-test/results
[ -d "$corpus" ] || skip_all "no corpus at $corpus"
a=$corpus/perf-java-stacks-01-collapsed-all.txt
b=$corpus/perf-java-stacks-01-collapsed-jit.txt

sim() { "$EMBER" stat similarity "$@" | awk '$1 == "similarity" { print $2 }'; }
check "similarity of a profile with itself is 1" test "$(sim "$a" "$a")" = 1.000000000
perl -pe 's/(\d+(?:\.\d*)?)$/$1 * 3.5/e' "$a" >"$TMP/scaled"
check "similarity with a scaled copy is 1" test "$(sim "$a" "$TMP/scaled")" = 1.000000000
sed 's/^/other;/' "$a" >"$TMP/disjoint"
check "similarity with a disjoint profile is 0" test "$(sim "$a" "$TMP/disjoint")" = 0.000000000
# the paper's score, computed by perl
want=$(perl -e 'for my $i (0, 1) { open F, $ARGV[$i]; while (<F>) { chomp; if (/^(.*)\s+?(\d+(?:\.\d*)?)$/) { $v[$i]{$1} += $2; $n[$i] += $2 } } }
	my %u = map { $_ => 1 } (keys %{$v[0]}, keys %{$v[1]}); my $d = 0;
	$d += abs(($v[0]{$_} // 0) / $n[0] - ($v[1]{$_} // 0) / $n[1]) for keys %u; printf "%.9f\n", 1 - $d / 2' "$a" "$b")
check "similarity matches the definition ($want)" test "$(sim "$a" "$b")" = "$want"

# decompose: normalized (default) and raw
for mode in "" --raw; do
	rm -rf "$TMP/out"
	# shellcheck disable=SC2086
	"$EMBER" stat decompose $mode --out "$TMP/out" "$a" "$b" >"$TMP/summary" || { not_ok "decompose $mode: exit $?"; continue; }
	for part in appeared disappeared grown shrunk; do
		[ -f "$TMP/out/$part.folded" ] && [ -f "$TMP/out/$part.svg" ] || not_ok "decompose $mode: $part.folded and $part.svg"
	done
	perl -e 'my ($raw, $fa, $fb, $dir) = @ARGV; my (@v, @n);
		for my $i (0, 1) { open F, ($fa, $fb)[$i]; while (<F>) { chomp; if (/^(.*)\s+?(\d+(?:\.\d*)?)$/) { $v[$i]{$1} += $2; $n[$i] += $2 } } }
		my ($ka, $kb) = $raw ? (1, 1) : (100 / $n[0], 100 / $n[1]);
		my %p; my $bad = 0;
		for my $part (qw(appeared disappeared grown shrunk)) { open P, "$dir/$part.folded" or die;
			while (<P>) { chomp; /^(.*) (\S+)$/ or die "bad line $_"; $bad++, print "# $part: $1 not positive\n" unless $2 > 0;
				$bad++, print "# $1 in two parts\n" if exists $p{$1}; $p{$1} = [$part, $2] } }
		my %u = map { $_ => 1 } (keys %{$v[0]}, keys %{$v[1]});
		for (keys %u) { my ($x, $y) = ($v[0]{$_} // 0, $v[1]{$_} // 0); my $d = $kb * $y - $ka * $x;
			my ($part, $val) = @{$p{$_} // ["none", 0]};
			my $s = ($part eq "appeared" || $part eq "grown") ? $val : -$val;
			my $want = $x == 0 && $y != 0 ? "appeared" : $y == 0 && $x != 0 ? "disappeared" : $d > 0 ? "grown" : $d < 0 ? "shrunk" : "none";
			$bad++, print "# $_: in $part, expected $want\n" if $part ne $want;
			$bad++, print "# $_: $s != $d\n" if abs($s - $d) > 1e-9 * (1 + abs($d)) }
		exit($bad ? 1 : 0)' -- "$mode" "$a" "$b" "$TMP/out"
	check "decompose $mode: disjoint, positive, and B - A = appeared + grown - disappeared - shrunk" test $? -eq 0
	command -v xmllint >/dev/null && check "decompose $mode: the SVGs are well-formed" xmllint --noout "$TMP/out"/*.svg
done
check "the summary states the units" grep -q "^units: samples" "$TMP/summary"
"$EMBER" stat decompose "$a" "$b" >/dev/null 2>&1
check "decompose without --out is a usage error" test $? -eq 2
: >"$TMP/empty"
"$EMBER" stat decompose --out "$TMP/o2" "$TMP/empty" "$b" >/dev/null 2>"$TMP/err"
check "normalizing an empty profile is an error that says so" grep -q "no samples" "$TMP/err"
"$EMBER" stat nosuch >/dev/null 2>&1
check "an unknown stat command is a usage error" test $? -eq 2
done_testing
