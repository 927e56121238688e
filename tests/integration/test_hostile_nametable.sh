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
# Measured: a renewal takes 0.5-13 ms on the worker (emberd -v logs each). Root, BPF; ~40 s.
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
	-o python.code_memory=64M -o symbols.max_names_memory=4M ||
	{ not_ok "emberd starts"; done_testing; }
ok "emberd starts"
# read without python3 (stat_json's python3 is a CPython program emberd names too)
sym() { curl -sf -m 10 "$URL/api/v1/stats" | grep -o "\"$1\": *[0-9]*" | head -1 | grep -o '[0-9]*$'; }
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
NBMAX=0
FRMAX=0
for _ in $(seq 20); do
	sleep 0.5
	n=$(sym names_bytes)
	[ "${n:-0}" -gt "$NBMAX" ] && NBMAX=$n
	f=$(tables)
	[ "${f:-0}" -gt "$FRMAX" ] && FRMAX=$f
done
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
# the burner is still named (a renewal names every stack again)
curl -sf "$URL/api/v1/folded?from=-3s&pid=$BURN" >"$TMP/burn.folded"
check "the burner's frames named after the renewals ($(grep -c ';burn_c' "$TMP/burn.folded") of $(wc -l <"$TMP/burn.folded") stacks in burn_c)" \
	grep -q ";rounds;burn_c" "$TMP/burn.folded"
emberd_stop_check "after the names"
done_testing
