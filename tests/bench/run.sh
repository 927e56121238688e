#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the benchmarks: every tests/bench/bench_*.sh, or those named (bench_flamegraph, soak ...).
# Each prints a Markdown table of ratios against the reference tool, measured side by side in one
# run; copy the table and the command into docs/benchmarks.md. Not part of `make test`.
# Reference tools: FLAMEGRAPH_DIR=/path/to/FlameGraph (brendangregg/FlameGraph checkout).
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
cd "$SRCDIR"
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for b in tests/bench/bench_*.sh; do [ -f "$b" ] && names+=("$(basename "$b" .sh)"); done
fi
rc=0
for n in "${names[@]}"; do
	b=tests/bench/${n#bench_}; b=tests/bench/bench_${b#tests/bench/}.sh
	[ -f "$b" ] || { echo "no benchmark $b" >&2; rc=2; continue; }
	echo "== $b"
	bash "$b" || rc=1
done
exit $rc
