#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ember merge over the FlameGraph corpus: totals kept exactly, every stack printed, and a file
# merged with itself doubles every count. Also the CLI frame: help, version, exit codes.
. "$(dirname "$0")/../lib.sh"
corpus=$SHARED/corpus/flamegraph-test/results
[ -d "$corpus" ] || skip_all "no corpus at $corpus"

# stack -> summed count, sorted, as perl would sum them (independent of ember)
sum_stacks() { perl -ne 'chomp; s/\r$//; if (/^(.*)\s+?(\d+(?:\.\d*)?)$/) { $h{$1} += $2 } END { print "$_ $h{$_}\n" for sort keys %h }' "$@"; }

n=0
for f in "$corpus"/*.txt; do
	name=$(basename "$f" .txt)
	"$EMBER" merge "$f" >"$TMP/one" 2>"$TMP/err" || { not_ok "$name: exit $?"; continue; }
	sum_stacks "$f" >"$TMP/want"
	if ! cmp -s "$TMP/want" "$TMP/one"; then
		not_ok "$name: merge differs from the input's stacks"; diff "$TMP/want" "$TMP/one" | head -5 | sed 's/^/# /'
		continue
	fi
	"$EMBER" merge "$f" "$f" >"$TMP/two" 2>>"$TMP/err"
	if ! awk 'NR==FNR { c[NR]=$NF; s[NR]=$0; sub(/ [^ ]*$/, "", s[NR]); next }
		{ t=$0; sub(/ [^ ]*$/, "", t); if (t != s[FNR] || $NF != 2*c[FNR]) exit 1 }
		END { if (FNR != NR - FNR) exit 1 }' "$TMP/one" "$TMP/two"; then
		not_ok "$name: merging with itself does not double every count"
		continue
	fi
	[ -s "$TMP/err" ] && { not_ok "$name: unexpected messages"; sed 's/^/# /' "$TMP/err"; continue; }
	n=$((n + 1))
done
check "merge keeps totals and stacks of all $n corpus files" [ "$n" -eq "$(ls "$corpus"/*.txt | wc -l)" ]

# stdin, gzip input
gzip -c "$corpus/perf-dd-stacks-01-collapsed-all.txt" >"$TMP/dd.gz"
"$EMBER" merge <"$corpus/perf-dd-stacks-01-collapsed-all.txt" >"$TMP/a"
"$EMBER" merge "$TMP/dd.gz" >"$TMP/b"
check "stdin and gzip input read the same" cmp -s "$TMP/a" "$TMP/b"

# a gzip file cut short or damaged is bad input (exit 2, saying so), not a short profile
s=$(stat -c %s "$TMP/dd.gz")
head -c $((s / 2)) "$TMP/dd.gz" >"$TMP/cut.gz"
"$EMBER" merge "$TMP/cut.gz" >/dev/null 2>"$TMP/err"; st=$?
check "truncated gzip exits 2" [ $st -eq 2 ]
check "... saying it is truncated" grep -q "'$TMP/cut.gz': truncated gzip input" "$TMP/err"
grep -q "malformed" "$TMP/err" && not_ok "... without a malformed last line" ||
	ok "... without a malformed last line"
"$EMBER" merge <"$TMP/cut.gz" >/dev/null 2>"$TMP/err"; st=$?
check "truncated gzip on stdin exits 2" [ $st -eq 2 ] && grep -q "truncated gzip input" "$TMP/err"
python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[-6] ^= 0xff; sys.stdout.buffer.write(d)' \
	"$TMP/dd.gz" >"$TMP/bad.gz"
"$EMBER" merge "$TMP/bad.gz" >/dev/null 2>"$TMP/err"; st=$?
check "damaged gzip (CRC) exits 2 saying so" [ $st -eq 2 ] && grep -q "corrupt gzip input" "$TMP/err"

# malformed lines: counted, reported with file:line, exit 0; --strict exits 2
printf 'a;b 1\nbroken\nc 2\n' >"$TMP/bad"
"$EMBER" merge "$TMP/bad" >"$TMP/out" 2>"$TMP/err"; st=$?
check "malformed line skipped with exit 0" [ $st -eq 0 ]
check "skip names file and line" grep -q "$TMP/bad:2:.*skipping" "$TMP/err"
check "skip total reported" grep -q "1 malformed line skipped" "$TMP/err"
"$EMBER" merge --strict "$TMP/bad" >/dev/null 2>"$TMP/err"; st=$?
check "--strict exits 2" [ $st -eq 2 ]
check "--strict names file:line" grep -q "$TMP/bad:2:" "$TMP/err"
"$EMBER" merge "$TMP/nonexistent" >/dev/null 2>"$TMP/err"; st=$?
check "missing file exits 2 naming it" [ $st -eq 2 ] && grep -q nonexistent "$TMP/err"

# --grep/--exclude: the hostile patterns exit 2 with the reason, at once, instead of crashing
printf 'main;foo 1\n' >"$TMP/in"
"$EMBER" merge -g '(|)(\1\1)*' "$TMP/in" >/dev/null 2>"$TMP/err"; st=$?
check "a backreference exits 2" [ $st -eq 2 ]
check "... saying backreferences are not supported" grep -q "backreferences are not supported" "$TMP/err"
timeout 10 "$EMBER" merge -x 'a{1,32767}{1,32767}' "$TMP/in" >/dev/null 2>"$TMP/err"; st=$?
check "a pattern too large to compile exits 2" [ $st -eq 2 ] && grep -q "too complex" "$TMP/err"
{ echo 'main;ok 1'; printf 'main;%04000d! 2\n' 0 | tr 0 a; } >"$TMP/long"
timeout 10 "$EMBER" merge -g '(a+)+$' "$TMP/long" >"$TMP/out" 2>"$TMP/err"; st=$?
check "a pattern that reaches the match limit exits 2, printing nothing" [ $st -eq 2 ] && [ ! -s "$TMP/out" ]
check "... naming the pattern and the limit" grep -q "pattern '(a+)+\$' reached its match limit" "$TMP/err"

# the command frame
"$EMBER" --version | grep -qE '^ember [0-9]+\.[0-9]+' && ok "--version" || not_ok "--version"
"$EMBER" help | grep -q merge && ok "help lists merge" || not_ok "help lists merge"
"$EMBER" merge --help | grep -q -- --strip-hex && ok "merge --help" || not_ok "merge --help"
"$EMBER" nosuchcmd 2>/dev/null; check "unknown command exits 2" [ $? -eq 2 ]
"$EMBER" merge --bogus 2>/dev/null </dev/null; check "unknown option exits 2" [ $? -eq 2 ]
done_testing
