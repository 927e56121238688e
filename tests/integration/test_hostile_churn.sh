#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# an unprivileged user starts thousands of short-lived processes. The unwinder's
# per-process entries must be swept when their processes are gone, whatever notification was
# missed (they were forgotten only on exit/exec notifications: 2035 entries for 70 live
# processes; with unwind.processes=64, every new process walked [truncated];[unknown]). With
# unwind.processes=64 here, after ~3000 processes of nobody's: the list holds what the live
# processes need, the sweep is counted, and a program started afterwards is walked whole
# (tests/workloads/nofp: -O2 -fomit-frame-pointer, so only its unwind tables reach main).
. "$(dirname "$0")/../lib.sh"
require_live_emberd
command -v setpriv >/dev/null || skip_all "no setpriv"
W=$OUTPUT/workloads
for b in spawn shortlived nofp; do [ -x "$W/$b" ] || skip_all "workloads not built (make workloads)"; done
for_nobody spawn shortlived nofp # the checkout may sit where nobody cannot enter
W=$NOBODY_BIN
trap 'stop_all; cleanup_tmp' EXIT

emberd_serve -o unwind.processes=64 || { not_ok "emberd starts"; done_testing; }
ok "emberd starts with unwind.processes=64"

# nobody's churn: 300 processes a second for 10 s, each spinning 1 ms under main (sampled often
# enough at 99 Hz on two CPUs that hundreds of them get an entry)
setpriv --reuid=65534 --regid=65534 --clear-groups "$W/spawn" 300 10 "$W/shortlived" 1 \
	>"$TMP/spawn.out" 2>&1
sed 's/^/# spawn: /' "$TMP/spawn.out"
check "the churn ran (>= 2500 processes started: $(cat "$TMP/spawn.out"))" \
	awk '{ exit !($2 >= 2500) }' "$TMP/spawn.out"
# one sweep period (5 s) and a tick
sleep 6.5
PROCS=$(stat_field unwind.procs)
SWEPT=$(stat_field unwind.procs_swept)
DROPPED=$(stat_field unwind.procs_dropped)
EXITS=$(stat_field processes.exits)
COAL=$(stat_field sampler.procs_coalesced)
LIVE=$(ls -d /proc/[0-9]* | wc -l)
echo "# unwind.procs $PROCS (limit 64), procs_swept $SWEPT, procs_dropped $DROPPED; processes.exits $EXITS, sampler.procs_coalesced $COAL; $LIVE live processes on the host"
# every process's exit is notified (not only a sampled one's) and drops its entries at
# once, or, never sampled and born and gone within one batch of events, the process was
# coalesced: no stage heard of it, nothing to drop (since an exec seeded in BPF waits for the
# next batch, most of them: 2432-2476 of 3000 here, exits 540-577; a fresh-clone run saw exits
# 1465 and failed the exits-only check); the 5 s sweep is the net for a
# lost exit record, and finds nothing left here
check "the gone processes' entries were dropped at their exit, never made, or swept (exits $EXITS + coalesced $COAL >= 2500 or procs_swept $SWEPT > 0)" \
	test $((${EXITS:-0} + ${COAL:-0})) -ge 2500 -o "${SWEPT:-0}" -gt 0
check "the list is not full of gone processes (procs $PROCS < 64)" test "${PROCS:-64}" -lt 64

# a program started after the churn is listed and walked with its tables; at real-time priority
# (as test_python's programs), so that it gets its CPU and its samples on a busy machine too (177
# of the 200 needed once, beside compilers)
T0=$(date +%s.%N)
chrt -f 1 setpriv --reuid=65534 --regid=65534 --clear-groups "$W/nofp" 4 >/dev/null &
NPID=$!
PIDS+=($NPID)
wait $NPID
sleep 1.5
curl -sf "$URL/api/v1/folded?pid=$NPID&from=$T0" >"$TMP/nofp.folded"
curl -sf "$URL/api/v1/samples?pid=$NPID&from=$T0" >"$TMP/nofp.samples"
sort -t' ' -k2 -nr "$TMP/nofp.folded" | head -3 | sed 's/^/#   /'
echo "# the stacks that do not reach main;work:"
grep -v ';main;work;' "$TMP/nofp.folded" | sort -t' ' -k2 -nr | head -5 | sed 's/^/#   /'
# Judged from its first walk whole on: the samples before it were taken before its tables
# existed (a new file's table is built when its first sample reaches the worker: 0.02-0.07 s
# here beside a build, 0.95 s once in CI beside the second lane), which is the worker's
# latency and not what this test is about; a list full of gone processes (the bug) walks
# none of them whole, and then nothing here passes.
read -r TOT FIRST WHOLE AFTER AFTER_MAIN < <(awk -v t0="$T0" '/^#/ || NF < 3 { next }
	{ n = $NF; t = $1 - t0; tot += n; if (first == "") first = t
	  ismain = ($0 ~ /;main;work;/)
	  if (ismain && whole == "") whole = t
	  if (whole != "") { after += n; if (ismain) am += n } }
	END { printf "%d %.3f %.3f %d %d\n", tot, first, (whole == "" ? -1 : whole), after, am }' \
	"$TMP/nofp.samples")
echo "# nofp after the churn: $TOT samples; first at +$FIRST s, first walked whole at +$WHOLE s; $AFTER_MAIN of the $AFTER since reach main;work"
check "nofp was sampled (>= 200 samples: $TOT)" test "$TOT" -ge 200
check "nofp listed and walked whole (a walk through main;work at +$WHOLE s)" \
	test "$WHOLE" != "-1.000"
check "nofp walked whole since (>= 90 % reach main;work: $AFTER_MAIN of $AFTER, >= 150)" \
	test "$AFTER" -ge 150 -a $((AFTER_MAIN * 100)) -ge $((AFTER * 90))
check "emberd still running" kill -0 "$EPID"
done_testing
