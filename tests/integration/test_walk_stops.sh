#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (light: checks names and walks as shares of a few hundred samples, no time bound)
# Why user stack walks stop short, counted by reason: tests/workloads/stops makes
# four of the reasons happen on purpose, one process each (a recursion deeper than 127 frames;
# leaves in assembly without CFI, with CFI whose CFA does not grow, with CFI pointing at
# unreadable memory); each reason's counter in /api/v1/stats (sampler.user_stops) and /metrics
# (ember_user_walk_stops_total{reason}) moves by most of that process's samples, the stacks stay
# rooted at one [truncated] frame, and the reasons add up to user_truncated. ~15 s.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/stops" ] || skip_all "workloads not built (make workloads)"
trap 'stop_all; cleanup_tmp' EXIT
SECS=5

emberd_serve -F 499 -o python.enabled=no || { not_ok "emberd serves HTTP"; done_testing; }
# stats FILE: /api/v1/stats into FILE, once the drain published its first counters; prints the
# time they were taken (the drain's copy of its last tick, age_s old)
stats() {
	local i
	for i in $(seq 50); do
		curl -sf "$URL/api/v1/stats" >"$1" && grep -q '"sampler"' "$1" && break
		sleep 0.2
	done
	python3 -c 'import json, sys, time; print("%.3f" % (time.time() -
		json.load(open(sys.argv[1]))["sampler"]["age_s"]))' "$1"
}
span() { python3 -c 'import sys; print("from=%.3f&to=%.3f" % (float(sys.argv[1]), float(sys.argv[2]) + 1))' "$@"; }

# each process first works 0.3 s (its first samples build its tables; meanwhile its walks stop
# as no_table), then sleeps PAUSE s, then works SECS s: the counters are read while they sleep
# and after they are gone, the profile covers the same second part, so that each of its samples
# is in both whatever the load (the counters are the drain's copy of its last tick)
PAUSE=3
declare -A MODE_PID
for m in deep norow loop unreadable; do
	"$W/stops" "$m" $SECS $PAUSE &
	PIDS+=($!)
	MODE_PID[$m]=$!
done
sleep 2.2
T0=$(stats "$TMP/s0.json")
for m in deep norow loop unreadable; do wait "${MODE_PID[$m]}"; done
sleep 2.5 # the last samples reach the store and the counters a tick or two later
T1=$(stats "$TMP/s1.json")
curl -sf "$URL/metrics" >"$TMP/metrics.txt"
curl -sf "$URL/api/v1/folded?$(span "$T0" "$T1")" >"$TMP/all.folded"
check "stats and folded profile read" test -s "$TMP/s1.json" -a -s "$TMP/all.folded"

python3 - "$TMP/s0.json" "$TMP/s1.json" "$TMP/metrics.txt" "$TMP/all.folded" \
	"${MODE_PID[deep]}" "${MODE_PID[norow]}" "${MODE_PID[loop]}" "${MODE_PID[unreadable]}" \
	<<'PY'
import json, re, sys
s0 = json.load(open(sys.argv[1]))["sampler"]
s1 = json.load(open(sys.argv[2]))["sampler"]
metrics = open(sys.argv[3]).read()
folded = open(sys.argv[4]).read().splitlines()
fails = 0
def check(name, cond, detail=""):
    global fails
    fails += not cond
    print(("ok - " if cond else "not ok - ") + name + (" # " + detail if detail else ""))

check("user_stops in /api/v1/stats", "user_stops" in s0 and "user_stops" in s1,
      "keys: " + ", ".join(sorted(s1.get("user_stops", {}))))
st0, st1 = s0.get("user_stops", {}), s1.get("user_stops", {})
d = {k: st1.get(k, 0) - st0.get(k, 0) for k in st1}
print("# stops over the window:", json.dumps(d), "user_truncated +%d" %
      (s1["user_truncated"] - s0["user_truncated"]))
# the processes' samples: stacks rooted at the program, by leaf function
samples = {}
trunc = {}
for line in folded:
    stack, _, cnt = line.rpartition(" ")
    fr = stack.split(";")
    if not fr or fr[0] != "stops":
        continue
    leaf = "deep" if any(f.startswith("deep") for f in fr) else fr[-1]
    samples[leaf] = samples.get(leaf, 0) + int(cnt)
    if len(fr) > 1 and fr[1] == "[truncated]":
        trunc[leaf] = trunc.get(leaf, 0) + int(cnt)
    if stack.count("[truncated]") > 1:
        check("one [truncated] frame per stack", False, stack[:200])
print("# samples by leaf:", samples, "rooted at [truncated]:", trunc)
print("# samples +%d, folded %d, age %.2f %.2f" % (s1["samples"] - s0["samples"], sum(int(l.rpartition(" ")[2]) for l in folded), s0["age_s"], s1["age_s"]))
for leaf, reason in (("deep", "depth"), ("norow_spin", "no_row"), ("loop_spin", "loop"),
                     ("unreadable_spin", "unreadable")):
    got = samples.get(leaf, 0)
    check("%s sampled" % leaf, got >= 50, "%d samples" % got)
    # each of its walks stops for its reason (the window starts after its table was built)
    check("%s: %s stops counted" % (leaf, reason), d.get(reason, 0) >= 0.95 * got > 0,
          "%s +%d for %d samples" % (reason, d.get(reason, 0), got))
    check("%s: stacks rooted at [truncated]" % leaf, trunc.get(leaf, 0) >= 0.95 * got > 0,
          "%d of %d" % (trunc.get(leaf, 0), got))
# no reason is left unnamed, and the reasons add up to the truncated walks
check("no stop without a reason", d.get("other", 0) == 0, "other +%d" % d.get("other", 0))
tot = sum(st1.values())
check("reasons add up to user_truncated", abs(tot - s1["user_truncated"]) <= 0.01 * tot + 5,
      "%d vs %d" % (tot, s1["user_truncated"]))
for reason in ("depth", "no_row", "loop", "unreadable", "no_table"):
    m = re.search(r'^ember_user_walk_stops_total\{reason="%s"\} (\S+)$' % reason, metrics, re.M)
    check("/metrics has %s" % reason, m is not None and
          (reason == "no_table" or float(m.group(1)) >= st1.get(reason, 0) > 0),
          m.group(0) if m else "missing")
sys.exit(fails > 0)
PY
[ $? -eq 0 ] || T_FAILS=$((T_FAILS + 1)) # its "not ok" lines are the details
stop_all
done_testing
