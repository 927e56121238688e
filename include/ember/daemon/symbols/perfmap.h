/* SPDX-License-Identifier: MIT */
/*
 * perfmap: JIT symbol maps, /tmp/perf-PID.map (the format perf reads):
 *
 *   START SIZE NAME          hex START and SIZE, NAME to the end of the line (may hold spaces)
 *   0xSTART 0xSIZE NAME      the 0x-prefixed variant some runtimes write
 *
 * Pure functions on text (fuzzed); the symbolizer does the file access. A table grows as the file
 * does: feed it the new bytes and it parses the complete lines among them (a truncated last line
 * waits for its '\n'). When entries overlap, the one appended last wins (JITs reuse memory).
 * Not thread-safe.
 */
#ifndef EMBER_PERFMAP_H
#define EMBER_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct parse_error;

#define PERFMAP_MAX_LINE 4096 /* longer lines are malformed */

struct perfmap_entry {
	uint64_t start, size;	/* [start, start + size), size > 0, no wrap-around */
	const char *name;	/* borrowed from the line, NOT NUL-terminated, name_len > 0 */
	size_t name_len;
};

/* One line, without '\n'. 0 or -EINVAL (+ @reterr, may be NULL). ret->name points into @line. */
int perfmap_parse_line(const char *line, size_t len, struct perfmap_entry *ret,
		       struct parse_error *reterr);

struct perfmap; /* opaque */

/* NULL + errno=ENOMEM; free with perfmap__free(). */
struct perfmap *perfmap__new(void);
void perfmap__free(struct perfmap *pm); /* NULL is a no-op */

/*
 * Adds the complete lines of @text[0..len): everything up to and including the last '\n'. Sets
 * *@ret_used to the bytes consumed (the caller feeds the rest again once it is complete) and adds
 * malformed lines to *@ret_bad (may be NULL). Returns 0 or -ENOMEM (the table keeps what it had),
 * or -E2BIG once the table holds perfmap__set_max_entries()'s bound or
 * perfmap__set_max_bytes()'s: the lines past it are consumed, not added.
 */
int perfmap__add_text(struct perfmap *pm, const char *text, size_t len, size_t *ret_used,
		      unsigned long *ret_bad);

/* Index of the symbol containing @addr, or -ENOENT. Indices are stable until the next add. */
int perfmap__lookup(const struct perfmap *pm, uint64_t addr);
/* Borrowed, NUL-terminated, valid until the next add or free. */
const char *perfmap__name(const struct perfmap *pm, int idx, size_t *ret_len);
/* A caller's value attached to symbol @idx (0 until set); kept across adds. */
uint32_t perfmap__cookie(const struct perfmap *pm, int idx);
void perfmap__set_cookie(struct perfmap *pm, int idx, uint32_t cookie);
/* Every symbol's value back to 0 (the values the caller attached mean nothing any more). */
void perfmap__clear_cookies(struct perfmap *pm);

/* While @defer, adds do not sort the table (several chunks of one file: one sort at the end);
 * lookups need it sorted: perfmap__defer_sort(pm, false) sorts what was added. */
void perfmap__defer_sort(struct perfmap *pm, bool defer);

/* At most @max entries (0: no bound); a process sizes its perf map. */
void perfmap__set_max_entries(struct perfmap *pm, size_t max);
/* At most @max bytes of entries and names (perfmap__data_bytes(); 0: no bound): names of 4000
 * bytes made 247,500 entries, under an entry bound, hold 1 GB. */
void perfmap__set_max_bytes(struct perfmap *pm, size_t max);
/* The bytes its entries and names use (what perfmap__set_max_bytes() bounds) */
size_t perfmap__data_bytes(const struct perfmap *pm);

size_t perfmap__count(const struct perfmap *pm);
size_t perfmap__mem_bytes(const struct perfmap *pm);

#endif
