#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (perf's cpu-clock counts each run's own CPU time: a busy machine changes no delta)
# The experiment of "On the Algebraic Properties of Flame Graphs" (section 4), in C: the
# regress workload profiled RUNS times each way with `perf record` (cpu-clock, one sample per
# millisecond of CPU, frame pointers), then `ember stat compare` must find exactly the two
# changed stacks as significant: main;c;b;a (200 -> 150 ms: -50) and main;startup (new in the
# regressed build: +100), with mean deltas within 20% of the burns, and no other stack. main;startup
# often has exactly 100 samples in every regressed run: an exact change, which stat compare once
# passed over as "zero variance" (test_hotelling test_exact_change).
# RUNS=12 by default (about a minute); docs/ember-stat.md records a full run with RUNS=25.
. "$(dirname "$0")/../lib.sh"
RUNS=${RUNS:-12}
W=$OUTPUT/workloads/regress
fg=$FLAMEGRAPH_DIR
[ -x "$W" ] || skip_all "no $W (make workloads)"
command -v perf >/dev/null || skip_all "no perf"
perf record -q -e cpu-clock -c 1000000 -g -o "$TMP/probe.data" -- true >/dev/null 2>&1 ||
	skip_all "perf record cannot profile a child here (perf_event_paranoid?)"

# perf script -> folded with FlameGraph's stackcollapse-perf.pl, which sums perf's sample period
# (1000000 ns here): the counts are divided back to samples, i.e. milliseconds of CPU. Without the
# script (a failure under CI) ember collapse perf stands in for it, once it has printed
# what the script printed for real perf script files in the corpus: default options, and sample
# periods summed (perf-dd-stacks-01 has them; its results are with options only).
if have_flamegraph stackcollapse-perf.pl; then
	collapser=(perl "$fg/stackcollapse-perf.pl")
else
	collapser=("$EMBER" collapse perf -)
	CO=$SHARED/corpus
	check "ember collapse perf prints stackcollapse-perf.pl's corpus results, so it stands in for it" sh -c "
		'$EMBER' collapse perf '$CO/examples/example-perf-stacks.txt.gz' | cmp -s - '$CO/examples/example-perf-stacks.collapsed' &&
		'$EMBER' collapse perf --pid '$CO/flamegraph-test/perf-dd-stacks-01.txt' |
			cmp -s - '$CO/flamegraph-test/results/perf-dd-stacks-01-collapsed-pid.txt'"
fi
collapse() {
	perf script -i "$1" 2>/dev/null | "${collapser[@]}" |
		awk '{ c = $NF; $NF = ""; sub(/ $/, ""); if (c >= 1000000) c = c / 1000000; print $0 " " c }'
}

t0=$SECONDS
for i in $(seq 1 "$RUNS"); do
	for set in a b; do
		flag=; [ $set = b ] && flag=--regressed
		# shellcheck disable=SC2086
		perf record -q -e cpu-clock -c 1000000 -g -o "$TMP/$set$i.data" -- "$W" $flag \
			>/dev/null 2>"$TMP/perf.err" || { not_ok "perf record failed"; sed 's/^/# /' "$TMP/perf.err"; done_testing; }
		collapse "$TMP/$set$i.data" >"$TMP/$set$i.folded"
		rm -f "$TMP/$set$i.data"
	done
done
echo "# $RUNS runs each way recorded in $((SECONDS - t0)) s"
check "the baseline profile has main;c;b;a" grep -q ';main;c;b;a ' "$TMP/a1.folded"
check "the regressed profile has main;startup" grep -q ';main;startup ' "$TMP/b1.folded"

"$EMBER" stat compare --a "$TMP"/a*.folded --b "$TMP"/b*.folded >"$TMP/report" 2>"$TMP/err"
check "stat compare runs" test $? -eq 0
sed 's/^/# /' "$TMP/report"
"$EMBER" stat compare --json --a "$TMP"/a*.folded --b "$TMP"/b*.folded >"$TMP/result.json"
/usr/bin/python3 - "$TMP/result.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
sig = [k for k in r["kept"] if k["significant"]]
want = {";main;c;b;a": -50.0, ";main;startup": 100.0}
def which(stack):
    for suffix in want:
        if stack.endswith(suffix):
            return suffix
    return None
found = {}
bad = 0
# what a failed line says, so that a CI log of "not ok" lines alone tells why
kept = "; ".join(f"{';'.join(k['stack'].split(';')[-3:])} {k['mean_a']:.1f}->{k['mean_b']:.1f}"
                 f"{' exact' if k.get('exact') else ''}{' *' if k['significant'] else ''}"
                 for k in r["kept"])
why = f" [stacks {r['stacks']}, p {r['p']}, constant {r['skipped_constant']}, collinear {r['skipped_collinear']}; kept: {kept}]"

print(("ok" if r["reject"] else "not ok") + f" - H0 rejected: T2 {r['t2']:.1f} > {r['t2_crit']:.1f}, p-value {r['p_value']:.3g}")
for k in sig:
    w = which(k["stack"])
    if w is None:
        print(f"not ok - unexpected significant stack {k['stack']} (delta {k['delta']:+.1f})")
        bad += 1
        continue
    found[w] = k["delta"]
for w, d in want.items():
    if w not in found:
        print(f"not ok - {w} is not significant{why}")
        continue
    ok = abs(found[w] - d) <= 0.2 * abs(d)
    print(("ok" if ok else "not ok") + f" - {w}: mean delta {found[w]:+.1f} ms, the burn is {d:+.0f} ms (within 20%)" + ("" if ok else why))
print(("ok" if not bad and len(sig) == 2 else "not ok") + f" - exactly two significant stacks ({len(sig)}) of p = {r['p']} kept" +
      ("" if not bad and len(sig) == 2 else why))
PYEOF
done_testing
