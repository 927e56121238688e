#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Liveness that tells the truth: while the drain is held by the test knob
# EMBERD_TEST_PAUSE_DRAIN, /healthz answers 503 with the reason within a few ticks, the stats
# and /metrics say stalled and how long; once resumed, 200 "ok" and fresh samples again. SIGTERM
# during a stall stops emberd within 2 s. A worker blocked in open() of a FIFO a process's mount
# namespace put where its executable was: the drain keeps reading samples, /healthz names the
# stuck worker, and SIGTERM still stops emberd within 2 s.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/burn" ] || skip_all "workloads not built (make workloads)"
. "$(dirname "$0")/faults.sh"
# release_fifo: opens the FIFO for writing, which lets every open() blocked on it (this test's
# emberd's and any other emberd's on the host) return, then ends its process
release_fifo() {
	[ -n "${NSPID:-}" ] || return 0
	timeout 2 sh -c ': >"$1"' sh "/proc/$NSPID/root$TMP/ns/burnfifo" 2>/dev/null
	kill -9 "$NSPID" 2>/dev/null
	wait "$NSPID" 2>/dev/null
	NSPID=
}
trap 'rm -f "$TMP/pause"; release_fifo; stop_all; cleanup_tmp' EXIT

# healthz_code: the HTTP status of /healthz (its body in $TMP/healthz)
healthz_code() { curl -s -m 3 -o "$TMP/healthz" -w '%{http_code}' "$URL/healthz"; }
# wait_healthz CODE TRIES: polls every 0.25 s until /healthz answers CODE; its time in $WAITED
wait_healthz() {
	local i
	for i in $(seq "$2"); do
		[ "$(healthz_code)" = "$1" ] && { WAITED=$(awk -v i="$i" 'BEGIN { print i / 4 }'); return 0; }
		sleep 0.25
	done
	return 1
}
metric() { curl -sf -m 3 "$URL/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }

# --- pause and resume, tick 250 ms (a stall is called after 3 ticks, at least 2 s) ------------
export EMBERD_TEST_PAUSE_DRAIN=$TMP/pause
emberd_start -o sampling.tick_ms=250 || done_testing
"$W/burn" 60 >"$TMP/burn.out" &
PIDS+=($!)
wait_log "$TMP/burn.out" ready
sleep 1
check "healthz 200 ok while draining" sh -c "[ \"\$(curl -s -m 3 -w '%{http_code}' '$URL/healthz')\" = 'ok
200' ]"
check "stats: liveness ok" test "$(stat_json 'd["liveness"]["state"]')" = ok
A=$(stat_json 'd["liveness"]["last_drain_age_s"]')
check "stats: last drain < 2 s ago ($A)" python3 -c "import sys; sys.exit(not 0 <= float(sys.argv[1]) < 2)" "$A"

touch "$TMP/pause"
if wait_healthz 503 40; then
	ok "healthz 503 ${WAITED} s after the pause"
else
	not_ok "healthz 503 within 10 s of the pause (got $(healthz_code): $(cat "$TMP/healthz"))"
fi
echo "# healthz: $(cat "$TMP/healthz")"
check "healthz gives the reason (the drain, the knob)" \
	grep -q 'stalled: the drain has not run for .* paused by EMBERD_TEST_PAUSE_DRAIN' "$TMP/healthz"
check "stats: liveness stalled" test "$(stat_json 'd["liveness"]["state"]')" = stalled
R=$(stat_json 'd["liveness"]["reason"]')
check "stats: reason names the drain ('$R')" sh -c "echo '$R' | grep -q 'drain has not run'"
A=$(metric ember_last_drain_age_seconds)
check "metrics: ember_last_drain_age_seconds >= 2 ($A)" awk -v a="$A" 'BEGIN { exit !(a >= 2) }'
S=$(metric ember_newest_sample_age_seconds)
check "metrics: ember_newest_sample_age_seconds >= 2 ($S)" awk -v a="$S" 'BEGIN { exit !(a >= 2) }'
check "metrics: ember_stalled 1" test "$(metric ember_stalled)" = 1

rm -f "$TMP/pause"
if wait_healthz 200 40; then ok "healthz 200 again ${WAITED} s after resuming"; else
	not_ok "healthz 200 within 10 s of resuming (got $(healthz_code): $(cat "$TMP/healthz"))"; fi
check "stats: liveness ok again" test "$(stat_json 'd["liveness"]["state"]')" = ok
S=$(stat_json 'd["liveness"]["newest_sample_age_s"]')
check "stats: newest sample < 1.5 s old after resuming ($S)" awk -v a="$S" 'BEGIN { exit !(a >= 0 && a < 1.5) }'
# the samples taken during the pause were kept in the ring buffer or counted as lost
LOST=$(stat_json 'd["sampler"]["lost"]')
echo "# samples lost over the pause: $LOST"

# --- SIGTERM during a stall -------------------------------------------------------------------
touch "$TMP/pause"
wait_healthz 503 40 || not_ok "stalled again"
emberd_stop_check "SIGTERM while the drain is paused"
grep -E 'exiting|final drain' "$TMP/emberd.log" | sed 's/^/# /'
rm -f "$TMP/pause"
unset EMBERD_TEST_PAUSE_DRAIN

# --- a stage blocked in open() of a FIFO: sampling goes on, healthz says so, SIGTERM works -----
# A process in its own mount namespace runs burn from a tmpfs, then mounts another tmpfs over it
# with a FIFO of the same name: /proc/PID/root/<its path> is now the FIFO, which blocks an open()
# without O_NONBLOCK for ever (the FIFO attack, made deterministic). Before the worker thread the
# main loop blocked there: no more samples, healthz "ok", SIGTERM ignored.
command -v unshare >/dev/null || { skip "FIFO in a mount namespace" "no unshare"; done_testing; }
emberd_start -o sampling.tick_ms=250 || done_testing
D=$TMP/ns
mkdir -p "$D"
unshare -m --propagation private sh -c '
	mount -t tmpfs none "$1" && cp "$2" "$1/burnfifo" && exec 3<"$1/burnfifo" &&
	mount -t tmpfs none "$1" && mkfifo "$1/burnfifo" && exec /proc/self/fd/3 30' sh "$D" "$W/burn" \
	>"$TMP/nsburn.out" 2>&1 &
NSPID=$!
wait_log "$TMP/nsburn.out" ready
# stuck: 503 once the worker has been in one stage for 10 ticks (at least 5 s)
wait_healthz 503 48
CODE=$(healthz_code)
echo "# with the FIFO: healthz $CODE '$(cat "$TMP/healthz")'"
if [ "$CODE" = 503 ]; then
	check "stuck: healthz names the worker's stage" grep -q "the worker is stuck in '" "$TMP/healthz"
	S0=$(stat_json 'd["sampler"]["samples"]')
	sleep 2
	A=$(stat_json 'd["liveness"]["last_drain_age_s"]')
	S=$(stat_json 'd["liveness"]["newest_sample_age_s"]')
	S1=$(stat_json 'd["sampler"]["samples"]')
	check "stuck worker: the drain keeps reading samples (drain ${A} s ago, newest sample ${S} s old, +$((S1 - S0)) samples in 2 s)" \
		python3 -c "import sys; a, s, n = map(float, sys.argv[1:]); sys.exit(not (a < 1 and s < 1 and n > 0))" "$A" "$S" "$((S1 - S0))"
else
	# a safe opener (O_NONBLOCK, regular files only) does not block: then everything runs
	A=$(stat_json 'd["liveness"]["last_drain_age_s"]')
	check "not blocked: healthz 200 and the drain ran < 2 s ago ($A)" \
		python3 -c "import sys; sys.exit(not float(sys.argv[1]) < 2)" "$A"
fi
emberd_stop_check "SIGTERM while a process's FIFO is in the way"
grep -E 'exiting' "$TMP/emberd.log" | sed 's/^/# /'
if [ "$CODE" = 503 ]; then
	check "the exit says what held it" grep -q "exiting without the final drain" "$TMP/emberd.log"
fi
release_fifo
done_testing
