#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# emberd's live sampling as root: the burn workload's known CPU shares (60/30/10 within 3 pp) and
# complete stacks down to main; the syscall workload's kernel frames above its user frames; the
# idle task marked (absent unless --dump-idle); SIGUSR1 dumps while running; SIGTERM exits 0;
# start-up failures say why.
. "$(dirname "$0")/../lib.sh"
require_root "BPF and perf_event"
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
[ -r /sys/kernel/btf/vmlinux ] || skip_all "no kernel BTF"
W=$OUTPUT/workloads
[ -x "$W/burn" ] && [ -x "$W/sysloop" ] || skip_all "workloads not built (make workloads)"

trap 'stop_all; cleanup_tmp' EXIT

# wait_log FILE PATTERN: up to 10 s

# --- burn and sysloop under one emberd, 12 s ----------------------------------------------------
"$EMBERD" --listen 127.0.0.1:0 --dump-after 12 --dump-root pid --dump-file "$TMP/all.folded" \
	>"$TMP/emberd.log" 2>&1 &
EPID=$!
PIDS+=($EPID)
wait_log "$TMP/emberd.log" "started" || { sed 's/^/# /' "$TMP/emberd.log"; not_ok "emberd starts"; done_testing; }
ok "emberd starts"
# real-time priority: on a busy host (autogroups make nice useless) burn still gets its CPU
chrt -f 1 "$W/burn" 10 >"$TMP/burn.out" &
PIDS+=($!)
"$W/sysloop" 10 >"$TMP/sys.out" &
PIDS+=($!)
wait_log "$TMP/burn.out" ready
wait_log "$TMP/sys.out" ready
BURN=$(awk '{print $2}' "$TMP/burn.out")
SYS=$(awk '{print $2}' "$TMP/sys.out")

# a SIGUSR1 dump while running, to another file: already has burn samples
sleep 3
kill -USR1 "$EPID"
wait_log "$TMP/emberd.log" "dumped" && sleep 0.2
check "SIGUSR1 dump has burn samples" grep -q "^burn-$BURN;.*burn_a" "$TMP/all.folded"
wait "$EPID"
check "emberd exits 0 after --dump-after" test $? -eq 0
check "dump written at exit" grep -q "dumped" "$TMP/emberd.log"
grep -E 'warning|error' "$TMP/emberd.log" | sed 's/^/# /'

# shares: inclusive samples of burn_a/b/c among the pid's samples; complete = contains main
awk -v p="burn-$BURN" '
	{ n = $NF; s = substr($0, 1, length($0) - length($NF) - 1); split(s, f, ";")
	  if (f[1] != p) next
	  tot += n; a += (s ~ /;burn_a(;|$)/) * n; b += (s ~ /;burn_b(;|$)/) * n
	  c += (s ~ /;burn_c(;|$)/) * n; m += (s ~ /;main;/) * n }
	END { if (!tot) tot = 1
	      printf "%d %.2f %.2f %.2f %.2f\n", tot, 100*a/tot, 100*b/tot, 100*c/tot, 100*m/tot }
' "$TMP/all.folded" >"$TMP/shares"
read -r TOT PA PB PC PM <"$TMP/shares"
echo "# burn: $TOT samples, burn_a $PA%, burn_b $PB%, burn_c $PC%, complete to main $PM%"
within() { awk -v x="$1" -v e="$2" 'BEGIN { d = x - e; exit !(d <= 3 && d >= -3) }'; }
check "burn sampled (>= 800 of at most 990 samples)" test "$TOT" -ge 800
check "burn_a share 60 +- 3 pp ($PA)" within "$PA" 60
check "burn_b share 30 +- 3 pp ($PB)" within "$PB" 30
check "burn_c share 10 +- 3 pp ($PC)" within "$PC" 10
check ">= 99% of burn samples have main ($PM%)" awk -v x="$PM" 'BEGIN { exit !(x >= 99) }'
check "burn_c appears under rounds under main" grep -q "^burn-$BURN;.*;main;rounds;burn_c" "$TMP/all.folded"

# sysloop: kernel frames (_[k]) on top of user frames, never below one
awk -v p="sysloop-$SYS" '
	{ split($1, f, ";"); if (f[1] != p) next
	  k = 0; bad = 0; for (i = 2; i <= length(f); i++) { if (f[i] ~ /_\[k\]$/) k = 1; else if (k) bad = 1 }
	  tot += $NF; if (k && $1 ~ /;main;/) kern += $NF; if (bad) wrong += $NF }
	END { printf "%d %d %d\n", tot, kern, wrong }
' "$TMP/all.folded" >"$TMP/sys"
read -r STOT SKERN SWRONG <"$TMP/sys"
echo "# sysloop: $STOT samples, $SKERN with kernel frames above main, $SWRONG misordered"
# (libc's read/write wrappers have no frame pointer: a frame-pointer walk skipped write_loop,
# their caller; the unwind tables walk through them)
check "sysloop sampled" test "$STOT" -ge 50
check "sysloop: most samples have _[k] frames above main" test $((SKERN * 2)) -ge "$STOT"
check "sysloop: no user frame above a kernel frame" test "$SWRONG" -eq 0
check "sysloop: syscall entry frame above main;write_loop;read or write" grep -qE "^sysloop-$SYS;.*;main;write_loop;(read|write|__libc_read|__libc_write|__GI___libc_read|__GI___libc_write);(entry_SYSCALL|do_syscall)[^;]*_\[k\]" "$TMP/all.folded"
if [ "$T_FAILS" -gt 0 ]; then # what the stacks were, and the unwinder's own account
	grep "^sysloop-$SYS;" "$TMP/all.folded" | sort -t' ' -k2 -n | tail -5 | cut -c1-250 | sed 's/^/# /'
	grep -E "user stacks|unwind" "$TMP/emberd.log" | sed 's/^/# /'
fi
check "idle excluded by default" sh -c "! grep -q '^swapper' '$TMP/all.folded'"

# --- idle included on request; SIGTERM while sampling ---------------------------------------
"$EMBERD" --listen 127.0.0.1:0 --dump-idle --dump-root none --dump-file "$TMP/idle.folded" \
	-o sampling.tick_ms=50 >"$TMP/e2.log" 2>&1 &
EPID=$!
PIDS+=($EPID)
# at the same time, one that walks the idle task's stack (sampling.idle_stacks)
"$EMBERD" --listen 127.0.0.1:0 --dump-idle --dump-root none --dump-file "$TMP/idlestk.folded" \
	-o sampling.tick_ms=50 -o sampling.idle_stacks=yes >"$TMP/e2b.log" 2>&1 &
EPID2=$!
PIDS+=($EPID2)
wait_log "$TMP/e2.log" started
wait_log "$TMP/e2b.log" started
idle0=$(awk '/^cpu /{print $5}' /proc/stat)
sleep 1.5
idle1=$(awk '/^cpu /{print $5}' /proc/stat)
kill -USR1 "$EPID" "$EPID2"
wait_log "$TMP/e2.log" dumped
wait_log "$TMP/e2b.log" dumped
kill -TERM "$EPID2"
# on a busy host the CPUs may never idle. /proc/stat's idle time does not say whether the idle
# task was sampled: on these VMs perf sees the same gaps (3 s beside a build: 41 idle jiffies,
# 1 idle sample of perf record -a -e cpu-clock; fresh-clone run X, 2026-11-29, failed on that
# gate). Both daemons sampled the same CPUs over the same time: what each recorded of the idle
# task is checked against its own form, when either recorded any.
IDLE_RE='(do_idle|cpu_startup_entry|default_idle|pv_native_safe_halt)[^;]*_\[k\]'
N1=$(awk '/^\[idle\]_\[k\] [0-9]+$/ { s += $NF } END { print s + 0 }' "$TMP/idle.folded")
S1=$(grep -E "$IDLE_RE" "$TMP/idle.folded" | awk '{ s += $NF } END { print s + 0 }')
N2=$(awk '/^\[idle\]_\[k\] [0-9]+$/ { s += $NF } END { print s + 0 }' "$TMP/idlestk.folded")
S2=$(grep -E "$IDLE_RE" "$TMP/idlestk.folded" | awk '{ s += $NF } END { print s + 0 }')
echo "# idle: $((idle1 - idle0)) jiffies in /proc/stat; default: $N1 [idle], $S1 stacks; idle_stacks=yes: $N2 [idle], $S2 stacks"
if [ $((N1 + S1 + N2 + S2)) -ge 3 ]; then
	check "idle task sampled with --dump-idle, as one [idle] frame by default ($N1, and $((N2 + S2)) beside)" \
		test "$N1" -ge 1 -o $((N2 + S2)) -lt 10
	check "no idle stack walked by default ($S1)" test "$S1" -eq 0
	check "idle stacks with sampling.idle_stacks=yes ($S2 of $((N2 + S2)))" \
		test "$S2" -ge 1 -a $((S2 * 10)) -ge $(((N2 + S2) * 9)) -o $((N2 + S2 + N1)) -lt 10
else
	echo "# neither daemon sampled the idle task (a busy host): idle checks not applicable"
	check "dump with --dump-idle written" test -s "$TMP/idle.folded"
fi
kill -TERM "$EPID"
wait "$EPID"
check "SIGTERM: exit status 0" test $? -eq 0
check "SIGTERM: logged" grep -q "exiting" "$TMP/e2.log"

# --- start-up failures are precise ----------------------------------------------------------
"$EMBERD" --frequency 0 >"$TMP/e3.log" 2>&1
check "bad frequency: exit 2" test $? -eq 2
check "bad frequency: message names the flag" grep -q "frequency.*out of range" "$TMP/e3.log"
if command -v setpriv >/dev/null; then
	for_nobody "$EMBERD" # the checkout may sit where nobody cannot enter
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
		"$NOBODY_BIN/$(basename "$EMBERD")" --listen 127.0.0.1:0 >"$TMP/e4.log" 2>&1
	check "no privileges: exit 1" test $? -eq 1
	check "no privileges: says what is needed" grep -qE "needs root|CAP_" "$TMP/e4.log"
	sed 's/^/# /' "$TMP/e4.log"
else
	skip "no privileges" "setpriv missing"
fi
done_testing
