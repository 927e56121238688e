#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fault injection: perf-map files that are not what they should be. Five jit workloads
# run; their /tmp/perf-PID.map is swapped for a FIFO nobody writes, a symlink to /dev/zero, a
# 100 MB file, a file of garbage with a line cut in half, and a map that a writer keeps growing
# while emberd reads it. emberd must keep sampling and serving (no hang on the FIFO or
# /dev/zero), count every skip by reason in /api/v1/stats and /metrics, still name the JIT
# functions of the maps that are readable, and stop within 2 s on SIGTERM.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/jit" ] || skip_all "workloads not built (make workloads)"

. "$(dirname "$0")/faults.sh"
MAPS=()
trap 'stop_all; rm -f "${MAPS[@]}"; cleanup_tmp' EXIT

# jit workloads; each writes its map, says ready, and runs its JIT code until killed
declare -A JP
for k in fifo zero huge junk grow; do
	"$W/jit" --seconds 30 >"$TMP/jit-$k.out" 2>&1 &
	JP[$k]=$!
	PIDS+=($!)
done
for k in fifo zero huge junk grow; do
	wait_log "$TMP/jit-$k.out" ready || { not_ok "jit $k starts"; done_testing; }
done
map() { echo "/tmp/perf-${JP[$1]}.map"; }
for k in fifo zero huge junk grow; do MAPS+=("$(map $k)"); done
# the maps the workloads wrote hold jit_alpha and jit_beta: keep the text for the junk one
good=$(cat "$(map junk)")
rm -f "$(map fifo)" "$(map zero)" "$(map huge)"
mkfifo "$(map fifo)"
ln -s /dev/zero "$(map zero)"
truncate -s 100M "$(map huge)"
# garbage, then the good lines, then a line cut in the middle (no newline)
{ printf 'garbage\n\x01\x02\x03 binary\nffffffffffffffffffff 10 overflow\n'; echo "$good"
  printf '%s' "7f00dead0000 4"; } >"$(map junk)"
# the growing map: its writer appends lines far from the JIT code as fast as it can
(
	i=0
	while :; do
		printf '%x 10 grow_%d\n' $((0x100000 + i * 16)) "$i"
		i=$((i + 1))
	done >>"$(map grow)"
) &
GROWER=$!
PIDS+=($GROWER)

emberd_start -F 499 || done_testing
sleep 6
check "emberd answers while the bad maps are around (healthz in 2 s)" \
	curl -sf -m 2 -o /dev/null "$URL/healthz"
curl -sf -m 10 "$URL/api/v1/stats" >"$TMP/stats.json"
curl -sf -m 10 "$URL/metrics" >"$TMP/metrics.txt"
curl -sf -m 10 "$URL/api/v1/folded?comm=%5Ejit%24&from=-60s" >"$TMP/jit.folded"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["symbols"]
print("# perfmap_skipped %s, bad_lines %d, loads %d" % (d["perfmap_skipped"], d["perfmap_bad_lines"], d["perfmap_loads"]))' "$TMP/stats.json"
stat() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["symbols"]; print(eval(sys.argv[2]))' "$TMP/stats.json" "$1"; }
check "FIFO and /dev/zero symlink: skipped as not_regular (>= 2)" test "$(stat 'd["perfmap_skipped"]["not_regular"]')" -ge 2
check "100 MB map: skipped as too_big" test "$(stat 'd["perfmap_skipped"]["too_big"]')" -ge 1
check "malformed lines counted" test "$(stat 'd["perfmap_bad_lines"]')" -ge 3
check "/metrics: ember_perfmap_skipped_total{reason=\"not_regular\"} >= 2" \
	awk '$1 == "ember_perfmap_skipped_total{reason=\"not_regular\"}" && $2 >= 2 { f = 1 } END { exit !f }' "$TMP/metrics.txt"
check "/metrics: ember_perfmap_skipped_total{reason=\"too_big\"} >= 1" \
	awk '$1 == "ember_perfmap_skipped_total{reason=\"too_big\"}" && $2 >= 1 { f = 1 } END { exit !f }' "$TMP/metrics.txt"
check "/metrics: ember_perfmap_bad_lines_total >= 3" \
	awk '$1 == "ember_perfmap_bad_lines_total" && $2 >= 3 { f = 1 } END { exit !f }' "$TMP/metrics.txt"
# samples of each jit process are stored, named or not (no sample lost to a bad map)
pidcount() {
	curl -sf -m 10 "$URL/api/v1/folded?pid=$1&from=-60s" |
		awk '{ n += $NF } END { print n + 0 }'
}
for k in fifo zero huge junk grow; do
	check "jit with the $k map: sampled ($(pidcount "${JP[$k]}") samples)" test "$(pidcount "${JP[$k]}")" -ge 20
done
named() { curl -sf -m 10 "$URL/api/v1/folded?pid=$1&from=-60s" | grep -c 'jit_alpha_\[j\]'; }
check "the junk map's good lines still name jit_alpha_[j]" test "$(named "${JP[junk]}")" -ge 1
check "the growing map names jit_alpha_[j]" test "$(named "${JP[grow]}")" -ge 1
check "the FIFO map names nothing (not read)" test "$(named "${JP[fifo]}")" -eq 0
kill "$GROWER" 2>/dev/null
emberd_stop_check "bad perf maps"
done_testing
