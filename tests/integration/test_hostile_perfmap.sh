#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Perf maps of long names: nobody runs 12 JIT processes, each perf map grown to 63 MiB by 16,500
# names of 4000 bytes (one file, hard-linked as each process's map), beside a root burner.
# symbols.max_perfmap_memory (32M: entries and names of every perf map together, one process at
# most half) holds them, the rest skipped and counted (symbols.perfmap_skipped.too_big);
# symbols.perfmap_bytes shows the bytes held and falls back to where it was once they exit.
# Before: 247,500 entries, under the 500,000-entry bound, held 1.03 GB.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/burn" ] && [ -x "$W/jit" ] || skip_all "workloads not built"
command -v setpriv >/dev/null || skip_all "no setpriv"
. "$(dirname "$0")/faults.sh"
. "$(dirname "$0")/hostile2.sh"
att_dir
JITS=()
trap 'stop_all; for p in "${JITS[@]}"; do rm -f "/tmp/perf-$p.map"; done; rm -rf "$ATT"; cleanup_tmp' EXIT
cp "$W/jit" "$ATT/jit"
awk 'BEGIN { n = sprintf("%4000s", ""); gsub(/ /, "x", n)
	for (i = 0; i < 16500; i++) printf "%x 10 long_%05d_%s\n", 140000000000000 + i * 16, i, n }' \
	>"$ATT/map"
chown -R 65534:65534 "$ATT"
chmod 644 "$ATT/map"
echo "# the map: $(stat -c %s "$ATT/map") bytes, $(wc -l <"$ATT/map") lines"

burn_start 240
emberd_serve --frequency 99 -o sampling.tick_ms=250 || { not_ok "emberd starts"; done_testing; }
ok "emberd starts"
sym() { stat_json "d['symbols']$1"; }
sleep 5
mem_base
PB0=$(sym "['perfmap_bytes']")
watch_start
for i in $(seq 12); do
	"${AS_NOBODY[@]}" "$ATT/jit" --seconds 25 >"$TMP/jit$i.out" 2>&1 &
	JITS+=($!)
	PIDS+=($!)
done
# written after the JITs began, as an attacker would (a map older than its process is an earlier
# process's, and not read)
"${AS_NOBODY[@]}" touch "$ATT/map"
for i in $(seq 12); do
	wait_log "$TMP/jit$i.out" ready || not_ok "nobody's jit $i starts"
	# nobody's own map, replaced by the long names (its file, in sticky /tmp)
	"${AS_NOBODY[@]}" sh -c 'rm -f "$1" && ln "$2" "$1"' sh "/tmp/perf-${JITS[$((i - 1))]}.map" "$ATT/map"
done
sleep 15
PB=$(sym "['perfmap_bytes']")
SKIP=$(sym "['perfmap_skipped']['too_big']")
MEMB=$(sym "['mem_bytes']")
echo "# 12 perf maps of 63 MiB: perfmap_bytes $PB, perfmap_symbols $(sym "['perfmap_symbols']"), too_big $SKIP, symbols.mem_bytes $MEMB"
check "perf maps held within symbols.max_perfmap_memory (32 MiB: $PB bytes)" test "$PB" -le $((32 << 20))
check "... and some held (the first process's half: $PB bytes)" test "$PB" -ge $((8 << 20))
check "the names past it skipped, counted ($SKIP)" test "$SKIP" -ge 1
# the JITs gone: ended now rather than at their 25 s (what follows is emberd giving back)
kill "${JITS[@]}" 2>/dev/null
for p in "${JITS[@]}"; do wait "$p" 2>/dev/null; done
sleep 3
watch_stop
[ -n "${DEBUG_WATCH:-}" ] && sed 's/^/# watch /' "$TMP/watch"
bounds_check "12 perf maps of 63 MiB"
perfmap_bytes() { sym "['perfmap_bytes']"; }
gauge_back perfmap_bytes "$PB0" 30 2
PB1=$BACK
check "the JITs gone: their perf maps' bytes given back within a minute ($PB0 -> $PB -> $PB1)" \
	test "$PB1" -le $((PB0 + 65536))
mem_back_check "the JITs gone"
emberd_stop_check "after the perf maps"
done_testing
