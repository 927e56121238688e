#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# emberd's HTTP server under load while sampling (root): 50 concurrent clients (wrk) fetch the
# flame graph of the last 60 s for DURATION seconds (default 60) while emberd samples every CPU
# and the burn workload runs. Reports failed requests (socket errors + non-2xx), the sampling
# rate during the load against a quiet baseline window of the same daemon (must stay within 1%),
# wrk's latency percentiles, emberd's RSS, and, side by side in the same run, the p50 latency
# against flamegraph.pl rendering the same profile (the reference tool). Prints a Markdown table.
# DISTINCT=1 gives every request its own width parameter, so that emberd's micro-cache (identical
# requests within 1 s share one render) never helps: every request is a full render.
#   DURATION=60 BASELINE=20 CONNECTIONS=50 DISTINCT=0 tests/bench/bench_http.sh
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
EMBERD=${EMBERD:-$OUTPUT/emberd}
FG=${FLAMEGRAPH_DIR:-/opt/FlameGraph}
[ -n "$FG" ] || FG=/opt/FlameGraph
DURATION=${DURATION:-60}
BASELINE=${BASELINE:-20}
CONNECTIONS=${CONNECTIONS:-50}
DISTINCT=${DISTINCT:-0}
[ "$(id -u)" -eq 0 ] || { echo "bench_http: needs root (BPF sampling)" >&2; exit 1; }
command -v wrk >/dev/null || { echo "bench_http: no wrk (apt-get install wrk)" >&2; exit 1; }
TMP=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$port
"$OUTPUT/workloads/burn" $((DURATION + BASELINE + 60)) >/dev/null &
PIDS+=($!)
"$EMBERD" --listen "127.0.0.1:$port" >"$TMP/emberd.log" 2>&1 &
EPID=$!
PIDS+=($EPID)
for _ in $(seq 200); do curl -sf "$URL/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
sampled() { # prints "uptime_s of the counters' copy, sampler.samples"
	curl -s "$URL/api/v1/stats" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["uptime_s"] - d["sampler"]["age_s"], d["sampler"]["samples"])'
}
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$EPID/status"; }
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$EPID/status"; }
sleep 5 # let the store fill a little, and the sampler reach steady state

read -r t0 s0 < <(sampled)
sleep "$BASELINE"
read -r t1 s1 < <(sampled)
rss0=$(rss_kb)
cat >"$TMP/distinct.lua" <<'LUA'
local i = 0
request = function()
	i = i + 1
	return wrk.format("GET", "/api/v1/flamegraph.svg?from=-60s&width=" .. (600 + i % 1000))
end
LUA
wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --timeout 30s --latency \
	$([ "$DISTINCT" = 1 ] && echo "-s $TMP/distinct.lua") \
	"$URL/api/v1/flamegraph.svg?from=-60s" >"$TMP/wrk.txt" 2>&1
read -r t2 s2 < <(sampled)
rss1=$(rss_kb)
hwm=$(hwm_kb)
# a fixed range, so that both sides of the comparison render the same profile
to=$(date +%s)
range="from=$((to - 60))&to=$to"
curl -s "$URL/api/v1/folded?$range" >"$TMP/profile.folded"
stacks=$(wc -l <"$TMP/profile.folded")
svg_bytes=$(curl -s "$URL/api/v1/flamegraph.svg?$range" | wc -c)
stats5xx=$(curl -s "$URL/api/v1/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["http"]["responses_5xx"])')
# the reference, side by side without load: one request to emberd (query + render + send) vs
# flamegraph.pl rendering the same folded profile
ref_ms=NA emb_ms=NA
if [ -f "$FG/flamegraph.pl" ] && command -v hyperfine >/dev/null; then
	# --prepare: past the micro-cache's 1 s, so that each run is a full render
	hyperfine -N --warmup 1 --runs 5 --prepare "sleep 1.1" --export-json "$TMP/hf.json" \
		"curl -s -o /dev/null $URL/api/v1/flamegraph.svg?$range" \
		"perl $FG/flamegraph.pl $TMP/profile.folded" >/dev/null 2>&1
	read -r emb_ms ref_ms < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(" ".join("%.1f" % (x["median"] * 1000) for x in r))' "$TMP/hf.json")
fi
kill "$EPID"; wait "$EPID" 2>/dev/null
erc=$?
cat "$TMP/wrk.txt" | sed 's/^/# /'
python3 - "$TMP/wrk.txt" "$t0" "$s0" "$t1" "$s1" "$t2" "$s2" "$rss0" "$rss1" "$hwm" "$ref_ms" \
	"$stacks" "$svg_bytes" "$stats5xx" "$CONNECTIONS" "$DURATION" "$emb_ms" "$erc" "$DISTINCT" <<'PY'
import re, sys
(wrkf, t0, s0, t1, s1, t2, s2, rss0, rss1, hwm, ref_ms, stacks, svg, s5xx, conns, dur, emb_ms, erc, distinct) = sys.argv[1:]
w = open(wrkf).read()
def ms(v):
    m = re.match(r"([\d.]+)(us|ms|s)", v)
    return float(m.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m.group(2)]
lat = {p: ms(v) for p, v in re.findall(r"^\s+(50|75|90|99)%\s+(\S+)", w, re.M)}
reqs = int(re.search(r"(\d+) requests in", w).group(1))
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", w).group(1))
errs = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", w)
sock = sum(int(x) for x in errs.groups()) if errs else 0
non2xx = int(re.search(r"Non-2xx or 3xx responses: (\d+)", w).group(1)) if "Non-2xx" in w else 0
base = (float(s1) - float(s0)) / (float(t1) - float(t0))
load = (float(s2) - float(s1)) / (float(t2) - float(t1))
change = 100 * (load - base) / base
print()
print("| metric | value |")
print("| --- | --- |")
print(f"| clients, duration | {conns} connections (wrk -t2), {dur} s, GET /api/v1/flamegraph.svg?from=-60s" + ("&width=(600..1599, distinct: no cache hits)" if distinct == "1" else " (identical: the micro-cache shares renders)") + " |")
print(f"| profile served | {stacks} unique stacks, {int(svg)/1024:.0f} KiB SVG |")
print(f"| requests | {reqs} ({rps:.1f}/s) |")
print(f"| failed requests | {sock + non2xx} (socket errors {sock}, non-2xx {non2xx}; emberd 5xx: {s5xx}) |")
print(f"| sampling rate, quiet baseline | {base:.2f} samples/s |")
print(f"| sampling rate under load | {load:.2f} samples/s ({change:+.2f}%) |")
print(f"| latency p50 / p90 / p99 | {lat.get('50', 0):.1f} / {lat.get('90', 0):.1f} / {lat.get('99', 0):.1f} ms |")
print(f"| emberd RSS before / after / peak | {int(rss0)/1024:.1f} / {int(rss1)/1024:.1f} / {int(hwm)/1024:.1f} MiB |")
if ref_ms != "NA":
    print(f"| one flame graph, no load (hyperfine median of 5): emberd request vs flamegraph.pl on the same profile | {float(emb_ms):.1f} ms vs {float(ref_ms):.1f} ms: {float(ref_ms)/float(emb_ms):.1f}x faster |")
print(f"| emberd exit status after SIGTERM | {erc} |")
ok = sock + non2xx == 0 and abs(change) <= 1.0 and erc == "0"
print()
print("PASS" if ok else "FAIL", "- no failed requests and sampling rate within 1%")
sys.exit(0 if ok else 1)
PY
