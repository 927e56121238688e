#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Python frames: the real emberd names the Python functions of CPython processes,
# merged where the interpreter runs them, on Debian's /usr/bin/python3.11 (no frame pointers,
# started before emberd) and each pyenv CPython 3.10-3.13 present (`pyenv root`):
#   - tests/workloads/pyburn.py's known shares (burn_a/b/c 50/30/20 of work()) within 3 pp, and
#     >= 99% of its samples between "ready" and "done" with a whole Python stack from
#     <module>;main, no _PyEval_EvalFrameDefault left, native frames below (Py_RunMain);
#   - a thread pool: each thread's samples (tid=) hold its own function only (the threads take
#     turns of 100 ms: left to the GIL's 5 ms switches, 99 Hz samples alias, pyburn.py);
#   - C extensions: zlib.compress's deflate and json.dumps's encoder stand above their Python
#     callers;
#   - [python] lines: burn_a's frames carry a line of its body;
#   - processes that exit right after their samples are named (no [unknown]_[py]);
#   - python3.12 -X perf side by side with `perf record --call-graph dwarf` (this build has no
#     frame pointers; perf stops at the perf-map trampoline, so the innermost Python function of
#     each sample is compared): the same shares within 5 pp;
#   - Python 2.7 and 3.9 (when present) and a copy of python3.11 whose Py_Version says 3.99:
#     native frames only, counted as unsupported.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
command -v chrt >/dev/null || skip_all "no chrt"
W=$SRCDIR/tests/workloads/pyburn.py
DEB=/usr/bin/python3.11
[ -x "$DEB" ] || skip_all "no $DEB (Debian's python3.11)"

trap 'stop_all; cleanup_tmp' EXIT

PYENV_ROOT=$(pyenv root 2>/dev/null || echo /root/.pyenv)
INTERPS=()	# pyenv builds ember reads
OLD=()		# pyenv builds it does not: native frames, counted
for d in "$PYENV_ROOT"/versions/*; do
	v=${d##*/}
	m=${v%.*}
	[ -x "$d/bin/python$m" ] || continue
	case $m in
	3.10 | 3.11 | 3.12 | 3.13) INTERPS+=("$d/bin/python$m") ;;
	2.7 | 3.9) OLD+=("$d/bin/python$m") ;;
	esac
done
echo "# interpreters: $DEB ${INTERPS[*]}; unsupported: ${OLD[*]:-none}"

PORT=$(free_port)
URL=http://127.0.0.1:$PORT
LPORT=$(free_port)

# py_stat KEY [URL]: a counter of /api/v1/stats "python"
py_stat() {
	curl -sf "${2:-$URL}/api/v1/stats" | python3 -c \
		'import json, sys; print(json.load(sys.stdin).get("python", {}).get(sys.argv[1], -1))' "$1"
}
# folded FILE PID FROM TO [TID]: the process's folded stacks between two Unix times
folded() {
	curl -sf "${6:-$URL}/api/v1/folded?pid=$2&from=$3&to=$4${5:+&tid=$5}" >"$1"
}
# run_py OUT PYTHON ARGS...: pyburn ARGS at real-time priority (it gets its CPU on a busy host), in
# the background; waits for "ready"; PY_PID, T_READY set
run_py() {
	local out=$1 py=$2
	shift 2
	chrt -f 1 "$py" "$W" "$@" >"$out" 2>&1 &
	local pid=$!
	PIDS+=($pid)
	if ! wait_log "$out" ready; then
		# (ZS: python3.11.7 printed nothing in 10 s at real-time priority, not understood; it
		# wrote later, into the next run's file)
		echo "# $py $*: no \"ready\" in 10 s; state $(awk '/^State/ { print $2 $3 }' /proc/$pid/status 2>/dev/null), wchan $(cat /proc/$pid/wchan 2>/dev/null), CPU $(awk '{ print ($14 + $15) / 100 " s" }' /proc/$pid/stat 2>/dev/null); its output: $(head -c 300 "$out" | cat -v | tr '\n' '|')"
		cat /proc/$pid/stack 2>/dev/null | head -12 | sed 's/^/#   kernel stack: /'
		uptime | sed 's/^/#   /'
		kill -9 "$pid" 2>/dev/null
		return 1
	fi
	read -r _ PY_PID T_READY < <(grep -a -m1 ready "$out")
}
# drained BASEURL: until that emberd holds a sample of PY_PID taken after TO (at most 3 s)
drained() {
	local i
	for i in $(seq 30); do
		curl -sf "$1/api/v1/samples?pid=$PY_PID&from=$TO&to=$(awk -v t="${T_DONE:-0}" 'BEGIN { printf "%.3f", t + 1 }')" |
			grep -qv '^#' && return 0
		sleep 0.1
	done
	return 1
}
# window OUT [asis]: FROM and TO of the samples to look at (ready + 0.2 s .. done - 0.1 s), once done
# and drained: the store holds a sample of the process taken after TO (the ring is drained in the
# order the samples were taken; at most 3 s). FROM is moved to the process's first sample
# with a whole stack when that came later: until the worker has listed a new process (at its
# exec), its samples are walked by frame pointers, and these builds have none. The worker was
# seen 0.3-0.7 s late where the suite's second lane kept the other CPU busy and this workload
# (real-time) had the first; what this test checks is the Python frames once listed, and the
# delay itself is checked against a bound here (a process never listed fails)
window() {
	local first from0
	for _ in $(seq 600); do grep -q '^done' "$1" && break; sleep 0.1; done
	T_DONE=$(awk '/^done/ {print $2}' "$1")
	FROM=$(awk -v t="$T_READY" 'BEGIN { printf "%.3f", t + 0.2 }')
	from0=$FROM
	TO=$(awk -v t="${T_DONE:-0}" 'BEGIN { printf "%.3f", t - 0.1 }')
	drained "$URL"
	# as is: an interpreter ember does not read (no Python frames to wait for), -X perf (the
	# walks stop at its trampolines)
	[ "${2:-}" = asis ] && return 0
	first=$(curl -sf "$URL/api/v1/samples?pid=$PY_PID&from=$FROM&to=$TO" |
		awk '!/^#/ && /_\[py\]/ && !/;\[truncated\];/ { printf "%.3f\n", $1; exit }')
	if [ -n "$first" ] && awk -v a="$first" -v b="$FROM" 'BEGIN { exit !(a > b + 0.015) }'; then
		echo "# the first whole stack came $(awk -v a="$first" -v r="$T_READY" 'BEGIN { printf "%.2f", a - r }') s after ready (the window from then)"
		FROM=$first
	fi
	check "whole stacks within 1.5 s of ready (from $(awk -v a="${first:-0}" -v r="$T_READY" 'BEGIN { printf "%.2f", a - r }') s)" \
		awk -v a="${first:-0}" -v r="$T_READY" 'BEGIN { exit !(a > 0 && a - r <= 1.5) }' || {
		# what the worker was doing meanwhile (the CI run of stop 52: 1.84 s once; 0.2-0.55 s
		# in the runs before): the samples before the first whole one, the counters, the load
		FROM=$from0 whole_misses
		uptime | sed 's/^/#   /'
	}
}
within() { awk -v x="$1" -v e="$2" -v d="$3" 'BEGIN { exit !(x - e <= d && e - x <= d) }'; }
atleast() { awk -v x="$1" -v e="$2" 'BEGIN { exit !(x >= e) }'; }

# shares FILE: "total work a b c complete native eval" (percentages; a/b/c of work's samples)
shares() {
	awk '{ n = $NF; s = substr($0, 1, length($0) - length($NF) - 1); k = split(s, f, ";")
		py = ""; first = 0
		for (i = 1; i <= k; i++) if (f[i] ~ /_\[py\]$/) { py = py ";" f[i]; if (!first) first = i }
		tot += n
		if (py ~ /;work \(/) w += n
		if (py ~ /;work \([^;]*;burn_a \(/) a += n
		if (py ~ /;work \([^;]*;burn_b \(/) b += n
		if (py ~ /;work \([^;]*;burn_c \(/) c += n
		if (py ~ /^;<module> \([^;]*pyburn\.py\)_\[py\];main \([^;]*pyburn\.py\)_\[py\]/) m += n
		pre = ""; for (i = 1; i < first; i++) pre = pre ";" f[i]
		if (first && pre ~ /;(Py_RunMain|Py_BytesMain);/) r += n
		if (s ~ /;_PyEval_EvalFrameDefault(\.cold)?(;|$)/) e += n }
		END { t = tot ? tot : 1; ww = w ? w : 1
		      printf "%d %d %.1f %.1f %.1f %.2f %.1f %.2f\n", tot, w, 100*a/ww, 100*b/ww,
			     100*c/ww, 100*m/t, 100*r/t, 100*e/t }' "$1"
}

# split OUT: the CPU time pyburn's calls of burn_a, burn_b and burn_c really took within
# FROM..TO, in percent ("call X START END CPU" lines; a call cut by the window counted by the
# share of its wall time inside), or the nominal 50 30 20 without them. CPU time, not wall time:
# the samples count the time on a CPU, and a call's wall time also held the time it was off one
# (12 fresh-clone runs: 1.0 pp rms between the samples and the wall-time split, one share 3.3 pp
# off; python3.12 here 45.4 / 35.5 / 19.1 % of wall time where its samples said 47.9 / 32.1 /
# 20.0. Against CPU time, the next run: within 0.2 pp for all five interpreters)
split() {
	awk -v f="$FROM" -v t="$TO" '/^call [abc] / { lo = $3 > f ? $3 : f; hi = $4 < t ? $4 : t
		if (hi > lo) d[$2] += (NF >= 5 && $4 > $3) ? $5 * (hi - lo) / ($4 - $3) : hi - lo }
		END { s = d["a"] + d["b"] + d["c"]
		      if (s > 0) printf "%.1f %.1f %.1f\n", 100 * d["a"] / s, 100 * d["b"] / s, 100 * d["c"] / s
		      else print "50 30 20" }' "$1"
}

check_shares() { # NAME FILE OUT
	local name=$1 TOT WK PA PB PC PM PR PE EA EB EC
	read -r TOT WK PA PB PC PM PR PE < <(shares "$2")
	# against the split the process had: its calls are 5 : 3 : 2 in work, and their time was
	# 46.0 : 33.4 : 20.6 once in a fresh-clone run as the profile says (a neighbour on the other
	# CPU slowing one phase)
	read -r EA EB EC < <(split "$3")
	echo "# $name: $TOT samples ($WK in work): burn_a $PA%, burn_b $PB%, burn_c $PC% (its calls took $EA / $EB / $EC % of its CPU time in the window); whole Python stack $PM%, native below $PR%, eval frames left $PE%"
	check "$name: sampled (>= 300 samples)" test "$TOT" -ge 300
	check "$name: burn_a $EA +- 3 pp ($PA)" within "$PA" "$EA" 3
	check "$name: burn_b $EB +- 3 pp ($PB)" within "$PB" "$EB" 3
	check "$name: burn_c $EC +- 3 pp ($PC)" within "$PC" "$EC" 3
	check "$name: >= 99% whole Python stacks from <module>;main ($PM%)" atleast "$PM" 99
	local why=""
	atleast "$PR" 95 || why="; $(below_misses)"
	check "$name: native frames below the Python ones, >= 95% to Py_RunMain ($PR%$why)" atleast "$PR" 95
	check "$name: <= 1% _PyEval_EvalFrameDefault left unreplaced ($PE%)" atleast 1 "$PE"
	atleast "$PM" 99 && atleast "$PR" 95 || whole_misses
	atleast "$PR" 95 || awk '{ s = $0; i = index(s, "_[py]"); if (substr(s, 1, i) !~ /;(Py_RunMain|Py_BytesMain);/) print $NF "\t" s }' "$2" |
		sort -nr | head -4 | cut -f2 | cut -c1-400 | sed 's/^/#   native below without Py_RunMain: /'
}

# below_misses: on a failed Py_RunMain check, in one line (the line CI's summary shows): the
# window's samples whose native frames below the Python ones miss Py_RunMain, how many of them
# hold [truncated], when (seconds after FROM), the innermost native frame below the Python ones
# that most of them stop at, and the unwinder's evictions and refusals
below_misses() {
	curl -sf "$URL/api/v1/samples?pid=$PY_PID&from=$FROM&to=$TO" |
		awk -v f="$FROM" '!/^#/ { s = substr($0, length($1) + 2); s = substr(s, 1, length(s) - length($NF) - 1)
			i = index(s, "_[py]"); if (!i) next; pre = substr(s, 1, i)
			if (pre ~ /;(Py_RunMain|Py_BytesMain);/) next
			n++; if (s ~ /\[truncated\]/) tr++
			t = $1 - f; if (!lo || t < lo) lo = t; if (t > hi) hi = t
			k = split(pre, x, ";"); at[x[k > 1 ? k - 1 : 1]]++ }
			END { for (a in at) if (at[a] > m) { m = at[a]; top = a }
			      printf "misses %d (%d [truncated]) %.2f-%.2f s after FROM, %d below %s", n, tr, lo, hi, m, substr(top, 1, 60) }'
	curl -sf "$URL/api/v1/stats" | python3 -c 'import json, sys; u = json.load(sys.stdin).get("unwind", {})
print(", unwind evictions %s refused %s" % (u.get("evictions"), u.get("refused")), end="")'
}

# whole_misses: on a failed whole-stack check, when the process's samples without a whole Python
# stack were taken (seconds after FROM, by 0.25 s), one of them, and the worker's latency to a
# new process's list (a late list: the first samples walked without tables or Python frames)
whole_misses() {
	curl -sf "$URL/api/v1/samples?pid=$PY_PID&from=$FROM&to=$TO" >"$TMP/miss.samples"
	awk -v f="$FROM" '!/^#/ { py = ""; s = substr($0, length($1) + 2); s = substr(s, 1, length(s) - length($NF) - 1)
		k = split(s, x, ";")
		for (i = 1; i <= k; i++) if (x[i] ~ /_\[py\]$/) py = py ";" x[i]
		if (py ~ /^;<module> \([^;]*pyburn\.py\)_\[py\];main \(/) next
		b = int(($1 - f) * 4) / 4; n[b]++; if (!ex) ex = $0 }
		END { printf "#   samples without a whole Python stack, by time after FROM:"
		      for (b in n) printf " %.2fs:%d", b, n[b]; printf "\n#   e.g. %s\n", substr(ex, 1, 400) }' \
		"$TMP/miss.samples" | sort
	curl -sf "$URL/api/v1/stats" | python3 -c 'import json, sys; s = json.load(sys.stdin)
u = s.get("unwind", {}); p = s.get("python", {})
print("#   unwind:", {k: u.get(k) for k in ("ready_ms_avg", "evictions", "refused", "rows_used", "procs_pending", "reach_fp_samples", "reach_dropped", "debuginfod_late", "builds", "build_ms_total", "exec_lists", "exec_seeded")})
print("#   sampler:", {k: s.get("sampler", {}).get(k) for k in ("drains", "event_batches", "lost")})
print("#   python:", {k: p.get(k) for k in ("procs", "detections", "no_thread", "truncated", "bad_frames", "merged", "samples")})'
}

# thread_counts OUT: on a failed thread check, what the process did in the window: its samples
# without a tid filter (split by the thread function on their stacks, and by tid= for each of its
# tids: the three workers and the main thread, the rest under another tid) and the workload's own
# count of each thread's burn_* calls and CPU time
thread_counts() {
	local out=$1 x tid n sum=0 line
	folded "$TMP/thr.all" "$PY_PID" "$FROM" "$TO"
	echo "#   window $FROM .. $TO ($(awk -v f="$FROM" -v t="$TO" 'BEGIN { printf "%.3f", t - f }') s; ready $T_READY, done ${T_DONE:-?})"
	awk '{ n = $NF; t += n; if ($0 ~ /;thread_a \(/) a += n; else if ($0 ~ /;thread_b \(/) b += n
		else if ($0 ~ /;thread_c \(/) c += n; else o += n }
		END { printf "#   the process, no tid filter: %d samples: thread_a %d, thread_b %d, thread_c %d on their stacks, %d neither\n", t, a, b, c, o }' "$TMP/thr.all"
	line="#   by tid="
	for x in a b c main; do
		if [ "$x" = main ]; then tid=$PY_PID; else tid=$(awk -v x="$x" '$1 == "thread" && $2 == x {print $3}' "$out"); fi
		n=$(curl -sf "$URL/api/v1/folded?pid=$PY_PID&from=$FROM&to=$TO&tid=${tid:-0}" | awk '{ t += $NF } END { print t + 0 }')
		sum=$((sum + n))
		line="$line $x (${tid:-?}) $n,"
	done
	echo "$line another tid $(($(awk '{ t += $NF } END { print t + 0 }' "$TMP/thr.all") - sum))"
	echo "#   the workload's own count (ran THREAD CALLS CPU_S): $(grep '^ran ' "$out" | cut -d' ' -f2- | tr '\n' ';')"
	curl -sf "$URL/api/v1/samples?pid=$PY_PID&from=$FROM&to=$TO" |
		awk -v f="$FROM" '!/^#/ && !/;thread_[abc] \(/ { if (++k <= 3) printf "#   neither, %.2f s after FROM: %s\n", $1 - f, substr($0, index($0, " ") + 1, 500) }'
}

check_threads() { # NAME OUT
	local name=$1 out=$2 x tid own other tot cpu fails=$T_FAILS
	for x in a b c; do
		tid=$(awk -v x="$x" '$1 == "thread" && $2 == x {print $3}' "$out")
		cpu=$(awk -v x="$x" '$1 == "ran" && $2 == x {print $4}' "$out")
		folded "$TMP/thr.$x" "$PY_PID" "$FROM" "$TO" "$tid"
		read -r tot own other < <(awk -v x="$x" '{ n = $NF; tot += n
			s = substr($0, 1, length($0) - length($NF) - 1); k = split(s, f, ";"); py = ""
			for (i = 1; i <= k; i++) if (f[i] ~ /_\[py\]$/) py = py ";" f[i]
			if (py ~ /_bootstrap \([^;]*threading\.py\)_\[py\]/ &&
			    py ~ (";thread_" x " \\([^;]*\\)_\\[py\\];burn_" x " \\(")) own += n
			else if (py ~ /;burn_[abc] \(/) other += n }
			END { print tot + 0, own + 0, other + 0 }' "$TMP/thr.$x")
		echo "# $name: thread $x (tid ${tid:-?}): $tot samples, $own own stack, $other another's"
		check "$name: thread $x sampled ($tot samples; its CPU time ${cpu:-?} s)" test "${tot:-0}" -ge 20
		check "$name: thread $x: >= 95% its own thread_$x;burn_$x under threading's _bootstrap ($own of $tot)" \
			test $((own * 100)) -ge $((tot * 95))
		check "$name: thread $x: no other thread's function ($other)" test "$other" -eq 0
	done
	[ "$T_FAILS" -eq "$fails" ] || thread_counts "$out"
}

check_cext() { # NAME FILE
	local name=$1 Z ZL ZD J JN
	read -r Z ZL ZD J JN < <(awk '{ n = $NF; s = substr($0, 1, length($0) - length($NF) - 1)
		k = split(s, f, ";"); last = 0
		for (i = 1; i <= k; i++) if (f[i] ~ /_\[py\]$/) last = i
		nat = 0; for (i = last + 1; i <= k; i++) if (f[i] !~ /_\[k\]$/) nat = 1
		if (s ~ /;zlib_work \([^;]*\)_\[py\];/) { z += n; t = substr(s, index(s, ";zlib_work ("))
			if (t ~ /\)_\[py\];([^;]*;)*(deflate[^;]*|adler32[^;]*|crc32[^;]*|\[libz\.so[^;]*)(;|$)/) zl += n
			if (t ~ /\)_\[py\];([^;]*;)*deflate[^;]*(;|$)/) zd += n }
		if (s ~ /;json_work \([^;]*\)_\[py\];/ && f[last] ~ /iterencode/) { j += n; if (nat) jn += n } }
		END { print z + 0, zl + 0, zd + 0, j + 0, jn + 0 }' "$2")
	echo "# $name: zlib_work $Z samples, $ZL with libz's frames above it ($ZD through deflate); json_work in iterencode $J, $JN with native frames above"
	check "$name: zlib.compress: libz frames above zlib_work in >= 90% ($ZL of $Z)" \
		test $((ZL * 100)) -ge $((Z * 90)) -a "$Z" -ge 20
	# (how much of libz the native walk names is the unwinder's: deflate when it walks libz whole)
	check "$name: zlib.compress: ... through deflate in >= 50% ($ZD of $Z)" \
		test $((ZD * 100)) -ge $((Z * 50))
	check "$name: json.dumps: native encoder frames above JSONEncoder.iterencode in >= 80% ($JN of $J)" \
		test $((JN * 100)) -ge $((J * 80)) -a "$J" -ge 20
}

# --- the offsets table against the headers of each version found ------------------------------
# (scripts/py-offsets.c prints what the headers say, named as python.c's pyvers[] fields)
table() { # MINOR: the table's entry for 3.MINOR, "field value" lines (absent fields are 0)
	awk -v m="$1" '/^static const struct pyver pyvers\[\]/ { t = 1; next } t && /^};/ { exit }
		t { while (match($0, /\.[a-z_]+ = [0-9a-fx]+/)) {
			kv = substr($0, RSTART + 1, RLENGTH - 1); $0 = substr($0, RSTART + RLENGTH)
			split(kv, a, " = "); if (a[1] == "minor") cur = a[2]
			v = a[2]; if (v == "0xffff") v = 65535
			if (cur == m && a[1] !~ /^(kind)$/) print a[1], v } }' "$SRCDIR/src/daemon/unwind/python.c"
}
for inc in /usr/include/python3.1[0-3] "$PYENV_ROOT"/versions/3.1[0-3].*/include/python3.1[0-3]; do
	[ -f "$inc/internal/pycore_runtime.h" ] || continue
	if ! cc -I"$inc" -I"$inc/internal" "$SRCDIR/scripts/py-offsets.c" -o "$TMP/py-offsets" \
		2>"$TMP/cc.log"; then
		not_ok "py-offsets builds against $inc"
		continue
	fi
	"$TMP/py-offsets" | sort >"$TMP/hdr.off"
	table "$(awk '$1 == "minor" {print $2}' "$TMP/hdr.off")" | sort >"$TMP/tab.off"
	join -a 1 -e 0 -o 0,1.2,2.2 "$TMP/hdr.off" "$TMP/tab.off" | awk '$2 != $3' >"$TMP/off.diff"
	check "python.c's offsets for $(awk '$1 == "minor" {print "3." $2}' "$TMP/hdr.off") match $inc" \
		test ! -s "$TMP/off.diff"
	sed 's/^/#   field, headers, table: /' "$TMP/off.diff"
done

# --- Debian's python3.11, started before emberd; a second emberd with [python] lines --------
chrt -f 1 "$DEB" "$W" 10 >"$TMP/deb.out" 2>&1 &
PIDS+=($!)
wait_log "$TMP/deb.out" ready || { not_ok "pyburn starts"; done_testing; }
read -r _ PY_PID T_READY < <(grep -m1 ready "$TMP/deb.out")
sleep 0.5
# the unwind tables hold several libpythons here (and what else runs on the host): room for them
# a drain every 250 ms (default 1 s): a run's samples are in the store 0.6 s after it ends
"$EMBERD" --listen "127.0.0.1:$PORT" -o unwind.memory=64M -o sampling.tick_ms=250 >"$TMP/emberd.log" 2>&1 &
PIDS+=($!)
"$EMBERD" --listen "127.0.0.1:$LPORT" -o python.lines=yes -o sampling.tick_ms=250 >"$TMP/emberd-lines.log" 2>&1 &
PIDS+=($!)
wait_log "$TMP/emberd.log" started || { sed 's/^/# /' "$TMP/emberd.log"; not_ok "emberd starts"; done_testing; }
wait_log "$TMP/emberd-lines.log" started || { not_ok "emberd (lines) starts"; done_testing; }
ok "emberd starts"
T_READY=$(awk -v t="$(date +%s.%N)" 'BEGIN { printf "%.3f", t + 1.5 }') # its samples from then
window "$TMP/deb.out"
folded "$TMP/deb.folded" "$PY_PID" "$FROM" "$TO"
check_shares "debian python3.11 (started before emberd)" "$TMP/deb.folded" "$TMP/deb.out"
drained "http://127.0.0.1:$LPORT"
curl -sf "http://127.0.0.1:$LPORT/api/v1/folded?pid=$PY_PID&from=$FROM&to=$TO" >"$TMP/lines.folded"
L=$(grep -n '^def burn_a' "$W" | cut -d: -f1)
read -r LT LOK < <(awk -v lo="$L" -v hi="$((L + 4))" '{ n = $NF
	if (match($0, /;burn_a \([^;]*pyburn\.py:[0-9]+\)_\[py\]/)) { t += n
		l = substr($0, RSTART, RLENGTH); sub(/\)_\[py\]$/, "", l); sub(/.*:/, "", l)
		if (l + 0 > lo && l + 0 <= hi) ok += n } }
	END { print t + 0, ok + 0 }' "$TMP/lines.folded")
echo "# [python] lines: $LT samples in burn_a, $LOK at a line of its body ($((L + 1))..$((L + 4)))"
check "lines: burn_a frames name a line of its body in >= 95% ($LOK of $LT)" \
	test $((LOK * 100)) -ge $((LT * 95)) -a "$LT" -ge 50
check "lines: frames read 'qualname (file:line)_[py]'" \
	grep -qE ";work \([^;]*pyburn\.py:[0-9]+\)_\[py\];burn_b \([^;]*pyburn\.py:[0-9]+\)_\[py\]" "$TMP/lines.folded"

# --- each interpreter: shares, threads, C extensions -------------------------------------------
for py in "$DEB" "${INTERPS[@]}"; do
	name=$("$py" -c 'import sys; print("python%d.%d.%d" % sys.version_info[:3])')
	[ "$py" = "$DEB" ] && name="debian $name"
	o=$TMP/${name// /_} # each run's output a file of its own: a late writer cannot mix into another's
	if [ "$py" != "$DEB" ]; then
		run_py "$o.s.out" "$py" 7 shares || { not_ok "$name: pyburn starts"; continue; }
		window "$o.s.out"
		folded "$TMP/s.folded" "$PY_PID" "$FROM" "$TO"
		check_shares "$name" "$TMP/s.folded" "$o.s.out"
	fi
	run_py "$o.t.out" "$py" 3 threads || { not_ok "$name: pyburn threads starts"; continue; }
	window "$o.t.out"
	check_threads "$name" "$o.t.out"
	run_py "$o.c.out" "$py" 3 cext || { not_ok "$name: pyburn cext starts"; continue; }
	window "$o.c.out"
	folded "$TMP/c.folded" "$PY_PID" "$FROM" "$TO"
	check_cext "$name" "$TMP/c.folded"
done

# --- processes that exit right after their samples --------------------------------------------
U0=$(py_stat frames_unknown)
for i in 1 2 3 4 5; do
	chrt -f 1 "$DEB" "$W" 0.3 >"$TMP/short.$i" 2>&1
done
sleep 0.8
: >"$TMP/short.folded"
# each process's samples from 1 s before its ready to 0.5 s after its done (not the pid's last
# minute: a busy host reuses pids)
for i in 1 2 3 4 5; do
	read -r p a b < <(awk '/^ready/ { p = $2; a = $3 } /^done/ { b = $2 } END { printf "%s %.3f %.3f\n", p, a - 1, b + 0.5 }' "$TMP/short.$i")
	folded "$TMP/short.$p" "$p" "$a" "$b" && cat "$TMP/short.$p" >>"$TMP/short.folded"
done
read -r ST SW SU < <(awk '{ n = $NF; t += n; if ($0 ~ /;work \([^;]*pyburn\.py\)_\[py\];burn_[abc] \(/) w += n
	if ($0 ~ /\[unknown\]_\[py\]/) u += n } END { print t + 0, w + 0, u + 0 }' "$TMP/short.folded")
U1=$(py_stat frames_unknown)
echo "# 5 processes of 0.45 s: $ST samples, $SW in burn_a/b/c under work, $SU [unknown]_[py]; frames_unknown $U0 -> $U1"
check "short-lived processes: sampled" test "$ST" -ge 50
check "short-lived processes: their Python functions named (>= 50% in burn_*: $SW of $ST)" \
	test $((SW * 2)) -ge "$ST" ||
	awk '$0 !~ /;work \([^;]*pyburn\.py\)_\[py\];burn_[abc] \(/ { n = $NF; $NF = ""
		sub(/^[^;]*;/, ""); c[substr($0, 1, 300)] += n } END { for (k in c) print c[k], k }' \
		"$TMP/short.folded" | sort -rn | head -8 | sed 's/^/#   elsewhere: /'
check "short-lived processes: no [unknown]_[py] frame" test "$SU" -eq 0 -a "$U1" -eq "$U0"

# --- python3.12 -X perf side by side with perf --------------------------------------------------
P12=
for py in "${INTERPS[@]}"; do case $py in */python3.12) P12=$py ;; esac; done
if [ -z "$P12" ]; then
	skip "python3.12 -X perf vs perf" "no pyenv python3.12"
elif ! command -v perf >/dev/null; then
	skip "python3.12 -X perf vs perf" "perf not installed"
else
	PERF_TMP=$(mktemp -d /tmp/ember-perf.XXXXXX) # perf reads /tmp/perf-PID.map
	# 12 s: it must outlive perf's 6 s, whose start (its setup, then the sleep) took over 2 s
	# beside the browser tests once (ZD3): the target gone first, perf record SIGTERMs its
	# workload and exits 143 ("Terminated", "perf record ran" failed)
	chrt -f 1 "$P12" -X perf "$W" 12 >"$TMP/x.out" 2>&1 &
	PIDS+=($!)
	wait_log "$TMP/x.out" ready
	read -r _ PY_PID T_READY < <(grep -m1 ready "$TMP/x.out")
	perf record -F 99 --call-graph dwarf -p "$PY_PID" -o "$PERF_TMP/perf.data" -- sleep 6 \
		>"$TMP/perf.log" 2>&1
	check "perf record ran" test $? -eq 0 || sed 's/^/#   perf: /' "$TMP/perf.log" | tail -5
	T_PERF=$(date +%s.%N)
	window "$TMP/x.out" asis
	folded "$TMP/x.folded" "$PY_PID" "$T_READY" "$T_PERF"
	# innermost Python function of each sample: perf's first py:: frame, emberd's last _[py]
	perf script -i "$PERF_TMP/perf.data" 2>/dev/null | awk '
		/^[^ \t]/ { if (fn != "") print fn; fn = ""; next }
		fn == "" && match($0, /py::[^:]+:/) { fn = substr($0, RSTART + 4, RLENGTH - 5) }
		END { if (fn != "") print fn }' | sort | uniq -c >"$TMP/perf.fns"
	awk '{ n = $NF; s = substr($0, 1, length($0) - length($NF) - 1); k = split(s, f, ";"); fn = ""
		for (i = 1; i <= k; i++) if (f[i] ~ /_\[py\]$/) fn = f[i]
		sub(/ \(.*$/, "", fn); if (fn != "") c[fn] += n }
		END { for (x in c) print c[x], x }' "$TMP/x.folded" >"$TMP/ember.fns"
	rm -rf "$PERF_TMP"
	for x in burn_a burn_b burn_c; do
		PS=$(awk -v x="$x" '$2 ~ /^(work|burn_[abc])$/ { t += $1; if ($2 == x) s += $1 }
			END { printf "%.1f", t ? 100 * s / t : 0 }' "$TMP/perf.fns")
		ES=$(awk -v x="$x" '$2 ~ /^(work|burn_[abc])$/ { t += $1; if ($2 == x) s += $1 }
			END { printf "%.1f", t ? 100 * s / t : 0 }' "$TMP/ember.fns")
		echo "# -X perf: $x perf $PS% emberd $ES% (innermost Python function)"
		check "python3.12 -X perf: $x share, emberd vs perf, within 5 pp ($ES vs $PS)" within "$ES" "$PS" 5
	done
	check "python3.12 -X perf: perf saw the Python functions" \
		test "$(awk '$2 ~ /^burn_/ { t += $1 } END { print t + 0 }' "$TMP/perf.fns")" -ge 100
fi

# --- interpreters ember does not read: native frames, counted ------------------------------------
cp "$DEB" "$TMP/python3.99"
python3 - "$TMP/python3.99" <<'EOF'
# Py_Version (3.11.x) rewritten as 3.99 in a copy of the binary: a build ember does not know
import struct, subprocess, sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
sym = [l.split() for l in subprocess.check_output(["nm", "-D", path], text=True).splitlines()]
v = int([s[0] for s in sym if s[-1] == "Py_Version"][0], 16)
phoff, = struct.unpack_from("<Q", data, 0x20)
phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
for i in range(phnum):
    ptype, _, off, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
    if ptype == 1 and vaddr <= v < vaddr + filesz:
        at = off + v - vaddr
old, = struct.unpack_from("<I", data, at)
assert old >> 24 == 3
struct.pack_into("<I", data, at, (old & 0xffff) | 0x03630000)
open(path, "wb").write(data)
EOF
# side by side, at the normal priority, each for 2 s of its own CPU time (>= 100 samples however
# many share the CPUs: 4 s of the clock each gave python3.9 < 100 beside the browser tests in
# CI), and their samples counted as unsupported together (S0 and S1 are the host's counter)
S0=$(py_stat samples_unsupported)
OLDRUN=() OTS=0
for py in "$TMP/python3.99" "${OLD[@]}"; do
	name=${py##*/}
	PYBURN_CPU=1 "$py" "$W" 2 shares >"$TMP/o.$name" 2>&1 &
	PIDS+=($!)
	OLDRUN+=("$name")
done
for name in "${OLDRUN[@]}"; do
	wait_log "$TMP/o.$name" ready || { not_ok "$name: pyburn starts"; continue; }
	read -r _ PY_PID T_READY < <(grep -m1 ready "$TMP/o.$name")
	window "$TMP/o.$name" asis
	folded "$TMP/o.folded" "$PY_PID" "$T_READY" "$TO"
	read -r OT OP < <(awk '{ t += $NF; if ($0 ~ /_\[py\]/) p += $NF } END { print t + 0, p + 0 }' "$TMP/o.folded")
	echo "# $name: $OT samples, $OP with Python frames"
	check "$name: sampled" test "$OT" -ge 100
	check "$name: native frames only (no _[py])" test "$OP" -eq 0
	OTS=$((OTS + OT))
done
S1=$(py_stat samples_unsupported)
echo "# ${OLDRUN[*]}: $OTS samples; samples_unsupported $S0 -> $S1"
check "${OLDRUN[*]}: their samples counted as unsupported ($((S1 - S0)) for $OTS)" test $((S1 - S0)) -ge "$OTS" -a "$OTS" -gt 0

grep -E 'warning|error' "$TMP/emberd.log" | sed 's/^/# /'
done_testing
