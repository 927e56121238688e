#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The process tracker. Every exec is notified and the new image listed for the walker with the
# tables already built, so a C program that lives 30 ms (tests/workloads/shortlived: -O2
# -fomit-frame-pointer, reaching main only through its unwind tables), run 100 times after a
# first run of 2 s that has its table built, has >= 90 % of the samples taken in its own code
# reach main;work (61 % when processes were known from their first sample; the loader's
# start-up and the exit path walked whole are not counted, failed walks are: in_work below).
# Both ways of reading mappings: PROCMAP_QUERY (on kernels that have it, 6.11+) and the
# /proc/PID/maps text (process.maps_query = no; the only way on 6.1). The mappings are read once
# per event and shared (reads < the three readers' events), and an exit drops them.
# A forking server's children (tests/workloads/forker: 50 children that spin 30 ms each
# without exec, no frame pointers) are listed at their fork with a copy of their parent's list:
# >= 90 % of their samples reach main;work (60 % when they were listed at their first sample).
. "$(dirname "$0")/../lib.sh"
require_live_emberd
W=$OUTPUT/workloads
[ -x "$W/shortlived" ] && [ -x "$W/forker" ] || skip_all "workloads not built (make workloads)"
trap 'stop_all; cleanup_tmp' EXIT

stats_json() { curl -sf "$URL/api/v1/stats" >"$TMP/stats.json"; }
field() { # a field path of the last stats_json, e.g. processes.reads
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d[k]
print(str(d).lower())' "$TMP/stats.json" "$1"
}

# the kernel has PROCMAP_QUERY from 6.11
read -r KMAJ KMIN < <(uname -r | awk -F'[.-]' '{ print $1, $2 }')
if [ "$KMAJ" -gt 6 ] || { [ "$KMAJ" -eq 6 ] && [ "$KMIN" -ge 11 ]; }; then HAVE_QUERY=true; else HAVE_QUERY=false; fi
echo "# kernel $(uname -r): PROCMAP_QUERY expected: $HAVE_QUERY"

# in_work COMM FOLDED: "all in-work reached": COMM's samples; those taken in the program's own
# code under main: a `work` or `step` frame anywhere (the leaf is named from its address whether
# or not the walk got further), or a walk that failed (`[truncated]`/`[unknown]` right after the
# comm: the tables were not there yet), but for the exec system call of the image before (not
# the new program's code); and those of them walked up to main;work. The loader's start-up and
# the exit path, walked whole, are not the program's work and are counted in neither.
in_work() {
	awk -v c="$1" 'index($0, c ";") == 1 { n = $NF; a += n
		failed = index($0, c ";[truncated];") == 1 || index($0, c ";[unknown];") == 1
		if ($0 ~ /;(work|step)[; ]/ || (failed && $0 !~ /sys_execve/)) {
			t += n; if ($0 ~ /;main;work[; ]/) m += n } }
		END { print a + 0, t + 0, m + 0 }' "$2"
}

run_case() { # NAME MAPS_QUERY(yes|no) EXPECT_QUERY(true|false)
	local name=$1 mq=$2 want=$3 tot main t0
	emberd_serve -o process.maps_query="$mq" || { not_ok "$name: emberd starts"; return; }
	sleep 1.5 # start-up: kallsyms, the first tables
	# the program's first run: its table is built once a walk reaches its code, which a 30 ms
	# run does not outlive (beside the browser tests the first 0.1-0.4 s of a loop of them
	# walked without it: 17 of 305 samples; 31 of 299 in fresh-clone run ZE3). This one runs
	# 2 s of CPU (its first whole stack came 1.02 s in once beside the browser tests), and the
	# loop below runs the program again once its table exists, as the tracker promises (listed
	# at exec with the tables already built)
	tw=$(date +%s.%N)
	"$W/shortlived" 2000
	curl -sf "$URL/api/v1/stats" >"$TMP/$name.before.json"
	t0=$(date +%s.%N)
	for _ in $(seq 100); do
		"$W/shortlived" 30
	done
	"$W/forker" 50 30 300 # item 2: fork without exec (its children are "forkchild")
	sleep 2.5 # two ticks: the last samples are named and stored
	curl -sf "$URL/api/v1/folded?from=$t0" >"$TMP/$name.folded"
	read -r all tot main < <(in_work shortlived "$TMP/$name.folded")
	echo "# $name: shortlived 30 x100: $all samples, $tot in its work (work or step in the stack, or a failed walk), $main of them reach main;work"
	grep '^shortlived;' "$TMP/$name.folded" | grep -vE ';main;work[; ]' | sort -t' ' -k2 -nr |
		head -5 | sed 's/^/#   /'
	# when in the loop its failed walks were (seconds after its start): the first runs, before
	# the table was built, or spread through it
	curl -sf "$URL/api/v1/samples?from=$t0" | python3 -c 'import sys
t0, when = float(sys.argv[1]), []
for l in sys.stdin:
    if l.startswith("#") or not l.strip():
        continue
    t, _, rest = l.rstrip("\n").partition(" ")
    s, _, n = rest.rpartition(" ")
    if s.startswith("shortlived;[truncated];") and "sys_execve" not in s:
        when += ["%.2f" % (float(t) - t0)] * int(float(n))
print("# '"$name"': shortlived'"'"'s failed walks at (s):", " ".join(when[:40]) or "none")' "$t0"
	curl -sf "$URL/api/v1/samples?from=$tw&to=$t0" | python3 -c 'import sys
tw, first, n = float(sys.argv[1]), None, 0
for l in sys.stdin:
    if l.startswith("#") or not l.strip():
        continue
    t, _, rest = l.rstrip("\n").partition(" ")
    s, _, k = rest.rpartition(" ")
    if s.startswith("shortlived;"):
        n += int(float(k))
        if ";main;work;" in s + ";" and (first is None or float(t) < first):
            first = float(t)
print("%d %s" % (n, "%.2f" % (first - tw) if first is not None else "none"))' "$tw" >"$TMP/$name.first"
	read -r wn wfirst <"$TMP/$name.first"
	check "$name: shortlived's first run (2 s) walked to main;work once its table was built ($wn samples, the first whole $wfirst s in)" \
		test "$wfirst" != none
	check "$name: shortlived was sampled in its work (>= 150 samples)" test "$tot" -ge 150
	check "$name: >= 90 % of shortlived's samples in its work reach main;work ($main of $tot)" \
		test $((main * 100)) -ge $((tot * 90))
	stats_json
	echo "# $name: processes $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["processes"])' "$TMP/stats.json")"
	# the tables' side: a shortlived walked without its table (a seed missed, the table
	# evicted for another process's, the other lane's chromium) shows here
	echo "# $name: unwind $(python3 -c 'import json, sys
u = json.load(open(sys.argv[1])).get("unwind", {})
print({k: v for k, v in u.items() if not isinstance(v, (dict, list))})' "$TMP/stats.json")"
	# and why the host's user walks stopped short during the loop (mostly shortlived's and
	# forker's): a walk cut after shortlived's leaf says here whether its mapping was not
	# found (unmapped), found without a table (no_table), or its rows failed it
	echo "# $name: user walks stopped short, by why: $(python3 -c 'import json, sys
a, b = (json.load(open(f)).get("sampler", {}) for f in sys.argv[1:3])
def d(k):
    x, y = a.get(k) or {}, b.get(k) or {}
    return {r: y[r] - x.get(r, 0) for r in y if y[r] - x.get(r, 0)} if isinstance(y, dict) else y
print(d("user_stops"), "work:", d("user_walk"))' "$TMP/$name.before.json" "$TMP/stats.json")"
	check "$name: PROCMAP_QUERY used: $(field processes.procmap_query) (expected $want)" \
		test "$(field processes.procmap_query)" = "$want"
	if [ "$want" = true ]; then
		check "$name: reads by PROCMAP_QUERY, none as text" \
			test "$(field processes.query_reads)" -gt 0 -a "$(field processes.text_reads)" -eq 0
	else
		check "$name: reads as /proc/PID/maps text, none by PROCMAP_QUERY" \
			test "$(field processes.text_reads)" -gt 0 -a "$(field processes.query_reads)" -eq 0
	fi
	# every shortlived is either listed at its exec, or (its executable's table in BPF's mapping
	# cache, below) left to BPF until its first sample: no /proc read for an exec then
	check "$name: every shortlived listed or seeded at exec (unwind.exec_lists $(field unwind.exec_lists) + exec_seeded $(field unwind.exec_seeded) >= 100)" \
		test $(($(field unwind.exec_lists) + $(field unwind.exec_seeded))) -ge 100
	check "$name: a seeded exec is not listed (unwind.exec_seeded $(field unwind.exec_seeded) >= 90)" \
		test "$(field unwind.exec_seeded)" -ge 90
	# each shortlived after the first found its executable's table at the exec, in BPF: walked
	# to main even when the worker lists it late (a starved daemon: 89 % of the samples reach
	# main;work with emberd frozen through the whole loop, 78 % without the seed)
	check "$name: the exec put shortlived's table in BPF's mapping cache (sampler.exec_seeds $(field sampler.exec_seeds) >= 90)" \
		test "$(field sampler.exec_seeds)" -ge 90
	check "$name: their exits drop their state (processes.exits $(field processes.exits) >= 100)" \
		test "$(field processes.exits)" -ge 100
	check "$name: the tracker holds no more than the live processes need (procs $(field processes.procs) < 100)" \
		test "$(field processes.procs)" -lt 100
	# item 2: fork without exec
	read -r all tot main < <(in_work forkchild "$TMP/$name.folded")
	echo "# $name: forker 50 x30 ms: $all samples of the children, $tot in their work, $main of them reach main;work"
	grep '^forkchild;' "$TMP/$name.folded" | grep -vE ';main;work[; ]' | sort -t' ' -k2 -nr |
		head -5 | sed 's/^/#   /'
	check "$name: forker's children were sampled (>= 75 samples)" test "$tot" -ge 75
	check "$name: >= 90 % of the forked children's samples reach main;work ($main of $tot)" \
		test $((main * 100)) -ge $((tot * 90))
	check "$name: the children were listed at their fork (processes.fork_lists $(field processes.fork_lists) >= 50)" \
		test "$(field processes.fork_lists)" -ge 50
	check "$name: emberd still running" kill -0 "$EPID"
	kill "$EPID"
	wait "$EPID" 2>/dev/null
}

run_case query yes "$HAVE_QUERY"
run_case text no false
done_testing
