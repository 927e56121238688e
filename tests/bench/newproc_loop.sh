#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The new-process benches' loop (bench_newproc.sh, bench_newproc_counts.sh): /bin/true, then a
# 12 ms wait, for SECONDS; nothing else in it starts a process (read -t on a FIFO nobody writes;
# bash's SECONDS, not a command substitution, which would fork). Writes how many it started to
# OUT. NEWPROC_CMD= another command in place of /bin/true (split on spaces): `/bin/sleep 0.05`
# makes processes that live asleep and are mostly never sampled.
# usage: newproc_loop.sh SECONDS OUT
rm -f "$2.fifo"
mkfifo "$2.fifo"
exec 9<>"$2.fifo"
read -r -a cmd <<<"${NEWPROC_CMD:-/bin/true}"
n=0
SECONDS=0
while [ "$SECONDS" -lt "$1" ]; do
	"${cmd[@]}"
	n=$((n + 1))
	read -r -t 0.012 -u 9 _
done
echo "$n" >"$2"
