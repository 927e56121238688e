/* SPDX-License-Identifier: MIT */
/* The command table: one line per subcommand, EMBER_CMD(name, function, summary), sorted. */
EMBER_CMD(collapse, cmd_collapse, "perf script, DTrace and bpftrace output to folded stacks")
EMBER_CMD(convert, cmd_convert, "to and from pprof; to speedscope and d3-flame-graph JSON")
EMBER_CMD(diff, cmd_diff, "compare two folded files: difffolded columns, red/blue flame graphs")
EMBER_CMD(flamegraph, cmd_flamegraph, "folded stacks to an interactive SVG flame graph (flamegraph.pl)")
EMBER_CMD(heatmap, cmd_heatmap, "flame scope: subsecond-offset heat map; a time range's profile")
EMBER_CMD(merge, cmd_merge, "merge, filter and trim folded stack files")
EMBER_CMD(stat, cmd_stat, "flame graph algebra: similarity, decomposition, Hotelling T2 test")
