#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# (lane 1: the workload's main thread runs at real-time priority; its shares held within 3 pp)
# Java frames: the real emberd names the methods of a stock HotSpot JVM with no flag in the
# program (no -XX:+PreserveFramePointer, no agent), from libjvm.so's own vmStructs data, on
# Debian's OpenJDK 17 (EMBER_JAVA to test another java):
#   - tests/workloads/javaburn/App.java run as `java -cp DIR App`: a static method, an instance
#     method and a lambda's body (called through an interface) at 50/30/20 % of the time; the
#     instance method's work in a method the JIT inlines into it, which makes an interface call:
#     that frame expanded into the methods inlined at its pc;
#     >= 90 % of the process's samples name a method of its own, each share within 3 pp of the
#     split the program reports it took; the Java frames sit under the VM's own native frames
#     (JavaCalls::call_helper: the walk went back into native code) and over App.main (an
#     interpreted or compiled caller);
#   - the same program seen by an emberd with [hotspot] enabled = no: no method named;
#   - hostile JVMs (tests/workloads/fakejvm.c, run as uid 65534, when Debian's libjvm.so is
#     there): a process that loads libjvm.so without starting a VM and forges its code cache
#     (heaps over its own code, a segment map that loops, code blobs with forged names and frame
#     sizes, methods whose Symbols claim 65535 bytes or point into unmapped memory): emberd keeps
#     serving, names stay bounded, no name of another process appears, failures are counted.
. "$(dirname "$0")/../lib.sh"
require_live_emberd
command -v chrt >/dev/null || skip_all "no chrt"
JAVA=${EMBER_JAVA:-$(command -v java)}
[ -n "$JAVA" ] && [ -x "$JAVA" ] || skip_all "no java (openjdk-17-jdk-headless)"
CP=$OUTPUT/workloads/javaburn
[ -f "$CP/App.class" ] || skip_all "no $CP/App.class (make workloads, with javac)"

trap 'stop_all; cleanup_tmp' EXIT

# hs_stat KEY URL: a counter of /api/v1/stats "hotspot"
hs_stat() {
	curl -sf "$2/api/v1/stats" | python3 -c \
		'import json, sys; print(json.load(sys.stdin).get("hotspot", {}).get(sys.argv[1], -1))' "$1"
}
within() { awk -v x="$1" -v e="$2" -v d="$3" 'BEGIN { exit !(x - e <= d && e - x <= d) }'; }
atleast() { awk -v x="$1" -v e="$2" 'BEGIN { exit !(x >= e) }'; }

# javac's line tables of the program's methods (javap -l), read before any emberd starts: six
# short JVMs the daemons would otherwise examine and sample beside the test's own
JAVAP=$(dirname "$(readlink -f "$JAVA")")/javap
if [ -x "$JAVAP" ]; then
	for c in "$CP"/*.class; do
		n=$(basename "$c" .class)
		echo "class $n"
		"$JAVAP" -l -p -cp "$CP" "$n"
	done >"$TMP/javap.txt"
fi

# emberd A: Java frames read (the default); B: [hotspot] enabled = no
emberd_serve -F 199 || { not_ok "emberd A starts"; done_testing; }
URL_A=$URL
PORT_B=$(free_port)
URL_B=http://127.0.0.1:$PORT_B
"$EMBERD" --listen "127.0.0.1:$PORT_B" -F 199 -o hotspot.enabled=no >"$TMP/emberd_b.log" 2>&1 &
PIDS+=($!)
wait_http "$URL_B/healthz" 200 $! || { not_ok "emberd B starts"; sed 's/^/# /' "$TMP/emberd_b.log"; done_testing; }
# emberd C: [hotspot] lines = yes (each Java frame's file and line)
PORT_C=$(free_port)
URL_C=http://127.0.0.1:$PORT_C
"$EMBERD" --listen "127.0.0.1:$PORT_C" -F 99 -o hotspot.lines=yes >"$TMP/emberd_c.log" 2>&1 &
EMBERD_C=$!
PIDS+=($EMBERD_C)
wait_http "$URL_C/healthz" 200 $EMBERD_C || { not_ok "emberd C starts"; sed 's/^/# /' "$TMP/emberd_c.log"; done_testing; }

# --- java -cp DIR App: no flag ------------------------------------------------------------------
# measured from the moment emberd A is seen naming a method of the program (the JVM examined at
# its first samples, libjvm's tables read once) to done - 0.1 s
# The main thread alone at real-time priority (as test_node's node): the whole JVM under
# `chrt -f 1` has its JIT and GC threads keep emberd's worker off both CPUs at start (a run saw
# no sample of it stored in its 10 s)
OUT=$TMP/java.out
"$JAVA" -cp "$CP" App 10 >"$OUT" 2>&1 &
PIDS+=($!)
wait_log "$OUT" '^ready [0-9]* [0-9.]* [0-9]*$' || not_ok "java App prints ready"
read -r _ JPID T_READY JTID < <(grep -m1 ready "$OUT")
echo "# java: $(grep -m1 ready "$OUT")"
chrt -f -p 1 "$JTID" >/dev/null || not_ok "chrt -f -p 1 $JTID (the JVM's main thread)"
FROM=$(awk -v t="$T_READY" 'BEGIN { printf "%.3f", t + 1.5 }')
for _ in $(seq 60); do
	t=$(date +%s.%N)
	if curl -sf "$URL_A/api/v1/folded?pid=$JPID&from=$T_READY" | grep -q ';App\.[a-z][^;]*_\[j\]'; then
		FROM=$(awk -v t="$t" 'BEGIN { printf "%.3f", t }')
		break
	fi
	sleep 0.1
done
echo "# java: measured from $(awk -v f="$FROM" -v r="$T_READY" 'BEGIN { printf "%.1f", f - r }') s after ready"
for _ in $(seq 300); do grep -q '^done [0-9.]*$' "$OUT" && break; sleep 0.1; done
T_DONE=$(awk '/^done/ {print $2}' "$OUT")
TO=$(awk -v t="${T_DONE:-0}" 'BEGIN { printf "%.3f", t - 0.1 }')
read -r _ WS WI WL < <(grep -m1 '^split' "$OUT")
echo "# java: the workload's own split of its wall time: static $WS, instance $WI, lambda $WL"
sleep 1.2 # its last tick stored
curl -sf "$URL_A/api/v1/folded?pid=$JPID&from=$FROM&to=$TO" >"$TMP/java.A"
curl -sf "$URL_B/api/v1/folded?pid=$JPID&from=$FROM&to=$TO" >"$TMP/java.B"
curl -sf "$URL_C/api/v1/folded?pid=$JPID&from=$FROM&to=$TO" >"$TMP/java.C"
# C's work is done: the hostile JVMs below are timed against A alone, as before C was added
kill "$EMBERD_C" 2>/dev/null
wait "$EMBERD_C" 2>/dev/null

# shares FILE: "total named static instance lambda burn_samples": named, % of the samples with
# a method of the workload (App.*, App$*) on the stack; the three: % of the burn samples
shares() {
	awk '{ n = $NF; s = substr($0, 1, length($0) - length($NF) - 1); k = split(s, fr, ";")
		tot += n; named = 0; which = ""
		for (i = 1; i <= k; i++) {
			g = fr[i]
			if (g !~ /_\[j\]$/) continue
			sub(/_\[j\]$/, "", g)
			if (g ~ /^App[.$]/) named = 1
			if (g == "App.burnStatic" || g == "App$Burner.burnInstance" ||
			    g == "App.lambda$main$0")
				which = g
		}
		if (named) nm += n
		if (which != "") { b[which] += n; bt += n } }
		END { t = tot ? tot : 1; u = bt ? bt : 1
		      printf "%d %.1f %.1f %.1f %.1f %d\n", tot, 100 * nm / t,
			     100 * b["App.burnStatic"] / u, 100 * b["App$Burner.burnInstance"] / u,
			     100 * b["App.lambda$main$0"] / u, bt }' "$1"
}

read -r TOT NM S I L BT < <(shares "$TMP/java.A")
echo "# java: $TOT samples, $NM% name a method of the workload; of the $BT in a burn method: static $S%, instance $I%, lambda $L%"
check "java: sampled (>= 300 samples)" test "$TOT" -ge 300
check "java: >= 90% of the samples name a method of the program ($NM%)" atleast "$NM" 90 ||
	awk '$0 !~ /;App[.$]/' "$TMP/java.A" | awk '{ print $NF, $0 }' | sort -rn | head -5 |
	cut -c1-400 | sed 's/^/#   unnamed: /'
check "java: App.burnStatic within 3 pp of the program's $WS ($S)" within "$S" "$WS" 3
check "java: App\$Burner.burnInstance within 3 pp of the program's $WI ($I)" within "$I" "$WI" 3
check "java: App.lambda\$main\$0 within 3 pp of the program's $WL ($L)" within "$L" "$WL" 3
check "java: Java frames between the VM's native frames and back (JavaCalls::call_helper;...;App.main_[j];App.burnStatic_[j])" \
	grep -q 'JavaCalls::call_helper;.*App\.main_\[j\];App\.burnStatic_\[j\]' "$TMP/java.A"
check "java: the lambda's body under its hidden class's method, one name for it (App\$\$Lambda\$N.getAsInt_[j])" \
	grep -q 'App\$\$Lambda\$[0-9]*\.getAsInt_\[j\];App\.lambda\$main\$0_\[j\]' "$TMP/java.A"
# Burner.step is inlined into burnInstance by the JIT; its interface call is not (three
# receivers): the compiled frame is expanded into the methods inlined at its pc
INL=$(awk '{ n = $NF; t += ($0 ~ /App\$Burner\.burnInstance_\[j\]/) ? n : 0
	i += ($0 ~ /App\$Burner\.burnInstance_\[j\];App\$Burner\.step_\[j\];App\$[A-Za-z]*\.apply_\[j\]/) ? n : 0 }
	END { printf "%.1f", t ? 100 * i / t : 0 }' "$TMP/java.A")
check "java: an inlined method as a frame of its own (burnInstance;step;Lcg.apply: $INL% of burnInstance's samples)" \
	atleast "$INL" 20
read -r _ NM_B _ < <(shares "$TMP/java.B")
check "java under [hotspot] enabled = no: no method named ($NM_B%)" atleast 1 "$NM_B"
check "hotspot stats: a JVM read, its frames named ($(hs_stat frames "$URL_A"))" \
	test "$(hs_stat frames "$URL_A")" -gt 0
check "hotspot stats: no frame unreadable in the walk ($(hs_stat walk_bad "$URL_A"))" \
	test "$(hs_stat walk_bad "$URL_A")" -le 5

# [hotspot] lines = yes: the program's frames say "App.java:N", and N is one of the lines javac
# recorded for that method (javap -l: its LineNumberTable), the line of the frame's bytecode
# index (interpreted: its bcp; compiled: its pc's scope)
if [ -s "$TMP/javap.txt" ]; then
	python3 - "$TMP/javap.txt" "$TMP/java.C" >"$TMP/lines.txt" <<'PY'
import re, sys
lines, cls, meth = {}, None, None
for l in open(sys.argv[1]):
	m = re.match(r'^class (\S+)$', l)
	if m:
		cls = m.group(1)
		continue
	m = re.match(r'^  (?:[\w$.<>\[\], ]+ )?([\w$<>]+)\(.*\)(?: throws [\w$.<>, ]+)?;$', l)
	if m and cls:
		meth = cls + '.' + (m.group(1) if m.group(1) != cls else '<init>')
		lines.setdefault(meth, set())
		continue
	m = re.match(r'^\s+line (\d+): \d+$', l)
	if m and meth:
		lines[meth].add(int(m.group(1)))
tot = known = ok = 0
bad, seen, badn = [], set(), {}
for l in open(sys.argv[2]):
	s, n = l.rstrip('\n').rsplit(' ', 1)
	for f in s.split(';'):
		m = re.match(r'^(App[.$][^ ]*) \((.*)\)_\[j\]$', f)
		if not m:
			continue
		tot += int(n)
		src, _, ln = m.group(2).rpartition(':')
		if src != 'App.java' or ln == '?':
			continue
		known += int(n)
		seen.add((m.group(1), ln))
		if int(ln) in lines.get(m.group(1), ()):
			ok += int(n)
		else:
			bad.append(f)
			badn[f] = badn.get(f, 0) + int(n)
print(tot, known, ok, len(seen), len(lines), bad[0] if bad else '-')
for f, k in sorted(badn.items(), key=lambda x: -x[1])[:6]:
	m = f.split(' (')[0]
	print('#   %d samples %s; javap: %s' % (k, f, sorted(lines.get(m, ()))))
PY
	read -r LT LK LOK LSEEN LMETH LBAD < <(head -1 "$TMP/lines.txt")
	echo "# java, lines: $LT frame samples of the program's methods, $LK with App.java and a line, $LOK of them a line of the method's LineNumberTable; $LSEEN method:line pairs seen ($LMETH methods in javap)"
	LKP=$(awk -v k="${LK:-0}" -v t="${LT:-0}" 'BEGIN { printf "%.1f", t ? 100 * k / t : 0 }')
	check "java, [hotspot] lines = yes: >= 90% of the program's frames name App.java and a line ($LKP% of $LT)" \
		sh -c "[ ${LT:-0} -ge 300 ] && awk -v p=$LKP 'BEGIN { exit !(p >= 90) }'" || {
		grep -o 'App[.$][^;]*_\[j\]' "$TMP/java.C" | sort | uniq -c | sort -rn | head -8 | sed 's/^/#   /'
		grep -i "hotspot\|java" "$TMP/emberd_c.log" | tail -3 | sed 's/^/#   log: /'
	}
	check "java, [hotspot] lines = yes: every line named is one of its method's in javac's table ($LOK of $LK; first other: $LBAD)" \
		test "${LOK:-0}" -eq "${LK:-1}" || sed -n '2,$p' "$TMP/lines.txt"
	check "java, [hotspot] lines = yes: the same stacks name their methods as without (App.burnStatic (App.java:N)_[j] under App.main)" \
		grep -q 'App\.main (App\.java:[0-9]*)_\[j\];App\.burnStatic (App\.java:[0-9]*)_\[j\]' "$TMP/java.C"
else
	not_ok "javap next to $JAVA (the JDK's, for javac's line tables)"
fi

# --- hostile JVMs -------------------------------------------------------------------------------
LIBJVM=$(dirname "$(readlink -f "$JAVA")")/../lib/server/libjvm.so
if [ -r "$LIBJVM" ] && [ -x "$OUTPUT/workloads/fakejvm" ]; then
	for_nobody fakejvm
	BAD0=$(hs_stat walk_bad "$URL_A")
	NOBLOB0=$(hs_stat walk_no_blob "$URL_A")
	UNNAMED0=$(hs_stat frames_unnamed "$URL_A")
	# each lives 2-3 s after "ready": a program that loads libjvm itself is seen as a JVM at
	# emberd's first look after the load, a tick (1 s) after its first look at the latest; at
	# 1-2 s (the fake's end is on a whole second) some ended first
	for m in names unmapped hops free frame moving; do
		setpriv --reuid=65534 --regid=65534 --clear-groups "$NOBODY_BIN/fakejvm" "$LIBJVM" $m 3 \
			>"$TMP/fake.$m" 2>&1 &
		PIDS+=($!)
		wait_log "$TMP/fake.$m" ready || { not_ok "fake JVM $m prints ready"; sed 's/^/# /' "$TMP/fake.$m"; continue; }
		read -r _ FPID _ < <(grep -m1 ready "$TMP/fake.$m")
		for _ in $(seq 100); do grep -q '^done' "$TMP/fake.$m" && break; sleep 0.1; done
		sleep 1.2
		curl -sf "$URL_A/api/v1/folded?pid=$FPID" >"$TMP/fake.$m.folded"
		N=$(awk '{ t += $NF } END { print t + 0 }' "$TMP/fake.$m.folded")
		LONG=$(awk -F';' '{ for (i = 1; i <= NF; i++) if (length($i) > m) m = length($i) } END { print m + 0 }' "$TMP/fake.$m.folded")
		check "fake JVM ($m): sampled ($N samples)" test "$N" -ge 50
		check "fake JVM ($m): no frame name over 1100 bytes (longest $LONG)" test "$LONG" -le 1100
		check "fake JVM ($m): no name of another process" \
			sh -c "! grep -q 'App[.\$]\|burn' '$TMP/fake.$m.folded'"
		case $m in
		# the name read bounded; or, seen in 2 of ~10 runs and not understood yet, the first
		# read of the first such process failed (counted) and its one stack kept the
		# placeholder from the ingest's stack cache
		names) check "fake JVM (names): a 65535-byte Symbol read bounded (512 'A's . 512 'B's), or the placeholder" \
			grep -q ';A\{512\}\.B\{512\}_\[j\]\|;\[hotspot compiled\]_\[j\]' "$TMP/fake.$m.folded" || {
			sort -t' ' -k2 -rn "$TMP/fake.$m.folded" | cut -c1-300 | head -6 | sed 's/^/#   its stacks: /'
			sed 's/^/#   fake: /' "$TMP/fake.$m"
			echo "#   hotspot: $(curl -sf "$URL_A/api/v1/stats" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("hotspot"))')"
			grep -i "hotspot\|java" "$TMP/emberd.log" 2>/dev/null | tail -5 | sed 's/^/#   log: /'
		} ;;
		unmapped) check "fake JVM (unmapped): a name into unmapped memory: the placeholder" \
			grep -q ';\[hotspot compiled\]_\[j\]' "$TMP/fake.$m.folded" ;;
		*) check "fake JVM ($m): no Java frame named" \
			sh -c "! grep -q '[AB]_\[j\]' '$TMP/fake.$m.folded'" ;;
		esac
		check "emberd A still serves after fake JVM ($m)" curl -sf -o /dev/null "$URL_A/healthz"
	done
	check "fake JVMs: forged frames counted (walk_bad $BAD0 -> $(hs_stat walk_bad "$URL_A"), walk_no_blob $NOBLOB0 -> $(hs_stat walk_no_blob "$URL_A"), frames_unnamed $UNNAMED0 -> $(hs_stat frames_unnamed "$URL_A"))" \
		test "$(hs_stat walk_bad "$URL_A")" -gt "$BAD0" -a "$(hs_stat walk_no_blob "$URL_A")" -gt "$NOBLOB0" \
		-a "$(hs_stat frames_unnamed "$URL_A")" -gt "$UNNAMED0"
else
	skip "fake JVMs" "no $LIBJVM or $OUTPUT/workloads/fakejvm"
fi

echo "# hotspot stats: $(curl -sf "$URL_A/api/v1/stats" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("hotspot"))')"
stop_all
done_testing
