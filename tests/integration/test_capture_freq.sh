#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Ad hoc captures with their own sampler (root, BPF): emberd samples at 99 Hz; a 2 s capture at
# 499 Hz of tests/workloads/burn holds about 5x the samples per second the live store has for
# that pid in the same window; a pid capture holds only that process's stacks while another
# busy process runs; the live sampling rate is unchanged during the captures; a pid-only capture
# (of burn too) runs at the daemon's frequency; frequencies over 999 Hz are capped; deleting a
# running capture and SIGTERM during one are clean. burn is niced up: enough samples when loaded.
. "$(dirname "$0")/../lib.sh"
require_root "BPF sampling"
command -v curl >/dev/null || skip_all "no curl"
BURN=$OUTPUT/workloads/burn
[ -x "$BURN" ] || { not_ok "no $BURN (make workloads)"; done_testing; }
trap 'stop_all; cleanup_tmp' EXIT

emberd_serve -F 99 || { not_ok "emberd serves HTTP live"; done_testing; }
ok "emberd serves HTTP live"
# the workloads once emberd serves (its start-up, slow on a loaded machine, must not eat burn's
# run); burn niced up so that it gets a CPU (enough samples for the ratios) on a loaded machine
nice -n -15 "$BURN" 25 >/dev/null &
BPID=$!
PIDS+=($BPID)
sh -c 'while :; do :; done' &
SPID=$!
PIDS+=($SPID)
sleep 2.5 # live history before the captures

field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=d[sys.argv[2]]; print(str(v).lower() if isinstance(v, bool) else v)' "$@"; }
curl -s -o "$TMP/a.json" -X POST -d "seconds=2&frequency=499&pid=$BPID" "$URL/api/v1/captures"
curl -s -o "$TMP/b.json" -X POST -d "seconds=2&pid=$BPID" "$URL/api/v1/captures"
A=$(field "$TMP/a.json" id)
B=$(field "$TMP/b.json" id)
check "499 Hz capture: frequency 499 applied" test "$(field "$TMP/a.json" frequency) $(field "$TMP/a.json" frequency_applied)" = "499 true"
check "pid-only capture: its own sampler at the daemon's 99 Hz" test "$(field "$TMP/b.json" frequency) $(field "$TMP/b.json" frequency_applied)" = "99 true"
for id in $A $B; do
	for _ in $(seq 50); do
		curl -s -o "$TMP/$id.json" "$URL/api/v1/captures/$id"
		[ "$(field "$TMP/$id.json" state)" = running ] || break
		sleep 0.2
	done
	check "capture $id completes" test "$(field "$TMP/$id.json" state)" = done
done
# the live store lags the captures by a tick or two (each drain takes the previous generation)
sleep 1.5
START=$(field "$TMP/$A.json" start)
END=$(field "$TMP/$A.json" end)
# samples in an ember-samples stream (header skipped)
count() { curl -s "$1" | awk 'NR > 1 { n += $NF } END { print n + 0 }'; }
cap=$(count "$URL/api/v1/captures/$A/samples?from=$START&to=$END")
live=$(count "$URL/api/v1/samples?pid=$BPID&from=$START&to=$END")
echo "# burn samples in [$START, $END): capture $cap at 499 Hz, live store $live at 99 Hz"
check "499 Hz capture has 3.5x-6.5x the live store's samples of that pid ($cap vs $live)" \
	awk -v c="$cap" -v l="$live" 'BEGIN { exit !(l >= 20 && c >= 3.5 * l && c <= 6.5 * l) }'
curl -s "$URL/api/v1/captures/$A/folded" >"$TMP/a.folded"
check "499 Hz capture shows burn's functions" grep -q ';main;rounds;burn_a ' "$TMP/a.folded"
check "pid capture holds only burn's stacks" test "$(cut -d';' -f1 "$TMP/a.folded" | sort -u)" = burn
check "pid capture: every sample is that pid's" test "$(count "$URL/api/v1/captures/$A/samples?pid=$BPID&from=$START&to=$END")" = "$cap"
curl -s "$URL/api/v1/captures/$B/folded" >"$TMP/b.folded"
check "pid-only capture holds only burn's stacks" test "$(cut -d';' -f1 "$TMP/b.folded" | sort -u)" = burn
check "... while the live store has other processes' stacks in that window" sh -c "curl -s '$URL/api/v1/folded?from=$START&to=$END' | cut -d';' -f1 | sort -u | grep -qvx burn"
bcap=$(count "$URL/api/v1/captures/$B/samples?idle=1")
blive=$(count "$URL/api/v1/samples?pid=$BPID&from=$(field "$TMP/$B.json" start)&to=$(field "$TMP/$B.json" end)")
check "pid-only capture at 99 Hz: 0.6x-1.6x the live store's samples ($bcap vs $blive)" \
	awk -v c="$bcap" -v l="$blive" 'BEGIN { exit !(l >= 20 && c >= 0.6 * l && c <= 1.6 * l) }'
# live sampling unchanged: with idle, the store gets 99 Hz x CPUs whatever runs
before=$(count "$URL/api/v1/samples?idle=1&from=$(awk -v s="$START" 'BEGIN { printf "%.3f", s - 2 }')&to=$START")
during=$(count "$URL/api/v1/samples?idle=1&from=$START&to=$END")
check "live sampling unchanged during the captures ($before in the 2 s before, $during during)" \
	awk -v b="$before" -v d="$during" 'BEGIN { exit !(b >= 100 && d >= 0.9 * b && d <= 1.1 * b) }'

# a running capture deleted: its sampler goes, emberd goes on (of the spinning shell: burn may
# have ended on a loaded machine, and a capture of a pid that is gone is refused, 404)
curl -s -o "$TMP/c.json" -X POST -d "seconds=20&frequency=5000&pid=$SPID" "$URL/api/v1/captures"
C=$(field "$TMP/c.json" id)
check "a capture frequency over the cap is applied at 999 Hz" test "$(field "$TMP/c.json" frequency) $(field "$TMP/c.json" frequency_applied)" = "999 true"
sleep 0.5
check "DELETE a running capture" test "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$URL/api/v1/captures/$C")" = 200
check "emberd serves on after the delete" curl -sf -o /dev/null "$URL/api/v1/stats"
# SIGTERM while a capture sampler runs
curl -s -o /dev/null -X POST -d "seconds=20&frequency=499" "$URL/api/v1/captures"
sleep 0.5
kill -TERM "$EPID"
wait "$EPID"
rc=$?
check "SIGTERM during a capture: exit 0 (rc $rc)" test $rc -eq 0
check "no sanitizer or crash report in the log" sh -c "! grep -Eq 'AddressSanitizer|runtime error|Segmentation|failed' '$TMP/emberd.log'"
done_testing
