# SPDX-License-Identifier: MIT
# Sourced by test_node.sh and test_node_versions.sh (tests/workloads/nodeburn's five functions).
# shares FILE: "total named f m c a mod burn_total" (named: % of the samples with a function of
# the workload's files on the stack; f m c a mod: % of the five burn functions' samples). A
# frame names a function by introspection ("burnFunction (.../app.js)_[j]") or by V8's perf map
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
