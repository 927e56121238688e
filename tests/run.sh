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
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
cd "$SRCDIR"
LOGDIR=$OUTPUT/test-logs
mkdir -p "$LOGDIR"
# a test that hangs ends here and fails, not at the suite's end (the longest, test_fleet_export,
# takes ~3 min on a loaded 2-core machine)
TEST_TIMEOUT=${TEST_TIMEOUT:-420}
passed=0 failed=0 skipped=0
failures=()

run_one() { # name, command...
	local name=$1; shift
	local log=$LOGDIR/${name//\//_}.log rc p f s
	local t0=$SECONDS
	timeout -k 10 "$TEST_TIMEOUT" "$@" >"$log" 2>&1 </dev/null
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
	local status=ok
	[ "$f" -gt 0 ] && { status=FAIL; failures+=("$name"); }
	[ "$f" -eq 0 ] && [ "$p" -eq 0 ] && [ "$s" -gt 0 ] && status=skip
	[ $rc -eq 124 ] && status="FAIL (timeout)"
	printf '%-6s %-48s %4d passed %3d failed %3d skipped  %3ds\n' "$status" "$name" "$p" "$f" "$s" \
		$((SECONDS - t0))
	if [ "$f" -gt 0 ]; then
		grep -E '^not ok |ERROR|FAILED|Assertion|runtime error|AddressSanitizer' "$log" | head -20 |
			sed 's/^/       | /'
		echo "       | (full log: $log)"
	fi
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
	local n=$1 t hit=1 s
	case $n in
	golden/*) run_one "$n" tests/golden.sh "${n#golden/}"; return 0 ;;
	unit/* | asan/*) n=${n#*/} ;;
	esac
	for t in "$OUTPUT"/obj/tests/unit/${n#unit/} "$OUTPUT"/asan/tests/unit/${n#unit/}; do
		[ -x "$t" ] && [ "${t%.o}" = "$t" ] || continue
		s=unit
		case $t in "$OUTPUT"/asan/*) s=asan ;; esac
		CMOCKA_MESSAGE_OUTPUT=TAP ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
			UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
			run_one "$s/$(basename "$t")" "$t"
		hit=0
	done
	for t in tests/cli/${n#*/}.sh tests/integration/${n#*/}.sh tests/browser/${n#*/}.sh; do
		[ -f "$t" ] || continue
		s=${t#tests/}
		run_one "${s%.sh}" bash "$t"
		hit=0
	done
	return $hit
}

# Replays each fuzz target over its seed corpus: no mutation, just the regression inputs.
suite_fuzz_seeds() {
	local f name
	for f in "$OUTPUT"/fuzz/bin/fuzz_*; do
		[ -x "$f" ] || continue
		name=$(basename "$f")
		run_one "fuzz-seeds/$name" tests/fuzz/run.sh --seeds-only "$f"
	done
}

suite_scripts() { # folder
	local t
	for t in tests/"$1"/test_*.sh; do
		[ -f "$t" ] || continue
		run_one "$1/$(basename "$t" .sh)" bash "$t"
	done
}

suites=("$@")
[ ${#suites[@]} -eq 0 ] || [ "${suites[0]}" = all ] &&
	suites=(layering unit golden fuzz-seeds cli integration browser)
suite_times=()
run_start=$SECONDS
for s in "${suites[@]}"; do
	t_suite=$SECONDS
	case $s in
	layering) suite_layering ;;
	unit) suite_unit ;;
	golden) suite_golden ;;
	fuzz-seeds) suite_fuzz_seeds ;;
	cli|integration|browser) suite_scripts "$s" ;;
	*) run_named "$s" || { echo "no suite or test named '$s'" >&2; exit 2; } ;;
	esac
	suite_times+=("$s $((SECONDS - t_suite))s")
done
echo
[ ${#suite_times[@]} -gt 1 ] && echo "time by suite: $(IFS=,; echo "${suite_times[*]}" | sed 's/,/, /g'); $((SECONDS - run_start))s in all"
if [ ${#failures[@]} -gt 0 ]; then
	echo "failed: ${failures[*]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
