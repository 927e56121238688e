#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ember convert against the real tools: `go tool pprof -raw` reads our pprof output and sees the
# same stacks and counts as the folded input (and cpu/nanoseconds = count * period); folded ->
# pprof -> folded is lossless over the whole FlameGraph corpus; our pprof reader agrees with
# go's on a profile written by Go's runtime; d3 trees and speedscope files hold the same stacks
# and totals; ember-samples input keeps its time order and span. Also the error paths.
. "$(dirname "$0")/../lib.sh"
corpus=$SHARED/corpus/flamegraph-test/results
[ -d "$corpus" ] || skip_all "no corpus at $corpus"
export HOME=${HOME:-/root} GOCACHE=${GOCACHE:-$OUTPUT/go-cache} GOFLAGS=
have_go=1
command -v go >/dev/null || have_go=0

# `go tool pprof -raw` -> "stack count" lines (root first, sorted, summed) using value @1
# (0-based index of the sample value); also checks value 2 == value 1 * period when asked.
raw_to_folded() { # file value_index check_period
	go tool pprof -raw "$1" 2>"$TMP/pprof.err" | perl -e '
		my ($vi, $chk) = @ARGV; my (%loc, @smp, $sec, $cur, $period, $bad);
		while (<STDIN>) {
			chomp;
			if (/^Period: (\d+)/) { $period = $1; next }
			if (/^Samples:/) { $sec = "s"; <STDIN>; next }
			if (/^Locations/) { $sec = "l"; next }
			if (/^Mappings/) { $sec = "m"; next }
			if ($sec eq "s" && /^\s+(-?\d+)\s+(-?\d+):((?: \d+)*) ?$/) {
				my @v = ($1, $2); my @l = split " ", $3;
				$bad++ if $chk && $v[1] != $v[0] * $period;
				push @smp, [$v[$vi], [@l]]; next
			}
			# "ID: 0xADDR M=N NAME FILE:LINE s=START(SYSTEM_NAME)", FILE without spaces
			if ($sec eq "l" && /^\s+(\d+): 0x[0-9a-f]+ M=\d+ (.*) \S*:\d+ s=\d+(?:\(.*\))?$/) {
				$cur = $1; $loc{$cur} = [$2]; next
			}
			if ($sec eq "l" && /^\s+(.*) \S*:\d+ s=\d+(?:\(.*\))?$/) { push @{$loc{$cur}}, $1; next }
			die "unparsed -raw line: $_\n" if $sec eq "l";
		}
		my %h;
		for my $s (@smp) {
			my @f;
			# locations leaf first, lines innermost first: reverse both for root first
			for my $l (reverse @{$s->[1]}) { push @f, reverse @{$loc{$l}} }
			$h{join ";", @f} += $s->[0];
		}
		print "$_ $h{$_}\n" for sort grep { $h{$_} } keys %h;
		exit($bad ? 3 : 0);
	' "$2" "${3:-0}"
}

inputs=("$corpus"/*-collapsed-all.txt "$SHARED/corpus/examples/example-perf-stacks.collapsed")
# 1. go tool pprof reads our files: same stacks, same counts, cpu time = count * period
if [ $have_go -eq 1 ]; then
	for f in "${inputs[@]}"; do
		name=$(basename "$f")
		# pprof's function names are the frames without their markers (_[k], _[j], _[i])
		sed -E 's/_\[(k|j|i|py)\](;| )/\2/g' "$f" | "$EMBER" merge >"$TMP/want" &&
			"$EMBER" convert --to pprof --unit samples -F 49 -o "$TMP/p.pb.gz" "$f" 2>"$TMP/err" ||
			{ not_ok "go pprof $name: convert failed"; sed 's/^/# /' "$TMP/err"; continue; }
		if ! raw_to_folded "$TMP/p.pb.gz" 0 1 >"$TMP/got"; then
			not_ok "go pprof $name: go tool pprof failed or cpu != count * period"
			sed 's/^/# /' "$TMP/pprof.err" | head -5
		elif ! cmp -s "$TMP/want" "$TMP/got"; then
			not_ok "go pprof $name: stacks differ"
			diff "$TMP/want" "$TMP/got" | head -5 | sed 's/^/# /'
		else
			ok "go tool pprof -raw reads $name: $(wc -l <"$TMP/want") stacks equal"
		fi
	done
	go tool pprof -raw "$TMP/p.pb.gz" 2>/dev/null | grep -q '^Period: 20408163$' &&
		ok "period from --frequency 49" || not_ok "period from --frequency 49"
	# a profile from Go's own runtime: our reader and go's agree
	raw_to_folded "$SRCDIR/tests/data/go-cpu.pb.gz" 0 >"$TMP/want"
	"$EMBER" convert --from pprof "$SRCDIR/tests/data/go-cpu.pb.gz" >"$TMP/got"
	check "reads a Go runtime CPU profile as go tool pprof does" cmp -s "$TMP/want" "$TMP/got"
	raw_to_folded "$SRCDIR/tests/data/go-cpu.pb.gz" 1 >"$TMP/want"
	"$EMBER" convert --from pprof --sample-index 1 "$SRCDIR/tests/data/go-cpu.pb.gz" >"$TMP/got"
	check "--sample-index 1 reads cpu/nanoseconds" cmp -s "$TMP/want" "$TMP/got"
else
	skip "go tool pprof" "no go (make deps installs golang-go)"
fi

# 2. folded -> pprof -> folded is lossless, over every corpus file
n=0 bad=0
for f in "$corpus"/*.txt "$SHARED"/corpus/examples/*.collapsed; do
	"$EMBER" merge "$f" >"$TMP/want" 2>/dev/null
	"$EMBER" convert --to pprof --unit samples "$f" 2>/dev/null | "$EMBER" convert --from pprof >"$TMP/got"
	if cmp -s "$TMP/want" "$TMP/got"; then
		n=$((n + 1))
	else
		bad=$((bad + 1)); echo "# round trip differs: $(basename "$f")"
	fi
done
[ $bad -eq 0 ] && ok "folded -> pprof -> folded is lossless ($n files)" ||
	not_ok "round trip differs for $bad files"

# 3. d3 trees: self values (value - children) rebuild the folded stacks; speedscope: same
# stacks and total, endValue = sum of weights
tree_to_folded() {
	python3 -c '
import json, sys
t = json.load(open(sys.argv[1])); out = {}
def walk(n, path):
    kids = n.get("children", [])
    self_v = n["value"] - sum(k["value"] for k in kids)
    if self_v < -1e-9: sys.exit("value smaller than its children at " + ";".join(path))
    if self_v > 1e-9 and path: out[";".join(path)] = self_v
    names = [k["name"] for k in kids]
    if names != sorted(names, key=lambda s: s.encode()): sys.exit("children not sorted")
    for k in kids: walk(k, path + [k["name"]])
walk(t, [])
fmt = lambda v: str(int(v)) if v == int(v) else repr(v)
for s in sorted(out, key=lambda s: s.encode()): print(s, fmt(out[s]))' "$1"
}
speedscope_to_folded() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); p = d["profiles"][0]; fr = d["shared"]["frames"]; out = {}
assert d["$schema"] == "https://www.speedscope.app/file-format-schema.json"
assert p["type"] == "sampled" and len(p["samples"]) == len(p["weights"])
assert p["endValue"] - p["startValue"] == sum(p["weights"]), "endValue is not the total"
for s, w in zip(p["samples"], p["weights"]):
    k = ";".join(fr[i]["name"] for i in s); out[k] = out.get(k, 0) + w
fmt = lambda v: str(int(v)) if v == int(v) else repr(v)
for s in sorted(out, key=lambda s: s.encode()): print(s, fmt(out[s]))' "$1"
}
for f in "${inputs[@]}"; do
	name=$(basename "$f")
	"$EMBER" merge "$f" >"$TMP/want"
	"$EMBER" convert --to d3 "$f" >"$TMP/t.json" && tree_to_folded "$TMP/t.json" >"$TMP/got" &&
		cmp -s "$TMP/want" "$TMP/got" && ok "d3 tree of $name holds its stacks" ||
		not_ok "d3 tree of $name"
	"$EMBER" convert --to speedscope "$f" >"$TMP/s.json" &&
		speedscope_to_folded "$TMP/s.json" >"$TMP/got" && cmp -s "$TMP/want" "$TMP/got" &&
		ok "speedscope file of $name holds its stacks" || not_ok "speedscope file of $name"
done

# 4. timestamped input (ember-samples v1): time order kept in speedscope, span in pprof
cat >"$TMP/s.txt" <<'EOF'
# ember-samples v1
1700000000.250000000 burn;burn_a;burn_b 2
1700000000.000000000 burn;burn_a 1
1700000001.000000000 burn;burn_a 3
1700000000.500000000 burn;burn_a;burn_b;burn_c 1
EOF
"$EMBER" convert --to speedscope -F 100 "$TMP/s.txt" >"$TMP/s.json"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); p = d["profiles"][0]; fr = d["shared"]["frames"]
got = [(";".join(fr[i]["name"] for i in s), w) for s, w in zip(p["samples"], p["weights"])]
want = [("burn;burn_a", 1e7), ("burn;burn_a;burn_b", 2e7), ("burn;burn_a;burn_b;burn_c", 1e7),
        ("burn;burn_a", 3e7)]
sys.exit(0 if got == want and p["unit"] == "nanoseconds" and p["endValue"] == 7e7 else str(got))
' "$TMP/s.json" && ok "speedscope keeps the time order of timestamped samples" ||
	not_ok "speedscope time order"
"$EMBER" convert --to pprof -F 100 "$TMP/s.txt" >"$TMP/s.pb.gz"
if [ $have_go -eq 1 ]; then
	go tool pprof -raw "$TMP/s.pb.gz" >"$TMP/raw" 2>&1
	grep -q '^Duration: 1.01' "$TMP/raw" && grep -q '^Time: 2023-11-14 22:13:20 ' "$TMP/raw" &&
		ok "pprof time_nanos and duration_nanos from the samples' span" ||
		{ not_ok "pprof time and duration"; head -5 "$TMP/raw" | sed 's/^/# /'; }
fi
"$EMBER" convert --from pprof "$TMP/s.pb.gz" >"$TMP/got"
printf 'burn;burn_a 4\nburn;burn_a;burn_b 2\nburn;burn_a;burn_b;burn_c 1\n' >"$TMP/want"
check "timestamped samples aggregate into the pprof stacks" cmp -s "$TMP/want" "$TMP/got"

# 5. errors: exit 2 and a message naming the problem; malformed lines are counted, not lost
"$EMBER" convert --to svg "$TMP/s.txt" >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "unknown output format 'svg'" "$TMP/err" && ok "unknown format: exit 2" ||
	not_ok "unknown format"
"$EMBER" convert "$TMP/s.txt" >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "missing --to" "$TMP/err" && ok "missing --to: exit 2" || not_ok "missing --to"
printf 'not a profile at all' | gzip >"$TMP/bad.gz"
"$EMBER" convert --from pprof "$TMP/bad.gz" >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "not a pprof profile" "$TMP/err" && ok "garbage pprof: exit 2" ||
	{ not_ok "garbage pprof"; cat "$TMP/err"; }
head -c 100 "$SRCDIR/tests/data/go-cpu.pb.gz" >"$TMP/trunc.gz"
"$EMBER" convert --from pprof "$TMP/trunc.gz" >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "truncated gzip" "$TMP/err" && ok "truncated pprof: exit 2" ||
	{ not_ok "truncated pprof"; cat "$TMP/err"; }
printf 'a;b 1\nbroken line\na;c 2\n' >"$TMP/m.folded"
"$EMBER" convert --to d3 "$TMP/m.folded" >"$TMP/t.json" 2>"$TMP/err"
[ $? -eq 0 ] && grep -q 'm.folded:2:.*skipping' "$TMP/err" && grep -q '1 malformed line skipped' "$TMP/err" &&
	grep -q '"value":3' "$TMP/t.json" && ok "malformed line reported and counted" ||
	{ not_ok "malformed line"; cat "$TMP/err"; }
"$EMBER" convert --strict --to d3 "$TMP/m.folded" >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && ok "--strict: exit 2" || not_ok "--strict"
"$EMBER" convert --to pprof --frequency 0 "$TMP/m.folded" >/dev/null 2>&1
[ $? -eq 2 ] && ok "--frequency 0 refused" || not_ok "--frequency 0 refused"
printf 'a;b 0.5\n' | "$EMBER" convert --to pprof 2>"$TMP/err" >/dev/null
grep -q '1 fractional counts rounded' "$TMP/err" && ok "fractional counts: warned" ||
	not_ok "fractional counts warning"
"$EMBER" help convert | grep -q -- '--to FORMAT' && ok "help convert" || not_ok "help convert"
done_testing
