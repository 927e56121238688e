#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# speedscope (npm package, headless Chromium) imports `ember convert --to speedscope` output and
# shows the folded input's total; see test_speedscope.mjs.
. "$(dirname "$0")/../lib.sh"
require_browser
[ -d "$OUTPUT/node/node_modules/speedscope" ] || skip_all "no speedscope in $OUTPUT/node (make deps)"
corpus=$SHARED/corpus/flamegraph-test/results
[ -d "$corpus" ] || skip_all "no corpus at $corpus"

cat >"$TMP/samples.txt" <<'EOT'
# ember-samples v1
1700000000.000000000 burn;burn_a;burn_b 2
1700000000.010000000 burn;burn_a 1
1700000000.020000000 burn;burn_a;burn_b;burn_c 4
EOT
cases=()
for f in "$corpus"/perf-java-stacks-01-collapsed-all.txt "$corpus"/perf-js-stacks-01-collapsed-all.txt \
	"$corpus"/perf-vertx-stacks-01-collapsed-all.txt "$TMP/samples.txt"; do
	name=$(basename "$f")
	"$EMBER" convert --to speedscope "$f" >"$TMP/$name.json" || { not_ok "convert $name"; continue; }
	# the page loads the profile the way `speedscope FILE` does: a script calling
	# speedscope.loadFileFromBase64(name, base64)
	{ printf 'speedscope.loadFileFromBase64("%s", "' "$name"; base64 -w0 "$TMP/$name.json"; printf '")\n'; } >"$TMP/$name.js"
	# total and distinct frame names, independently of ember
	read -r total frames < <(perl -ne 'chomp; if (/^(?:\d+(?:\.\d+)? )?(.*)\s+?(\d+)$/) { my ($s, $c) = ($1, $2);
		next unless $c; $t += $c; $f{$_} = 1 for split /;/, $s } END { print $t + 0, " ", scalar(keys %f), "\n" }' \
		<(grep -v '^#' "$f"))
	cases+=("{\"js\":\"$TMP/$name.js\",\"name\":\"$name\",\"total\":$total,\"frames\":$frames}")
done
(IFS=,; echo "[${cases[*]}]") >"$TMP/cases.json"
CASES=$TMP/cases.json node "$SRCDIR/tests/browser/test_speedscope.mjs"
