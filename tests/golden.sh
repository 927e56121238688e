#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Golden tests, run inside tests/data: for each <case>.args (one line: the ember arguments, where @IN@ is
# <case>.in and @DATA@ is "." so that outputs never hold absolute paths), run `ember ARGS` and diff its stdout with
# tests/data/<case>.expected (and its exit status with <case>.status, default 0).
# --regen rewrites the .expected files; review that diff before committing.
# usage: tests/golden.sh [--regen] [CASE...]   (CASE: a name in tests/data, without .args; a shell
# pattern works too: 'merge-*')
. "$(dirname "$0")/lib.sh"
regen=0
[ "${1:-}" = --regen ] && { regen=1; shift; }
cd "$SRCDIR/tests/data" || exit 1
cases=()
for c in "$@"; do
	for a in $c.args; do
		[ -f "$a" ] && cases+=("$a") || { not_ok "no golden case '$c' in tests/data"; }
	done
done
[ $# -eq 0 ] && cases=(*.args)
for args in "${cases[@]}"; do
	[ -f "$args" ] || continue
	c=${args%.args}
	line=$(head -n 1 "$args")
	line=${line//@IN@/$c.in}
	line=${line//@DATA@/.}
	want_status=0
	[ -f "$c.status" ] && want_status=$(cat "$c.status")
	eval "set -- $line"
	"$EMBER" "$@" >"$TMP/out" 2>"$TMP/err"
	st=$?
	if [ $regen -eq 1 ]; then
		cp "$TMP/out" "$c.expected"
		[ $st -ne 0 ] && echo $st >"$c.status"
		echo "regenerated $c"
		continue
	fi
	if [ $st -ne "$want_status" ]; then
		not_ok "$c: exit status $st, expected $want_status"; sed 's/^/# /' "$TMP/err"
	elif ! diff -u "$c.expected" "$TMP/out" >"$TMP/diff"; then
		not_ok "$c: output differs"; head -40 "$TMP/diff" | sed 's/^/# /'
	else
		ok "$c"
	fi
done
done_testing
