#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ember collapse behaviour: format detection and its error, bad options, malformed and truncated
# input (counted, reported with file:line, never a crash), invalid UTF-8 kept as bytes, lines
# over the bound skipped, several files as one stream, --timestamps keeping every sample, and
# memory that does not grow with the input (streaming).
. "$(dirname "$0")/../lib.sh"
suite=$SHARED/corpus/flamegraph-test
examples=$SHARED/corpus/examples
data=$SRCDIR/tests/data
[ -d "$suite" ] || skip_all "no corpus at $suite"

# --- the CLI frame
check "--help exits 0" bash -c "'$EMBER' collapse --help >/dev/null"
"$EMBER" collapse --bogus </dev/null >/dev/null 2>&1; check "an unknown option exits 2" [ $? -eq 2 ]
"$EMBER" collapse perf --inline </dev/null >/dev/null 2>"$TMP/err"; st=$?
check "--inline is refused (needs addr2line), exit 2" [ $st -eq 2 ]
check "--inline says why" grep -q "not supported" "$TMP/err"
"$EMBER" collapse dtrace --timestamps </dev/null >/dev/null 2>"$TMP/err"; st=$?
check "--timestamps on DTrace input is refused, exit 2" [ $st -eq 2 ]
"$EMBER" collapse perf "$TMP/missing" >/dev/null 2>"$TMP/err"; st=$?
check "a missing file exits 2 and names it" bash -c "[ $st -eq 2 ] && grep -q missing '$TMP/err'"

# --- detection
printf 'hello\nworld\n' >"$TMP/prose"
"$EMBER" collapse "$TMP/prose" >"$TMP/out" 2>"$TMP/err"; st=$?
check "undecidable input exits 2" [ $st -eq 2 ]
check "undecidable input: the error says to name the format" grep -q "cannot tell the input format" "$TMP/err"
check "undecidable input prints nothing" [ ! -s "$TMP/out" ]
: >"$TMP/empty"
check "empty input, auto: no output, exit 0" bash -c "'$EMBER' collapse '$TMP/empty' >'$TMP/out' && [ ! -s '$TMP/out' ]"
check "empty input, perf: no output, exit 0" bash -c "'$EMBER' collapse perf <'$TMP/empty' >'$TMP/out' && [ ! -s '$TMP/out' ]"
check "bpftrace auto-detected" cmp -s "$data/collapse-bpftrace-corners.expected" <("$EMBER" collapse "$data/collapse-bpftrace-corners.in" 2>/dev/null)
check "dtrace auto-detected" cmp -s "$data/collapse-dtrace-corners.expected" <("$EMBER" collapse "$data/collapse-dtrace-corners.in" 2>/dev/null)
check "perf with --header auto-detected" cmp -s "$data/collapse-perf-corners.expected" <("$EMBER" collapse "$data/collapse-perf-corners.in" 2>/dev/null)
check "perf without indentation (old perf) auto-detected" cmp -s "$suite/results/perf-java-stacks-02-collapsed-pid.txt" <("$EMBER" collapse --pid "$suite/perf-java-stacks-02.txt" 2>/dev/null)

# --- malformed lines: skipped, counted, reported as file:line; the rest is used
"$EMBER" collapse perf "$data/collapse-perf-corners.in" >"$TMP/out" 2>"$TMP/err"; st=$?
check "malformed perf lines: exit 0" [ $st -eq 0 ]
check "malformed perf lines reported with file:line" grep -q "collapse-perf-corners.in:36: unrecognized line" "$TMP/err"
check "malformed perf lines counted" grep -q "2 malformed lines skipped" "$TMP/err"
check "other events: the warning names the kept one" grep -q "kept only 'cpu-clock' samples" "$TMP/err"
check "a record cut by the end of input is reported" grep -q "ends inside a record" "$TMP/err"

# --- truncated input: plain (mid-line) and gzip
f=$suite/perf-vertx-stacks-01.txt
head -c 12345 "$f" >"$TMP/cut.txt"
"$EMBER" collapse perf "$TMP/cut.txt" >"$TMP/out" 2>"$TMP/err"; st=$?
check "text truncated mid-line: exit 0, output" bash -c "[ $st -eq 0 ] && [ -s '$TMP/out' ]"
head -c 40000 "$examples/example-perf-stacks.txt.gz" >"$TMP/cut.gz"
"$EMBER" collapse perf "$TMP/cut.gz" >"$TMP/out" 2>"$TMP/err"; st=$?
check "truncated gzip: exit 2 (bad input)" [ $st -eq 2 ]
check "truncated gzip: said so" grep -q "truncated gzip input" "$TMP/err"

# --- invalid UTF-8 and control bytes pass through as bytes
printf 'pr\xffc 12 [000] 1.5: 1 cpu-clock:\n\t1 f\xc3\x28oo\x01 (/x)\n\n' >"$TMP/bin.txt"
printf 'pr\xffc;f\xc3 1\n' >"$TMP/bin.want"   # "(" cuts the argument list, as the script does
check "invalid UTF-8 kept byte for byte" cmp -s "$TMP/bin.want" <("$EMBER" collapse perf "$TMP/bin.txt")

# --- a line over the 64 MiB bound is skipped and counted, not buffered
{
	printf 'big 1 [000] 1.0: 1 cpu-clock:\n\t1 before (/x)\n\n'
	printf 'huge 2 [000] 2.0: 1 cpu-clock:\n\t1 '
	head -c $((65 * 1024 * 1024)) /dev/zero | tr '\0' 'a'
	printf ' (/x)\n\n'
	printf 'big 3 [000] 3.0: 1 cpu-clock:\n\t1 after (/x)\n\n'
} >"$TMP/long.txt"
"$EMBER" collapse perf "$TMP/long.txt" >"$TMP/out" 2>"$TMP/err"; st=$?
printf 'big;after 1\nbig;before 1\nhuge 1\n' >"$TMP/long.want"
check "a 65 MiB line: exit 0, the other records kept" bash -c "[ $st -eq 0 ] && cmp -s '$TMP/long.want' '$TMP/out'"
check "a 65 MiB line: reported with its line number" grep -q "long.txt:5: line too long" "$TMP/err"
check "a 65 MiB line with --jobs 2: same output" cmp -s "$TMP/long.want" <("$EMBER" collapse perf --jobs 2 "$TMP/long.txt" 2>/dev/null)
check "a 65 MiB line from stdin with --jobs 2: same output" cmp -s "$TMP/long.want" <("$EMBER" collapse perf --jobs 2 - <"$TMP/long.txt" 2>/dev/null)
rm -f "$TMP/long.txt"

# --- several files are one stream, as perl's <> reads them
cat "$suite/perf-dd-stacks-01.txt" "$suite/perf-numa-stacks-01.txt" >"$TMP/cat.txt"
check "two files collapse as their concatenation" cmp -s <("$EMBER" collapse perf "$TMP/cat.txt" 2>/dev/null) \
	<("$EMBER" collapse perf "$suite/perf-dd-stacks-01.txt" "$suite/perf-numa-stacks-01.txt" 2>/dev/null)

# --- --timestamps keeps every sample: re-aggregated, it is the folded output of the same input
# with perf's periods removed (ember-samples counts samples; the script counts 1 without a period)
good=0 total=0
for f in "$suite"/*.txt; do
	total=$((total + 1))
	"$EMBER" collapse perf --timestamps "$f" >"$TMP/ts" 2>"$TMP/err"
	if grep -q "without a time" "$TMP/err"; then
		# inputs recorded without perf's time field: those samples are skipped and said so
		good=$((good + 1)); continue
	fi
	sed -E '/^[^[:space:]#]/ s/: +[0-9]+ +([^[:space:]]+:[[:space:]]*)$/: \1/' "$f" >"$TMP/noperiod"
	perl -ne 'next if /^#/; chomp; /^(\S+) (.*) (\d+)$/ or die "bad line: $_"; $h{$2} += $3;
		END { print "$_ $h{$_}\n" for sort keys %h }' "$TMP/ts" >"$TMP/re" || { not_ok "$(basename "$f"): bad --timestamps line"; continue; }
	if cmp -s "$TMP/re" <("$EMBER" collapse perf "$TMP/noperiod" 2>/dev/null); then
		good=$((good + 1))
	else
		not_ok "$(basename "$f"): --timestamps lost or changed samples"
	fi
done
check "--timestamps re-aggregates to the folded sample counts on all $total corpus files" [ "$good" -eq "$total" ]
# (a comm is at least two bytes for the script's regex)
printf 'aa 1 [000] 10.000001: 1 cpu-clock:\n\t1 x (/x)\n\nbb 2 [000] 10.5: 3 cpu-clock:\n\t1 y (/x)\n\ncc 3 cpu-clock:\n\t1 z (/x)\n\n' >"$TMP/t.txt"
printf '# ember-samples v1\n10.000001000 aa;x 1\n10.500000000 bb;y 1\n' >"$TMP/t.want"
"$EMBER" collapse perf --timestamps "$TMP/t.txt" >"$TMP/out" 2>"$TMP/err"
check "--timestamps: time in ns, stack, 1; one line per sample" cmp -s "$TMP/t.want" "$TMP/out"
check "--timestamps: a sample without a time is skipped and said so" grep -q "1 sample without a time" "$TMP/err"

# --- streaming: memory does not grow with the input
zcat "$examples/example-perf-stacks.txt.gz" >"$TMP/ex.txt"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do cat "$TMP/ex.txt"; done >"$TMP/ex12.txt"
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }
if [ -x /usr/bin/time ]; then
	r1=$(rss "$EMBER" collapse perf "$TMP/ex.txt")
	r12=$(rss "$EMBER" collapse perf "$TMP/ex12.txt")
	rj=$(rss "$EMBER" collapse perf --jobs 2 - <"$TMP/ex12.txt")
	rt=$(rss "$EMBER" collapse perf --timestamps "$TMP/ex12.txt")
	echo "# max RSS KiB: 1x $r1, 12x $r12, 12x --jobs 2 stdin $rj, 12x --timestamps $rt ($(($(stat -c %s "$TMP/ex12.txt") / 1024)) KiB input)"
	check "12x the input: max RSS within 8 MiB of 1x" [ "$r12" -lt $((r1 + 8192)) ]
	check "--timestamps streams: max RSS within 8 MiB of 1x" [ "$rt" -lt $((r1 + 8192)) ]
	check "--jobs 2 from stdin: max RSS bounded (< 200 MiB)" [ "$rj" -lt 204800 ]
	check "12x the input sums to 12x the counts" cmp -s \
		<(awk '{ $NF = $NF * 12; print }' "$examples/example-perf-stacks.collapsed") \
		<("$EMBER" collapse perf "$TMP/ex12.txt" 2>/dev/null)
else
	skip "streaming memory" "no /usr/bin/time"
fi
done_testing
