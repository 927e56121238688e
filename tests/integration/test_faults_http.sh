#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fault injection: HTTP clients and signals that misbehave, against a sampling
# emberd. 40 slow-loris connections trickle their headers a byte at a time while /healthz and
# the API keep answering; idle connections are closed after http.timeout; 9 rounds of 60
# clients hang up after the first bytes of large responses (the heap in use must come back to
# what it was plus what the store and the symbol caches gained; RSS under a ceiling); a storm of
# 50 SIGHUPs (configuration reloads) while requests run; then SIGTERM in the middle of a long
# response and with the slow-loris connections still open: exit 0 within 2 s.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/burn" ] || skip_all "workloads not built (make workloads)"
. "$(dirname "$0")/faults.sh"
trap 'stop_all; cleanup_tmp' EXIT

"$W/burn" 300 2 >/dev/null &
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
# snapshot: HEAP (bytes in use: glibc's mallinfo2) and FREE (freed, kept by malloc), STORE (the
# store's bytes) and SYMS (the symbol caches' bytes) from /api/v1/stats, and RSS (KiB). First the
# micro-cache's entries expire (1 s) and a request drops them, so that it holds what it held before.
snapshot() {
	sleep 1.1
	curl -s -o /dev/null -m 10 "$URL/api/v1/folded?comm=%5Enone%24"
	# SYMS: the symbol caches, and with the heap's accounting (stats' "memory") every part that
	# other processes on the host grow (names, processes, unwind state, Python...), not those
	# a hung-up response would hold (responses, renders, captures)
	read -r HEAP FREE STORE SYMS < <(stat_json '"%d %d %d %d" % (d["heap"]["in_use_bytes"],
		d["heap"]["free_bytes"], d["store"]["bytes"],
		sum(v for k, v in d["memory"]["parts"].items()
		    if k not in ("start", "store", "responses", "renders", "captures"))
		if "memory" in d else d["symbols"]["mem_bytes"])')
	RSS=$(emberd_rss_kb)
}
# a first round: what the first requests allocate for good (metrics' label sets, the symbols of
# python3's libraries) goes into the baseline
python3 "$TMP/hangup.py" "$PORT" 60 2>>"$TMP/hangup.err"
snapshot
H0=$HEAP S0=$STORE Y0=$SYMS
rss=()
for r in 1 2 3 4 5 6 7 8 9; do
	python3 "$TMP/hangup.py" "$PORT" 60 2>>"$TMP/hangup.err"
	sleep 0.3
	rss+=("$(emberd_rss_kb)")
done
echo "# RSS after each round of 60 hang-ups (KiB): ${rss[*]}"
check "hang-ups: emberd alive and answering" curl -sf -m 2 -o /dev/null "$URL/healthz"
# Every hung-up response is freed once its connection closes (after it rendered to the end), so
# the heap in use comes back to the baseline plus what the store and the other parts gained
# (symbols, names, processes...: each bounded by its own limits, grown by the host's other
# processes: a fresh-clone run beside the second lane's tests exceeded the symbols' growth
# alone by 4.7 MiB) plus 6 MiB (seen: 1-2 MiB of in-flight allocations and of the
# caches' estimates). Tried on throwaway builds: a leak of what a hung-up response holds (its
# MHD_Response never destroyed) failed at +1.8 GiB, and a leak of 16 KiB per request at +8.6 MiB
# beyond the growth of store and caches (540 x 16 KiB); a leak of about 12 KiB per request and up
# exceeds the 6 MiB.
# The abandoned responses may still be rendering after the last round: up to 10 looks.
# RSS counts what glibc keeps after free (it grew to 100-160 MiB here without a leak): it has a
# ceiling, and the part of it outside malloc's heap (mappings, thread stacks, BPF buffers:
# 3-10 MiB seen) is held to 32 MiB, which a leak of mmapped memory would pass.
for look in $(seq 10); do
	snapshot
	grow=$((HEAP - H0)) allow=$((STORE - S0 + SYMS - Y0 + (6 << 20)))
	[ $grow -le $allow ] && break
done
outside=$((RSS - (HEAP + FREE) / 1024))
echo "# heap in use $((H0 >> 10)) -> $((HEAP >> 10)) KiB (look $look), store +$(((STORE - S0) >> 10)) KiB, other parts +$(((SYMS - Y0) >> 10)) KiB, heap free $((FREE >> 10)) KiB, RSS $RSS KiB"
case $EMBERD in
*/asan/*) # ASan's allocator is not glibc's, and its quarantine holds freed memory: its leak
	# check at exit is the test here
	ok "hang-ups: heap and RSS not compared under ASan (LeakSanitizer checks at exit)" ;;
*)	check "hang-ups: heap in use back within store and cache growth + 6 MiB after 540 hang-ups (+$((grow >> 10)) KiB, allowed +$((allow >> 10)) KiB)" \
		test $grow -le $allow
	check "hang-ups: RSS under 512 MiB ($RSS KiB)" test "$RSS" -le $((512 << 10))
	check "hang-ups: RSS outside malloc's heap under 32 MiB ($outside KiB)" \
		test $outside -le $((32 << 10)) ;;
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
