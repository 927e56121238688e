#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# emberd's HTTP API live (root, BPF): emberd samples tests/workloads/burn; the folded profile,
# heat map (new columns appear as time passes), samples and stats reflect it; ad hoc captures go
# through their whole life (201 + Location, 409 while running, done, data, pid filter, DELETE,
# the count cap's 429); SIGTERM while requests are in flight ends emberd cleanly.
. "$(dirname "$0")/../lib.sh"
require_root "BPF sampling"
command -v curl >/dev/null || skip_all "no curl"
BURN=$OUTPUT/workloads/burn
[ -x "$BURN" ] || { not_ok "no $BURN (make workloads)"; done_testing; }
trap 'stop_all; cleanup_tmp' EXIT

"$BURN" 40 >"$TMP/burn.out" &
BPID=$!
PIDS+=($BPID)
emberd_serve || { not_ok "emberd serves HTTP live"; done_testing; }
ok "emberd serves HTTP live"
sleep 3

curl -s "$URL/api/v1/folded?comm=%5Eburn%24" >"$TMP/burn.folded"
for f in burn_a burn_b burn_c; do
	check "folded shows main;rounds;$f" grep -q ";main;rounds;$f " "$TMP/burn.folded"
done
check "pid filter keeps only burn" sh -c "curl -s '$URL/api/v1/folded?pid=$BPID' | cut -d';' -f1 | sort -u | grep -qx burn && test \$(curl -s '$URL/api/v1/folded?pid=$BPID' | cut -d';' -f1 | sort -u | wc -l) = 1"
check "kernel=0 has no kernel frames" sh -c "! curl -s '$URL/api/v1/folded?kernel=0' | grep -q '_\[k\]'"
check "flamegraph.svg draws burn_c" sh -c "curl -s '$URL/api/v1/flamegraph.svg?comm=burn' | grep -q burn_c"
cols1=$(curl -s "$URL/api/v1/heatmap" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["columns"]); assert d["total"] > 0')
sleep 2.2
cols2=$(curl -s "$URL/api/v1/heatmap" | python3 -c 'import json,sys; print(json.load(sys.stdin)["columns"])')
check "heat map grows new columns as time passes ($cols1 -> $cols2)" test "$cols2" -gt "$cols1"
check "samples have recent Unix times" sh -c "curl -s '$URL/api/v1/samples?from=-5s&comm=burn' | awk 'NR > 1 { if (\$1 < $(date +%s) - 10) bad = 1; n++ } END { exit !(n > 0 && !bad) }'"
check "stats: live counters" python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/stats"))
assert d["mode"] == "live" and d["store"]["samples"] > 0 and d["store"]["retention_s"] > 0
assert "sampler" in d and d["sampler"]["samples"] > 0 and "lost" in d["sampler"]
assert 0 <= d["symbols"]["unresolved_share"] <= 1' "$URL"
check "live data is not cached" sh -c "curl -s -D - -o /dev/null '$URL/api/v1/folded' | grep -qi '^Cache-Control: no-cache'"

# --- captures ---
gone=4194303
while kill -0 $gone 2>/dev/null; do gone=$((gone - 1)); done
code=$(curl -s -o "$TMP/nopid.json" -w '%{http_code}' -X POST -d "seconds=1&pid=$gone" "$URL/api/v1/captures")
check "a capture of a pid that does not exist is refused: 404 naming pid" \
	bash -c "[ $code = 404 ] && grep -q '\"param\": \"pid\"' '$TMP/nopid.json' && grep -q 'no process $gone' '$TMP/nopid.json'"
code=$(curl -s -o "$TMP/cap.json" -D "$TMP/cap.h" -w '%{http_code}' -X POST -d "seconds=1.5&frequency=199&pid=$BPID" "$URL/api/v1/captures")
check "POST /api/v1/captures is 201" test "$code" = 201
check "201 has a Location" grep -qi '^Location: /api/v1/captures/[0-9]' "$TMP/cap.h"
id=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["state"]=="running" and d["pid"]==int(sys.argv[2]); print(d["id"])' "$TMP/cap.json" "$BPID")
check "capture JSON {id, state: running, pid}" test -n "$id"
check "data of a running capture is 409" test "$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/captures/$id/folded")" = 409
check "the capture is listed" sh -c "curl -s '$URL/api/v1/captures' | grep -q '\"id\": $id'"
state=
for _ in $(seq 60); do
	state=$(curl -s "$URL/api/v1/captures/$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
	[ "$state" = running ] || break
	sleep 0.2
done
check "the capture completes (state $state)" test "$state" = done
curl -s "$URL/api/v1/captures/$id/folded" >"$TMP/cap.folded"
check "capture folded has burn_a" grep -q ';rounds;burn_a ' "$TMP/cap.folded"
check "a pid capture holds only that process" test "$(cut -d';' -f1 "$TMP/cap.folded" | sort -u)" = burn
check "capture flamegraph.svg" sh -c "curl -s '$URL/api/v1/captures/$id/flamegraph.svg' | grep -q burn_a"
check "capture samples" sh -c "curl -s '$URL/api/v1/captures/$id/samples' | head -1 | grep -qx '# ember-samples v1'"
check "capture heatmap" sh -c "curl -s '$URL/api/v1/captures/$id/heatmap' | python3 -c 'import json,sys; assert json.load(sys.stdin)[\"total\"] > 0'"
check "unknown capture view is 404" test "$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/captures/$id/nope")" = 404
check "DELETE a capture" test "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$URL/api/v1/captures/$id")" = 200
check "a deleted capture is 404" test "$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/captures/$id")" = 404
# a capture that gets no sample (a sleeping process) fails, saying why
sleep 60 &
SPID=$!
PIDS+=($SPID)
sid=$(curl -s -X POST -d "seconds=1&pid=$SPID" "$URL/api/v1/captures" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
for _ in $(seq 60); do
	curl -s "$URL/api/v1/captures/$sid" >"$TMP/sleep.json"
	grep -q '"state": "running"' "$TMP/sleep.json" || break
	sleep 0.2
done
check "a capture without samples fails with the reason" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["state"] == "failed" and d["error"].startswith("no samples: pid " + sys.argv[2]), d' "$TMP/sleep.json" "$SPID"
check "seconds over the limit is 413" test "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d 'seconds=1h' "$URL/api/v1/captures")" = 413
check "bad frequency is 400" test "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d 'frequency=0' "$URL/api/v1/captures")" = 400
# the count cap (16): 16 running captures, the 17th is refused
for i in $(seq 16); do curl -s -o /dev/null -X POST -d 'seconds=30' "$URL/api/v1/captures"; done
check "the count cap answers 429 when every capture is running" test "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d 'seconds=1' "$URL/api/v1/captures")" = 429

# --- SIGTERM while requests are in flight ---
CURLS=()
for i in $(seq 8); do curl -s -o /dev/null "$URL/api/v1/flamegraph.svg?from=-1m" & CURLS+=($!); done
kill -TERM "$EPID"
t0=$SECONDS
wait "$EPID"
rc=$?
check "SIGTERM while serving: exit 0 (rc $rc) within 5 s" test $rc -eq 0 -a $((SECONDS - t0)) -le 5
wait "${CURLS[@]}"
check "no sanitizer or crash report in the log" sh -c "! grep -Eq 'AddressSanitizer|runtime error|Segmentation' '$TMP/emberd.log'"
done_testing
