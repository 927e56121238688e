#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# emberd resolves a stripped binary through its separate debug file: a copy of the symbols
# workload is stripped (strip --strip-all) after objcopy --only-keep-debug moved its symbols to
# DIR/BINDIR/symbols.debug under the configured debug dir DIR (found through .gnu_debuglink;
# never next to the binary, a place its process may control); its functions appear by name. A
# second stripped copy without a debug file is the control: it shows as [symbols], as perf does.
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

"$EMBERD" --listen 127.0.0.1:0 --dump-after 6 --dump-root pid --dump-file "$TMP/s.folded" \
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
