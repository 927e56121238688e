#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Memory and I/O events, with a live emberd and [pagefault], [vmgrow], [blockio], [malloc] on
# (tests/workloads/memio: pairs of functions with known splits, each run as its own process):
#   - event=pagefault: fault_a/fault_b touch new pages 70/30: their shares within 5 points, the
#     root frame "[page fault]"; the process's recorded pages (quanta x period) within 15 % of
#     the pages it touched, while a storm process (faulting as fast as it can) beside it spends
#     its own budget (max_rate): the storm's records bounded by max_rate x seconds, its excess
#     counted (memio.throttled in /api/v1/stats, ember_memio_throttled_total in /metrics);
#   - event=vmgrow: grow_a/grow_b mmap 60/40 in bytes: within 5 points, under "[mmap]";
#   - event=malloc: alloc_a/alloc_b malloc 80/20 bytes (the uprobe on libc's malloc, comm memio):
#     within 5 points, under "[malloc]";
#   - event=blockio: write_a/write_b write 60/40 bytes with O_DIRECT: within 5 points, under
#     "[write]"; weight=latency gives the same stacks in nanoseconds; a buffered writer's 32 MiB
#     (a new file, no fsync, then sync) shows >= 80 % under "[writeback]" (a kernel thread's
#     stack: wb_workfn) and <= 10 % under the writer; that file read back with its pages
#     dropped: >= 80 % of its 32 MiB under "[read-ahead]";
#   - the heat map of page faults adds up to the flame graph's total; pprof carries each kind's
#     own type and unit (page_faults/pages, vm_growth/bytes, block_io_latency/nanoseconds,
#     malloc/bytes); a capture with event=pagefault holds the faults of its window;
#   - [pmc] enabled on a VM without a PMU: emberd starts, says why in its log, and event=cycles
#     answers 409 with the hardware counter probe's reason;
#     weight=latency without event=blockio and event=bogus are 400s; a daemon without the
#     sections answers event=pagefault with 409 "page faults need [pagefault] enabled".
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads/memio
[ -x "$W" ] || skip_all "workloads not built (make workloads)"
trap 'stop_all; cleanup_tmp' EXIT

# O_DIRECT needs a block device's file system, not tmpfs
DIR=$TMP
[ "$(stat -f -c %T "$DIR")" = tmpfs ] && DIR=$(mktemp -d "$OUTPUT/memio.XXXXXX") && trap 'stop_all; cleanup_tmp; rm -rf "$DIR"' EXIT

# wait_stored: until the store holds a sample taken more than a tick after now (the batch that
# held the workloads' records is done)
wait_stored() {
	local i n t
	t=$(awk -v t="$(date +%s.%N)" 'BEGIN { printf "%.9f", t + 1.2 }')
	for i in $(seq 60); do
		n=$(curl -sf "$URL/api/v1/stats" | grep -o '"newest": [0-9.]*' | head -1 | awk '{ print $2 }')
		awk -v n="${n:-0}" -v t="$t" 'BEGIN { exit !(n > t) }' && return 0
		sleep 0.5
	done
	echo "# the store's newest sample is still before $t after 30 s"
}
# share FOLDED A B: "a b pct" of the counts of stacks through A and through B
share() {
	awk -v A="$2" -v B="$3" '{ n = $NF; if ($0 ~ ";" A ";") a += n; else if ($0 ~ ";" B ";") b += n }
		END { printf "%d %d %.2f\n", a, b, a + b ? 100 * a / (a + b) : 0 }' "$1"
}
within() { awk -v x="$1" -v want="$2" -v pp="$3" 'BEGIN { d = x - want; if (d < 0) d = -d; exit !(d <= pp) }'; }
stat_of() { # stat_of KEY KIND: memio.KEY.KIND in /api/v1/stats
	curl -sf "$URL/api/v1/stats" | python3 -c 'import json, sys
d = json.load(sys.stdin)["memio"]; print(d[sys.argv[1]][sys.argv[2]])' "$1" "$2"
}

PERIOD=4
RATE=3000
cat >"$TMP/memio.conf" <<EOF
[pagefault]
enabled = yes
period = $PERIOD
max_rate = $RATE
[vmgrow]
enabled = yes
max_rate = 0
[blockio]
enabled = yes
max_rate = 0
[malloc]
enabled = yes
comm = memio
interval = 65536
max_rate = 0
[pmc]
enabled = yes
EOF
# an OTLP receiver: the kinds are pushed with their own period type
RPORT=$(free_port)
RX=$TMP/rx
mkdir -p "$RX"
python3 "$(dirname "$0")/export_receiver.py" "$RPORT" "$RX" &
PIDS+=($!)
for _ in $(seq 50); do (echo >/dev/tcp/127.0.0.1/$RPORT) 2>/dev/null && break; sleep 0.1; done
emberd_serve --config "$TMP/memio.conf" -o "export.otlp_endpoint=http://127.0.0.1:$RPORT" \
	-o export.otlp_interval=2s || { not_ok "emberd with the memory and I/O sections starts"; done_testing; }
ok "emberd with the memory and I/O sections starts"
sleep 1

# --- page faults, beside a storm ---
"$W" pagefault 5 >"$TMP/pf.out" &
PF=$!
"$W" storm 5 >"$TMP/storm.out" &
ST=$!
T0=$(date +%s.%N)
wait "$PF" "$ST"
T1=$(date +%s.%N)
wait_stored
curl -sf "$URL/api/v1/folded?event=pagefault&pid=$PF&from=-60s" >"$TMP/pf.folded"
read -r A B PCT < <(share "$TMP/pf.folded" fault_a fault_b)
echo "# page faults: fault_a $A, fault_b $B quanta: $PCT % (want 70)"
check "event=pagefault: fault_a/fault_b 70/30 within 5 points" within "$PCT" 70 5
check "event=pagefault: the root frame is [page fault]" grep -q '^memio;\[page fault\];' "$TMP/pf.folded"
read -r _ _ PA PB <"$TMP/pf.out"
TOT=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/pf.folded")
echo "# page faults of the paced process: $((TOT * PERIOD)) pages recorded, $((PA + PB)) touched"
check "... its recorded pages within 15 % of those it touched, beside the storm" \
	awk -v r="$((TOT * PERIOD))" -v t="$((PA + PB))" 'BEGIN { exit !(r >= 0.85 * t && r <= 1.15 * t + 2000) }'
SR=$(curl -sf "$URL/api/v1/folded?event=pagefault&pid=$ST&from=-60s" | awk '{ s += $NF } END { print s + 0 }')
read -r _ _ STOUCH _ <"$TMP/storm.out"
THR=$(stat_of throttled pagefault)
SECS=$(awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%d", b - a + 1.999 }')
echo "# storm: $STOUCH pages touched, $SR records stored (max_rate $RATE x $SECS s), $THR throttled"
check "a page-fault storm is bounded by its own max_rate" test "$SR" -le $((RATE * SECS)) -a "$SR" -gt 0
check "... its excess counted (memio.throttled.pagefault)" test "$THR" -gt 0
check "... and in /metrics" bash -c "curl -sf '$URL/metrics' | grep -q '^ember_memio_throttled_total{kind=\"pagefault\"} [1-9]'"

# heat map and pprof of page faults
HT=$(curl -sf "$URL/api/v1/heatmap?event=pagefault&pid=$PF&from=-60s" | python3 -c 'import json, sys
print(int(sum(sum(c) for c in json.load(sys.stdin)["values"])))')
echo "# heat map: $HT in its cells, flame graph $TOT"
check "heat map of page faults adds up to the flame graph's" test "$HT" -gt 0 -a "$HT" = "$TOT"
curl -sf -o "$TMP/pf.pb.gz" "$URL/debug/pprof/profile?event=pagefault&pid=$PF&from=-60s"
PT=$("$EMBER" convert --from pprof "$TMP/pf.pb.gz" 2>/dev/null | awk '{ s += $NF } END { print s + 0 }')
check "pprof of event=pagefault: the flame graph's total" test "$PT" = "$TOT"
check "pprof of event=pagefault: typed page_faults/pages" bash -c "gzip -dc '$TMP/pf.pb.gz' | grep -aq page_faults && gzip -dc '$TMP/pf.pb.gz' | grep -aq pages"

# OTLP: page faults pushed as their own profiles, period type page_faults/pages, valid by the
# reference schema (when protoc and the schema are here), the paced process's quanta in them
REF=$SHARED/reference/opentelemetry-proto
sleep 2.5
OT=0
: >"$TMP/decoded"
for f in "$RX"/*.body; do
	[ -f "$f" ] || continue
	zcat "$f" | grep -aq page_faults || continue
	OT=$((OT + 1))
	command -v protoc >/dev/null && [ -d "$REF" ] &&
		zcat "$f" | protoc -I "$REF" --decode \
			opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
			opentelemetry/proto/collector/profiles/v1development/profiles_service.proto \
			>"$f.txt" 2>/dev/null && echo "$f.txt" >>"$TMP/decoded"
done
echo "# OTLP: $OT requests with page_faults profiles"
check "OTLP: page faults pushed with their own type (page_faults/pages)" \
	bash -c "[ $OT -gt 0 ] && for f in '$RX'/*.body; do zcat \"\$f\" | grep -aq page_faults && zcat \"\$f\" | grep -aq pages && exit 0; done; exit 1"
if [ -s "$TMP/decoded" ]; then
	python3 "$(dirname "$0")/otlp_check.py" "$TMP/otlp" $(cat "$TMP/decoded") >"$TMP/check.out"
	OQ=$(awk -v p="$PF" '$2 == p && /fault_a|fault_b/' "$TMP/otlp" | wc -l)
	echo "# OTLP check: $(cat "$TMP/check.out"); $OQ samples of fault_a/fault_b (the flame graph: $TOT quanta)"
	check "OTLP: valid by the reference schema, the paced process's quanta within 10 %" \
		bash -c "grep -q '^ok' '$TMP/check.out' && awk -v o=$OQ -v t=$((A + B)) 'BEGIN { exit !(o >= 0.9 * t && o <= 1.1 * t) }'"
else
	skip "OTLP: decoded by the reference schema" "no protoc or no $REF"
fi

# a capture of page faults while a paced process runs
"$W" pagefault 4 >/dev/null &
CP=$!
sleep 0.5
curl -s -o "$TMP/cap.json" -X POST -d "seconds=2&event=pagefault" "$URL/api/v1/captures"
CAP=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$TMP/cap.json" 2>/dev/null)
wait "$CP"
for _ in $(seq 60); do
	st=$(curl -s "$URL/api/v1/captures/$CAP" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])' 2>/dev/null)
	[ "$st" = running ] || break
	sleep 0.25
done
wait_stored
CT=$(curl -sf "$URL/api/v1/captures/$CAP/folded?pid=$CP" | awk '/fault_a|fault_b/ { s += $NF } END { print s + 0 }')
CA=$(curl -sf "$URL/api/v1/folded?event=pagefault&pid=$CP&from=-60s" | awk '/fault_a|fault_b/ { s += $NF } END { print s + 0 }')
echo "# capture: $CT quanta of fault_a/fault_b in its 2 s, $CA in the process's 4 s"
check "a 2 s capture with event=pagefault holds its window's faults (about half the 4 s run's)" \
	awk -v c="$CT" -v a="$CA" 'BEGIN { exit !(a > 0 && c >= 0.3 * a && c <= 0.7 * a) }'

# --- vm growth ---
"$W" vmgrow 3 >"$TMP/vm.out" &
VP=$!
wait "$VP"
wait_stored
curl -sf "$URL/api/v1/folded?event=vmgrow&pid=$VP&from=-60s" >"$TMP/vm.folded"
read -r A B PCT < <(share "$TMP/vm.folded" grow_a grow_b)
echo "# vm growth: grow_a $A, grow_b $B quanta: $PCT % (want 60)"
check "event=vmgrow: grow_a/grow_b 60/40 within 5 points" within "$PCT" 60 5 || {
	echo "#   the workload: $(tr '\n' ' ' <"$TMP/vm.out"); its folded lines: $(wc -l <"$TMP/vm.folded")"
	curl -sf "$URL/api/v1/stats" | python3 -c 'import json, sys; d = json.load(sys.stdin); print("#   memio:", json.dumps(d.get("memio"))[:1500]); print("#   store:", json.dumps(d.get("store"))[:1500])'
	echo "#   event=vmgrow, every pid, by comm: $(curl -sf "$URL/api/v1/folded?event=vmgrow&from=-60s" | awk '{ split($1, c, ";"); n[c[1]] += $NF } END { for (k in n) printf "%s %d, ", k, n[k] }')"
	echo "#   event=vmgrow&pid=$VP&from=0: $(curl -sf "$URL/api/v1/folded?event=vmgrow&pid=$VP&from=0" | wc -l) lines; its samples: $(curl -sf "$URL/api/v1/samples?pid=$VP&from=0" | grep -vc '^#')"
}
check "event=vmgrow: under [mmap]" grep -q '^memio;\[mmap\];.*grow_a;' "$TMP/vm.folded"
curl -sf -o "$TMP/vm.pb.gz" "$URL/debug/pprof/profile?event=vmgrow&pid=$VP&from=-60s"
check "pprof of event=vmgrow: typed vm_growth/bytes" bash -c "gzip -dc '$TMP/vm.pb.gz' | grep -aq vm_growth && gzip -dc '$TMP/vm.pb.gz' | grep -aq bytes"

# --- malloc ---
"$W" malloc 3 >"$TMP/ma.out" &
MP=$!
wait "$MP"
wait_stored
curl -sf "$URL/api/v1/folded?event=malloc&pid=$MP&from=-60s" >"$TMP/ma.folded"
read -r A B PCT < <(share "$TMP/ma.folded" alloc_a alloc_b)
echo "# malloc: alloc_a $A, alloc_b $B quanta: $PCT % (want 80), $(curl -sf "$URL/api/v1/stats" | grep -o '"malloc_calls": [0-9]*') "
check "event=malloc: alloc_a/alloc_b 80/20 within 5 points" within "$PCT" 80 5
check "event=malloc: under [malloc]" grep -q '^memio;\[malloc\];.*alloc_a;' "$TMP/ma.folded"
curl -sf -o "$TMP/ma.pb.gz" "$URL/debug/pprof/profile?event=malloc&pid=$MP&from=-60s"
check "pprof of event=malloc: typed malloc/bytes" bash -c "gzip -dc '$TMP/ma.pb.gz' | grep -aq bytes"

# --- block I/O: O_DIRECT, then a buffered writer and sync ---
"$W" direct 3 "$DIR/direct.dat" >"$TMP/bio.out" &
DP=$!
wait "$DP"
wait_stored
curl -sf "$URL/api/v1/folded?event=blockio&pid=$DP&from=-60s" >"$TMP/bio.folded"
read -r A B PCT < <(share "$TMP/bio.folded" write_a write_b)
echo "# O_DIRECT: write_a $A, write_b $B quanta: $PCT % (want 60)"
check "event=blockio: write_a/write_b 60/40 within 5 points" within "$PCT" 60 5
check "event=blockio: under [write]" grep -q '^memio;\[write\];.*write_a;' "$TMP/bio.folded"
curl -sf "$URL/api/v1/folded?event=blockio&weight=latency&pid=$DP&from=-60s" >"$TMP/lat.folded"
check "event=blockio&weight=latency: the writes' stacks" grep -q '^memio;\[write\];.*write_a;' "$TMP/lat.folded"
curl -sf -o "$TMP/lat.pb.gz" "$URL/debug/pprof/profile?event=blockio&weight=latency&pid=$DP&from=-60s"
check "pprof of weight=latency: typed block_io_latency/nanoseconds" bash -c "gzip -dc '$TMP/lat.pb.gz' | grep -aq block_io_latency && gzip -dc '$TMP/lat.pb.gz' | grep -aq nanoseconds"
rm -f "$DIR/direct.dat" "$DIR/buf.dat"
sync
FROM=$(date +%s.%N)
"$W" buffered 1 "$DIR/buf.dat" >"$TMP/buf.out" &
BP=$!
wait "$BP"
sync
wait_stored
Q=16384 # [blockio] quantum (the default)
curl -sf "$URL/api/v1/folded?event=blockio&from=$FROM" >"$TMP/buf.folded"
WB=$(awk '$0 ~ /^[^;]*;\[writeback\];/ { s += $NF } END { print s + 0 }' "$TMP/buf.folded")
WR=$(curl -sf "$URL/api/v1/folded?event=blockio&pid=$BP&from=$FROM" | awk '{ s += $NF } END { print s + 0 }')
echo "# buffered 32 MiB: $((WB * Q)) bytes under [writeback] (every process's), $((WR * Q)) under the writer"
check "a buffered writer's I/O shows under [writeback]" test $((WB * Q)) -ge $((32 * 1048576 * 8 / 10))
check "... not under the writer" test $((WR * Q)) -le $((32 * 1048576 / 10))
check "... issued by the flusher (wb_workfn)" grep -q '\[writeback\];.*wb_workfn' "$TMP/buf.folded"
# its pages dropped from the cache, the file read through: the kernel's read-ahead, as such
"$W" readahead 1 "$DIR/buf.dat" >"$TMP/ra.out" &
RP=$!
wait "$RP"
wait_stored
curl -sf "$URL/api/v1/folded?event=blockio&pid=$RP&from=-60s" >"$TMP/ra.folded"
RA=$(awk '$0 ~ /^memio;\[read-ahead\];/ { s += $NF } END { print s + 0 }' "$TMP/ra.folded")
RT=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/ra.folded")
CACHED=$(awk '/^done/ { print $4 + 0 }' "$TMP/ra.out")
CACHED=${CACHED:-0}
echo "# read-ahead: $((RA * Q)) of the reader's $((RT * Q)) bytes under [read-ahead] (32 MiB read, $CACHED bytes of it still cached when the reading began)"
check "a reader's I/O shows under [read-ahead]: >= 80 % of the 32 MiB it read (of what was not cached)" \
	test $((RA * Q)) -ge $(((32 * 1048576 - CACHED) * 8 / 10)) -a "$CACHED" -le $((16 * 1048576)) || {
	# where the rest went: another task's I/O, lost or throttled records, the store's evictions
	echo "#   event=blockio of the last 60 s by comm and kind: $(curl -sf "$URL/api/v1/folded?event=blockio&from=-60s" |
		awk '{ split($1, c, ";"); k = c[1] ";" c[2]; n[k] += $NF } END { for (x in n) printf "%s %d, ", x, n[x] }')"
	curl -sf "$URL/api/v1/stats" | python3 -c 'import json, sys; d = json.load(sys.stdin); m = d.get("memio", {})
print("#   memio lost", m.get("lost"), "throttled", m.get("throttled"), "inflight_miss", m.get("inflight_miss"))
print("#   store:", json.dumps(d.get("store"))[:1200])'
	grep -i 'evict\|lost\|drop' "$TMP/emberd.log" | tail -5 | sed 's/^/#   log: /'
}

# --- hardware counters, refusals ---
code=$(curl -s -o "$TMP/cyc.json" -w '%{http_code}' "$URL/api/v1/folded?event=cycles")
echo "# event=cycles: $code $(cat "$TMP/cyc.json")"
if perf stat -e cycles true 2>&1 | grep -q 'not supported'; then
	check "event=cycles without hardware counters: 409 with the reason" \
		bash -c "[ '$code' = 409 ] && grep -q 'no hardware counters' '$TMP/cyc.json'"
else
	check "event=cycles: answered with what the probe found" test "$code" = 409
fi
if perf stat -e cycles true 2>&1 | grep -q 'not supported'; then
	check "[pmc] enabled without hardware counters: turned off with the reason in the log" \
		grep -q 'warning: \[pmc\]: the kernel offers no hardware counters.*: off' "$TMP/emberd.log"
fi
check "memio.hardware_counters in the stats" bash -c "curl -sf '$URL/api/v1/stats' | grep -q '\"hardware_counters\": '"
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/folded?event=pagefault&weight=latency")
check "weight=latency without event=blockio: 400" test "$code" = 400
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/folded?event=bogus")
check "event=bogus: 400" test "$code" = 400
stop_all
PIDS=()
emberd_serve || { not_ok "emberd without the sections starts"; done_testing; }
code=$(curl -s -o "$TMP/off.json" -w '%{http_code}' "$URL/api/v1/folded?event=pagefault")
check "event=pagefault with [pagefault] off: 409, need [pagefault] enabled" \
	bash -c "[ '$code' = 409 ] && grep -q 'need \[pagefault\] enabled' '$TMP/off.json'"
done_testing
