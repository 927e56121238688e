/* SPDX-License-Identifier: MIT */
/*
 * profile: the AGGREGATED container. A set of stacks, each a sequence of frame ids (root first,
 * ids from a strtab), with a sample count, and optionally a second count (the differential input of difffolded/flamegraph.pl:
 * count = "before", count2 = "after"). Adding a stack that is already present sums the counts.
 * A count is kept as an exact unsigned 64-bit integer plus a double for what is not an integer
 * (fractional samples, scaled or negative values): integer counts stay exact up to 2^64-1, where
 * a double would round them past 2^53. profile__count() returns the sum as a double (for
 * rendering); profile__count_exact() gives the integer when there is no fractional part.
 *
 * The four sample containers, by what each is: profile (AGGREGATED: stacks and counts, no time),
 * samples (COLUMNAR: timestamped, for heat maps of files), recording (IMMUTABLE: built once, read
 * by any thread: replays and captures), store (LIVE: the daemon's bounded, growing ring).
 *
 * Stacks are kept in insertion order and addressed by index 0..nr_stacks-1; indices stay valid
 * until the profile is freed or filtered into a new one. Not thread-safe.
 */
#ifndef EMBER_PROFILE_H
#define EMBER_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strtab;
struct sbuf;

struct profile; /* opaque */

/*
 * The profile borrows @st, which must outlive it; several profiles may share one strtab (that is
 * what makes their frame ids comparable). NULL + errno=ENOMEM; free with profile__free().
 */
struct profile *profile__new(struct strtab *st);
void profile__free(struct profile *p); /* NULL is a no-op */

/* The strtab given at creation (borrowed). */
struct strtab *profile__strtab(const struct profile *p);

/*
 * Adds @count (and @count2) to the stack @frames[0..n) (root first); n may be 0 (an empty stack:
 * samples with no frames, counted in the total). Returns the stack's index >= 0, or -ENOMEM.
 * profile__add2() marks the profile as two-column.
 */
int profile__add(struct profile *p, const uint32_t *frames, size_t n, double count);
int profile__add2(struct profile *p, const uint32_t *frames, size_t n, double count,
		  double count2);
/*
 * The same with integer counts, summed exactly: -ERANGE (and nothing added) when the stack's
 * count would pass 2^64-1. A double count that is an integer below 2^64 is exact too, but a
 * double cannot hold every integer past 2^53: parsers use these.
 */
int profile__add_u64(struct profile *p, const uint32_t *frames, size_t n, uint64_t count);
int profile__add2_u64(struct profile *p, const uint32_t *frames, size_t n, uint64_t count,
		      uint64_t count2);
/* Index of the stack, or -ENOENT. */
int profile__find(const struct profile *p, const uint32_t *frames, size_t n);

size_t profile__nr_stacks(const struct profile *p);
/* Borrowed: valid until the next add to @p. */
const uint32_t *profile__stack(const struct profile *p, size_t idx, size_t *ret_depth);
double profile__count(const struct profile *p, size_t idx);
double profile__count2(const struct profile *p, size_t idx);
/* True, with both counts of stack @idx, when they are integers (no fractional part). */
bool profile__count_exact(const struct profile *p, size_t idx, uint64_t *ret_count,
			  uint64_t *ret_count2);
/* Overwrites the counts of stack @idx. */
void profile__set_counts(struct profile *p, size_t idx, double count, double count2);
/* True once any stack was added with profile__add2(). */
bool profile__has_count2(const struct profile *p);
void profile__set_has_count2(struct profile *p, bool on);
double profile__total(const struct profile *p);
double profile__total2(const struct profile *p);
/* True, with the exact sum of the first counts, when it is an integer below 2^64. */
bool profile__total_exact(const struct profile *p, uint64_t *ret_total);
/* Deepest stack. */
size_t profile__max_depth(const struct profile *p);
/* Bytes of memory held (not counting the strtab). */
size_t profile__mem_bytes(const struct profile *p);

/*
 * Adds every stack of @src into @dst, multiplying counts by @scale (1: exactly). When the two
 * profiles use different strtabs, names are interned into @dst's. 0, -ENOMEM, or -ERANGE when
 * @scale is 1 and a stack's count would pass 2^64-1 (the stacks before it are added).
 */
int profile__merge(struct profile *dst, const struct profile *src, double scale);

/* Keep-callback for profile__filter(): true keeps stack @idx. */
typedef bool (*profile_keep_fn)(const struct profile *p, size_t idx, void *ctx);
/* A new profile (same strtab) with the stacks @keep accepts. NULL + errno on failure. */
struct profile *profile__filter(const struct profile *p, profile_keep_fn keep, void *ctx);

/*
 * Stack indices sorted by the byte order of the joined stack text ("a;b;c"), the order of
 * `LC_ALL=C sort` on the stacks alone. (flamegraph.pl sorts whole lines, count included, which
 * differs when a frame name extends another, e.g. "foo.isra" vs "foo;bar": the flame graph
 * renderer reproduces that itself.) Caller frees the array with free(). NULL + errno.
 */
size_t *profile__sorted(const struct profile *p);
/* strcmp-like comparison of two stacks' joined text. */
int profile__cmp_stacks(const struct profile *p, size_t a, size_t b);

/* Appends the stack's joined text ("a;b;c", no count, no newline). */
void profile__stack_text(const struct profile *p, size_t idx, struct sbuf *sb);

/*
 * The reverse: adds the stack of the text @stack[0..len) ("a;b;c": split on ';', trailing empty
 * frames dropped as perl's split drops them, each frame interned into the profile's strtab) with
 * @count, and @count2 as profile__add2() when @two. Returns the stack's index >= 0, -ENOMEM, or
 * -E2BIG past @max_depth frames (0: no limit).
 */
int profile__add_text(struct profile *p, const char *stack, size_t len, double count, double count2,
		      bool two, size_t max_depth);
/* The same with integer counts, summed exactly as profile__add_u64(): also -ERANGE. */
int profile__add_text_u64(struct profile *p, const char *stack, size_t len, uint64_t count,
			  uint64_t count2, bool two, size_t max_depth);

#endif
