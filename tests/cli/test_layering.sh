#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The dependency rules of docs/architecture.md hold (make check-layering), and the rule fails a tree
# that breaks them (a walker that includes a naming header, a file stage that includes a
# walker header).
. "$(dirname "$0")/../lib.sh"
check "module layering" "$SRCDIR/scripts/check-layering.sh"
# a process's /proc files are opened by proc/ alone (procfs.c, mapfile.c: non-blocking, no
# symbolic link, bounded), so no other file builds a /proc/PID path
proc_paths() { grep -rnE '"/proc/%|%s/%[ud]' --include=*.c "$1/src" | grep -v "^$1/src/daemon/proc/"; }
check "no /proc/PID path built outside src/daemon/proc/" bash -c "$(declare -f proc_paths); ! proc_paths '$SRCDIR'"
# files a process controls are read with pread, never mapped (docs/security.md: a file truncated
# while it is parsed is a short read, not a SIGBUS that ends emberd)
elf_maps() { grep -rnE 'ELF_C_(READ|RDWR)_MMAP' --include=*.c "$1/src"; }
check "no ELF file mapped by emberd (ELF_C_READ_MMAP)" bash -c "$(declare -f elf_maps); ! elf_maps '$SRCDIR'"
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
# ... and the check finds a /proc/PID path built elsewhere
rm -rf "$tmp/p" && mkdir -p "$tmp/p/src/daemon/export" && cp "$SRCDIR/src/daemon/export/identity.c" "$tmp/p/src/daemon/export/"
printf 'static void f(char *b, unsigned p) { snprintf(b, 64, "/proc/%%u/cgroup", p); }\n' >>"$tmp/p/src/daemon/export/identity.c"
check "a /proc/PID path outside proc/ is found" bash -c "$(declare -f proc_paths); proc_paths '$tmp/p' | grep -q identity.c"
# ... and a mapped read of an ELF file
printf 'static void *g(int fd) { return elf_begin(fd, ELF_C_READ_MMAP, 0); }\n' >>"$tmp/p/src/daemon/export/identity.c"
check "a mapped ELF read is found" bash -c "$(declare -f elf_maps); elf_maps '$tmp/p' | grep -q identity.c"
done_testing
