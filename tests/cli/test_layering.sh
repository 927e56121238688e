#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The dependency rules of docs/architecture.md hold (make check-layering), and the rule fails a tree
# that breaks them (issue 26: a walker that includes a naming header, a file stage that includes a
# walker header).
. "$(dirname "$0")/../lib.sh"
check "module layering" "$SRCDIR/scripts/check-layering.sh"
check "ember does not link daemon libraries" bash -c "! ldd '$EMBER' | grep -qE 'libbpf|libdw|libelf|microhttpd'"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
broken() { # NAME FILE INCLUDE: a copy of the tree where FILE includes INCLUDE fails the check
	local name=$1 file=$2 inc=$3 out
	rm -rf "$tmp/t" && mkdir "$tmp/t" && cp -r "$SRCDIR/src" "$SRCDIR/include" "$SRCDIR/bpf" "$tmp/t/"
	sed -i "0,/^#include/s||#include \"$inc\"\n#include|" "$tmp/t/$file"
	out=$(ROOT="$tmp/t" "$SRCDIR/scripts/check-layering.sh" 2>&1)
	check "$name" test $? -ne 0
	check "$name: the message names the file" grep -q "${file#src/}" <<<"$out"
}
broken "unwind/ may not include symbols/" src/daemon/unwind/unwind.c ember/daemon/symbols/symbolizer.h
broken "elf/ may not include unwind/" src/daemon/elf/elfsym.c ember/daemon/unwind/cfi.h
broken "proc/ may not include elf/" src/daemon/proc/proctrack.c ember/daemon/elf/elfload.h
done_testing
