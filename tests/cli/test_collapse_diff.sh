#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Differential test: randomly mutated perf script, DTrace and bpftrace texts (from the corpus and
# tests/data, with the bytes that steer the scripts' regexes: spaces, tabs, parentheses, colons,
# "->", "+0x", quotes, \r, \v, invalid UTF-8 ...) go through ember collapse and through the
# reference perl scripts, which must agree byte for byte. The same inputs also check that
# --jobs 2 with tiny chunks (records split across threads) prints what one thread prints.
# Without the FlameGraph scripts (a failure under CI; the corpus has no results for mutated
# inputs) the comparison with them is a counted skip and the --jobs 2 checks compare with ember's
# one-thread output.
. "$(dirname "$0")/../lib.sh"
FG=$FLAMEGRAPH_DIR
have_ref=1
have_flamegraph stackcollapse-perf.pl stackcollapse.pl stackcollapse-bpftrace.pl || have_ref=0
command -v python3 >/dev/null || skip_all "no python3"
SEEDS=${COLLAPSE_DIFF_SEEDS:-10}

cat >"$TMP/mut.py" <<'PY'
import random, sys, glob
seed, fmt, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
srcs = sys.argv[4:]
random.seed(seed)
lines = []
for f in random.sample(srcs, min(2, len(srcs))):
    ls = open(f, 'rb').read().split(b'\n')
    st = random.randrange(len(ls)); lines += ls[st:st + random.randrange(1, 200)]
toks = [b' ', b'  ', b'\t', b'(', b')', b' (', b':', b'/', b'->', b'0', b'12', b'+0x1f', b';',
        b'"', b"'", b'[unknown]', b'L', b'java', b'.(', b').', b'(anonymous namespace)', b'_[i]',
        b'_[j]', b'vmlinux', b'/tmp/perf-1.map', b'[', b']', b'\xff\xfe', b'\r', b'\x0b', b'@[',
        b']: 5', b', ', b'::', b'<', b'+', b'-', b'cycles:', b' 5 ', b'/0', b'#']
res = []
for l in lines:
    r = random.random()
    if r < 0.15 and l:
        for _ in range(random.randrange(1, 4)):
            p = random.randrange(len(l) + 1); l = l[:p] + random.choice(toks) + l[p:]
    elif r < 0.2 and l:
        p = random.randrange(len(l)); q = random.randrange(p, len(l) + 1); l = l[:p] + l[q:]
    elif r < 0.23:
        res.append(b'')
    elif r < 0.25:
        continue
    res.append(l)
open(out, 'wb').write(b'\n'.join(res) + (b'\n' if random.random() < 0.7 else b''))
PY

data=$SRCDIR/tests/data
perf_srcs=("$SHARED"/corpus/flamegraph-test/*.txt "$data/collapse-perf-corners.in")
zcat "$SHARED/corpus/examples/example-dtrace-stacks.txt.gz" | head -3000 >"$TMP/dt.txt"
dtrace_srcs=("$TMP/dt.txt" "$data/collapse-dtrace-corners.in")
bpf_srcs=("$data/collapse-bpftrace-corners.in")

bad=0 runs=0 jobs_runs=0
report() { not_ok "$1"; cp "$2" "$OUTPUT/collapse-diff-failure.txt" 2>/dev/null; bad=$((bad + 1)); }
for s in $(seq 1 "$SEEDS"); do
	python3 "$TMP/mut.py" "$s" perf "$TMP/in" "${perf_srcs[@]}"
	for o in "" "--all --tid" "--addrs --pid"; do
		runs=$((runs + 1)) jobs_runs=$((jobs_runs + 1))
		if [ $have_ref = 1 ]; then
			# shellcheck disable=SC2086
			perl "$FG/stackcollapse-perf.pl" $o "$TMP/in" >"$TMP/want" 2>/dev/null
			# shellcheck disable=SC2086
			"$EMBER" collapse perf $o "$TMP/in" >"$TMP/got" 2>/dev/null
			cmp -s "$TMP/want" "$TMP/got" || { report "perf seed $s $o differs from stackcollapse-perf.pl" "$TMP/in"; continue; }
		else
			# shellcheck disable=SC2086
			"$EMBER" collapse perf $o "$TMP/in" >"$TMP/want" 2>/dev/null
		fi
		# shellcheck disable=SC2086
		"$EMBER" collapse perf $o --jobs 2 --chunk-bytes $((s * 7)) "$TMP/in" >"$TMP/got" 2>/dev/null
		cmp -s "$TMP/want" "$TMP/got" || report "perf seed $s $o: --jobs 2 differs" "$TMP/in"
		# shellcheck disable=SC2086
		"$EMBER" collapse perf $o --jobs 2 --chunk-bytes $((s * 3)) - <"$TMP/in" >"$TMP/got" 2>/dev/null
		cmp -s "$TMP/want" "$TMP/got" || report "perf seed $s $o: --jobs 2 from stdin differs" "$TMP/in"
	done
	"$EMBER" collapse perf --timestamps "$TMP/in" >"$TMP/want" 2>/dev/null
	"$EMBER" collapse perf --timestamps --jobs 2 --chunk-bytes $((s * 5)) "$TMP/in" >"$TMP/got" 2>/dev/null
	cmp -s "$TMP/want" "$TMP/got" || report "perf seed $s: --timestamps --jobs 2 differs" "$TMP/in"
	[ $have_ref = 1 ] || continue

	python3 "$TMP/mut.py" "$s" dtrace "$TMP/in" "${dtrace_srcs[@]}"
	runs=$((runs + 1))
	perl "$FG/stackcollapse.pl" "$TMP/in" >"$TMP/want" 2>/dev/null
	"$EMBER" collapse dtrace "$TMP/in" >"$TMP/got" 2>/dev/null
	cmp -s "$TMP/want" "$TMP/got" || report "dtrace seed $s differs from stackcollapse.pl" "$TMP/in"

	python3 "$TMP/mut.py" "$s" bpftrace "$TMP/in" "${bpf_srcs[@]}"
	runs=$((runs + 1))
	perl "$FG/stackcollapse-bpftrace.pl" "$TMP/in" >"$TMP/want" 2>/dev/null
	"$EMBER" collapse bpftrace "$TMP/in" >"$TMP/got" 2>/dev/null
	cmp -s "$TMP/want" "$TMP/got" || report "bpftrace seed $s differs from stackcollapse-bpftrace.pl" "$TMP/in"
done
if [ $have_ref = 1 ]; then
	check "$runs mutated inputs agree with the reference scripts ($bad failures)" [ "$bad" -eq 0 ]
else
	skip "mutated inputs agree with the reference scripts" "no FlameGraph scripts at $FG"
	check "--jobs 2 prints what one thread prints on $jobs_runs mutated perf inputs, and with --timestamps ($bad failures)" [ "$bad" -eq 0 ]
fi
done_testing
