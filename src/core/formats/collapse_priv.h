/* SPDX-License-Identifier: MIT */
/* collapse internals shared by collapse.c and the per-format parsers; not a public header. */
#ifndef EMBER_COLLAPSE_PRIV_H
#define EMBER_COLLAPSE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember/core/formats/collapse.h"
#include "ember/core/base/sbuf.h"

/*
 * A record bigger than this (its frames, joined) is dropped and reported rather than grown
 * without bound: input without blank lines between perf samples would otherwise make one stack
 * of the whole file, as stackcollapse-perf.pl does.
 */
#define COLLAPSE_MAX_RECORD (16u << 20)
/* Lines held while auto-detecting the format. */
#define COLLAPSE_DETECT_MAX_LINES 4096
#define COLLAPSE_DETECT_MAX_BYTES (1u << 20)

/* perl's character classes on byte strings (no locale, no unicode_strings). */
static inline bool pl_space(unsigned char ch)
{
	return ch == ' ' || (ch >= '\t' && ch <= '\r'); /* \t \n \v \f \r */
}

static inline bool pl_digit(unsigned char ch)
{
	return ch >= '0' && ch <= '9';
}

extern const unsigned char collapse_word_chars[256];

static inline bool pl_word(unsigned char ch)
{
	return collapse_word_chars[ch];
}

/* A stack under construction: groups of frames (one per input line), prepended as perl's unshift. */
struct frame_groups {
	struct sbuf text;	/* the groups' texts, concatenated in input order */
	size_t *end;		/* end offset of each group in text */
	size_t n, cap;
	bool overflow;		/* past COLLAPSE_MAX_RECORD: the record will be dropped */
};

struct collapse {
	struct collapse_opts opts;
	collapse_sample_fn fn;
	void *ctx;
	const char *name;
	struct collapse_stats stats;
	enum collapse_format fmt;
	int err;			/* sticky -ENOMEM */

	/* auto-detection: held lines, "lineno len bytes" records in held */
	struct sbuf held;
	size_t nheld;
	int detect_state;
	bool saw_content;

	/* shared record state */
	struct frame_groups groups;
	struct sbuf out;		/* the joined stack of the record being emitted */
	struct sbuf work;		/* one function name being tidied */
	struct sbuf grp;		/* one line's group being built */
	unsigned long rec_line;

	/* perf */
	char *event;			/* kept event (owned), "" until set */
	bool event_set, event_defaulted;
	char *other_event;		/* first other event filtered (owned) */
	bool have_pname;
	bool java;
	struct sbuf pname;
	struct sbuf comm;
	struct sbuf rec_event;
	long pid, tid;
	double time_s;
	struct sbuf time_str;
	uint64_t period;
	bool period_huge;
	double period_f;

	/* dtrace */
	unsigned long long nr;

	/* bpftrace */
	bool in_stack;
};

int collapse_perf_feed(struct collapse *c, const char *l, size_t n, unsigned long lineno);
int collapse_dtrace_feed(struct collapse *c, const char *l, size_t n, unsigned long lineno);
int collapse_bpftrace_feed(struct collapse *c, const char *l, size_t n, unsigned long lineno);

/* Shared helpers (collapse.c). */
void collapse_skip(struct collapse *c, unsigned long lineno, unsigned int col, const char *reason);
/* Numifies a digit string as perl does: exact to 2^64-1, else a double. */
void collapse_count(const char *s, size_t n, uint64_t *ret_u, bool *ret_huge, double *ret_f);
void groups_reset(struct frame_groups *g);
/* Closes the group being built in c->grp (if it has any frame: @nfuncs > 0). -ENOMEM or 0. */
int groups_push(struct frame_groups *g, const struct sbuf *grp, size_t nfuncs);
/* Closes a group appended directly to g->text from offset @start (dropped if @nfuncs is 0). */
int groups_close(struct frame_groups *g, size_t start, size_t nfuncs);
/* Joins @first (may be NULL) and the groups last-first, ';'-separated, into @out. */
void groups_join(const struct frame_groups *g, const char *first, size_t first_len,
		 struct sbuf *out);
/* Delivers a record; counts it. Returns the callback's result. */
int collapse_emit(struct collapse *c, struct collapse_sample *s);
/* Perl's split /->/ then calls @fn on each field (trailing empty fields dropped). */
typedef int (*split_fn)(struct collapse *c, const char *f, size_t n, size_t idx, void *ctx);
int split_arrows(struct collapse *c, const char *s, size_t n, split_fn fn, void *ctx,
		 size_t *ret_nfields);

#endif
