#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Regex benchmark: emberd's comm= filter and ember merge --grep through the regex
# module (PCRE2, interpreted and JIT), side by side with glibc's regcomp/regexec, which ember used
# before: compile cost, ns per match on comm names, and the time to reach the match limit on
# hostile patterns. tests/bench/bench_regex.c does the work; MATCHES per pattern and engine.
#   MATCHES=2000000 tests/bench/bench_regex.sh
set -u
: "${OUTPUT:?}" "${SRCDIR:?}"
MATCHES=${MATCHES:-2000000}
CC=${CC:-cc}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$SRCDIR" || exit 1
[ -f "$OUTPUT/obj/libember-core.a" ] || { echo "bench_regex: build first (make all)" >&2; exit 1; }
$CC -O2 -std=gnu11 -D_GNU_SOURCE -Iinclude tests/bench/bench_regex.c \
	"$OUTPUT/obj/libember-core.a" $(pkg-config --libs libpcre2-8) -o "$TMP/bench" || exit 1
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, libpcre2-8 $(pkg-config --modversion libpcre2-8)"
"$TMP/bench" "$MATCHES"
