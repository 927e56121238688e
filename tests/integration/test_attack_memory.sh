#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (light: 0.1 CPU, emberd serves a replayed recording; its own latency bounds)
# Attack: responses must be bounded in memory and in CPU whatever the
# clients do. emberd --replay of a generated recording (400,000 samples of 64 deep stacks: the
# samples of its whole span are a ~100 MB response, ~0.5 s of CPU to render):
#   1. 30 slow readers (16 KiB/s each) of that 100 MB response, all at once: they share one
#      rendered body. Bound: RSS grows by at most 128 MiB.
#   2. 40 concurrent renders of distinct 14-23 MB responses, read slowly (1 MiB/s each): bodies
#      beyond http.response_memory (128 MiB here) are refused with 503 + Retry-After. Bound:
#      RSS grows by at most 128 MiB + 64 MiB; every request is answered (200 or 503).
#   3. 300 requests for distinct 100 MB renders, their connections all closed 0.1 s after they
#      were sent. Bound: once they are gone, at most 0.3 s of emberd's CPU (utime + stime from
#      /proc/PID/stat) in the next 5 s; renders of gone clients are counted cancelled. (18 are
#      admitted, 2 running and 16 queued; the first response holds 100 of the 128 MiB, so the
#      next ones stop at ENOBUFS after ~28 MB each and the queue drains in ~0.4 s on this
#      2-CPU machine: closed after 0.5 s, as before, the queue was empty on a faster CI machine
#      and none was counted. Measured here: 17 cancelled at 0.1 s, 7 at 0.3 s, 0-1 at 0.5 s.)
#   4. One 100 MB render whose client goes away a quarter of the way through: it stops. Bound: at most half
#      the CPU of the same render taken to the end (measured just before).
# During 1-3 a prober asks for /healthz every 100 ms on fresh connections: every probe
# answered, median <= 100 ms, max <= 500 ms. Before the response memory budget each connection held a copy of its
# response (1: +2095 MiB), bodies piled up (2: +802 MiB), abandoned requests were rendered
# to the end (3: 2.7-3.8 CPU-s after the clients left; 4: 390 of 610 ms), and /healthz waited
# behind the renders (1: not answered, 2: 3.9 s).
. "$(dirname "$0")/../lib.sh"
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
for t in curl python3; do command -v $t >/dev/null || skip_all "no $t"; done
. "$(dirname "$0")/faults.sh"
trap 'stop_all; cleanup_tmp' EXIT
A="$(dirname "$0")/attack.py"

python3 - "$TMP/big.samples.gz" <<'PY'
import gzip, sys
with gzip.open(sys.argv[1], "wt", compresslevel=1) as f:
    f.write("# ember-samples v1\n")
    stacks = []
    for k in range(64):
        frames = ["app-%d/%d" % (1000 + k % 8, 1000 + k)]
        frames += ["frame_%02d_%s" % (d, "abcdefgh"[(k >> (d % 6)) & 7]) for d in range(18)]
        stacks.append(";".join(frames))
    for i in range(400000):  # 1000 samples a second from t=1000 s to t=1400 s
        f.write("%d.%09d %s 1\n" % (1000 + i // 1000, (i % 1000) * 1000000, stacks[i % 64]))
PY
# options of the bounded build only: the same test runs against an older emberd (and fails on
# its checks, not on an unknown key)
known() { "$EMBERD" --print-config 2>/dev/null | grep -q "^${1%%=*} = " && echo "-o http.$1"; }
PORT=$(free_port)
URL=http://127.0.0.1:$PORT
MALLOC_ARENA_MAX=2 "$EMBERD" --listen "127.0.0.1:$PORT" $(known response_memory=128M) \
	--replay "$TMP/big.samples.gz" >"$TMP/emberd.log" 2>&1 &
EPID=$!
PIDS+=($EPID)
for _ in $(seq 200); do curl -sf -m 1 "$URL/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
check "emberd --replay serves a 400,000-sample recording" curl -sf -m 5 -o /dev/null "$URL/healthz"

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$EPID/stat"; }
# rss_watch FILE: the largest VmRSS (KiB) seen every 0.2 s, until killed
rss_watch() {
	local m=0 r
	while :; do
		r=$(emberd_rss_kb)
		[ "$r" -gt "$m" ] && { m=$r; echo "$m" >"$1"; }
		sleep 0.2
	done
}
probe_check() {
	check "$1: every /healthz probe answered, median <= $MED ms, max <= $MAX ms ($2)" python3 -c '
import sys
med, mx = float(sys.argv[1]), float(sys.argv[2])
f = dict(zip(sys.argv[3::2], sys.argv[4::2]))
assert int(f["probes"]) >= 20 and int(f["failed"]) == 0, f
assert 0 <= float(f["median_ms"]) <= med and float(f["max_ms"]) <= mx, f' $MED $MAX $2
}
# ASan's quarantine keeps freed memory: RSS bounds do not apply; the sanitized build is about 3
# times slower: its time bounds are 3 times looser
case $EMBERD in
*/asan/*) ASAN=1 MED=300 MAX=1500 ;;
*) ASAN=0 MED=100 MAX=500 ;;
esac

# --- 1. 30 slow readers of one 100 MB response ---
curl -s -o /dev/null "$URL/api/v1/samples?from=0&to=1001" # warm up the allocator
sleep 0.5
rss0=$(emberd_rss_kb)
echo "$rss0" >"$TMP/rss1"
rss_watch "$TMP/rss1" &
W=$!
PIDS+=($W)
python3 "$A" probe "$URL" 9 >"$TMP/probe1" &
P=$!
PIDS+=($P)
python3 "$A" slowread "$URL/api/v1/samples?from=0" 30 10 16384 >"$TMP/slow.out"
wait $P
kill $W
rss1=$(cat "$TMP/rss1")
echo "# 30 slow readers: $(cat "$TMP/slow.out"); RSS $rss0 -> max $rss1 KiB"
check "30 slow readers: all got the response (200)" grep -q "statuses {'HTTP/1.1 200': 30}" "$TMP/slow.out"
if [ $ASAN = 0 ]; then
	check "30 slow readers of a 100 MB response: RSS grows by <= 128 MiB (+$(((rss1 - rss0) / 1024)) MiB)" \
		test $((rss1 - rss0)) -le $((128 * 1024))
else
	ok "30 slow readers: RSS not compared under ASan"
fi
probe_check "30 slow readers" "$(cat "$TMP/probe1")"
sleep 1

# --- 2. 40 concurrent renders of distinct 14-23 MB responses, read slowly ---
rss0=$(emberd_rss_kb)
echo "$rss0" >"$TMP/rss2"
rss_watch "$TMP/rss2" &
W=$!
PIDS+=($W)
python3 "$A" probe "$URL" 9 >"$TMP/probe2" &
P=$!
PIDS+=($P)
python3 "$A" concurrent "$URL" 40 '/api/v1/samples?from=10%02d&to=1100' 1048576 10 >"$TMP/conc.out"
wait $P
kill $W
rss2=$(cat "$TMP/rss2")
echo "# 40 concurrent renders: $(cat "$TMP/conc.out"); RSS $rss0 -> max $rss2 KiB"
check "40 concurrent renders: each answered 200 or 503 with Retry-After ($(cat "$TMP/conc.out"))" python3 -c '
import ast, sys
t = open(sys.argv[1]).read().split()
codes, retry = ast.literal_eval(" ".join(t[1:t.index("retry_after")])), int(t[-1])
assert set(codes) <= {"200", "503"} and sum(codes.values()) == 40 and codes.get("200", 0) >= 2, codes
assert retry == codes.get("503", 0), (codes, retry)' "$TMP/conc.out"
if [ $ASAN = 0 ]; then
	check "40 concurrent renders: RSS grows by <= 128 + 64 MiB (+$(((rss2 - rss0) / 1024)) MiB)" \
		test $((rss2 - rss0)) -le $((192 * 1024))
else
	ok "40 concurrent renders: RSS not compared under ASan"
fi
probe_check "40 concurrent renders" "$(cat "$TMP/probe2")"
sleep 1

# --- 3. 300 requests abandoned at once ---
hz=$(getconf CLK_TCK)
c0=$(cpu_ticks)
python3 "$A" probe "$URL" 6 >"$TMP/probe3" &
P=$!
PIDS+=($P)
python3 "$A" abandon "$URL" 300 0.1 '/api/v1/samples?from=0.{k}&to=1399' >"$TMP/abandon.out"
sleep 0.3 # the server sees them go
c1=$(cpu_ticks)
sleep 5
c2=$(cpu_ticks)
wait $P
echo "# 300 abandoned: $(cat "$TMP/abandon.out"); emberd's CPU $(((c1 - c0) * 1000 / hz)) ms" \
	"while they waited, $(((c2 - c1) * 1000 / hz)) ms in the 5 s after they left"
check "300 abandoned requests: <= 0.3 s of emberd's CPU in the 5 s after ($(((c2 - c1) * 1000 / hz)) ms)" \
	test $(((c2 - c1) * 1000 / hz)) -le 300
check "renders of gone clients are counted cancelled" python3 -c '
import json, sys, urllib.request
h = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/stats"))["http"]
print("# http:", {k: h.get(k) for k in ("renders", "renders_cancelled", "rejected", "responses_aborted", "response_bytes_peak")})
assert h["renders_cancelled"] >= 1, h' "$URL"
probe_check "300 abandoned requests" "$(cat "$TMP/probe3")"

# --- 4. one long render abandoned after 150 ms ---
render_cpu() { # render_cpu QUERY HANGUP_S: emberd's CPU (ms) for one request, the client
	local c0 c1
	c0=$(cpu_ticks)
	curl -s -m "$2" -o /dev/null "$URL/api/v1/samples?$1"
	sleep 2
	c1=$(cpu_ticks)
	echo $(((c1 - c0) * 1000 / hz))
}
# emberd's own CPU over the same 2 s with no request (sampling, ticks: 10-20 ms), taken off both
# figures: next to a 90 ms render it was half the margin (fresh-clone run O: 50 ms for <= 45)
idle_cpu() {
	local c0 c1
	c0=$(cpu_ticks)
	sleep 2
	c1=$(cpu_ticks)
	echo $(((c1 - c0) * 1000 / hz))
}
idle=$(idle_cpu)
full=$(($(render_cpu "from=0&to=1399.5" 30) - idle))
# the client leaves an eighth of the way through (the render got cheaper over time: 610 ms of
# CPU before these bounds, 170-180 ms, then 120 ms, then 90 ms, when a fixed 150 ms, then a 30 ms
# floor, outlived or nearly outlived it)
hang=$(awk -v f="$full" 'BEGIN { h = f / 8000; if (h < 0.01) h = 0.01; printf "%.3f", h }')
cut=$(($(render_cpu "from=0&to=1399.6" "$hang") - idle))
echo "# one 100 MB render: $full ms of CPU to the end, $cut ms when its client left after $hang s" \
	"(both less $idle ms of emberd's CPU in 2 s without requests)"
check "a render stops when its client goes: $cut ms of CPU, <= half of $full ms" \
	test $((cut * 2)) -le "$full" -a "$full" -ge 40
emberd_stop_check "after the attacks"
done_testing
