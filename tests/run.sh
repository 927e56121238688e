#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs ember's test suites and ends with one line: "N passed, N failed, N skipped".
#
# Every test program speaks a TAP subset on stdout: "ok - name", "not ok - name",
# "ok - name # SKIP reason" (cmocka binaries run with CMOCKA_MESSAGE_OUTPUT=TAP). A program that
# prints no such line counts as one test: exit 0 passed, 77 skipped, anything else failed; a
# program that fails after printing results adds one failure for the exit status.
#
# Usage: tests/run.sh [all|layering|unit|golden|fuzz-seeds|cli|integration|browser ...] [NAME...]
#   A suite runs all its tests; a NAME runs one test: "integration/test_unwind" (or just
#   "test_unwind", looked up in every suite), "unit/test_store" (plain and sanitized builds),
#   "golden/merge-grep-ere" (one case of tests/data). Shell patterns work: 'unit/test_s*'.
#
# The whole suite runs in two lanes on a machine of 2 CPUs or more (TEST_LANES=1: one lane): the
# integration tests that measure (shares, latencies, emberd's CPU, memory) one after another in
# the first, and beside them what measures nothing of the kind, at a lower priority (nice 19,
# the browser's pages 10): the unit and fuzz builds, unit, golden, fuzz-seeds, cli, browser;
# then, at the first lane's priority, the light integration tests that say "# lane: beside" in
# their first 20 lines (the first lane, its own done, takes them too, from the list's end).
# The tests that say "# lane: alone" run last, once the second lane is done: the machine is theirs.
# The integration suite leaves much of the machine idle (its tests wait on emberd's ticks, on
# exporters and attacks: 0.6 CPU of 2 on average; TEST_CPU=1 prints each test's CPU time), which
# the second lane fills.
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
cd "$SRCDIR"
LOGDIR=$OUTPUT/test-logs
mkdir -p "$LOGDIR"
# the tests' python3 is the system's (scripts/packages.txt), found first in PATH: a version
# manager's shim there (pyenv's) is a shell script that costs ~0.1 s of CPU a call, and the
# suite calls python3 thousands of times (test_fleet_export alone 214 times: 27 s of its 87)
if [ -x /usr/bin/python3 ]; then
	mkdir -p "$OUTPUT/test-bin"
	ln -sfn /usr/bin/python3 "$OUTPUT/test-bin/python3"
	export PATH=$OUTPUT/test-bin:$PATH
fi
# a test that hangs ends here and fails, not at the suite's end (the longest, test_fleet_export,
# takes ~3 min on a loaded 2-core machine)
TEST_TIMEOUT=${TEST_TIMEOUT:-420}
passed=0 failed=0 skipped=0
failures=()

run_one() { # name, command...
	local name=$1; shift
	local log=$LOGDIR/${name//\//_}.log rc p f s
	local t0=$SECONDS
	local cg=
	if [ -n "${TEST_CPU:-}" ]; then cg=$(cpu_cgroup "$name"); fi
	(
		[ -n "$cg" ] && echo $BASHPID >"$cg/cgroup.procs"
		exec ${LANE_NICE:+nice -n "$LANE_NICE"} timeout -k 10 "$TEST_TIMEOUT" "$@"
	) >"$log" 2>&1 </dev/null
	rc=$?
	p=$(grep -cE '^ok ' "$log" | head -1)
	s=$(grep -cE '^ok .*# (SKIP|skip)' "$log" | head -1)
	f=$(grep -cE '^not ok ' "$log" | head -1)
	p=$((p - s))
	if [ $((p + s + f)) -eq 0 ]; then
		case $rc in 0) p=1 ;; 77) s=1 ;; *) f=1 ;; esac
	elif [ $rc -ne 0 ] && [ $rc -ne 77 ] && [ "$f" -eq 0 ]; then
		f=1 # crashed or failed after reporting only successes
	fi
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	local status=ok out
	[ "$f" -gt 0 ] && { status=FAIL; failures+=("$name"); }
	[ "$f" -eq 0 ] && [ "$p" -eq 0 ] && [ "$s" -gt 0 ] && status=skip
	[ $rc -eq 124 ] && status="FAIL (timeout)"
	out=$(printf '%-6s %-48s %4d passed %3d failed %3d skipped  %3ds%s%s' "$status" "$name" "$p" \
		"$f" "$s" $((SECONDS - t0)) "$(cpu_used "$cg")" "$LANE_TAG")
	if [ "$f" -gt 0 ]; then
		out+=$'\n'$(grep -E '^not ok |ERROR|FAILED|Assertion|runtime error|AddressSanitizer' "$log" |
			head -20 | sed 's/^/       | /')
		out+=$'\n'"       | (full log: $log)"
	fi
	# one write: the two lanes' lines do not interleave
	printf '%s\n' "$out"
}
LANE_TAG=

# TEST_CPU=1: each test in a cgroup of its own (the test, its emberd, its workloads), its CPU time
# printed beside its wall time: how much of the machine a test leaves idle
cpu_cgroup() { # name: the cgroup's folder, or nothing
	local d
	for d in /sys/fs/cgroup/cpuacct /sys/fs/cgroup/unified /sys/fs/cgroup; do
		[ -e "$d/cpuacct.usage" ] || [ -e "$d/cgroup.controllers" ] || continue
		d=$d/ember-test-${1//\//_}
		mkdir -p "$d" 2>/dev/null && [ -w "$d/cgroup.procs" ] && { echo "$d"; return; }
	done
}
cpu_used() { # folder: "  cpu N.N s", and the folder removed
	local us=
	[ -n "$1" ] || return 0
	if [ -r "$1/cpuacct.usage" ]; then
		us=$(($(cat "$1/cpuacct.usage") / 1000))
	elif [ -r "$1/cpu.stat" ]; then
		us=$(awk '$1 == "usage_usec" { print $2 }' "$1/cpu.stat")
	fi
	rmdir "$1" 2>/dev/null
	[ -n "$us" ] && printf '  cpu %d.%d s' $((us / 1000000)) $((us / 100000 % 10))
}

suite_unit() {
	local t
	for t in "$OUTPUT"/obj/tests/unit/test_*; do
		[ -x "$t" ] && [ "${t%.o}" = "$t" ] || continue
		CMOCKA_MESSAGE_OUTPUT=TAP run_one "unit/$(basename "$t")" "$t"
	done
	for t in "$OUTPUT"/asan/tests/unit/test_*; do
		[ -x "$t" ] && [ "${t%.o}" = "$t" ] || continue
		CMOCKA_MESSAGE_OUTPUT=TAP ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
			UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
			run_one "asan/$(basename "$t")" "$t"
	done
}

suite_golden() {
	run_one golden tests/golden.sh
}

suite_layering() {
	run_one layering scripts/check-layering.sh
}

# One test by name (see Usage); 0 if something matched.
run_named() {
	local n=$1 t hit=1 s bins="obj asan" dirs="cli integration browser"
	case $n in
	golden/*) run_one "$n" tests/golden.sh "${n#golden/}"; return 0 ;;
	unit/*) dirs= ;;		 # the unit test only, plain and sanitized
	asan/*) bins=asan dirs= ;;
	cli/* | integration/* | browser/*) bins= dirs=${n%%/*} ;;
	esac
	n=${n#*/}
	for s in $bins; do
		for t in "$OUTPUT"/$s/tests/unit/$n; do
			[ -x "$t" ] && [ "${t%.o}" = "$t" ] || continue
			CMOCKA_MESSAGE_OUTPUT=TAP ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
				UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
				run_one "$([ "$s" = obj ] && echo unit || echo asan)/$(basename "$t")" "$t"
			hit=0
		done
	done
	for s in $dirs; do
		for t in tests/$s/$n.sh; do
			[ -f "$t" ] || continue
			run_one "$s/$(basename "$t" .sh)" bash "$t"
			hit=0
		done
	done
	return $hit
}

# Replays each fuzz target over its seed corpus: no mutation, just the regression inputs. The
# targets as `make seed-bins` links them: tests/fuzz/replay.c's main and the sanitized build.
suite_fuzz_seeds() {
	local f name
	for f in "$OUTPUT"/asan/fuzz/fuzz_*; do
		[ -x "$f" ] || continue
		name=$(basename "$f")
		run_one "fuzz-seeds/$name" tests/fuzz/run.sh --seeds-only "$f"
	done
}

# beside FILE: the test says it may run beside the measuring tests ("# lane: beside"); alone
# FILE: it wants the machine to itself ("# lane: alone"), so it runs once the second lane is done
beside() { head -20 "$1" | grep -q '^# lane: beside'; }
alone() { head -20 "$1" | grep -q '^# lane: alone'; }

# claim FILE: this lane runs it (both lanes take the tests beside from one list: the second
# from its start, the first from its end once its own tests are done; a mkdir decides)
claim() { [ -z "${CLAIMS:-}" ] || mkdir "$CLAIMS/$(basename "$1")" 2>/dev/null; }

suite_scripts() { # folder [all|solo|beside|beside-from-end|alone]
	local t i
	local -a ts=(tests/"$1"/test_*.sh)
	for ((i = 0; i < ${#ts[@]}; i++)); do
		t=${ts[i]}
		[ "${2:-}" = beside-from-end ] && t=${ts[${#ts[@]} - 1 - i]}
		[ -f "$t" ] || continue
		case ${2:-all} in
		solo) beside "$t" || alone "$t" && continue ;;
		beside | beside-from-end) beside "$t" && claim "$t" || continue ;;
		alone) alone "$t" || continue ;;
		esac
		run_one "$1/$(basename "$t" .sh)" bash "$t"
	done
}

run_suite() {
	case $1 in
	layering) suite_layering ;;
	unit) suite_unit ;;
	golden) suite_golden ;;
	fuzz-seeds) suite_fuzz_seeds ;;
	cli|browser) suite_scripts "$1" ;;
	integration) suite_scripts integration "${2:-all}" ;;
	*) run_named "$1" || { echo "no suite or test named '$1'" >&2; exit 2; } ;;
	esac
}

suites=("$@")
lanes=${TEST_LANES:-$(nproc 2>/dev/null || echo 1)}
if [ ${#suites[@]} -eq 0 ] || [ "${suites[0]}" = all ]; then
	suites=(layering unit golden fuzz-seeds cli integration browser)
else
	lanes=1 # suites or tests by name: one after another, as asked
fi
suite_times=()
run_start=$SECONDS
if [ "$lanes" -ge 2 ]; then
	# the second lane: a subshell, its lines printed as they come (one write each), its counts,
	# failures and times read back at the end
	rm -f "$LOGDIR/lane2.result"
	CLAIMS=$LOGDIR/claims
	rm -rf "$CLAIMS"
	mkdir -p "$CLAIMS"
	(
		LANE_TAG="  (beside)" LANE_NICE=19
		# the unit and fuzz binaries, when make left them to this lane
		if [ -n "${TEST_BESIDE_BUILD:-}" ]; then
			t_suite=$SECONDS
			# a build, not a test: at nice 19 beside a busy first lane it may take minutes
			# (421 s beside other builds at load 8: past a test's timeout)
			TEST_TIMEOUT=1800 run_one build-beside $TEST_BESIDE_BUILD
			suite_times+=("build-beside $((SECONDS - t_suite))s")
		fi
		for s in unit golden fuzz-seeds cli browser "integration beside"; do
			# the integration tests beside run at the first lane's priority: they bound
			# latencies of their own (light ones: 0.1-0.5 CPU)
			# the builds and the suites that measure nothing at nice 19: they take the CPU
			# the first lane leaves idle (at nice 5 the ASan and fuzz builds took a quarter
			# of the CPUs from its tests: test_exec's shells 156 samples of the 300 needed);
			# the browser's pages and their live emberd at nice 10 (timeouts of their own)
			[ "$s" = browser ] && LANE_NICE=10
			[ "$s" = "integration beside" ] && LANE_NICE=
			t_suite=$SECONDS
			run_suite $s
			suite_times+=("${s/ /:} $((SECONDS - t_suite))s")
		done
		{
			echo "$passed $failed $skipped"
			echo "${failures[*]}"
			echo "$(IFS=,; echo "${suite_times[*]}")"
		} >"$LOGDIR/lane2.result"
	) &
	lane2=$!
	for s in layering "integration solo"; do
		t_suite=$SECONDS
		run_suite $s
		suite_times+=("${s/ /:} $((SECONDS - t_suite))s")
	done
	# its own done, the first lane takes the tests beside that the second has not come to yet
	# (it waited 186-275 s for the second lane in the runs of 2026-11-30)
	t_suite=$SECONDS
	LANE_TAG="  (beside, first lane)"
	run_suite integration beside-from-end
	LANE_TAG=
	suite_times+=("integration:beside-first-lane $((SECONDS - t_suite))s")
	t_wait=$SECONDS
	wait "$lane2"
	echo "# the first lane waited $((SECONDS - t_wait)) s for the second"
	# what else has a CPU as the machine becomes the alone tests' (fresh-clone run ZQ1: the
	# first of them found another process taking a CPU, not understood)
	echo "# before the alone tests: load $(cut -d' ' -f1-3 /proc/loadavg); the busiest processes over 1 s:"
	python3 - <<'PY' 2>/dev/null | sed 's/^/#   /'
import glob, time
def cpu():
    r = {}
    for f in glob.glob("/proc/[0-9]*/stat"):
        try:
            s = open(f).read()
        except OSError:
            continue
        comm = s[s.index("(") + 1:s.rindex(")")]
        x = s[s.rindex(")") + 2:].split()
        r[f.split("/")[2]] = (comm, int(x[11]) + int(x[12]))
    return r
a = cpu(); time.sleep(1); b = cpu()
d = sorted(((v[1] - a[k][1], k, v[0]) for k, v in b.items() if k in a), reverse=True)[:5]
for t, pid, comm in d:
    print("pid %s %s: %d ticks" % (pid, comm, t))
PY
	t_suite=$SECONDS
	run_suite integration alone
	suite_times+=("integration:alone $((SECONDS - t_suite))s")
	if [ -s "$LOGDIR/lane2.result" ]; then
		{ read -r p2 f2 s2; read -r fl2; read -r st2; } <"$LOGDIR/lane2.result"
		passed=$((passed + p2)); failed=$((failed + f2)); skipped=$((skipped + s2))
		[ -n "$fl2" ] && failures+=($fl2)
		IFS=, read -r -a t2 <<<"$st2"
		suite_times+=("${t2[@]}")
	else
		echo "FAIL   the second lane ended without its counts"
		failed=$((failed + 1)); failures+=("lane2")
	fi
else
	for s in "${suites[@]}"; do
		t_suite=$SECONDS
		run_suite "$s"
		suite_times+=("$s $((SECONDS - t_suite))s")
	done
fi
echo
[ ${#suite_times[@]} -gt 1 ] && echo "time by suite: $(IFS=,; echo "${suite_times[*]}" | sed 's/,/, /g'); $((SECONDS - run_start))s in all"
if [ ${#failures[@]} -gt 0 ]; then
	echo "failed: ${failures[*]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
