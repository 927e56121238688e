#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (light: one JVM thread, perf at 99 Hz; compares two samplers of the same thread)
# emberd's HotSpot walker beside the JVM's own help for perf: the javaburn workload
# (tests/workloads/javaburn/App.java, as test_java.sh runs it) under
# `java -XX:+PreserveFramePointer`, sampled at once by emberd (no flags: 99 Hz, its walker) and
# by `perf record -F 99 -g -p PID` (frame pointers; cpu-clock here), its JIT code named by the
# map `jcmd PID Compiler.perfmap` writes to /tmp/perf-PID.map (removed once perf script has read
# it). For each of the three methods whose split test_java checks (App.burnStatic,
# App$Burner.burnInstance, App.lambda$main$0), its share of the main thread's samples in the
# same window (perf's first to last sample, by CLOCK_REALTIME: `perf record -k`) is within 5 pp
# of perf's (the noise, below), and sample for sample the two name the same method.
#
# The level compared: each sample is given to the burn method on its stack. The three are the
# outermost methods of the program under the interpreted App.main, each compiled on its own
# (called once a round: never inlined), so both see each as a frame of its own. Below them they
# differ by design: ember expands the methods the JIT inlined (burnInstance;step;Lcg.apply),
# perf names one symbol per compiled frame (burnInstance;Lcg.apply); comparing leaves would
# compare inlining, not profiles. The denominator is all of the main thread's samples on both
# sides (the burn methods run there alone; the VM's other threads, compilers and GC, are left
# out as perf -p and emberd might see them started or not at the window's edges).
#
# One correction on perf's side, counted and printed: a frame-pointer walk loses the caller of a
# leaf that has not set up its frame (or has taken it down). burnInstance calls Op.apply 4096
# times a loop through a megamorphic interface call: the itable stub (perf map "vtable chunks",
# frameless) and the prologues and epilogues of the tiny apply methods hold ~3/4 of
# burnInstance's samples, and there perf's walk goes from rbp (burnInstance's) straight to its
# caller, the interpreter (`...;Interpreter;vtable chunks`, `...;Interpreter;long
# App$Lcg.apply`). In this program only Burner.step (inlined into burnInstance) makes that call,
# so perf's samples with no burn method whose innermost user frame is the stub or an apply are
# burnInstance's. emberd steps stubs and prologues by the blob's frame size; its stacks are
# taken as they are.
#
# Noise, and why 5 pp and not 3: the two sample the same thread at 99 Hz of its CPU time, but
# at different moments (their timers' phases, the CPU the thread is on), and a share differs
# between them by where their samples fall alone. Measured (12 runs with a copy of App.java that
# logged every burn interval, /tmp only: each sample set against the true timeline): away from
# the interval edges both named the method the thread was in, sample for sample (the shares each
# side's own samples give, by its names and by the timeline, within 0.0-1.8 pp, the edge
# samples' +-1 ms included); where their samples fell alone made the two sides' shares differ
# by 0.1-3.4 pp, sd 1.55 pp at ~700 samples a side. That is 0.58 x the binomial sd of
# independent draws (sqrt(2 x 0.25 / 700) = 2.7 pp): periodic samplers err at edges, but the
# thread sleeps each round and moves between CPUs, which redraws the phases. 3 pp at 3.3 sd (1 in
# 1000 checks) would need sd 0.9 pp: ~2100 samples a side, 25 s of a whole CPU at 99 Hz, past
# this test's ~25 s. So the window lasts until emberd holds N = 900 samples of the thread (~12 s
# alone; on a loaded machine, the thread at a third of a CPU, MAX = 20 s: ~650): sd 1.3-1.6 pp
# expected, 5 pp is 3.1-3.8 sd; the test needs >= 500 samples a side (sd 1.8 pp: 5 pp is 2.7 sd)
# and says whether the three are within 3 pp as well (17 runs, 9 beside a build loop at load 3-9:
# all were, differences 0.0-1.9 pp). Not under `chrt` (test_java's main thread is): beside the
# first lane, whose test_java may hold a CPU at real-time priority at the same time, two such
# threads would keep emberd's worker off both CPUs. The naming itself is checked sample for
# sample, where the noise is small: each perf sample with an emberd sample within 1 ms of it
# (~80-300 pairs) names the same burn method in >= 90 % of the pairs (measured 93.8-99.5 %: a pair
# straddles an interval's edge ~1 time in 36, 1 ms of the ~18 ms between edges, /2).
. "$(dirname "$0")/../lib.sh"
require_live_emberd
[ -x "$EMBER" ] || skip_all "no $EMBER"
command -v perf >/dev/null || skip_all "perf not installed"
JAVA=${EMBER_JAVA:-$(command -v java)}
[ -n "$JAVA" ] && [ -x "$JAVA" ] || skip_all "no java (openjdk-17-jdk-headless)"
JCMD=$(dirname "$(readlink -f "$JAVA")")/jcmd
[ -x "$JCMD" ] || JCMD=$(command -v jcmd) || skip_all "no jcmd (openjdk-17-jdk-headless)"
CP=$OUTPUT/workloads/javaburn
[ -f "$CP/App.class" ] || skip_all "no $CP/App.class (make workloads, with javac)"

JPID=
# KEEP=DIR: the test's files copied there (perf.data, its map as perf.map, both sides' samples)
trap 'stop_all; [ -n "$JPID" ] && rm -f "/tmp/perf-$JPID.map"; [ -n "${KEEP:-}" ] && cp -r "$TMP" "$KEEP"
	cleanup_tmp' EXIT
WARM=2 N=900 MAX=20

emberd_serve || { not_ok "emberd starts"; done_testing; }
OUT=$TMP/java.out
# runs until stopped: jcmd must find it alive after the window
"$JAVA" -XX:+PreserveFramePointer -cp "$CP" App 60 >"$OUT" 2>&1 &
JAVA_PID=$!
PIDS+=($JAVA_PID)
wait_log "$OUT" '^ready [0-9]* [0-9.]* [0-9]*$' || { not_ok "java App prints ready"; done_testing; }
read -r _ JPID T_READY JTID < <(grep -m1 ready "$OUT")
echo "# java: $(grep -m1 ready "$OUT")"
# the window after the JIT compiled the burn methods (perf names interpreted code "Interpreter")
sleep $WARM
t=$SECONDS
# perf from now until emberd holds N samples of the main thread since, at most MAX s
n=0
T_START=$(date +%s.%N)
perf record -F 99 -g -k CLOCK_REALTIME -p "$JPID" -o "$TMP/perf.data" >"$TMP/perf.log" 2>&1 &
PERF_PID=$!
PIDS+=($PERF_PID)
while [ $((SECONDS - t)) -lt "$MAX" ]; do
	sleep 1
	n=$(curl -sf "$URL/api/v1/folded?pid=$JPID&tid=$JTID&from=$T_START" | awk '{ s += $NF } END { print s + 0 }')
	[ "${n:-0}" -ge "$N" ] && break
done
kill -INT "$PERF_PID"
wait "$PERF_PID" # its status: 130 after SIGINT
check "perf record ran ($((SECONDS - t)) s, $n samples in emberd)" grep -q 'Captured and wrote' "$TMP/perf.log" ||
	sed 's/^/#   perf: /' "$TMP/perf.log"
T_END=$(date +%s.%N)
t=$SECONDS
"$JCMD" "$JPID" Compiler.perfmap >"$TMP/jcmd.log" 2>&1
check "jcmd $JPID Compiler.perfmap wrote /tmp/perf-$JPID.map ($((SECONDS - t)) s)" test -s "/tmp/perf-$JPID.map" ||
	sed 's/^/#   jcmd: /' "$TMP/jcmd.log"
kill "$JAVA_PID"
perf script -i "$TMP/perf.data" --tid "$JTID" 2>"$TMP/perf-script.log" |
	"$EMBER" collapse --all --timestamps >"$TMP/perf.samples"
cp "/tmp/perf-$JPID.map" "$TMP/perf.map" 2>/dev/null
rm -f "/tmp/perf-$JPID.map"
check "no perf map left in /tmp" test ! -e "/tmp/perf-$JPID.map"
read -r FROM TO < <(awk '!/^#/ { if (!f) f = $1; l = $1 } END { printf "%.6f %.6f\n", f, l + 0.000001 }' "$TMP/perf.samples")
# emberd's last tick stored: 1.2 s after the window (jcmd and perf script took most of it)
sleep "$(awk -v e="$T_END" -v n="$(date +%s.%N)" 'BEGIN { d = e + 1.2 - n; printf "%.2f", (d > 0 ? d : 0) }')"
curl -sf "$URL/api/v1/folded?pid=$JPID&tid=$JTID&from=$FROM&to=$TO" >"$TMP/ember.folded"
curl -sf "$URL/api/v1/samples?pid=$JPID&tid=$JTID&from=$FROM&to=$TO" >"$TMP/ember.samples"
echo "# window $FROM - $TO ($(awk -v f="$FROM" -v t="$TO" 'BEGIN { printf "%.2f", t - f }') s), $(awk -v f="$FROM" -v r="$T_READY" 'BEGIN { printf "%.1f", f - r }') s after ready"

# shares FIX: folded lines (STACK COUNT) on stdin -> "total static instance lambda none fixed":
# % of the samples with each burn method on the stack, with none, and how many samples the
# stub/prologue rule gave to burnInstance (FIX 1: perf's side; emberd's stacks are taken as
# they are). Frames match by name with or without perf's
# return type ("void App.burnStatic_[j]", ember's "App.burnStatic_[j]").
shares() {
	awk -v fix="$1" '{ n = $NF; s = substr($0, 1, length($0) - length($NF) - 1); k = split(s, fr, ";")
		tot += n; w = ""
		for (i = 1; i <= k; i++) {
			g = fr[i]; sub(/^[^ ]* /, "", g)
			if (g == "App.burnStatic_[j]" || g == "App$Burner.burnInstance_[j]" ||
			    g == "App.lambda$main$0_[j]")
				w = g
		}
		# the innermost user frame (a timer or IPI may have come in on top of it)
		for (u = k; u > 1 && fr[u] ~ /_\[k\]$/; u--) ;
		leaf = fr[u]; sub(/^[^ ]* /, "", leaf)
		if (w == "" && fix && (fr[u] == "vtable chunks_[j]" || leaf ~ /^App\$(Lcg|XorShift|Pcg)\.apply_\[j\]$/)) {
			w = "App$Burner.burnInstance_[j]"; fixed += n
		}
		if (w == "") none += n; else b[w] += n }
		END { t = tot ? tot : 1
		      printf "%d %.1f %.1f %.1f %.1f %d\n", tot, 100 * b["App.burnStatic_[j]"] / t,
			     100 * b["App$Burner.burnInstance_[j]"] / t, 100 * b["App.lambda$main$0_[j]"] / t,
			     100 * none / t, fixed }'
}
read -r PT PS PI PL PN PF < <(grep -v '^#' "$TMP/perf.samples" | cut -d' ' -f2- | shares 1)
read -r ET ES EI EL EN _ < <(shares 0 <"$TMP/ember.folded")
echo "# perf:   $PT samples: static $PS%, instance $PI% ($PF stub or apply samples given to it), lambda $PL%, none $PN%"
echo "# emberd: $ET samples: static $ES%, instance $EI%, lambda $EL%, none $EN%"
within() { awk -v x="$1" -v e="$2" -v d="$3" 'BEGIN { exit !(x - e <= d && e - x <= d) }'; }
check "perf sampled the main thread (>= 500 samples: $PT)" test "$PT" -ge 500
# the same thread, the same 99 Hz of its CPU time, the same window
check "emberd sampled it as often (within 10 % of perf's $PT: $ET)" \
	awk -v e="$ET" -v p="$PT" 'BEGIN { exit !(e >= 0.9 * p && e <= 1.1 * p) }'
check "perf: <= 5 % of the samples with no burn method ($PN%)" awk -v x="$PN" 'BEGIN { exit !(x <= 5) }' || {
	grep -v '^#' "$TMP/perf.samples" | cut -d' ' -f2- |
		grep -v 'App\.burnStatic_\|App\$Burner\.burnInstance_\|App\.lambda\$main\$0_' |
		sed 's/ 1$//' | sort | uniq -c | sort -rn | head -5 | cut -c1-300 | sed 's/^/#   /'
}
check "emberd: <= 5 % of the samples with no burn method ($EN%)" awk -v x="$EN" 'BEGIN { exit !(x <= 5) }' ||
	grep -v 'App\.burnStatic_\|App\$Burner\.burnInstance_\|App\.lambda\$main\$0_' "$TMP/ember.folded" |
	sort -t' ' -k2 -rn | head -5 | cut -c1-300 | sed 's/^/#   /'
check "App.burnStatic: emberd $ES% within 5 pp of perf's $PS%" within "$ES" "$PS" 5
check "App\$Burner.burnInstance: emberd $EI% within 5 pp of perf's $PI%" within "$EI" "$PI" 5
check "App.lambda\$main\$0: emberd $EL% within 5 pp of perf's $PL%" within "$EL" "$PL" 5
if within "$ES" "$PS" 3 && within "$EI" "$PI" 3 && within "$EL" "$PL" 3; then
	echo "# all three within 3 pp"
else
	echo "# not all three within 3 pp (sampling noise: sd ~1.2-1.7 pp, see the top)"
fi

# sample for sample: each perf sample and the emberd sample nearest in time, when within 1 ms
# (emberd's samples carry the time of their perf event), each given to its burn method as above
read -r PAIRS AGREE < <(python3 - "$TMP/perf.samples" "$TMP/ember.samples" "$TMP/differ.txt" <<'PY'
import bisect, re, sys
def burn(stack, fix):
    fr = stack.split(";")
    w = None
    for f in fr:
        g = f.split(" ")[-1]
        if g in ("App.burnStatic_[j]", "App$Burner.burnInstance_[j]", "App.lambda$main$0_[j]"):
            w = g
    user = [f for f in fr if not f.endswith("_[k]")] or [""]
    if w is None and fix and (user[-1] == "vtable chunks_[j]" or
                              re.search(r"App\$(Lcg|XorShift|Pcg)\.apply_\[j\]$", user[-1])):
        w = "App$Burner.burnInstance_[j]"
    return w
def load(path, fix):
    out = []
    for line in open(path):
        if line.startswith("#"):
            continue
        t, _, rest = line.partition(" ")
        stack, _, n = rest.rstrip("\n").rpartition(" ")
        out += [(float(t), burn(stack, fix))] * int(float(n))
    return sorted(out, key=lambda x: x[0])
p, e = load(sys.argv[1], True), load(sys.argv[2], False)
et = [x[0] for x in e]
pairs = agree = 0
differ = {}
for t, w in p:
    i = bisect.bisect_left(et, t)
    near = min((e[j] for j in (i - 1, i) if 0 <= j < len(e)), key=lambda x: abs(x[0] - t), default=None)
    if near and abs(near[0] - t) <= 0.001:
        pairs += 1
        agree += near[1] == w
        if near[1] != w:
            k = (w, near[1])
            differ[k] = differ.get(k, 0) + 1
print(pairs, "%.1f" % (100.0 * agree / max(pairs, 1)))
# the pairs that differ, by (perf's, emberd's) method: for the next time they are many
with open(sys.argv[3], "w") as out:
    for (w, v), n in sorted(differ.items(), key=lambda x: -x[1]):
        out.write("# differ: %d, perf %s, emberd %s\n" % (n, w, v))
PY
)
echo "# $PAIRS perf samples with an emberd sample within 1 ms: $AGREE % name the same burn method"
cat "$TMP/differ.txt" 2>/dev/null
check "sample for sample: >= 50 pairs within 1 ms ($PAIRS)" test "${PAIRS:-0}" -ge 50
check "sample for sample: >= 90 % of them name the same burn method ($AGREE %)" \
	awk -v x="${AGREE:-0}" 'BEGIN { exit !(x >= 90) }'
stop_all
done_testing
