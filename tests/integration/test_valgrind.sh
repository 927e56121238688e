#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (memcheck's errors and leaks only; no time, share or CPU bound)
# emberd under valgrind memcheck: the plain build samples a workload for a few
# seconds and serves every kind of endpoint (folded, samples, flame graph, heat map, pprof,
# metrics, stats, a capture), then stops on SIGTERM. Memcheck must report no error and no
# definitely/indirectly lost block (--error-exitcode, --errors-for-leak-kinds=definite,indirect).
. "$(dirname "$0")/../lib.sh"
require_live_emberd
command -v valgrind >/dev/null || skip_all "no valgrind (apt-get install valgrind)"
W=$OUTPUT/workloads
[ -x "$W/burn" ] || skip_all "workloads not built (make workloads)"
. "$(dirname "$0")/faults.sh"
trap 'stop_all; cleanup_tmp' EXIT
case $EMBERD in */asan/*) skip_all "valgrind needs the plain build, not $EMBERD" ;; esac

"$W/burn" 40 >/dev/null &
PIDS+=($!)
PORT=$(free_port)
URL=http://127.0.0.1:$PORT
valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
	--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
	--track-fds=no --suppressions="$SRCDIR/tests/integration/valgrind.supp" --log-file="$TMP/vg.log" \
	"$EMBERD" --listen "127.0.0.1:$PORT" -F 99 >"$TMP/emberd.log" 2>&1 &
EPID=$!
PIDS+=($EPID)
up=0
for _ in $(seq 600); do
	curl -sf -m 2 "$URL/healthz" >/dev/null 2>&1 && { up=1; break; }
	kill -0 "$EPID" 2>/dev/null || break
	sleep 0.1
done
[ $up = 1 ] || { not_ok "emberd under valgrind serves HTTP"; sed 's/^/# /' "$TMP/emberd.log" "$TMP/vg.log" | tail -40; done_testing; }
ok "emberd under valgrind serves HTTP"
sleep 3
fails=0
for p in "/api/v1/folded?from=-60s" "/api/v1/samples?from=-60s" "/api/v1/flamegraph.svg" \
	"/api/v1/heatmap" "/api/v1/pprof" "/metrics" "/api/v1/stats" "/api/v1/folded?comm=%5Eburn" \
	"/api/v1/nope" "/api/v1/folded?from=garbage"; do
	code=$(curl -s -m 30 -o "$TMP/out" -w '%{http_code}' "$URL$p")
	case $code in 200|400|404) ;; *) echo "# $p: $code"; fails=$((fails + 1)) ;; esac
done
check "every endpoint answers under valgrind" test $fails -eq 0
code=$(curl -s -m 30 -o /dev/null -w '%{http_code}' -X POST -d "seconds=0.5" "$URL/api/v1/captures")
check "a capture is created (201)" test "$code" = 201
sleep 2
kill -TERM "$EPID"
rc=
for _ in $(seq 300); do kill -0 "$EPID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$EPID" 2>/dev/null; then
	kill -9 "$EPID"
	not_ok "emberd under valgrind exits within 30 s of SIGTERM"
else
	wait "$EPID"
	rc=$?
	grep -E 'ERROR SUMMARY|definitely lost|indirectly lost' "$TMP/vg.log" | sed 's/^==[0-9]*== /# /'
	check "memcheck: no errors, no definite or indirect leaks (exit $rc)" test "$rc" -eq 0
	[ "$rc" -eq 0 ] || grep -A12 -E 'Invalid|uninitialised|definitely lost in' "$TMP/vg.log" | head -60 | sed 's/^/# /'
fi
done_testing
