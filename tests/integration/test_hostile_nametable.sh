#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: alone (the names' table holds every process's names: its return to the baseline wants no
# other test's processes coming and going meanwhile)
# The frame names' table against a local user making ever-new functions with 4096-character
# names (tests/integration/pynames.py long) for 10 s at 999 Hz, beside a root burner, with
# python.code_memory (64M) far above the names' bound so that the names' own bound is what holds:
#   - symbols.max_names_memory (4M here): the table's bytes (symbols.names_bytes, the heap's
#     "names" part) never past it, the names past it refused and counted
#     (symbols.names_refused); emberd under 512 MB, the burner's samples within 2 s, /healthz 200;
#   - once nobody's process is gone (its code objects dropped 10 s later) the table starts over
#     with the names still in use: its bytes back within 2 MiB of the baseline within a minute
#     (symbols.names_renewals counted);
#   - store.retention is 10 s: once nobody's samples have aged out, the store's own tables
#     (store.bytes less store.sample_bytes) are compacted back near the baseline too, with no
#     memory pressure.
# Before, the table kept every name until restart (no bound, no counter; 1.7 GB in 40 s).
# Measured: a renewal takes 0.5-13 ms on the worker (emberd -v logs each).
# This first part lets one process take the whole table (symbols.max_names_share=100); then, with
# the shipped share (25 %: 1 MiB of the 4 MiB), a second emberd:
#   - nobody's process makes ever-new names again (8 s) and a root witness makes a new function
#     every 0.25 s meanwhile (pynames.py fresh): nobody's process never holds more than its
#     share (processes.names_share_max <= 1 MiB) and fills at least half of it, its names past
#     it refused and counted (processes.names_refused, "[name refused]" in its stacks); the
#     witness's functions are named (>= 90 % of its samples in them). Before (share 100: one
#     process may take the whole table), nobody's process held 1.9-2.2 MiB and nothing was
#     counted; the witness was named then too (the table started over every few seconds and
#     its 20 names got in between): the share's figures are what this part tells apart.
# Root, BPF; ~55 s.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/burn" ] || skip_all "workloads not built"
command -v setpriv >/dev/null || skip_all "no setpriv"
. "$(dirname "$0")/faults.sh"
. "$(dirname "$0")/hostile2.sh"
[ -x "$PY_NOBODY" ] || skip_all "no $PY_NOBODY"
att_dir
trap 'stop_all; rm -rf "$ATT"; cleanup_tmp' EXIT
cp "$(dirname "$0")/pynames.py" "$ATT/pynames.py"
chmod 644 "$ATT/pynames.py"
BOUND=$((4 << 20))

burn_start 240
emberd_serve --frequency 999 -o sampling.tick_ms=250 -o store.retention=10 \
	-o python.code_memory=64M -o symbols.max_names_memory=4M -o symbols.max_names_share=100 ||
	{ not_ok "emberd starts"; done_testing; }
ok "emberd starts"
# read without python3 (stat_json's python3 is a CPython program emberd names too)
sym() { curl -sf -m 10 "$URL/api/v1/stats" | grep -o "\"$1\": *[0-9]*" | head -1 | grep -o '[0-9]*$'; }
# peaks N CMD1 CMD2: every 0.5 s for N times, the largest values CMD1 and CMD2 print (PEAK1, PEAK2)
peaks() {
	local n=$1 a b
	PEAK1=0 PEAK2=0
	for _ in $(seq "$n"); do
		sleep 0.5
		a=$($2)
		b=$($3)
		[ "${a:-0}" -gt "$PEAK1" ] && PEAK1=$a
		[ "${b:-0}" -gt "$PEAK2" ] && PEAK2=$b
	done
}
# the store's interned tables (names, stacks, contexts): its bytes less the sample records'
tables() { curl -sf -m 10 "$URL/api/v1/stats" | tr -d '\n ' | grep -o '"store":{[^}]*' |
	awk -F'[,:]' '{ for (i = 1; i < NF; i++) { if ($i == "\"bytes\"") b = $(i + 1)
		if ($i == "\"sample_bytes\"") s = $(i + 1) } } END { print b - s }'; }

# the baseline with a whole store.retention of the host's samples in the store
sleep 12
NB0=$(sym names_bytes)
FR0=$(tables)
REF0=$(sym names_refused)
REN0=$(sym names_renewals)
[ -n "$NB0" ] && [ -n "$REF0" ] && [ -n "$REN0" ] && [ -n "$FR0" ]
check "the names' table and its counters in the stats (names_bytes $NB0, names_refused $REF0, names_renewals $REN0, store tables $FR0 B)" test $? = 0
watch_start
"${AS_NOBODY[@]}" "$PY_NOBODY" "$ATT/pynames.py" long 10 >"$TMP/long.out" 2>&1 &
LP=$!
PIDS+=($LP)
wait_log "$TMP/long.out" ready || not_ok "nobody's long names start"
peaks 20 "sym names_bytes" tables
NBMAX=$PEAK1 FRMAX=$PEAK2
wait "$LP"
watch_stop
[ -n "${DEBUG_WATCH:-}" ] && sed 's/^/# watch /' "$TMP/watch"
REF=$(($(sym names_refused) - REF0))
echo "# $(tail -1 "$TMP/long.out"); names_bytes $NB0 -> max $NBMAX, names_refused +$REF, renewals +$(($(sym names_renewals) - REN0)), store tables $FR0 -> max $FRMAX B; python: $(curl -sf "$URL/api/v1/stats" | grep -o '"codes_refused": *[0-9]*')"
check "the names' bytes within symbols.max_names_memory ($NB0 -> max $NBMAX, bound $BOUND)" \
	test "$NBMAX" -le "$BOUND" -a "$NBMAX" -gt 0
check "... nobody's names filled it (max at least 3 MiB)" test "$NBMAX" -ge $((3 << 20))
check "the names past it refused, counted (names_refused +$REF)" test "$REF" -ge 100
bounds_check "ever-new 4096-character names"

# after the exit: nobody's code objects go 10 s later, its samples 10 s later
for i in $(seq 60); do
	NB1=$(sym names_bytes)
	NB1=${NB1:-999999999999} # no such gauge: never back
	[ "$NB1" -le $((NB0 + (2 << 20))) ] && break
	sleep 1
done
REN=$(($(sym names_renewals) - REN0))
check "the names' bytes back within 2 MiB of the baseline within a minute of the exit ($NB0 -> $NBMAX -> $NB1 after ${i} s, $REN renewals)" \
	test "$NB1" -le $((NB0 + (2 << 20)))
check "... by renewals of the table (names_renewals +$REN)" test "$REN" -ge 1
# other processes on the host come and go: within a quarter of what the attack added, or 1 MiB
FRBACK=$(((FRMAX - FR0) / 4 > (1 << 20) ? (FRMAX - FR0) / 4 : (1 << 20)))
for i in $(seq 45); do
	FR1=$(tables)
	[ "$FR1" -le $((FR0 + FRBACK)) ] && break
	sleep 1
done
check "the store's tables back near the baseline once nobody's samples aged out ($FR0 -> $FRMAX -> $FR1 B, within $FRBACK)" \
	test "$FR1" -le $((FR0 + FRBACK))
check "... and nobody's names were in them before (max at least 2 MiB above the baseline)" \
	test "$FRMAX" -ge $((FR0 + (2 << 20)))
# the burner is still named (a renewal names every stack again): its last 3 s hold a whole round
# (500 ms, burn_c its last 50 ms) unless emberd or the burner lags: asked again for up to 10 s
# (fresh-clone run ZL4 found 2 stacks in its window, neither in burn_c; not understood)
for _ in $(seq 10); do
	curl -sf "$URL/api/v1/folded?from=-3s&pid=$BURN" >"$TMP/burn.folded"
	grep -q ";rounds;burn_c" "$TMP/burn.folded" && break
	sed 's/^/#   burner, not yet: /' "$TMP/burn.folded" | cut -c1-300
	sleep 1
done
check "the burner's frames named after the renewals ($(grep -c ';burn_c' "$TMP/burn.folded") of $(wc -l <"$TMP/burn.folded") stacks in burn_c)" \
	grep -q ";rounds;burn_c" "$TMP/burn.folded"
emberd_stop_check "after the names"

# --- one process's share ----------------------------------------------------------------------
cp "$(dirname "$0")/pynames.py" "$TMP/pynames.py"
emberd_serve --frequency 999 -o sampling.tick_ms=250 -o python.code_memory=64M \
	-o symbols.max_names_memory=4M || { not_ok "emberd starts (the share)"; done_testing; }
SHARE=$(((4 << 20) / 100 * 25))
proc() { curl -sf -m 10 "$URL/api/v1/stats" | tr -d '\n ' | grep -o '"processes":{[^}]*' |
	grep -o "\"$1\":[0-9]*" | grep -o '[0-9]*$'; }
sleep 2
PR0=$(proc names_refused)
check "the shares' counters in the stats (processes.names_refused $PR0, names_share_max $(proc names_share_max))" \
	test -n "$PR0" -a -n "$(proc names_share_max)"
ecpu() { awk '{ print $14 + $15 }' "/proc/$EPID/stat"; } # emberd's CPU, in ticks
E0=$(ecpu) T0=$(date +%s.%N)
"${AS_NOBODY[@]}" "$PY_NOBODY" "$ATT/pynames.py" long 8 >"$TMP/long2.out" 2>&1 &
LP=$!
PIDS+=($LP)
wait_log "$TMP/long2.out" ready || not_ok "nobody's long names start (the share)"
sleep 1.5 # nobody's share filled (4 MB of names a second)
"$PY_NOBODY" "$TMP/pynames.py" fresh 5 >"$TMP/fresh.out" 2>&1 &
FP=$!
PIDS+=($FP)
peaks 10 "proc names_share_max" "sym names_bytes"
SMAX=$PEAK1 NB2MAX=$PEAK2
wait "$FP"
wait "$LP"
E1=$(ecpu) T1=$(date +%s.%N)
sleep 1 # the last tick drained
PR=$(($(proc names_refused) - PR0))
curl -sf "$URL/api/v1/folded?pid=$FP&from=-20s" >"$TMP/fresh.folded"
curl -sf "$URL/api/v1/folded?pid=$LP&from=-20s" >"$TMP/long2.folded"
read -r WN WR < <(awk '{ if ($0 ~ /w_[0-9][0-9][0-9][0-9][0-9]/) n += $NF
	else if ($0 ~ /\[name refused\]/) r += $NF } END { print n + 0, r + 0 }' "$TMP/fresh.folded")
LR=$(awk '/\[name refused\]/ { r += $NF } END { print r + 0 }' "$TMP/long2.folded")
# (fresh-clone run ZQ1: nobody's process made 4932 names, 19-29k in ten earlier runs, and
# nothing was refused; the witness had 4638 samples, 2860-3469 before: what had the CPU then is
# printed since)
echo "# the share: emberd used $(awk -v a="$E0" -v b="$E1" -v t0="$T0" -v t1="$T1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f s of CPU in %.1f s", (b - a) / hz, t1 - t0 }'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# the share: $(tail -1 "$TMP/long2.out") by nobody, $(tail -1 "$TMP/fresh.out") by the witness; names_share_max max $SMAX (share $SHARE), names_bytes max $NB2MAX, processes.names_refused +$PR; the witness: $WN samples in its functions, $WR in refused names; nobody's: $LR samples in refused names"
awk '{ print $NF "\t" $0 }' "$TMP/fresh.folded" | sort -nr | head -3 | cut -f2 | sed 's/^.*_PyEval_EvalFrameDefault/...;&/' |
	cut -c1-400 | sed 's/^/#   witness: /'
check "the witness's new functions named while nobody makes names ($WN of $((WN + WR)) samples, >= 90 %, >= 500)" \
	test "$WN" -ge 500 -a $((WN * 100)) -ge $(((WN + WR) * 90))
check "nobody's process held at most its share ($SMAX <= $SHARE) and filled it (>= half)" \
	test "$SMAX" -le "$SHARE" -a "$SMAX" -ge $((SHARE / 2))
check "nobody's names past its share refused, counted (processes.names_refused +$PR; $LR of its samples)" \
	test "$PR" -ge 100 -a "$LR" -gt 0
check "the table stayed within its bound ($NB2MAX <= $BOUND)" test "$NB2MAX" -le "$BOUND"
emberd_stop_check "after the share"
done_testing
