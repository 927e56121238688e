#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: alone (python.code_bytes counts every CPython process on the host: its return to the
# baseline wants no other test's Python programs meanwhile)
# Python code objects a local user makes, beside a root burner (tests/integration/pynames.py):
#   - reuse: nobody's function whose name nobody rewrites in place every second (gen_00000,
#     gen_00001...): the same code object address and tag with other names, as when a code
#     object is freed and another made where it was with its strings where the old ones were
#     (a loop making and deleting functions reaches that only by chance). Each sample's name is
#     the one it had then (within 0.9 s: names are read when the samples are drained, a tick of
#     250 ms after, and later on a loaded host; and 100 ms between two looks at a cached code
#     object). Before, the first name stayed;
#   - long names: nobody makes ever-new functions with 4096-character names for 10 s at 999 Hz;
#     python.code_memory (8M here; one process at most half) holds them: python.code_bytes
#     within it, the rest refused and counted (python.codes_refused), emberd under 512 MB, the
#     burner's samples within 2 s, the code objects' bytes given back once nobody's process is
#     gone. Before there was no bound: every name was kept (the counter was missing).
# The names interned into the frame names' table are test_hostile_nametable.sh's (the heap is
# reported here, not checked). Root, BPF; ~35 s.
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

burn_start 240
emberd_serve --frequency 999 -o sampling.tick_ms=250 -o store.retention=15 \
	-o python.code_memory=8M || { not_ok "emberd starts"; done_testing; }
ok "emberd starts"
py() { stat_json "d['python']['$1']"; }
# python.code_bytes read without a Python process: stat_json's python3 is a CPython program
# emberd samples too, and its code objects were in the gauge while it ran (135 KiB -> 4.5 MiB ->
# 286 KiB in a fresh-clone run: the reader's own, not the attacker's)
code_bytes() { curl -sf -m 10 "$URL/api/v1/stats" | grep -o '"code_bytes": *[0-9]*' | grep -o '[0-9]*$'; }

# --- reuse ------------------------------------------------------------------------------------
"${AS_NOBODY[@]}" "$PY_NOBODY" "$ATT/pynames.py" reuse 7 >"$TMP/reuse.out" 2>&1 &
RP=$!
PIDS+=($RP)
wait_log "$TMP/reuse.out" ready || not_ok "nobody's reuse starts"
T0=$(date +%s)
wait "$RP"
sleep 1.5
curl -sf "$URL/api/v1/samples?pid=$RP&from=$((T0 - 2))" >"$TMP/reuse.samples"
read -r TOTAL BAD NAMES < <(python3 - "$TMP/reuse.out" "$TMP/reuse.samples" <<'PY'
import re, sys
win = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 3 and p[0].startswith("gen_"):
        win[p[0]] = (float(p[1]), float(p[2]))
total = bad = 0
seen = set()
for line in open(sys.argv[2]):
    if line.startswith("#") or not line.strip():
        continue
    t, rest = line.split(" ", 1)
    stack, count = rest.rsplit(" ", 1)
    m = re.findall(r"(gen_\d{5}) \(", stack)
    if not m:
        continue
    n = int(float(count))
    total += n
    seen.add(m[-1])
    w = win.get(m[-1])
    if not w or not (w[0] - 0.9 <= float(t) <= w[1] + 0.9):
        bad += n
print(total, bad, len(seen))
PY
)
echo "# reuse: $(grep -c '^gen_' "$TMP/reuse.out") functions made, $TOTAL samples in them, $NAMES names seen, $BAD named for another time; codes_renamed $(py codes_renamed)"
check "reuse: samples named in the functions ($TOTAL)" test "${TOTAL:-0}" -ge 200
check "reuse: the functions' own names seen ($NAMES of $(grep -c '^gen_' "$TMP/reuse.out"))" \
	test "${NAMES:-0}" -ge 5
check "reuse: each sample named for the function running then ($BAD of $TOTAL not)" \
	test "${BAD:-1}" = 0
check "reuse: code objects named again counted (codes_renamed $(py codes_renamed))" \
	test "$(py codes_renamed)" -ge 4

# --- long names -------------------------------------------------------------------------------
sleep 1
mem_base
CB0=$(code_bytes)
watch_start
"${AS_NOBODY[@]}" "$PY_NOBODY" "$ATT/pynames.py" long 10 >"$TMP/long.out" 2>&1 &
LP=$!
PIDS+=($LP)
wait_log "$TMP/long.out" ready || not_ok "nobody's long names start"
CBMAX=0
for _ in $(seq 9); do
	sleep 1
	c=$(code_bytes)
	[ "$c" -gt "$CBMAX" ] && CBMAX=$c
done
REF=$(py codes_refused)
wait "$LP"
watch_stop
echo "# long names: $(tail -1 "$TMP/long.out"), code_bytes $CB0 -> max $CBMAX (+$((CBMAX - CB0))), codes_refused $REF, codes $(py codes); memory: $(stat_json "d.get('memory')")"
[ -n "${DEBUG_WATCH:-}" ] && sed 's/^/# watch /' "$TMP/watch"
# python.code_bytes is of every CPython process on the host (other users' come and go): the
# whole bound is checked here, one process's half in tests/unit/test_python.c
check "long names: the code objects' bytes within python.code_memory ($CB0 -> $CBMAX)" \
	test "$CBMAX" -le $((8 << 20))
check "long names: ... nobody's process filled its half (at least 3 MiB)" \
	test $((CBMAX - CB0)) -ge $((3 << 20))
check "long names: the rest refused, counted (codes_refused $REF)" test "${REF:-0}" -ge 100
bounds_check "4096-character Python names"
gauge_back code_bytes "$CB0" 20 1
CB1=$BACK
check "long names: the code objects' bytes given back once the process is gone ($CB0 -> $CBMAX -> $CB1)" \
	test "$CB1" -le $((CB0 + 65536))
echo "# the heap less the store and the file caches: $MEM0 -> $(mem_kb) KiB (not checked here: test_hostile_nametable.sh)"
emberd_stop_check "after the Python names"
done_testing
