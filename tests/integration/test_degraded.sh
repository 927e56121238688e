#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (light: checks names and walks as shares of a few hundred samples, no time bound)
# Degraded mode: on a kernel without bpf_loop() (< 5.17) emberd samples anyway, with
# the kernel's frame-pointer walk of user stacks, and says so in one log line.
# EMBERD_PRETEND_NO_BPF_LOOP=1 takes that path here: the line is logged once, samples flow,
# tests/workloads/burn (frame pointers) keeps whole stacks (burn_a/b/c under rounds under main),
# tests/workloads/nofp (-O2 without frame pointers) loses its callers (the cost the line states:
# with the walker its stacks reach main), /api/v1/stats says user_walker "frame_pointer" and no
# unwind table is built. Then a plain start: no such line, the walker, the HotSpot step loaded.
# Then EMBERD_PRETEND_HS_REFUSED=1 (the load with the HotSpot step fails as a verifier's refusal
# would): one line, /api/v1/stats hs_walk_refused, the rest loaded (nofp reaches main). ~25 s.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/burn" ] && [ -x "$W/nofp" ] || skip_all "workloads not built (make workloads)"
trap 'stop_all; cleanup_tmp' EXIT
SECS=5
LINE='kernel has no bpf_loop()'

export EMBERD_PRETEND_NO_BPF_LOOP=1
emberd_serve -F 199 || { not_ok "emberd starts without bpf_loop"; done_testing; }
unset EMBERD_PRETEND_NO_BPF_LOOP
ok "emberd starts without bpf_loop"
check "one line says what is missing and what it costs" \
	test "$(grep -c "$LINE" "$TMP/emberd.log")" -eq 1
grep "$LINE" "$TMP/emberd.log" | sed 's/^/# /'
grep -q "frame pointer" "$TMP/emberd.log" && grep -q "lose their callers" "$TMP/emberd.log"
check "... naming the cost" test $? -eq 0
curl -sf "$URL/api/v1/stats" >"$TMP/s0.json"
T0=$(date +%s.%N)
"$W/burn" $SECS >/dev/null &
BPID=$!
PIDS+=($BPID)
"$W/nofp" $SECS >/dev/null &
NPID=$!
PIDS+=($NPID)
sleep $((SECS + 1))
T1=$(date +%s.%N)
sleep 2.5 # samples reach the store a tick or two later
curl -sf "$URL/api/v1/stats" >"$TMP/s1.json"
# by pid: other tests on the host may run their own burn and nofp
curl -sf "$URL/api/v1/folded?from=$T0&to=$T1&pid=$BPID" >"$TMP/fp.folded"
curl -sf "$URL/api/v1/folded?from=$T0&to=$T1&pid=$NPID" >>"$TMP/fp.folded"
check "healthz answers" curl -sf -o /dev/null "$URL/healthz"
python3 - "$TMP/s0.json" "$TMP/s1.json" "$TMP/fp.folded" <<'PY'
import json, sys
s0 = json.load(open(sys.argv[1])).get("sampler", {})
d1 = json.load(open(sys.argv[2]))
s1 = d1["sampler"]
folded = [l.rpartition(" ") for l in open(sys.argv[3]).read().splitlines()]
fails = 0
def check(name, cond, detail=""):
    global fails
    fails += not cond
    print(("ok - " if cond else "not ok - ") + name + (" # " + detail if detail else ""))
check("stats say user_walker frame_pointer", s1.get("user_walker") == "frame_pointer",
      str(s1.get("user_walker")))
user = (s1["samples"] - s1["user_efault"]) - (s0.get("samples", 0) - s0.get("user_efault", 0))
fp = s1["user_fp_walks"] - s0.get("user_fp_walks", 0)
check("user stacks all by frame pointer", user > 0 and fp >= 0.99 * user,
      "%d of %d" % (fp, user))
u = d1.get("unwind", {})
check("no unwind table built", not u.get("builds") and not u.get("tables"), json.dumps(u)[:200])
def prog(comm):
    return [(st.split(";"), int(n)) for st, _, n in folded if st.split(";")[0] == comm]
burn = prog("burn")
bn = sum(n for _, n in burn)
leaves = [(f, n) for f, n in burn if f[-1] in ("burn_a", "burn_b", "burn_c")]
bl = sum(n for _, n in leaves)
chain = sum(n for f, n in leaves if f[-3:-1] == ["main", "rounds"])
check("burn sampled", bn >= 50, "%d samples" % bn)
check("burn_a/b/c under rounds under main (frame pointers)", bl > 0 and chain >= 0.95 * bl,
      "%d of %d" % (chain, bl))
for f, n in sorted(leaves, key=lambda x: -x[1])[:8]:
    if f[-3:-1] != ["main", "rounds"]:
        print("#   %5d %s" % (n, ";".join(f)[:160]))
nofp = prog("nofp")
nn = sum(n for _, n in nofp)
nmain = sum(n for f, n in nofp if "main" in f)
check("nofp sampled", nn >= 30, "%d samples" % nn)
check("nofp loses its callers (no walker)", nn > 0 and nmain <= 0.2 * nn,
      "%d of %d reach main" % (nmain, nn))
sys.exit(fails > 0)
PY
[ $? -eq 0 ] || T_FAILS=$((T_FAILS + 1)) # its "not ok" lines are the details
stop_all
PIDS=()

# the same emberd on the same kernel, without the variable: the walker, and no such line
emberd_serve -F 99 || { not_ok "emberd starts"; done_testing; }
for _ in $(seq 30); do
	curl -sf "$URL/api/v1/stats" >"$TMP/s2.json" && grep -q '"sampler"' "$TMP/s2.json" && break
	sleep 0.2
done
check "without the variable: no such line" test "$(grep -c "$LINE" "$TMP/emberd.log")" -eq 0
check "without the variable: user_walker bpf" grep -q '"user_walker": "bpf"' "$TMP/s2.json"
check "without the variables: hs_walk_refused false, no such line" \
	sh -c "grep -q '\"hs_walk_refused\": false' '$TMP/s2.json' && ! grep -q 'no Java frames: the kernel refused' '$TMP/emberd.log'"
stop_all
PIDS=()

# a kernel whose verifier refuses the HotSpot step (EMBERD_PRETEND_HS_REFUSED=1: the first load
# fails as such a refusal would): one line, the gauge, and the programs without the step, the
# walker included (nofp, without frame pointers, reaches main)
HSLINE='no Java frames: the kernel refused the BPF program with the HotSpot step'
export EMBERD_PRETEND_HS_REFUSED=1
emberd_serve -F 199 || { not_ok "emberd starts when the HotSpot step is refused"; done_testing; }
unset EMBERD_PRETEND_HS_REFUSED
ok "emberd starts when the HotSpot step is refused"
check "one line says so" test "$(grep -c "$HSLINE" "$TMP/emberd.log")" -eq 1
grep "$HSLINE" "$TMP/emberd.log" | sed 's/^/# /'
"$W/nofp" 5 >/dev/null &
NPID=$!
PIDS+=($NPID)
sleep 1 # its table built
T0=$(date +%s.%N)
sleep 4
T1=$(date +%s.%N)
sleep 2.5
curl -sf "$URL/api/v1/stats" >"$TMP/s3.json"
curl -sf "$URL/api/v1/folded?from=$T0&to=$T1&pid=$NPID" >"$TMP/hs.folded"
check "stats say hs_walk_refused true, user_walker bpf" \
	sh -c "grep -q '\"hs_walk_refused\": true' '$TMP/s3.json' && grep -q '\"user_walker\": \"bpf\"' '$TMP/s3.json'"
read -r share total < <(awk '{ n = $NF; t += n; if ($0 ~ /;main;work;/) m += n } END { printf "%.4f %d\n", t ? m / t : 0, t }' "$TMP/hs.folded")
check "... and the walker: nofp's stacks reach main ($share of $total)" \
	awk -v s="$share" -v t="$total" 'BEGIN { exit !(t >= 30 && s >= 0.8) }'
stop_all
PIDS=()
done_testing
