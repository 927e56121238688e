#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fault injection (issue 11): HTTP clients and signals that misbehave, against a sampling
# emberd. 40 slow-loris connections trickle their headers a byte at a time while /healthz and
# the API keep answering; idle connections are closed after http.timeout; 3 rounds of 60
# clients hang up after the first bytes of large responses (RSS must not keep growing between
# rounds); a storm of 50 SIGHUPs (configuration reloads) while requests run; then SIGTERM in the
# middle of a long response and with the slow-loris connections still open: exit 0 within 2 s.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/burn" ] || skip_all "workloads not built (make workloads)"
. "$(dirname "$0")/faults.sh"
trap 'stop_all; cleanup_tmp' EXIT

"$W/burn" 60 2 >/dev/null &
PIDS+=($!)
# fewer malloc arenas: RSS follows what is held, not how many threads touched the heap
MALLOC_ARENA_MAX=2 emberd_start -F 999 -o http.timeout=3 || done_testing
sleep 2

# --- slow loris: 40 connections send a header byte every 0.5 s; 10 idle ones send nothing ---
cat >"$TMP/loris.py" <<'PY'
import socket, sys, time
port, n_slow, n_idle, secs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
req = b"GET /api/v1/folded HTTP/1.1\r\nHost: x\r\n" + b"X-a: " + b"b" * 4000
slow = [socket.create_connection(("127.0.0.1", port)) for _ in range(n_slow)]
idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(n_idle)]
end, i = time.time() + secs, 0
while time.time() < end and i < len(req):
    for s in slow:
        try: s.send(req[i:i + 1])
        except OSError: pass
    i += 1
    time.sleep(0.5)
closed = 0
for s in idle:
    s.settimeout(0.2)
    try:
        closed += s.recv(1) == b""
    except socket.timeout: pass
    except OSError: closed += 1
print("idle_closed", closed)
sys.stdout.flush()
time.sleep(3600)
PY
python3 "$TMP/loris.py" "$PORT" 40 10 6 >"$TMP/loris.out" 2>&1 &
LORIS=$!
PIDS+=($LORIS)
sleep 1
ok_n=0
for _ in $(seq 8); do
	curl -sf -m 2 -o /dev/null "$URL/healthz" && ok_n=$((ok_n + 1))
	sleep 0.5
done
check "slow loris: /healthz answered 8/8 times within 2 s ($ok_n)" test $ok_n -eq 8
check "slow loris: the folded profile is served" sh -c "curl -sf -m 5 '$URL/api/v1/folded' | grep -q burn_a"
wait_log "$TMP/loris.out" idle_closed
check "idle connections closed after http.timeout (10/10: $(cat "$TMP/loris.out"))" \
	grep -qx 'idle_closed 10' "$TMP/loris.out"

# --- clients that hang up mid-response ---
cat >"$TMP/hangup.py" <<'PY'
import socket, sys, threading
port, n = int(sys.argv[1]), int(sys.argv[2])
paths = ["/api/v1/samples?from=-60s", "/api/v1/flamegraph.svg", "/api/v1/folded?from=-60s",
         "/metrics", "/api/v1/heatmap", "/api/v1/pprof"]
def one(k):
    s = socket.create_connection(("127.0.0.1", port))
    s.send(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % paths[k % len(paths)]).encode())
    s.recv(64)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    s.close()  # RST with data unread
ts = [threading.Thread(target=one, args=(k,)) for k in range(n)]
[t.start() for t in ts]; [t.join() for t in ts]
PY
rss=()
for r in 1 2 3 4 5 6 7 8 9; do
	python3 "$TMP/hangup.py" "$PORT" 60 2>>"$TMP/hangup.err"
	sleep 0.3
	rss+=("$(emberd_rss_kb)")
done
echo "# RSS after each round of 60 hang-ups (KiB): ${rss[*]}"
check "hang-ups: emberd alive and answering" curl -sf -m 2 -o /dev/null "$URL/healthz"
# a leak of what a hung-up response holds grows with every round; malloc's reuse does not. Under
# load the first rounds may not yet reach every thread's arena peak, so the claim is that growth
# stops: the last three rounds stay within the peak of rounds 4-6 plus 8 MiB (the live store
# keeps growing a little)
peak_of() { local m=0 r; for r in "$@"; do [ "${rss[r]}" -gt $m ] && m=${rss[r]}; done; echo $m; }
mid=$(peak_of 3 4 5)
last=$(peak_of 6 7 8)
case $EMBERD in
*/asan/*) # ASan's quarantine holds freed memory: its leak check at exit is the test here
	ok "hang-ups: RSS not compared under ASan (LeakSanitizer checks at exit)" ;;
*)	check "hang-ups: RSS stops growing (rounds 1-3 peak $(peak_of 0 1 2), 4-6 peak $mid, 7-9 peak $last KiB)" \
		test "$last" -le $((mid + 8192)) ;;
esac

# --- SIGHUP storm while requests run ---
( for _ in $(seq 20); do curl -s -m 5 -o /dev/null "$URL/api/v1/folded"; done ) &
Q=$!
for _ in $(seq 50); do kill -HUP "$EPID"; sleep 0.02; done
wait $Q
sleep 1
check "SIGHUP storm: emberd alive" kill -0 "$EPID"
check "SIGHUP storm: still sampling and serving" sh -c "curl -sf -m 5 '$URL/api/v1/folded?from=-2s' | grep -q burn_a"
check "SIGHUP storm: reloads logged" grep -q "SIGHUP" "$TMP/emberd.log"

# --- SIGTERM in the middle of a long response, slow-loris connections still open ---
python3 - "$PORT" >"$TMP/long.out" 2>&1 <<'PY' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.send(b"GET /api/v1/samples?from=-120s HTTP/1.1\r\nHost: x\r\n\r\n")
s.recv(16)
print("reading", flush=True)
time.sleep(30)  # never reads the rest: the response is stuck in the socket
PY
PIDS+=($!)
wait_log "$TMP/long.out" reading
emberd_stop_check "SIGTERM mid-response"
done_testing
