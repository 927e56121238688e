# SPDX-License-Identifier: MIT
# Sourced by test_node.sh and test_node_versions.sh (tests/workloads/nodeburn's five functions).
# shares FILE: "total named f m c a mod burn_total" (named: % of the samples with a function of
# the workload's files on the stack; f m c a mod: % of the five burn functions' samples). A
# frame names a function by introspection ("burnFunction (.../app.js:32)_[j]") or by V8's perf map
# ("JS:*burnFunction /.../app.js:19:22_[j]"; ~ ^ + * mark the tier, Node 24 adds ').
shares() {
	awk '{ n = $NF; s = substr($0, 1, length($0) - length($NF) - 1); k = split(s, fr, ";")
		tot += n; named = 0; which = ""
		for (i = 1; i <= k; i++) {
			g = fr[i]
			if (g !~ /_\[j\]$/) continue
			sub(/_\[j\]$/, "", g)
			if (g ~ /(app\.js|mod\.mjs)/) named = 1
			if (g ~ /(^|[:*~^+\047])burn(Function|Method|Closure|Async|Module)( |$)/) {
				match(g, /burn(Function|Method|Closure|Async|Module)/)
				which = substr(g, RSTART, RLENGTH)
			}
		}
		if (named) nm += n
		if (which != "") { b[which] += n; bt += n } }
		END { t = tot ? tot : 1; u = bt ? bt : 1
		      printf "%d %.1f %.1f %.1f %.1f %.1f %.1f %d\n", tot, 100 * nm / t,
			     100 * b["burnFunction"] / u, 100 * b["burnMethod"] / u,
			     100 * b["burnClosure"] / u, 100 * b["burnAsync"] / u,
			     100 * b["burnModule"] / u, bt }' "$1"
}

# fn_lines FILE: "F M C A MOD", the line each burn function's frames name (the most samples'
# line; "-" when none names one): introspection's "burnFunction (.../app.js:32)_[j]", V8's perf
# map's "JS:*burnFunction /.../app.js:32:22_[j]"
fn_lines() {
	awk '{ n = $NF; s = substr($0, 1, length($0) - length($NF) - 1); k = split(s, fr, ";")
		for (i = 1; i <= k; i++) {
			g = fr[i]
			if (g !~ /_\[j\]$/ || !match(g, /burn(Function|Method|Closure|Async|Module)/)) continue
			f = substr(g, RSTART, RLENGTH)
			if (match(g, /(app\.js|mod\.mjs):[0-9]+/)) {
				l = substr(g, RSTART, RLENGTH); sub(/.*:/, "", l); c[f " " l] += n
			}
		} }
		END { for (k in c) { split(k, a, " "); if (c[k] > best[a[1]]) { best[a[1]] = c[k]; ln[a[1]] = a[2] } }
		      printf "%s %s %s %s %s\n", ln["burnFunction"] ? ln["burnFunction"] : "-",
			     ln["burnMethod"] ? ln["burnMethod"] : "-", ln["burnClosure"] ? ln["burnClosure"] : "-",
			     ln["burnAsync"] ? ln["burnAsync"] : "-", ln["burnModule"] ? ln["burnModule"] : "-" }' "$1"
}

# src_lines: "F M C A MOD", the lines that define the five functions in the workload's sources
src_lines() {
	local d=$SRCDIR/tests/workloads/nodeburn
	echo "$(grep -n '^function burnFunction(' "$d/app.js" | cut -d: -f1)" \
		"$(grep -n '^  burnMethod(' "$d/app.js" | cut -d: -f1)" \
		"$(grep -n 'return function burnClosure(' "$d/app.js" | cut -d: -f1)" \
		"$(grep -n '^async function burnAsync(' "$d/app.js" | cut -d: -f1)" \
		"$(grep -n '^export function burnModule(' "$d/mod.mjs" | cut -d: -f1)"
}

# inlined FILE: "F M", the % of burnFunction's samples whose frames go on into lcgRound, and of
# Burner.burnMethod's into round;mixRound (the functions TurboFan inlines into them: frames of
# their own whether inlined or called), among those not in now() (the clock, read between rounds)
inlined() {
	awk '{ n = $NF; s = substr($0, 1, length($0) - length($NF) - 1)
		if (s ~ /;now[ _]/) next
		if (s ~ /;burnFunction[ _]/) { f += n; if (s ~ /;burnFunction [^;]*;lcgRound[ _]/) fi += n }
		if (s ~ /;burnMethod[ _]/) { m += n; if (s ~ /;burnMethod [^;]*;round [^;]*;mixRound[ _]/) mi += n } }
		END { printf "%.1f %.1f\n", f ? 100 * fi / f : 0, m ? 100 * mi / m : 0 }' "$1"
}
