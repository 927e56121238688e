#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Attack: readers of /api/v1/samples must not cost the sampler its samples.
# emberd samples at 999 Hz while a burner runs, with the smallest ring buffer of whole samples
# (64 KiB: a few hundred records, well under a second of 999 Hz x 2 CPUs), so that the ring
# overflows as soon as the main loop cannot read it for a fraction of a second, i.e. when it
# waits for the store's lock. Phase 1: 8 s without readers, the baseline of `lost` in
# /api/v1/stats (samples that found the ring full, or could not be stored; `untimed` before
# whole stacks went through the ring, when a full ring cost a sample its time only). Phase 2: 16 s of 12 concurrent readers, each asking for the samples of the
# last 60 s (distinct queries: no shared render). The claim: phase 2 loses no timestamps when the
# baseline lost none (no more than twice its rate otherwise), and /api/v1/stats answers within
# 2 s meanwhile. Before the batched queries the samples were formatted under the store's lock: +439
# untimed in phase 2 against +0 in phase 1 on the 2-CPU test VM.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/burn" ] || skip_all "workloads not built (make workloads)"
. "$(dirname "$0")/faults.sh"
trap 'stop_all; cleanup_tmp' EXIT

"$W/burn" $((${ATTACK_SECONDS:-16} + 30)) 2 >/dev/null &
PIDS+=($!)
# 256 KiB: ~0.8 s of 999 Hz on two CPUs in whole-stack records (~160 bytes a sample; the
# 64 KiB of the 32-byte time records of before held about a second too)
emberd_start -F 999 -o sampling.ringbuf_size=256K || done_testing
sleep 3
u_start=$(stat_json 'd["sampler"]["lost"]')
sleep 8
u_base=$(stat_json 'd["sampler"]["lost"]')
base=$((u_base - u_start))
echo "# phase 1 (no readers, 8 s): lost +$base"

cat >"$TMP/readers.py" <<'PY'
import sys, threading, time, urllib.request
url, n, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
end = time.time() + secs
got = [0] * n
byts = [0] * n
def one(k):
    i = 0
    while time.time() < end:
        i += 1
        # distinct queries: each one is a render of its own (no micro-cache sharing)
        u = "%s/api/v1/samples?from=-60s&to=-%dms" % (url, k * 1000 + i % 1000)
        try:
            with urllib.request.urlopen(u, timeout=30) as r:
                byts[k] += len(r.read())
                got[k] += 1
        except Exception:
            time.sleep(0.05)
ts = [threading.Thread(target=one, args=(k,)) for k in range(n)]
[t.start() for t in ts]; [t.join() for t in ts]
print("responses", sum(got), "bytes", sum(byts))
PY
SECS=${ATTACK_SECONDS:-16} # tests/bench/bench_attack.sh: minutes
python3 "$TMP/readers.py" "$URL" 12 "$SECS" >"$TMP/readers.out" 2>&1 &
RP=$!
PIDS+=($RP)
slow=0
worst=0
for _ in $(seq $((SECS / 2))); do
	sleep 2
	t0=$(date +%s%N)
	curl -sf -m 10 -o /dev/null "$URL/api/v1/stats" || slow=$((slow + 1))
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ $ms -gt $worst ] && worst=$ms
	[ $ms -gt 2000 ] && slow=$((slow + 1))
done
wait $RP
echo "# readers: $(cat "$TMP/readers.out")"
sleep 2.5 # the last drain ticks of the phase
u_end=$(stat_json 'd["sampler"]["lost"]')
lost=$((u_end - u_base))
echo "# phase 2 (12 readers, $SECS s): lost +$lost"
check "the readers got responses ($(cat "$TMP/readers.out"))" grep -Eq 'responses [1-9]' "$TMP/readers.out"
check "/api/v1/stats answered within 2 s during the readers (worst ${worst} ms)" test $slow -eq 0
if [ "$base" -eq 0 ]; then
	check "samples readers cost no samples (lost +$lost with readers, +0 without)" test "$lost" -eq 0
else
	# a noisy machine loses some without readers too: no more than twice the baseline rate
	check "samples readers cost no more samples than the baseline (+$lost in $SECS s vs +$base in 8 s)" \
		test "$lost" -le $((base * SECS / 4))
fi
emberd_stop_check "after the readers"
done_testing
