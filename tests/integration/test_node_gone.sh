#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (names after a stall, not shares or CPU)
# A Node process's last samples keep their JavaScript names when emberd handles them after the
# process is gone: emberd (SIGSTOP) misses the last 2 s of tests/workloads/nodeburn under
# Debian's node and its exit, and is let go 6.5 s later, past its 5 s housekeeping; the V8
# reader must still name the samples taken before the exit (its names kept for samples in
# flight: V8S_GONE) rather than drop the process first and leave them [unknown] (seen as 91
# and 98 unnamed samples of the last two seconds in test_node_versions, fresh-clone run ZD2;
# this stall reproduced it in 1 of 2 manual runs before the fix, 381 of 564 unnamed, and 0 of 2
# runs of this script: whether the 5 s housekeeping or the stalled samples go first at the
# resume is the threads' race, so a build without the fix fails here only sometimes).
. "$(dirname "$0")/../lib.sh"
require_live_emberd
command -v node >/dev/null || skip_all "no node"
W=$SRCDIR/tests/workloads/nodeburn/app.js
trap 'kill -CONT "$EPID" 2>/dev/null; stop_all; cleanup_tmp' EXIT

emberd_serve -F 199 || { not_ok "emberd starts"; done_testing; }
# real-time, as test_node_versions runs it: its last 2 s get their samples beside the other lane
# (ZD4: 192 at nice 0)
command -v chrt >/dev/null || skip_all "no chrt"
chrt -f 1 node "$W" 60 >"$TMP/node.out" 2>&1 &
NP=$!
PIDS+=($NP)
wait_log "$TMP/node.out" ready || { not_ok "node prints ready"; done_testing; }
# named once its binary's facts are read (seconds)
for _ in $(seq 100); do
	curl -sf "$URL/api/v1/folded?pid=$NP&from=-2s" | grep -q '(\(app\.js\|[^;]*mod\.mjs\)\(:[0-9]*\)\?)_\[j\]' && break
	sleep 0.1
done
sleep 2
T0=$(python3 -c 'import time; print("%.3f" % time.time())')
kill -STOP "$EPID"
sleep 2
kill -USR2 "$NP"
for _ in $(seq 100); do grep -q '^done' "$TMP/node.out" && break; sleep 0.05; done
kill "$NP" 2>/dev/null
wait "$NP" 2>/dev/null
sleep 4.5
kill -CONT "$EPID"
sleep 3
curl -sf "$URL/api/v1/folded?pid=$NP&from=$T0" >"$TMP/last.folded"
read -r U N < <(awk '{ n += $NF; if ($0 !~ /(app\.js|mod\.mjs)/) u += $NF } END { print u + 0, n + 0 }' "$TMP/last.folded")
echo "# the samples of the process's last 2 s, handled after its exit: $U of $N unnamed"
check "its last 2 s sampled ($N >= 200 samples at 199 Hz)" test "$N" -ge 200
check "... and named after its exit: <= 5 % unnamed ($U of $N)" \
	awk -v u="$U" -v n="$N" 'BEGIN { exit !(n > 0 && u <= 0.05 * n) }'
curl -sf "$URL/api/v1/stats" >"$TMP/stats.json"
check "the gone process is not counted among the V8 processes" \
	python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["v8"]["procs"] != 0)' "$TMP/stats.json"
done_testing
