#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (emberd serves a replayed recording: no timing, share or CPU bound to disturb)
# The views and the rules every data route shares (docs/http-api.md "Views", "Errors"):
# - replay (no root): /api/v1/top's self and total are what the folded output of the same range
#   gives; focus= and ignore= keep what `ember merge --grep/--exclude` keeps of the same stacks
#   (folded, samples, heat map, top); the sandwich's callers and callees each add up to the
#   function's total, which is top's total; off-CPU events answer 409 and a pid that names
#   nothing 404 on every route;
# - live (root): the same 409 naming [offcpu] and 404 on every route, captures included; a range
#   older than the history (evicted by age, or for memory) is a 410 that says how far back the
#   history reaches; /api/v1/stats, the log and the exit summary say it too.
. "$(dirname "$0")/../lib.sh"
command -v curl >/dev/null || skip_all "no curl"
command -v python3 >/dev/null || skip_all "no python3"
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
[ -x "$EMBER" ] || skip_all "no $EMBER"
IN=$TMP/perf.txt
zcat "$SHARED/corpus/examples/example-perf-stacks.txt.gz" >"$IN" || skip_all "no shared corpus"
trap 'stop_all; cleanup_tmp' EXIT

# code PATH [curl args]: the status; the body in $TMP/body
code() { local p=$1; shift; curl -s -o "$TMP/body" -w '%{http_code}' "$@" "$URL$p"; }
# every data route, with what it needs besides the common parameters
ROUTES=(
	"/api/v1/folded?" "/api/v1/flamegraph.svg?" "/api/v1/heatmap?" "/api/v1/heatmap.svg?"
	"/api/v1/samples?" "/api/v1/diff.svg?b_from=-2h&b_to=-1h&" "/api/v1/diff.folded?b_from=-2h&b_to=-1h&"
	"/api/v1/compare?b_from=-2h&b_to=-1h&" "/debug/pprof/profile?" "/api/v1/top?"
	"/api/v1/sandwich?function=main&" "/api/v1/sandwich.svg?function=main&"
)
# rule NAME STATUS PARAM WORDS QUERY: every route answers STATUS naming PARAM, its reason has WORDS
rule() {
	local name=$1 want=$2 param=$3 words=$4 query=$5 r got bad=""
	for r in "${ROUTES[@]}"; do
		got=$(code "$r$query")
		if [ "$got" != "$want" ] || ! grep -qF "\"param\": \"$param\"" "$TMP/body" ||
			! grep -qF "$words" "$TMP/body"; then
			bad="$bad ${r%%\?*}=$got:$(head -c 160 "$TMP/body")"
		fi
	done
	check "$name: $want on all ${#ROUTES[@]} routes${bad:+ (not:$bad)}" test -z "$bad"
}

# --- replay ---------------------------------------------------------------------------------------
replay_start "$IN" || { not_ok "emberd --replay starts"; done_testing; }
R="from=-1h"
curl -s "$URL/api/v1/folded?$R" >"$TMP/all.folded"
check "folded has stacks" test -s "$TMP/all.folded"

curl -s "$URL/api/v1/top?$R&limit=100000" >"$TMP/top.json"
curl -s "$URL/api/v1/top?$R&limit=100000&sort=total" >"$TMP/top_total.json"
check "top: self and total of every function equal the folded output's, sorted" python3 - "$TMP/all.folded" "$TMP/top.json" "$TMP/top_total.json" <<'PY'
import json, sys
self, total, whole = {}, {}, 0
for line in open(sys.argv[1]):
    stack, n = line.rstrip("\n").rsplit(" ", 1)
    n = int(n); whole += n
    fr = stack.split(";")[1:]           # the root (comm) is not a function
    if not fr: continue
    self[fr[-1]] = self.get(fr[-1], 0) + n
    for f in set(fr): total[f] = total.get(f, 0) + n
for path, key in ((sys.argv[2], "self"), (sys.argv[3], "total")):
    j = json.load(open(path))
    got = {r["function"]: (r["self"], r["total"]) for r in j["top"]}
    want = {f: (self.get(f, 0), total[f]) for f in total}
    assert j["total"] == whole, (j["total"], whole)
    assert got == want, [f for f in want if got.get(f) != want[f]][:5]
    vals = [r[key] for r in j["top"]]
    assert vals == sorted(vals, reverse=True), key
    assert j["functions"] == len(want)
PY
check "top: limit= keeps the first N" python3 -c '
import json, sys, urllib.request
j = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/top?from=-1h&limit=7"))
assert len(j["top"]) == 7 and j["functions"] > 7' "$URL"

# focus= and ignore= against ember merge --grep/--exclude of the same stacks
fi_case() {
	local name=$1 q=$2; shift 2
	curl -s "$URL/api/v1/folded?$R&$q" | sort >"$TMP/fi.http"
	"$EMBER" merge "$@" "$TMP/all.folded" | sort >"$TMP/fi.merge"
	check "$name: folded equals ember merge $* ($(wc -l <"$TMP/fi.http") stacks)" \
		sh -c "test -s '$TMP/fi.http' && cmp -s '$TMP/fi.http' '$TMP/fi.merge' && ! cmp -s '$TMP/fi.http' '$TMP/all.folded'"
}
fi_case "focus" "focus=%5Evfs_write" --grep '^vfs_write'
fi_case "ignore" "ignore=Interpreter" --exclude 'Interpreter'
fi_case "focus and ignore" "focus=start_thread&ignore=%5Ejava_start%24" --grep start_thread --exclude '^java_start$'
sum() { awk '{ s += $NF } END { print s + 0 }' "$@"; }
want=$("$EMBER" merge --grep '^vfs_write' "$TMP/all.folded" | sum)
got=$(curl -s "$URL/api/v1/samples?$R&focus=%5Evfs_write" | grep -v '^#' | grep -c .)
hm=$(curl -s "$URL/api/v1/heatmap?$R&focus=%5Evfs_write" | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["total"]))')
check "focus= on samples ($got) and the heat map ($hm): the same $want samples" test "$got" = "$want" -a "$hm" = "$want"

# the sandwich of a function called from several places
FN='tcp_sendmsg_[k]'
curl -s "$URL/api/v1/sandwich?$R&function=%5Etcp_sendmsg_%5C%5Bk%5C%5D%24" >"$TMP/sw.json"
check "sandwich: callers and callees each add up to the function's total, top's total and the folded stacks through it" python3 - "$TMP/sw.json" "$TMP/top.json" "$TMP/all.folded" "$FN" <<'PY'
import json, sys
sw = json.load(open(sys.argv[1])); top = json.load(open(sys.argv[2])); fn = sys.argv[4]
def s(t): return sum(int(l.rsplit(" ", 1)[1]) for l in t.splitlines() if l)
through = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[3]) if fn in l.rsplit(" ", 1)[0].split(";")[1:])
t = [r["total"] for r in top["top"] if r["function"] == fn][0]
assert sw["total"] == t == through == s(sw["callers"]) == s(sw["callees"]), (sw["total"], t, through)
callers = {l.split(";")[1] for l in sw["callers"].splitlines() if ";" in l}
assert all(l.startswith(fn) for l in sw["callers"].splitlines() + sw["callees"].splitlines())
assert len(callers) >= 2, callers      # called from more than one place, merged
PY
c=$(code "/api/v1/sandwich.svg?$R&function=%5Evfs_write")
check "sandwich.svg: an SVG of the callers above the callees" sh -c "[ $c = 200 ] && grep -q '<image id=\"callers\" x=\"0\" y=\"0\"' '$TMP/body' && grep -q '<image id=\"callees\"' '$TMP/body'"
c=$(code "/api/v1/sandwich?$R")
check "sandwich without function=: 400 naming it" sh -c "[ $c = 400 ] && grep -q '\"param\": \"function\"' '$TMP/body'"
c=$(code "/api/v1/folded?$R&focus=(")
check "a bad focus= regex: 400 naming it" sh -c "[ $c = 400 ] && grep -q '\"param\": \"focus\"' '$TMP/body'"

# a pattern that reaches its match limit on a frame: a 400 that says so, on every route that matches frames
bad=""
for r in "/api/v1/folded?" "/api/v1/flamegraph.svg?" "/api/v1/heatmap?" "/api/v1/samples?" "/api/v1/top?" "/api/v1/sandwich?function=x&" "/api/v1/diff.folded?b_from=-2h&b_to=-1h&"; do
	c=$(code "$r$R&focus=%28.%2A.%2A%29%2A%5B%5B%3Adigit%3A%5D%5D")
	{ [ "$c" = 400 ] && grep -q 'pattern reached its match limit on a frame' "$TMP/body"; } || bad="$bad ${r%%\?*}=$c"
done
check "focus= reaching its match limit: 400 saying so${bad:+ (not:$bad)}" test -z "$bad"
rule "replay: event=offcpu" 409 event "offcpu] enabled" "$R&event=offcpu"
rule "replay: event=wall" 409 event "offcpu] enabled" "$R&event=wall"
rule "replay: a pid with no sample" 404 pid "no process 4194000" "$R&pid=4194000"
c=$(code "/api/v1/folded?$R&pid=977")
check "replay: a pid with samples is answered" sh -c "[ $c = 200 ] && test -s '$TMP/body'"
stop_all; PIDS=()

# --- live -----------------------------------------------------------------------------------------
if [ "$(id -u)" != 0 ] || [ ! -r /sys/kernel/btf/vmlinux ]; then
	skip "live part: needs root and BTF"
	done_testing
fi
emberd_serve -o store.retention=2 || { not_ok "emberd serves live"; done_testing; }
sleep 5
R="from=-60s"
rule "live, [offcpu] off: event=offcpu" 409 event "[offcpu] enabled = yes in emberd.conf" "$R&event=offcpu"
rule "live, [offcpu] off: event=chain" 409 event "[offcpu] enabled = yes in emberd.conf" "$R&event=chain"
gone=4194303
while kill -0 $gone 2>/dev/null; do gone=$((gone - 1)); done
rule "live: a pid neither running nor sampled" 404 pid "no process $gone: it is not running" "$R&pid=$gone"
rule "live: a tid neither running nor sampled" 404 tid "no thread $gone: it is not running" "$R&tid=$gone"
c=$(code /api/v1/captures -X POST -d "seconds=1&event=offcpu")
check "live: a capture of off-CPU events: 409 with the same words" sh -c "[ $c = 409 ] && grep -qF '[offcpu] enabled = yes in emberd.conf' '$TMP/body'"
c=$(code /api/v1/captures -X POST -d "seconds=1&pid=$gone")
check "live: a capture of that pid: 404 with the same words" sh -c "[ $c = 404 ] && grep -qF 'no process $gone: it is not running' '$TMP/body'"
c=$(code /api/v1/captures -X POST -d "seconds=0.5")
sleep 2
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$TMP/body")
c=$(code "/api/v1/captures/$id/folded?event=offcpu")
check "live: a capture's view with event=offcpu: 409" sh -c "[ $c = 409 ] && grep -q '\"param\": \"event\"' '$TMP/body'"
c=$(code "/api/v1/captures/$id/folded?pid=$gone")
check "live: a capture's view of that pid: 404" sh -c "[ $c = 404 ] && grep -q '\"param\": \"pid\"' '$TMP/body'"
c=$(code "/api/v1/folded?$R&pid=$EPID")
check "live: a running pid without samples is answered (200)" test "$c" = 200

# the history: retention 2 s, so a range 30 s back is evicted
curl -s "$URL/api/v1/stats" >"$TMP/stats.json"
check "stats: how far back the history reaches and what was evicted" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["store"]
assert s["evicted"] > 0 and s["evicted"] == s["evicted_time"] + s["evicted_memory"], s
assert s["oldest"] > s["newest"] - 4 and s["oldest_rfc3339"], s' "$TMP/stats.json"
ROUTES=("${ROUTES[@]:0:10}")
rule "live: a range older than the history" 410 to "the range ends before the history: the oldest sample held is from" "from=-60s&to=-30s"
check "the 410 says how many samples were evicted, for what" grep -q 'samples evicted since start ([0-9]* for memory, [0-9]* for age)' "$TMP/body"
c=$(code "/api/v1/folded?from=-60s")
check "a range reaching into the history is answered" sh -c "[ $c = 200 ] && test -s '$TMP/body'"
c=$(code "/api/v1/diff.folded?from=-60s&b_from=-60s&b_to=-30s")
check "a diff's range B before the history: 410 naming b_to" sh -c "[ $c = 410 ] && grep -q '\"param\": \"b_to\"' '$TMP/body'"
kill "$EPID"; wait "$EPID"; PIDS=()
check "exit summary: the history's oldest sample and the evictions" grep -qE 'history: oldest sample held [0-9-]+T.*; [1-9][0-9]* samples evicted since start \([0-9]+ for memory, [1-9][0-9]* for age\)' "$TMP/emberd.log"

# focus= on pprof's per-sample labels too (the store's samples one by one): a second emberd
# with the default retention, a workload, one fixed range for every request
BURN=$OUTPUT/workloads/burn
if [ -x "$BURN" ]; then
	"$BURN" 30 >/dev/null &
	PIDS+=($!)
	# and JIT code whose perf map is gone: the unresolved files' hint gives the Java advice
	# that works on a running JVM
	"$OUTPUT/workloads/jit" --seconds 30 >"$TMP/jit.out" &
	JPID=$!
	PIDS+=($JPID)
	wait_log "$TMP/jit.out" ready && rm -f "/tmp/perf-$JPID.map"
	emberd_serve || not_ok "emberd serves live (default retention)"
	sleep 4
	check "unresolved JIT code: the hint says jcmd Compiler.perfmap with -XX:+PreserveFramePointer" python3 -c '
import json, sys, time, urllib.request
for _ in range(60): # symbolized off the drain, published once a tick
    u = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/stats"))["symbols"].get("unresolved_files", [])
    h = [x["hint"] for x in u if x["reason"] == "jit"]
    if h:
        break
    time.sleep(0.5)
assert h and "jcmd PID Compiler.perfmap" in h[0] and "-XX:+PreserveFramePointer" in h[0] and "perf-map-agent" not in h[0], u' "$URL"
	T=$(date +%s)
	R="from=$((T - 3))&to=$((T - 1))"
	sleep 1.5
	all=$(curl -s "$URL/api/v1/folded?$R" | sum)
	want=$(curl -s "$URL/api/v1/folded?$R&focus=%5Eburn_a%24" | sum)
	curl -s "$URL/debug/pprof/profile?$R&labels=pid&focus=%5Eburn_a%24" -o "$TMP/l.pb.gz"
	got=$("$EMBER" convert --from pprof --to folded "$TMP/l.pb.gz" | sum)
	check "pprof with labels=pid and focus=: the focused samples ($got of $all; folded $want)" \
		sh -c "[ '$got' = '$want' ] && [ '$want' -gt 0 ] && [ '$want' -lt '$all' ]"
	stop_all; PIDS=()
	# evictions for memory (the store at its 1 MiB floor, sampled at 4999 Hz): the log says the
	# history got shorter than the retention, and a range before it says "for memory"
	"$BURN" 12 >/dev/null &
	PIDS+=($!)
	emberd_serve --frequency 4999 -o store.memory_limit=1M || not_ok "emberd serves live (1 MiB store)"
	# until the store has evicted for memory (how soon depends on what else the host runs: each
	# stack of another process interns more), and a tick more for the log line
	for _ in $(seq 60); do
		ev=$(curl -sf "$URL/api/v1/stats" | python3 -c 'import json, sys; print(json.load(sys.stdin)["store"]["evicted"])' 2>/dev/null)
		[ "${ev:-0}" -gt 0 ] && break
		sleep 0.5
	done
	echo "# store evicted ${ev:-?} samples"
	sleep 1.5
	c=$(code "/api/v1/folded?from=-60s&to=-30s")
	check "memory: a range before the history is a 410 counting evictions for memory" \
		sh -c "[ $c = 410 ] && grep -q 'samples evicted since start ([1-9][0-9]* for memory, 0 for age)' '$TMP/body'"
	check "memory: the log says the history is shorter than the retention" \
		grep -q 'store: [1-9][0-9]* samples evicted for memory (store.memory_limit 1048576 bytes): the history now reaches back to [0-9-]*T' "$TMP/emberd.log"
else
	not_ok "no $BURN (make workloads)"
fi
done_testing
