#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ember flamegraph against flamegraph.pl run side by side (FLAMEGRAPH_DIR, default
# ../shared/reference/FlameGraph): the same rectangles (x, y, width, fill) for every palette,
# --hash, differential, flame chart, minwidth and geometry options; never a larger SVG;
# well-formed XML for hostile frame names; elision note; --cp palette map; errors. Without
# flamegraph.pl (a failure under CI) the comparisons whose input and layout the corpus'
# flamegraph-frames/ records are made against those frame positions; the others are counted skips.
. "$(dirname "$0")/../lib.sh"
FG=$FLAMEGRAPH_DIR
C=$SHARED/corpus
R=$C/flamegraph-test/results
[ -d "$R" ] || skip_all "no corpus at $C"
FR=$C/flamegraph-frames
command -v xmllint >/dev/null || skip_all "no xmllint (libxml2-utils)"
have_perl=1
have_flamegraph flamegraph.pl difffolded.pl || have_perl=0

# x y width fill of every frame rectangle, sorted
rects() {
	sed -n 's/.*<rect x="\([^"]*\)" y="\([^"]*\)" width="\([^"]*\)" height="[^"]*" fill="\(rgb[^"]*\)".*/\1 \2 \3 \4/p' "$1" | sort
}
# same_as_perl NAME INPUT OPTIONS...: same rectangles, well-formed, not larger. Without
# flamegraph.pl: when FRAMES names the corpus TSV of what flamegraph.pl draws for this input and
# layout, the rectangles' x, y and width must be those and the SVG well-formed (fills and size
# need the script); otherwise a counted skip.
same_as_perl() {
	local name=$1 in=$2
	shift 2
	if [ $have_perl = 0 ]; then same_as_corpus "$name" "$in" "$@"; return; fi
	perl "$FG/flamegraph.pl" "$@" "$in" >"$TMP/p.svg" 2>/dev/null
	if ! "$EMBER" flamegraph "$@" "$in" >"$TMP/e.svg" 2>"$TMP/err"; then
		not_ok "$name: ember failed"; sed 's/^/# /' "$TMP/err"; return
	fi
	rects "$TMP/p.svg" >"$TMP/p.r"
	rects "$TMP/e.svg" >"$TMP/e.r"
	local ps es
	ps=$(stat -c %s "$TMP/p.svg")
	es=$(stat -c %s "$TMP/e.svg")
	if ! [ -s "$TMP/e.r" ] || ! diff -q "$TMP/p.r" "$TMP/e.r" >/dev/null; then
		not_ok "$name: rectangles differ from flamegraph.pl"
		diff "$TMP/p.r" "$TMP/e.r" | head -10 | sed 's/^/# /'
	elif ! xmllint --noout "$TMP/e.svg" 2>"$TMP/xerr"; then
		not_ok "$name: not well-formed"; head -5 "$TMP/xerr" | sed 's/^/# /'
	elif [ "$es" -gt "$ps" ]; then
		not_ok "$name: SVG larger than flamegraph.pl's ($es > $ps bytes)"
	else
		ok "$name: $(wc -l <"$TMP/e.r") frames as flamegraph.pl, $es <= $ps bytes"
	fi
}

# same_as_corpus NAME INPUT OPTIONS...: same_as_perl without the script (see there)
same_as_corpus() {
	local name=$1 in=$2 t=${FRAMES:-}
	shift 2
	if [ -z "$t" ]; then skip "$name" "no flamegraph.pl in $FG"; return; fi
	if ! "$EMBER" flamegraph "$@" "$in" >"$TMP/e.svg" 2>"$TMP/err"; then
		not_ok "$name: ember failed"; sed 's/^/# /' "$TMP/err"; return
	fi
	rects "$TMP/e.svg" | cut -d' ' -f1-3 | sort >"$TMP/e.r"
	awk -F'\t' '{ print $2, $1, $3 }' "$t" | sort >"$TMP/p.r"
	if ! [ -s "$TMP/e.r" ] || ! diff -q "$TMP/p.r" "$TMP/e.r" >/dev/null; then
		not_ok "$name: rectangles differ from flamegraph.pl's in $(basename "$t")"
		diff "$TMP/p.r" "$TMP/e.r" | head -10 | sed 's/^/# /'
	elif ! xmllint --noout "$TMP/e.svg" 2>"$TMP/xerr"; then
		not_ok "$name: not well-formed"; head -5 "$TMP/xerr" | sed 's/^/# /'
	else
		ok "$name: $(wc -l <"$TMP/e.r") rectangles where flamegraph.pl draws them ($(basename "$t"); no flamegraph.pl to compare fills and size)"
	fi
}

JAVA=$R/perf-java-stacks-01-collapsed-all.txt
JS=$R/perf-js-stacks-01-collapsed-all.txt
for pal in hot mem io wakeup chain java js perl red green blue aqua yellow purple orange; do
	same_as_perl "palette $pal" "$JAVA" --colors "$pal"
done
same_as_perl "js palette on node stacks" "$JS" --colors js
same_as_perl "--hash" "$JAVA" --hash
FRAMES=$FR/perf-java-stacks-01-collapsed-all.reverse.tsv same_as_perl "--reverse --colors java" "$JAVA" --reverse --colors java
FRAMES=$FR/perf-js-stacks-01-collapsed-all.inverted.tsv same_as_perl "--inverted" "$JS" --inverted
same_as_perl "--minwidth 1%" "$JAVA" --minwidth 1%
same_as_perl "--minwidth 0" "$JS" --minwidth 0
same_as_perl "geometry options" "$JS" --width 700 --height 20 --fontsize 10 --fontwidth 0.7
same_as_perl "--total, --factor, --countname" "$JS" --total "$(awk '{ s += $NF } END { print s * 2 }' "$JS")" \
	--factor 3 --countname ms
same_as_perl "--title --subtitle" "$JS" --title "T & <t>" --subtitle "sub"

# differential input (difffolded.pl columns). flamegraph.pl keys frames by name, depth and end
# time, so a zero-width frame (a stack counted 0 on one side) can replace a real frame with the
# same key: compare on stacks counted on both sides.
if [ $have_perl = 1 ]; then
	V=$R/perf-vertx-stacks-01-collapsed-all.txt
	awk '{ $NF = $NF * (NR % 3 + 1) + NR % 5; print }' "$V" >"$TMP/after.txt"
	perl "$FG/difffolded.pl" "$V" "$TMP/after.txt" 2>/dev/null |
		awk '$NF > 0 && $(NF-1) > 0' >"$TMP/diff.txt"
	same_as_perl "differential" "$TMP/diff.txt"
	same_as_perl "differential --negate" "$TMP/diff.txt" --negate
else
	skip "differential" "no flamegraph.pl and difffolded.pl in $FG"
	skip "differential --negate" "no flamegraph.pl and difffolded.pl in $FG"
fi
printf 'main;grow 10 30\nmain;shrink 30 10\nmain;same 5 5\n' >"$TMP/d2.txt"
"$EMBER" flamegraph --frames-tsv "$TMP/d2.txt" >"$TMP/d2.tsv"
check "differential: widths from the second column" grep -q $'\t30\tgrow$' "$TMP/d2.tsv"
"$EMBER" flamegraph "$TMP/d2.txt" >"$TMP/d2.svg"
check "differential: growth red, reduction blue, both counts in the tooltip" \
	grep -q '<title>grow (30 samples, 66.67%; before 10, self +44.44%)</title><rect[^>]*fill="rgb(255,0,0)"' "$TMP/d2.svg"
check "differential: reduction blue" grep -q 'shrink (10 samples[^<]*</title><rect[^>]*fill="rgb(0,0,255)"' "$TMP/d2.svg"
"$EMBER" flamegraph --negate "$TMP/d2.txt" >"$TMP/d2n.svg"
check "--negate swaps the hues" grep -q 'grow (30 samples[^<]*</title><rect[^>]*fill="rgb(0,0,255)"' "$TMP/d2n.svg"

# flame chart: input order, only adjacent stacks merge
if [ $have_perl = 1 ]; then
	awk 'NR % 7 == 3' "$C/examples/example-perf-stacks.collapsed" | sort -t';' -k3 >"$TMP/chart.txt"
	same_as_perl "--flamechart keeps input order" "$TMP/chart.txt" --flamechart
else
	skip "--flamechart keeps input order" "no flamegraph.pl in $FG"
fi
printf 'a;b 1\na;c 1\na;b 1\n' >"$TMP/fc.txt"
check "--flamechart draws b twice (not merged)" \
	test "$("$EMBER" flamegraph --flamechart --frames-tsv "$TMP/fc.txt" | grep -c $'\tb$')" = 2
check "without --flamechart b merges" \
	test "$("$EMBER" flamegraph --frames-tsv "$TMP/fc.txt" | grep -c $'\tb$')" = 1

# the corpus examples: not larger than flamegraph.pl's
FRAMES=$FR/example-perf-stacks.default.tsv same_as_perl "example-perf-stacks" "$C/examples/example-perf-stacks.collapsed"
FRAMES=$FR/example-dtrace-stacks.reverse.tsv same_as_perl "example-dtrace-stacks --reverse" \
	"$C/examples/example-dtrace-stacks.collapsed" --reverse

# hostile frame names: any bytes give well-formed XML
{
	printf 'main;<script>alert(1)</script>;a&b 5\n'
	printf 'main;"quoted" '"'"'single'"'"' ]]> --> <!-- 3\n'
	printf 'main;ctl\001\002\033[31m\x7f;tab\there 2\n'
	printf 'main;bad\xff\xfe\xc3(\xed\xa0\x80utf8;\xef\xbf\xbe 4\n'
	printf 'main;emoji \xf0\x9f\x94\xa5 ok;caf\xc3\xa9 1\n'
	printf 'main;%s 1\n' "$(head -c 3000 /dev/zero | tr '\0' 'x')"
	printf ';;; 2\n'
} >"$TMP/hostile.txt"
for opt in "" "--inverted" "--colors java --hash" "--flamechart" "--search ]]></script><x>"; do
	# shellcheck disable=SC2086
	if "$EMBER" flamegraph $opt "$TMP/hostile.txt" >"$TMP/h.svg" 2>"$TMP/err" &&
		xmllint --noout "$TMP/h.svg" 2>"$TMP/xerr"; then
		ok "hostile names ${opt:-default}: well-formed"
	else
		not_ok "hostile names ${opt:-default}"; head -5 "$TMP/xerr" "$TMP/err" | sed 's/^/# /'
	fi
done
"$EMBER" flamegraph --nametype 'N"</script>]]>' --notes 'a note' --encoding UTF-8 \
	--subtitle '<&>' --info $'line one\nline <two>' "$TMP/hostile.txt" >"$TMP/h2.svg"
check "hostile options: well-formed" xmllint --noout "$TMP/h2.svg"
check "--info lines drawn" grep -q '>line &lt;two&gt;</text>' "$TMP/h2.svg"
check "--notes as a comment" grep -q '<!-- NOTES: a note -->' "$TMP/h2.svg"
check "--encoding in the declaration" grep -q '<?xml version="1.0" encoding="UTF-8"' "$TMP/h2.svg"

# elision note
EX=$C/examples/example-perf-stacks.collapsed
"$EMBER" flamegraph --minwidth 2 "$EX" >"$TMP/ex.svg"
"$EMBER" flamegraph "$JAVA" >"$TMP/j.svg"
check "elision note: frames and share not shown" \
	grep -Eq '<text id="elided"[^>]*>[0-9]+ frames \([0-9.]+% of samples\) narrower than 2 px not shown<' "$TMP/ex.svg"
"$EMBER" flamegraph --minwidth 0 "$EX" >"$TMP/j0.svg"
check "no elision note with --minwidth 0" bash -c "! grep -q 'id=\"elided\"' '$TMP/j0.svg'"

# deterministic colours: same name, same colour in different graphs and runs
c1=$(grep -o 'JavaCalls::call_helper ([^<]*</title><rect[^>]*fill="[^"]*"' "$TMP/j.svg" | head -1 | sed 's/.*fill=//')
"$EMBER" flamegraph "$R/perf-java-stacks-02-collapsed-all.txt" >"$TMP/j2.svg"
c2=$(grep -o 'JavaCalls::call_helper ([^<]*</title><rect[^>]*fill="[^"]*"' "$TMP/j2.svg" | head -1 | sed 's/.*fill=//')
check "same function, same colour across graphs ($c1)" test -n "$c1" -a "$c1" = "$c2"

# --cp: palette.map written, then reused
(cd "$TMP" && "$EMBER" flamegraph --cp "$JS" >cp1.svg && "$EMBER" flamegraph --cp --hash "$JS" >cp2.svg)
check "--cp writes palette.map" grep -q '^node-v011->rgb(' "$TMP/palette.map"
check "--cp reuses the map (same fills despite --hash)" \
	diff <(rects "$TMP/cp1.svg") <(rects "$TMP/cp2.svg")
"$EMBER" flamegraph --cp-file "$TMP/my.map" "$JS" >/dev/null
check "--cp-file PATH" test -s "$TMP/my.map"

# --nameattr
printf 'node-v011\thref=http://example.com/?a=1&b=2\ttitle=the node\tclass=hot\n' >"$TMP/attrs"
"$EMBER" flamegraph --nameattr "$TMP/attrs" "$JS" >"$TMP/na.svg"
check "--nameattr: link, title, class" \
	grep -q '<a xlink:href="http://example.com/?a=1&amp;b=2" target="_top" class="hot"><title>the node</title>' "$TMP/na.svg"
check "--nameattr output well-formed" xmllint --noout "$TMP/na.svg"

# --search pre-highlights
"$EMBER" flamegraph --search '^ext4_' "$JS" >"$TMP/s.svg"
check "--search embedded" grep -q 'search:"^ext4_"' "$TMP/s.svg"

# --focus / --ignore: the stacks `ember merge --grep/--exclude` keeps, drawn
VX=$R/perf-vertx-stacks-01-collapsed-all.txt
"$EMBER" flamegraph --frames-tsv "$VX" >"$TMP/full.tsv"
fi_case() { # FLAMEGRAPH-ARGS -- MERGE-ARGS
	local fa=() ma=()
	while [ "$1" != -- ]; do fa+=("$1"); shift; done
	shift
	ma=("$@")
	"$EMBER" flamegraph "${fa[@]}" --frames-tsv "$VX" >"$TMP/fi.tsv"
	"$EMBER" merge "${ma[@]}" "$VX" | "$EMBER" flamegraph --frames-tsv >"$TMP/fm.tsv"
	check "${fa[*]}: the graph of ember merge ${ma[*]} (and not the whole one)" \
		sh -c "test -s '$TMP/fi.tsv' && cmp -s '$TMP/fi.tsv' '$TMP/fm.tsv' && ! cmp -s '$TMP/fi.tsv' '$TMP/full.tsv'"
}
fi_case --focus '_\[k\]$' -- --grep '_\[k\]$'
fi_case --ignore 'fireChannelRead' -- --exclude 'fireChannelRead'
fi_case --focus '^java_start$' --ignore 'flush_' -- --grep '^java_start$' --exclude 'flush_'
"$EMBER" flamegraph --focus '(' "$JS" >/dev/null 2>"$TMP/err"
check "bad --focus: exit 2, the pattern's error" sh -c "test $? -eq 2 && grep -q \"invalid --focus '(': unmatched\" '$TMP/err'"

# errors
"$EMBER" flamegraph --colors nope "$JS" >/dev/null 2>"$TMP/err"
check "bad --colors: exit 2" test $? -eq 2
check "bad --colors: message" grep -q "invalid value 'nope' for --colors" "$TMP/err"
"$EMBER" flamegraph --minwidth abc "$JS" >/dev/null 2>&1
check "bad --minwidth: exit 2" test $? -eq 2
"$EMBER" flamegraph --notes '<x>' "$JS" >/dev/null 2>&1
check "--notes with < rejected" test $? -eq 2
printf 'garbage\n\n' | "$EMBER" flamegraph >"$TMP/empty.svg" 2>"$TMP/err"
check "empty input: exit 2" test $? -eq 2
check "empty input: error SVG, well-formed" xmllint --noout "$TMP/empty.svg"
check "empty input: skipped line reported" grep -q "1 malformed line" "$TMP/err"
printf 'a;b 1\nbad line\n' | "$EMBER" flamegraph --strict >/dev/null 2>"$TMP/err"
check "--strict: a bad line is an error" test $? -eq 2
gzip -c "$JS" >"$TMP/js.gz"
check "gzip input" bash -c "'$EMBER' flamegraph --frames-tsv '$TMP/js.gz' | cmp -s - <('$EMBER' flamegraph --frames-tsv '$JS')"
done_testing
