#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Attack: floods of connections must not keep the liveness probe away.
# emberd --replay (no root needed), plain HTTP and then TLS; each attack runs 12 s while a
# prober (tests/integration/attack.py) opens a new connection for GET /healthz every 100 ms
# from the same address as the attacker (127.0.0.1), so that per-address limits do not
# separate them:
#   - 2000 idle connections, each opened again as soon as emberd closes it;
#   - 70 slow-loris clients trickling request headers a byte every 0.5 s (reconnecting);
#   - 70 half-open TLS handshakes (a ClientHello's first bytes, then nothing; reconnecting).
# The bound, per attack: every probe answered, median <= 100 ms and max <= 500 ms (the max
# leaves room for a loaded 2-CPU machine's scheduling; measured: medians 1-9 ms, max <= 56 ms).
# /metrics answers during the flood; the connections closed are counted in /api/v1/stats and
# /metrics; one slow-loris connection is closed after http.request_timeout (3 s here) although
# it keeps sending bytes. Before these bounds: the 64 connection slots filled and /healthz went
# unanswered for whole attacks.
. "$(dirname "$0")/../lib.sh"
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
for t in curl python3 openssl; do command -v $t >/dev/null || skip_all "no $t"; done
. "$(dirname "$0")/faults.sh"
trap 'stop_all; cleanup_tmp' EXIT
A="$(dirname "$0")/attack.py"
IN=$TMP/perf.txt
zcat "$SHARED/corpus/examples/example-perf-stacks.txt.gz" >"$IN" || skip_all "no shared corpus"

# options of the bounded build only, so that the same test runs (and fails on its checks, not on
# an unknown key) against an older emberd
known() { "$EMBERD" --print-config 2>/dev/null | grep -q "^${1%%=*} = " && echo "-o http.$1"; }

start() {
	PORT=$(free_port)
	"$EMBERD" --listen "127.0.0.1:$PORT" "$@" --replay "$IN" >"$TMP/emberd.log" 2>&1 &
	EPID=$!
	PIDS+=($EPID)
	for _ in $(seq 100); do
		curl -sfk -m 1 "$SCHEME://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# attack NAME MODE N [CAFILE]: MODE with N connections for $SECS s, probes during all but the
# first and last 2 s (tests/bench/bench_attack.sh runs them for minutes: ATTACK_SECONDS)
SECS=${ATTACK_SECONDS:-12}
attack() {
	local name=$1 mode=$2 n=$3 ca=${4:-} out lines st0
	lines=$(wc -l <"$TMP/emberd.log")
	st0=$(conn_stats)
	python3 "$A" "$mode" 127.0.0.1 "$PORT" "$n" "$SECS" >"$TMP/$mode.out" 2>&1 &
	local ap=$!
	PIDS+=($ap)
	sleep 2
	# the prober at real-time priority (root: chrt -f 1; it sleeps between probes): a liveness
	# probe runs on its own machine (kubelet, a load balancer), not queued behind the attacker's
	# process on the same two CPUs between its connect and its first byte. At nice -5 its
	# ClientHello still came 5 ms after its connect now and then, and a connection that has not
	# said a word is the first emberd closes under a flood from its address (fresh-clone runs K,
	# L, Q: 1 probe in ~77). emberd's bounds and the shared address are unchanged
	out=$(chrt -f 1 python3 "$A" probe "$SCHEME://127.0.0.1:$PORT" $((SECS - 4)) $ca 2>"$TMP/probe.err")
	if [ "$mode" = idle ]; then # the exporter answers during the flood too
		curl -sfk -m 5 -o "$TMP/metrics" -w '%{http_code}' "$SCHEME://127.0.0.1:$PORT/metrics" \
			>"$TMP/metrics.code" 2>/dev/null
	fi
	wait $ap
	echo "# $name: $out; attacker: $(cat "$TMP/$mode.out")"
	# a failed probe: why (the prober's lines), and what emberd said and counted meanwhile (MHD
	# refusing at its own limits logs "reached connection limit"; ours closing counts pressure)
	if ! grep -q ' failed 0 ' <<<"$out"; then
		sed 's/^/#   /' "$TMP/probe.err"
		echo "#   emberd's http connections before: $st0"
		echo "#   and after: $(conn_stats)"
		# every connection MHD takes is counted as accepted: fewer than the clients opened
		# (attacker, prober, and 1-2 of this script's) is MHD refusing at its own limits
		echo "#   accepted during the attack: +$(($(conn_accepted) - $(conn_accepted "$st0"))); opened by the attacker $(awk '{print $2}' "$TMP/$mode.out"), by the prober $(awk '{print $2}' <<<"$out")"
		tail -n +"$((lines + 1))" "$TMP/emberd.log" | grep 'http' | sort | uniq -c | sort -rn | head -8 |
			sed 's/^/#   emberd log: /'
	fi
	check "$name: every /healthz probe answered, median <= $MED ms, max <= $MAX ms ($out)" \
		python3 -c '
import sys
med, mx = float(sys.argv[1]), float(sys.argv[2])
f = dict(zip(sys.argv[3::2], sys.argv[4::2]))
assert int(f["probes"]) >= 20 and int(f["failed"]) == 0, f
assert 0 <= float(f["median_ms"]) <= med and float(f["max_ms"]) <= mx, f' $MED $MAX $out
}
# conn_stats: emberd's connection counters, one line
conn_stats() {
	curl -sfk -m 2 "$SCHEME://127.0.0.1:$PORT/api/v1/stats" | python3 -c '
import json, sys
h = json.load(sys.stdin)["http"]
print({k: h.get(k) for k in ("connections", "connections_accepted", "connections_closed", "rejected")})' 2>/dev/null
}
# conn_accepted [STATS]: connections_accepted of a conn_stats line (default: now)
conn_accepted() {
	python3 -c 'import ast, sys; print(ast.literal_eval(sys.argv[1])["connections_accepted"])' \
		"${1:-$(conn_stats)}" 2>/dev/null || echo 0
}
# the sanitized build (EMBER_ASAN=1) is about 3 times slower: its bounds are 3 times looser
case $EMBERD in
*/asan/*) MED=300 MAX=1500 ;;
*) MED=100 MAX=500 ;;
esac

# --- plain HTTP ---
SCHEME=http
start $(known request_timeout=3) || { not_ok "emberd --replay starts"; done_testing; }
ok "emberd --replay starts"
base=$(python3 "$A" probe "http://127.0.0.1:$PORT" 2)
echo "# baseline: $base"
attack "2000 idle connections (reconnecting)" idle 2000
check "/metrics answered during the idle flood" test "$(cat "$TMP/metrics.code" 2>/dev/null)" = 200
attack "70 slow-loris clients (reconnecting)" loris 70
check "connections closed by emberd are counted in /api/v1/stats" python3 -c '
import json, sys, urllib.request
h = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/stats"))["http"]
print("# http:", {k: h.get(k) for k in ("connections", "connections_accepted", "connections_closed", "rejected")})
assert h["connections_closed"]["pressure"] > 1000, h' "http://127.0.0.1:$PORT"
check "... and in /metrics" sh -c "curl -s 'http://127.0.0.1:$PORT/metrics' |
	grep -Eq '^ember_http_connections_closed_total\{reason=\"pressure\"\} [1-9]'"
# a single slow-loris connection, alone: closed after http.request_timeout (3 s) although it
# sends a byte every 0.5 s (MHD's own timeout only sees inactivity)
check "a slow-loris connection is closed within http.request_timeout + 1 s" python3 - "$PORT" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(0.5)
req, t0, closed = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-a: " + b"b" * 100, time.monotonic(), None
for i in range(len(req)):
    try:
        s.send(req[i:i + 1])
        if s.recv(1) == b"":
            closed = time.monotonic() - t0
            break
    except socket.timeout:
        pass
    except OSError:
        closed = time.monotonic() - t0
        break
    if time.monotonic() - t0 > 8:
        break
print("# slow-loris connection closed after", closed, "s")
assert closed is not None and closed <= 4.0, closed
PY
emberd_stop_check "plain"

# --- TLS ---
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=emberd \
	-addext "subjectAltName=IP:127.0.0.1" -keyout "$TMP/key.pem" -out "$TMP/cert.pem" \
	2>/dev/null || skip_all "openssl cannot make a certificate"
chmod 600 "$TMP/key.pem"
SCHEME=https
start -o http.tls_cert="$TMP/cert.pem" -o http.tls_key="$TMP/key.pem" ||
	{ not_ok "emberd --replay starts with TLS"; done_testing; }
ok "emberd --replay starts with TLS"
attack "TLS: 70 half-open handshakes (reconnecting)" tlshalf 70 "$TMP/cert.pem"
attack "TLS: 2000 idle connections (reconnecting)" idle 2000 "$TMP/cert.pem"
emberd_stop_check "TLS"
done_testing
