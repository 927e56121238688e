#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (light: checks names and walks as shares of a few hundred samples, no time bound)
# emberd resolves a stripped binary through its separate debug file: a copy of the symbols
# workload is stripped (strip --strip-all) after objcopy --only-keep-debug moved its symbols to
# DIR/BINDIR/symbols.debug under the configured debug dir DIR (found through .gnu_debuglink;
# never next to the binary, a place its process may control); its functions appear by name. A
# second stripped copy without a debug file is the control: it shows as [symbols], as perf does,
# and /api/v1/stats says why (symbols.unresolved_files: stripped, what would name it).
. "$(dirname "$0")/../lib.sh"
require_root "BPF and perf_event"
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
[ -r /sys/kernel/btf/vmlinux ] || skip_all "no kernel BTF"
W=$OUTPUT/workloads
[ -x "$W/symbols" ] || skip_all "workloads not built (make workloads)"

trap 'stop_all; [ -n "${KEEP:-}" ] && cp -r "$TMP" "$KEEP"; cleanup_tmp' EXIT

mkdir -p "$TMP/dbg/.debug" "$TMP/nodbg"
cp "$W/symbols" "$TMP/dbg/symbols"
objcopy --only-keep-debug "$TMP/dbg/symbols" "$TMP/dbg/.debug/symbols.debug"
strip --strip-all "$TMP/dbg/symbols"
objcopy --add-gnu-debuglink="$TMP/dbg/.debug/symbols.debug" "$TMP/dbg/symbols"
mkdir -p "$TMP/debugdir$TMP/dbg"
mv "$TMP/dbg/.debug/symbols.debug" "$TMP/debugdir$TMP/dbg/symbols.debug"
cp "$TMP/dbg/symbols" "$TMP/nodbg/symbols"
objcopy --remove-section .gnu_debuglink --remove-section .note.gnu.build-id "$TMP/nodbg/symbols"
check "the copy is stripped" bash -c "! nm '$TMP/dbg/symbols' 2>/dev/null | grep -q symbols_leaf"

PORT=$(free_port)
"$EMBERD" --listen "127.0.0.1:$PORT" --dump-after 6 --dump-root pid --dump-file "$TMP/s.folded" \
	-o symbols.debug_dirs="$TMP/debugdir" \
	>"$TMP/emberd.log" 2>&1 &
EPID=$!
PIDS+=($EPID)
wait_log "$TMP/emberd.log" "started" || { sed 's/^/# /' "$TMP/emberd.log"; not_ok "emberd starts"; done_testing; }
ok "emberd starts"
"$TMP/dbg/symbols" --seconds 4 >"$TMP/dbg.out" &
PIDS+=($!)
"$TMP/nodbg/symbols" --seconds 4 >"$TMP/nodbg.out" &
PIDS+=($!)
P1=${PIDS[1]}
P2=${PIDS[2]}
# why the control's frames stay unresolved: /api/v1/stats names its file, stripped,
# with what would name it; the copy with a debug file is not listed (polled while emberd runs)
python3 - "http://127.0.0.1:$PORT/api/v1/stats" "$TMP/nodbg/symbols" "$TMP/dbg/symbols" >"$TMP/unres.out" <<'PY'
import json, sys, time, urllib.request
files = []
for _ in range(40):
    try:
        files = json.load(urllib.request.urlopen(sys.argv[1], timeout=2))["symbols"]["unresolved_files"]
    except Exception as e:
        print("# %s" % e)
    if any(f["path"] == sys.argv[2] for f in files):
        break
    time.sleep(0.1)
ctl = [f for f in files if f["path"] == sys.argv[2]]
dbg = [f for f in files if f["path"] == sys.argv[3]]
print("# control: %s" % json.dumps(ctl)[:250])
print("control %s" % ("stripped" if ctl and ctl[0]["reason"] == "stripped" and ctl[0]["frame"] == "[symbols]"
                      and "debug symbols" in ctl[0]["hint"] else "missing"))
print("debug %s" % ("listed" if dbg else "absent"))
PY
sed -n 's/^# /# /p' "$TMP/unres.out"
check "control: /api/v1/stats lists its file as stripped, with what would name it" grep -qx "control stripped" "$TMP/unres.out"
check "the copy with a debug file is not listed as unresolved" grep -qx "debug absent" "$TMP/unres.out"
wait "$EPID"
check "emberd exits 0 after --dump-after" test $? -eq 0
grep -E 'warning|error' "$TMP/emberd.log" | sed 's/^/# /'

counts() {
	awk -v p="symbols-$1" '
		{ n = $NF; s = substr($0, 1, length($0) - length($NF) - 1); split(s, f, ";")
		  if (f[1] != p) next
		  tot += n; named += (s ~ /;main;symbols_outer;symbols_leaf$/) * n
		  file += (s ~ /\[symbols\]/) * n }
		END { printf "%d %d %d\n", tot, named, file }' "$TMP/s.folded"
}
read -r TOT NAMED FILE < <(counts "$P1")
echo "# stripped + debug file: $TOT samples, $NAMED main;symbols_outer;symbols_leaf, $FILE [symbols]"
check "stripped binary sampled" test "$TOT" -ge 20
check "stripped binary: >= 80% resolve to main;symbols_outer;symbols_leaf" \
	test $((NAMED * 10)) -ge $((TOT * 8))
check "stripped binary: no [symbols] frames" test "$FILE" -eq 0
read -r TOT NAMED FILE < <(counts "$P2")
echo "# control without debug file: $TOT samples, $NAMED named, $FILE [symbols]"
check "control sampled" test "$TOT" -ge 20
check "control: no names without the debug file" test "$NAMED" -eq 0
check "control: frames show the file as [symbols]" test $((FILE * 10)) -ge $((TOT * 8))
done_testing
