#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs libFuzzer targets. Each target fuzz_<name> takes its seeds from tests/fuzz/corpus/<name>/
# (read-only) and keeps what it finds in $OUTPUT/fuzz/corpus/<name>/.
#   tests/fuzz/run.sh [--seeds-only] BIN...   (FUZZ_SECONDS per target, default 60)
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
# UBSan findings are crashes (with an artifact), not log lines that scroll by
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
seeds_only=0
[ "${1:-}" = --seeds-only ] && { seeds_only=1; shift; }
rc=0
for bin in "$@"; do
	name=$(basename "$bin"); name=${name#fuzz_}
	seeds=$SRCDIR/tests/fuzz/corpus/$name
	work=$OUTPUT/fuzz/corpus/$name
	mkdir -p "$work" "$OUTPUT/fuzz/artifacts"
	if [ $seeds_only -eq 1 ]; then
		[ -d "$seeds" ] || { echo "no seed corpus for $name"; exit 1; }
		"$bin" -runs=0 "$seeds" || rc=1
		continue
	fi
	echo "== fuzz_$name for ${FUZZ_SECONDS:-60}s"
	"$bin" -max_total_time="${FUZZ_SECONDS:-60}" -print_final_stats=1 \
		-artifact_prefix="$OUTPUT/fuzz/artifacts/$name-" "$work" \
		$( [ -d "$seeds" ] && echo "$seeds" ) 2>&1 | tee "$OUTPUT/fuzz/$name.log" |
		grep -E 'stat::number_of_executed_units|cov:|ERROR|SUMMARY' | tail -4
	[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
done
exit $rc
