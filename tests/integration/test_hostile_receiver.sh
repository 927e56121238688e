#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A hostile push receiver, run by nobody, beside a root burner: it answers every OTLP post with
# 413 and a 2 GiB body (then with 200 and a 2 GiB body). emberd reads at most 64 KiB of an answer
# and closes the connection (export.*.bodies_cut), says the drops once per 10 s with their
# counts (not a line per dropped sample), and its export thread stays far from a whole CPU;
# meanwhile the burner's samples arrive on time, /healthz says 200, RSS stays under 512 MB and
# comes back to where it was once the receiver is gone. Before: bodies read to the end (~88 %
# of a CPU), one warning line per dropped sample (559 lines in 30 s). Windows of 10 s and
# 20 s (15 and 30 until 2026-12-01: the suite's 20 minutes).
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/burn" ] || skip_all "workloads not built"
for t in setpriv python3; do command -v $t >/dev/null || skip_all "no $t"; done
. "$(dirname "$0")/faults.sh"
. "$(dirname "$0")/hostile2.sh"
att_dir
trap 'stop_all; rm -rf "$ATT"; cleanup_tmp' EXIT

cp "$(dirname "$0")/export_receiver.py" "$ATT/rx.py"
mkdir "$ATT/rx"
echo ok >"$ATT/rx/mode"
chown -R 65534:65534 "$ATT"
RPORT=$(free_port)
"${AS_NOBODY[@]}" "$PY_NOBODY" "$ATT/rx.py" "$RPORT" "$ATT/rx" &
RX=$!
PIDS+=($RX)
up=0
for _ in $(seq 50); do (echo >/dev/tcp/127.0.0.1/$RPORT) 2>/dev/null && { up=1; break; }; sleep 0.1; done
check "the receiver runs as nobody" test $up = 1

burn_start 120
emberd_serve --frequency 99 -o sampling.tick_ms=250 -o "export.otlp_endpoint=http://127.0.0.1:$RPORT" \
	-o export.otlp_interval=1s -o export.retry_max=2s -o export.timeout=10s ||
	{ not_ok "emberd starts"; done_testing; }
ok "emberd starts"
ex() { stat_json "d['export']['otlp']$1"; }
hz=$(getconf CLK_TCK)
export_ticks() { # CPU ticks of emberd's export thread
	local t
	for t in /proc/$EPID/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = emberd-export ] && awk '{ print $14 + $15 }' "$t/stat"
	done
}
# the baseline: a receiver that behaves, 10 s (the exporter's caches of frame files filled)
sleep 10
mem_base
echo 413huge >"$ATT/rx/mode"
c0=$(export_ticks)
lines0=$(grep -c "export:.*dropped" "$TMP/emberd.log")
watch_start
sleep 20
watch_stop
c1=$(export_ticks)
lines=$(($(grep -c "export:.*dropped" "$TMP/emberd.log") - lines0))
cut=$(ex "['bodies_cut']")
sent=$(awk '{ n += $1 } END { printf "%.0f\n", n }' "$ATT/rx/sent" 2>/dev/null)
dropped=$(ex "['dropped']")
echo "# 413 + 2 GiB bodies, 20 s: bodies_cut $cut, dropped $dropped batches ($(ex "['dropped_samples']") samples)," \
	"$lines log lines, export thread $(((c1 - c0) * 1000 / hz)) ms of CPU, receiver sent $sent bytes"
check "413 + 2 GiB: answers cut after 64 KiB, counted ($cut)" test "$cut" -gt 10
check "413 + 2 GiB: the receiver could send on average <= 16 MiB an answer (socket buffers; $sent bytes in all)" \
	test "$sent" -le $((cut * (16 << 20)))
check "413 + 2 GiB: the messages split down to one Sample are dropped, counted ($dropped)" \
	test "$dropped" -gt 10
check "413 + 2 GiB: drops said once per 10 s ($lines lines for $dropped drops in 20 s)" \
	test "$lines" -ge 1 -a "$lines" -le 3
check "413 + 2 GiB: the export thread used <= 20 % of a CPU ($(((c1 - c0) * 1000 / hz)) ms in 20 s)" \
	test $(((c1 - c0) * 1000 / hz)) -le 4000
bounds_check "413 + 2 GiB"

echo 200huge >"$ATT/rx/mode"
r0=$(ex "['requests']") cut0=$(ex "['bodies_cut']")
sleep 8
check "200 + 2 GiB: requests accepted ($(($(ex "['requests']") - r0))), their bodies cut ($(($(ex "['bodies_cut']") - cut0)))" \
	test "$(ex "['requests']")" -gt "$r0" -a "$(ex "['bodies_cut']")" -gt "$cut0"

kill "$RX"
wait "$RX" 2>/dev/null
mem_back_report "the receiver gone"

emberd_stop_check "after the receiver"
done_testing
