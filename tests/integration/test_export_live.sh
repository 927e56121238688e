#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (checks routes, metrics and a 2 s wait, not shares or CPU)
# emberd's export endpoints live (root, BPF): emberd samples tests/workloads/burn; a blocking
# `?wait=1` capture returns only samples taken during the request, with burn_c under burn_b and
# the pid/comm labels; `go tool pprof -top` reads the URL; /metrics passes `promtool check
# metrics` and reports the sampler's samples, the store and the symbol caches.
. "$(dirname "$0")/../lib.sh"
require_root "BPF sampling"
command -v curl >/dev/null || skip_all "no curl"
BURN=$OUTPUT/workloads/burn
[ -x "$BURN" ] || { not_ok "no $BURN (make workloads)"; done_testing; }
export HOME=${HOME:-/root} GOCACHE=${GOCACHE:-$OUTPUT/go-cache} PPROF_TMPDIR=$TMP/pprof GOFLAGS=
trap 'stop_all; cleanup_tmp' EXIT

"$BURN" 30 >"$TMP/burn.out" &
BPID=$!
PIDS+=($BPID)
emberd_serve --frequency 199 || { not_ok "emberd serves HTTP live"; done_testing; }
sleep 1

# a blocking capture: the request takes the N seconds, and the profile covers exactly them
t0=$(date +%s.%N)
code=$(curl -s -o "$TMP/w.pb.gz" -w '%{http_code}' "$URL/debug/pprof/profile?seconds=2&wait=1&pid=$BPID")
t1=$(date +%s.%N)
check "wait=1: 200" test "$code" = 200
check "wait=1 blocks for the 2 s" awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 2 && b - a < 10) }'
"$EMBER" convert --from pprof "$TMP/w.pb.gz" >"$TMP/w.folded"
check "the capture has main;rounds;burn_c" grep -q ';main;rounds;burn_c ' "$TMP/w.folded"
# 199 Hz for 2 s on one thread: at most ~398 samples (fewer when the machine is busy), while
# the store holds more of burn by now
n=$(awk '{s += $NF} END {print s+0}' "$TMP/w.folded")
all=$(curl -s "$URL/api/v1/folded?pid=$BPID&from=-1h" | awk '{s += $NF} END {print s+0}')
check "samples of the 2 s window only ($n of $all)" test "$n" -gt 0 -a "$n" -le 450 -a "$n" -lt "$all"
# a second blocking capture while one runs is refused
curl -s -o /dev/null "$URL/debug/pprof/profile?seconds=3&wait=1" &
CP=$!
sleep 0.5
code=$(curl -s -o "$TMP/body" -w '%{http_code}' "$URL/debug/pprof/profile?seconds=1&wait=1")
check "a second blocking capture: 429" test "$code" = 429
wait $CP

if command -v go >/dev/null; then
	go tool pprof -raw "$TMP/w.pb.gz" >"$TMP/raw" 2>&1
	check "pprof: period 1e9/199 ns" grep -q '^Period: 5025126$' "$TMP/raw"
	check "pprof: pid label" grep -q "pid:\[$BPID\]" "$TMP/raw"
	check "pprof: comm label" grep -q 'comm:\[burn\]' "$TMP/raw"
	# per-sample pid and tid labels, opt-in, without a pid filter
	curl -s -o "$TMP/l.pb.gz" "$URL/debug/pprof/profile?seconds=5&labels=pid,tid"
	go tool pprof -raw "$TMP/l.pb.gz" >"$TMP/lraw" 2>&1
	check "labels=pid,tid: burn's pid and tid on its samples" \
		grep -q "pid:\[$BPID\].*tid:\[$BPID\]\|tid:\[$BPID\].*pid:\[$BPID\]" "$TMP/lraw"
	"$EMBER" convert --from pprof "$TMP/l.pb.gz" | grep -q ';main;rounds;burn_c ' &&
		ok "labelled profile has burn's stacks" || not_ok "labelled profile has burn's stacks"
	go tool pprof -top "$URL/debug/pprof/profile?seconds=5" >"$TMP/top" 2>&1
	check "go tool pprof -top URL shows burn_c" grep -q 'burn_c' "$TMP/top"
else
	skip "go tool pprof" "no go (make deps installs golang-go)"
fi

curl -s "$URL/metrics" >"$TMP/metrics"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TMP/metrics" >"$TMP/lint" 2>&1
	check "promtool check metrics (live)" test $? -eq 0
	[ -s "$TMP/lint" ] && sed 's/^/# /' "$TMP/lint"
else
	skip "promtool check metrics (live)" "no promtool (make deps installs prometheus)"
fi
metric() { awk -v n="$1" '$1 == n { print $2 }' "$TMP/metrics"; }
check "samples counted" awk -v v="$(metric ember_samples_total)" 'BEGIN { exit !(v > 100) }'
check "store samples and bytes" awk -v s="$(metric ember_store_samples)" -v b="$(metric ember_store_bytes)" \
	'BEGIN { exit !(s > 0 && b > 0) }'
check "samples per CPU" awk '/^ember_cpu_samples_total\{cpu="[0-9]+"\} / { n++; s += $2 } END { exit !(n >= 1 && s > 100) }' "$TMP/metrics"
check "CPUs attached" awk -v v="$(metric ember_sampler_cpus)" 'BEGIN { exit !(v >= 1) }'
# the heap in use: glibc's count (ASan's allocator is not glibc's); the store alone holds more than
# its bytes are
case $EMBERD in
*/asan/*) check "heap gauges reported" grep -q '^ember_heap_in_use_bytes ' "$TMP/metrics" ;;
*) check "heap in use reported, above the store's bytes" awk -v h="$(metric ember_heap_in_use_bytes)" \
	-v b="$(metric ember_store_bytes)" -v f="$(metric ember_heap_free_bytes)" 'BEGIN { exit !(h > b && f != "") }' ;;
esac
check "symbol caches reported" awk -v v="$(metric 'ember_symbol_cache_entries{cache="elf"}')" 'BEGIN { exit !(v >= 1) }'
check "unresolved share reported" grep -q '^ember_unresolved_frames_ratio{kind="user"} ' "$TMP/metrics"
check "blocking capture latency in the histogram" \
	awk '/^ember_http_request_duration_seconds_bucket\{endpoint="\/debug\/pprof\/profile",le="1"\}/ { a = $2 }
		/^ember_http_request_duration_seconds_bucket\{endpoint="\/debug\/pprof\/profile",le="\+Inf"\}/ { b = $2 }
		END { exit !(b > a) }' "$TMP/metrics"
done_testing
