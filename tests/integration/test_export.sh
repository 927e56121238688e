#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lane: beside (emberd serves a replayed recording: no timing, share or CPU bound to disturb)
# emberd's export endpoints against a real emberd replaying a real `perf script` capture (no
# root, no BPF): `go tool pprof` reads /debug/pprof/profile (-raw: the same stacks and counts as
# /api/v1/folded over the same range, comm labels; -top works on the bare URL as Parca and
# Pyroscope scrape it); the parameters and their errors; /metrics passes `promtool check
# metrics` and counts the requests made, by endpoint and status, with a latency histogram.
. "$(dirname "$0")/../lib.sh"
command -v curl >/dev/null || skip_all "no curl"
[ -x "$EMBERD" ] || skip_all "no $EMBERD"
IN=$TMP/perf.txt
zcat "$SHARED/corpus/examples/example-perf-stacks.txt.gz" >"$IN" || skip_all "no shared corpus"
export HOME=${HOME:-/root} GOCACHE=${GOCACHE:-$OUTPUT/go-cache} PPROF_TMPDIR=$TMP/pprof GOFLAGS=

trap 'stop_all; cleanup_tmp' EXIT
replay_start "$IN" --frequency 49 || { sed 's/^/# /' "$TMP/emberd.log"; skip_all "emberd did not start"; }

# the profile: gzip pprof, attachment, no double compression
code=$(curl -s -o "$TMP/p.pb.gz" -D "$TMP/h" -w '%{http_code}' -H 'Accept-Encoding: gzip' \
	"$URL/debug/pprof/profile?seconds=3600")
check "profile: 200" test "$code" = 200
check "profile: octet-stream" grep -qi '^Content-Type: application/octet-stream' "$TMP/h"
check "profile: not gzipped twice" sh -c "! grep -qi '^Content-Encoding' '$TMP/h'"
check "profile: gzip body" sh -c "gzip -t '$TMP/p.pb.gz'"

if command -v go >/dev/null; then
	# go tool pprof -raw -> "stack count" (root first), labels collected
	go tool pprof -raw "$TMP/p.pb.gz" >"$TMP/raw" 2>"$TMP/err" || { not_ok "go tool pprof -raw"; sed 's/^/# /' "$TMP/err"; }
	perl -e '
		my (%loc, @smp, $sec, $cur, $period, $labels_ok);
		while (<STDIN>) {
			chomp;
			if (/^Period: (\d+)/) { $period = $1; next }
			if (/^Samples:/) { $sec = "s"; <STDIN>; next }
			if (/^Locations/) { $sec = "l"; next }
			if (/^Mappings/) { $sec = "m"; next }
			if ($sec eq "s" && /^\s+(\d+)\s+(\d+):((?: \d+)*) ?$/) {
				die "cpu != count * period\n" if $2 != $1 * $period;
				push @smp, [$1, [split " ", $3]]; next
			}
			if ($sec eq "s" && /^\s+comm:\[(.*)\]$/) { $smp[-1][2] = $1; next }
			# the folded frame: the system name when there is one (the pprof name lacks the
			# _[k]/_[j]/_[i] marker), else the name
			if ($sec eq "l" && /^\s+(\d+): 0x[0-9a-f]+ M=\d+ (.*) \S*:\d+ s=\d+(?:\((.*)\))?$/) {
				$cur = $1; $loc{$cur} = [length($3) ? $3 : $2]; next
			}
			if ($sec eq "l" && /^\s+(.*) \S*:\d+ s=\d+(?:\((.*)\))?$/) { push @{$loc{$cur}}, length($2) ? $2 : $1; next }
		}
		die "period $period, not 1e9/49\n" unless $period == 20408163;
		my %h;
		for my $s (@smp) {
			my @f = map { reverse @{$loc{$_}} } reverse @{$s->[1]};
			die "comm label $s->[2] is not the root frame $f[0]\n" unless $s->[2] eq $f[0];
			$h{join ";", @f} += $s->[0];
		}
		print "$_ $h{$_}\n" for sort keys %h;
	' <"$TMP/raw" >"$TMP/got" 2>"$TMP/perr"
	check "go tool pprof -raw: period from --frequency, cpu = count * period, comm labels" \
		test ! -s "$TMP/perr"
	[ -s "$TMP/perr" ] && sed 's/^/# /' "$TMP/perr"
	curl -s "$URL/api/v1/folded?from=now-3600s" >"$TMP/want"
	if [ -s "$TMP/want" ] && cmp -s "$TMP/want" "$TMP/got"; then
		ok "go tool pprof -raw: stacks and counts equal /api/v1/folded ($(wc -l <"$TMP/want") stacks)"
	else
		not_ok "pprof stacks differ from /api/v1/folded"; diff "$TMP/want" "$TMP/got" | head -5 | sed 's/^/# /'
	fi
	# what a user (and Parca, Pyroscope) does: the bare URL; go tool pprof adds seconds=30
	go tool pprof -top "$URL/debug/pprof/profile" >"$TMP/top" 2>&1
	check "go tool pprof -top URL" grep -q 'flat%' "$TMP/top"
	[ -f "$TMP/top" ] && ! grep -q 'flat%' "$TMP/top" && sed 's/^/# /' "$TMP/top" | head -5
	# a filter applies: pid selects one process and labels its samples
	curl -s "$URL/debug/pprof/profile?seconds=3600&pid=977" -o "$TMP/pid.pb.gz"
	go tool pprof -raw "$TMP/pid.pb.gz" 2>/dev/null | grep -q 'pid:\[977\]' &&
		ok "pid filter and pid label" || not_ok "pid filter and pid label"
else
	skip "go tool pprof" "no go (make deps installs golang-go)"
fi
# ember's own reader agrees (and needs no go)
"$EMBER" convert --from pprof "$TMP/p.pb.gz" >"$TMP/got2"
curl -s "$URL/api/v1/folded?from=now-3600s" >"$TMP/want"
check "ember convert --from pprof equals /api/v1/folded" cmp -s "$TMP/want" "$TMP/got2"

# parameters: 400 with the parameter named; the default is the last 30 s
code=$(curl -s -o "$TMP/body" -w '%{http_code}' "$URL/debug/pprof/profile?seconds=abc")
check "seconds=abc: 400 naming seconds" sh -c "test $code = 400 && grep -q '\"seconds\"' '$TMP/body'"
code=$(curl -s -o "$TMP/body" -w '%{http_code}' "$URL/debug/pprof/profile?seconds=5&from=-1h")
check "seconds with from: 400" test "$code" = 400
code=$(curl -s -o "$TMP/body" -w '%{http_code}' "$URL/debug/pprof/profile?seconds=99999999")
check "seconds past the range limit: 413" test "$code" = 413
code=$(curl -s -o "$TMP/body" -w '%{http_code}' "$URL/debug/pprof/profile?wait=1&seconds=1")
check "wait=1 on a replay: 400" sh -c "test $code = 400 && grep -q 'live' '$TMP/body'"
code=$(curl -s -o "$TMP/body" -w '%{http_code}' "$URL/debug/pprof/profile?labels=pid")
check "labels=pid on a replay: 400" sh -c "test $code = 400 && grep -q 'labels' '$TMP/body'"
code=$(curl -s -o "$TMP/body" -w '%{http_code}' "$URL/debug/pprof/profile?labels=pod")
check "labels=pod: 400" test "$code" = 400
code=$(curl -s -o "$TMP/body" -w '%{http_code}' "$URL/debug/pprof/profile?bogus=1")
check "unknown parameter: 400" test "$code" = 400
curl -s "$URL/debug/pprof/profile" -o "$TMP/d.pb.gz"
n30=$("$EMBER" convert --from pprof "$TMP/d.pb.gz" | awk '{s+=$NF} END {print s+0}')
nf=$(curl -s "$URL/api/v1/folded?from=now-30s" | awk '{s+=$NF} END {print s+0}')
check "default range is the last 30 s ($n30 samples)" test "$n30" = "$nf"
curl -s -o /dev/null "$URL/no/such/thing"

# metrics: promtool's lint passes; requests are counted by endpoint and status
code=$(curl -s -o "$TMP/metrics" -D "$TMP/h" -w '%{http_code}' "$URL/metrics")
check "metrics: 200" test "$code" = 200
check "metrics: text format 0.0.4" grep -qi '^Content-Type: text/plain; version=0.0.4' "$TMP/h"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TMP/metrics" >"$TMP/lint" 2>&1
	check "promtool check metrics" test $? -eq 0
	[ -s "$TMP/lint" ] && sed 's/^/# /' "$TMP/lint"
else
	skip "promtool check metrics" "no promtool (make deps installs prometheus)"
fi
grep -q '^ember_http_requests_total{endpoint="/debug/pprof/profile",status="400"} 6$' "$TMP/metrics" &&
	ok "6 requests counted as /debug/pprof/profile 400" || not_ok "400s by endpoint"
grep -q '^ember_http_requests_total{endpoint="other",status="404"} 1$' "$TMP/metrics" &&
	ok "unknown paths count as endpoint=other" || not_ok "404 as other"
grep -q '^ember_http_request_duration_seconds_bucket{endpoint="/api/v1/folded",le="+Inf"} [1-9]' "$TMP/metrics" &&
	ok "latency histogram per endpoint" || not_ok "latency histogram"
grep -q '^ember_build_info{version="' "$TMP/metrics" && ok "build info" || not_ok "build info"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL/metrics")
check "POST /metrics: 405" test "$code" = 405
done_testing
