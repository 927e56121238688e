#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The new-process benches' loop (bench_newproc.sh, bench_newproc_counts.sh): /bin/true, then a
# 12 ms wait, for SECONDS; nothing else in it starts a process (read -t on a FIFO nobody writes;
# bash's SECONDS, not a command substitution, which would fork). Writes how many it started to
# OUT.
# usage: newproc_loop.sh SECONDS OUT
rm -f "$2.fifo"
mkfifo "$2.fifo"
exec 9<>"$2.fifo"
n=0
SECONDS=0
while [ "$SECONDS" -lt "$1" ]; do
	/bin/true
	n=$((n + 1))
	read -r -t 0.012 -u 9 _
done
echo "$n" >"$2"
