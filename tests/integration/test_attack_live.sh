#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Attack (HTTP side), against a sampling emberd:
#   - comm= patterns that crashed emberd (glibc regexec's recursion) or grew it to 7 GB: 400
#     naming comm, with the reason, on every route that takes comm;
#   - bad parameters get a 4xx naming the parameter, never a 5xx or a crash: diff.svg with
#     width=1 (was 500), comm=%00 (MHD decodes it and the C string ended there: the filter was
#     silently dropped, 200 with everything), a heat map ending at INT64_MIN ns (signed overflow:
#     UBSan aborted the sanitized build), a flame graph whose minwidth leaves no frame (qsort of
#     NULL: the same);
#   - a capture of seconds=0.1 says 0.1 (it said 1);
#   - SIGTERM while /debug/pprof/profile?seconds=60&wait=1 waits: emberd exits 0 within 2 s (it
#     took the whole 60 s) and the waiting client gets its profile, with the samples until then.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/burn" ] || skip_all "workloads not built (make workloads)"
. "$(dirname "$0")/faults.sh"
trap 'stop_all; cleanup_tmp' EXIT

"$W/burn" 40 1 >/dev/null &
BP=$!
PIDS+=($BP)
emberd_start -F 199 || done_testing
sleep 2

# expect NAME STATUS PARAM URL_SUFFIX: the status, and the JSON error naming PARAM
expect() {
	local code
	code=$(curl -s -m 30 -o "$TMP/body" -w '%{http_code}' "$URL$4")
	check "$1: $2 naming '$3' (got $code: $(head -c 120 "$TMP/body"))" python3 -c '
import json, sys
code, want, param = sys.argv[1:4]
assert code == want, code
assert json.load(open(sys.argv[4])).get("param") == param' "$code" "$2" "$3" "$TMP/body"
}
expect "diff.svg?width=1" 400 width '/api/v1/diff.svg?from=-5s&b_from=-10s&b_to=-5s&width=1'
expect "folded?comm=%00" 400 comm '/api/v1/folded?comm=%00'
# glibc's regexec() recursed ~65k frames deep on this one (SIGSEGV) and grew to 7 GB on the
# second: PCRE2 under limits refuses both with the reason, on every route that takes comm=
for r in folded heatmap samples flamegraph.svg heatmap.svg 'diff.svg?b_from=-10s&b_to=-5s' \
	'compare?b_from=-10s&b_to=-5s' '/debug/pprof/profile?seconds=1'; do
	case $r in /*) path=$r ;; *) path=/api/v1/$r ;; esac
	case $path in *\?*) sep='&' ;; *) sep='?' ;; esac
	expect "$r with comm=(|)(\\1\\1)*" 400 comm "$path${sep}comm=(%7C)(%5C1%5C1)*"
	expect "$r with comm=a{1,32767}{1,32767}" 400 comm "$path${sep}comm=a%7B1,32767%7D%7B1,32767%7D"
done
expect "folded?comm=burn%00x" 400 comm '/api/v1/folded?comm=burn%00x'
# no 5xx, and alive afterwards
for q in '/api/v1/heatmap?to=1677-09-21T00:12:43.145224192Z' \
	'/api/v1/heatmap.svg?from=-9223372036s&to=1677-09-21T00:12:43.145224192Z' \
	'/api/v1/flamegraph.svg?minwidth=1000000000000' \
	'/api/v1/diff.svg?b_from=-10s&b_to=now&minwidth=1000000000000'; do
	code=$(curl -s -m 30 -o /dev/null -w '%{http_code}' "$URL$q")
	check "$q: no 5xx ($code), emberd alive" sh -c \
		"test '$code' -ge 200 -a '$code' -lt 500 && curl -sf -m 5 -o /dev/null '$URL/healthz'"
done
check "a capture of seconds=0.1 says seconds 0.1" python3 -c '
import json, sys, urllib.request
r = urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/api/v1/captures",
                                                  data=b"seconds=0.1", method="POST"))
c = json.load(r)
print("# capture:", {k: c.get(k) for k in ("id", "seconds", "start", "end")})
assert r.status == 201 and c["seconds"] == 0.1, c' "$URL"

# --- SIGTERM while a blocking profile waits ---
curl -s -m 70 -o "$TMP/w.pb.gz" -w '%{http_code}' "$URL/debug/pprof/profile?seconds=60&wait=1" \
	>"$TMP/w.code" &
CP=$!
PIDS+=($CP)
sleep 3
emberd_stop_check "SIGTERM during /debug/pprof/profile?seconds=60&wait=1"
wait $CP
check "the waiting client got its profile (HTTP $(cat "$TMP/w.code"))" test "$(cat "$TMP/w.code")" = 200
n=$("$EMBER" convert --from pprof "$TMP/w.pb.gz" 2>/dev/null | awk '{ s += $NF } END { print s + 0 }')
check "... with the samples of its 3 s ($n)" test "$n" -gt 0
done_testing
