#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The cost of [export]: emberd samples a 2-thread burn at FREQ Hz and pushes OTLP
# profiles at the default interval (10 s) to a local receiver (tests/integration/
# export_receiver.py) for SECONDS. Reports the CPU of the exporter's thread ("emberd-export",
# /proc/PID/task/TID/schedstat: store read, identity, encoding, gzip, sending) per exported
# sample, and the bytes on the wire per sample (gzip) against the same window as pprof from
# /debug/pprof/profile (plain, and with labels=pid,tid: per-sample labels, the closest pprof
# gets to OTLP's per-sample thread and timestamp).
# usage: bench_export.sh [SECONDS] [FREQ]   (default 60 999; root)
set -u
: "${OUTPUT:?}"
DUR=${1:-60}
FREQ=${2:-999}
. "$(dirname "$0")/../lib.sh"
require_live_emberd
trap 'stop_all; cleanup_tmp' EXIT
D=$(dirname "$0")/../integration
RPORT=$(free_port)
mkdir -p "$TMP/rx"
python3 "$D/export_receiver.py" "$RPORT" "$TMP/rx" &
PIDS+=($!)
"$OUTPUT/workloads/burn" $((DUR + 30)) 2 >/dev/null &
PIDS+=($!)
emberd_serve --frequency "$FREQ" -o "export.otlp_endpoint=http://127.0.0.1:$RPORT" ||
	{ echo "emberd did not start"; exit 1; }
tid=$(grep -l '^emberd-export$' /proc/$EPID/task/*/comm | head -1 | cut -d/ -f5)
cpu0=$(awk '{ print $1 }' /proc/$EPID/task/$tid/schedstat)
sleep "$DUR"
cpu1=$(awk '{ print $1 }' /proc/$EPID/task/$tid/schedstat)
curl -sf "$URL/api/v1/stats" >"$TMP/stats.json"
read -r n bytes req < <(python3 -c 'import json, sys
e = json.load(open(sys.argv[1]))["export"]["otlp"]
print(e["samples"], e["bytes"], e["requests"])' "$TMP/stats.json")
# the window of what arrived, and pprof of the same window
# (a body the receiver is still writing when this runs does not decode: left out, counted)
partial=0
for f in "$TMP"/rx/*.body; do
	zcat "$f" 2>/dev/null | protoc -I "$SHARED/reference/opentelemetry-proto" --decode \
		opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
		opentelemetry/proto/collector/profiles/v1development/profiles_service.proto \
		>"$f.txt" 2>/dev/null || { rm -f "$f" "$f.txt"; partial=$((partial + 1)); }
done
[ "$partial" = 0 ] || echo "($partial body being written at the end: left out)"
read -r _ m t0 t1 < <(python3 "$D/otlp_check.py" "$TMP/otlp" "$TMP"/rx/*.body.txt)
w="from=$((t0 / 1000000000)).$(printf %09d $((t0 % 1000000000)))&to=$((t1 / 1000000000)).$(printf %09d $((t1 % 1000000000)))"
p1=$(curl -sf "$URL/debug/pprof/profile?$w" | wc -c)
p2=$(curl -sf "$URL/debug/pprof/profile?$w&labels=pid,tid" | wc -c)
wire=$(cat "$TMP"/rx/*.body | wc -c)
awk -v n="$n" -v m="$m" -v c=$((cpu1 - cpu0)) -v b="$wire" -v p1="$p1" -v p2="$p2" -v r="$req" \
	-v f="$FREQ" -v d="$DUR" 'BEGIN {
	printf "export: %d Hz, %d s: %d requests, %d samples (%d in the received bodies)\n", f, d, r, n, m
	printf "export thread CPU: %.2f us per exported sample (%.0f ms in all)\n", c / 1000 / m, c / 1e6
	printf "bytes per sample on the wire: OTLP gzip %.2f, pprof %.2f, pprof labels=pid,tid %.2f\n", b / m, p1 / m, p2 / m
}'
