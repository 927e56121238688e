/* SPDX-License-Identifier: MIT */
/*
 * strtab: interns frame names. Each distinct byte string gets a stable id (0, 1, 2, ... in order
 * of first appearance); the table owns the bytes. Names may hold any bytes except NUL.
 * Not thread-safe.
 */
#ifndef EMBER_STRTAB_H
#define EMBER_STRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strtab; /* opaque */

/* NULL + errno=ENOMEM; free with strtab__free(). */
struct strtab *strtab__new(void);
/* NULL is a no-op. */
void strtab__free(struct strtab *st);

/*
 * Interns @len bytes at @s (need not be NUL-terminated). Returns id >= 0 or -ENOMEM. With a limit
 * (strtab__set_limit()), a new string that would take the table's memory past it is not kept:
 * the id of the limit's placeholder name is returned instead, and counted (strtab__refused()).
 */
int strtab__intern(struct strtab *st, const char *s, size_t len);
/* The id of @s if it was interned, or -ENOENT. */
int strtab__find(const struct strtab *st, const char *s, size_t len);

/* Borrowed, NUL-terminated: valid until strtab__free(). @id must be valid. */
const char *strtab__str(const struct strtab *st, uint32_t id);
size_t strtab__len(const struct strtab *st, uint32_t id);
/* Number of interned strings. */
size_t strtab__count(const struct strtab *st);
/* Bytes of memory held (strings, index), for /stats and benchmarks. */
size_t strtab__mem_bytes(const struct strtab *st);
/*
 * Adds @st's memory to *@counter (atomically) now and as it grows, and takes it off when @st is
 * freed; profiles made on @st (profile__new) charge theirs there too: what a render holds, for a
 * heap's accounting. @counter is borrowed: it must outlive @st and its profiles. Once, before use.
 */
void strtab__charge_to(struct strtab *st, uint64_t *counter);
/* The counter @st charges (NULL: none, or @st NULL). */
uint64_t *strtab__charge(const struct strtab *st);

/*
 * Bounds the table's memory (strtab__mem_bytes()) to @max_bytes (0: no bound): past it, a new
 * string gets the id of @refused (copied, interned now, exempt from the bound). 0 or -ENOMEM.
 */
int strtab__set_limit(struct strtab *st, size_t max_bytes, const char *refused);
/* New strings not kept for the limit or a share's, since strtab__new(). */
uint64_t strtab__refused(const struct strtab *st);

/*
 * Shares: whom a new string is charged to (one owner per process, say, so that one process cannot
 * take the others' room). strtab__intern_as() interns as strtab__intern(), and a string not in
 * the table yet is first offered to @admit with what it costs (its bytes and its part of the
 * index, strtab__cost()), the table's generation (a renewal starts every share over: a carried
 * name is charged to none) and the share's bound (strtab__set_share_limit(); 0: none): false
 * refuses it, which returns the limit's placeholder id as the table's own bound does (counted in
 * strtab__refused() and strtab__share_refused()). @admit NULL: strtab__intern().
 */
typedef bool (*strtab_admit_fn)(void *ctx, size_t cost, uint64_t generation, size_t share_limit);
int strtab__intern_as(struct strtab *st, const char *s, size_t len, strtab_admit_fn admit,
		      void *ctx);
/* What a new string of @len bytes is charged to its share. */
size_t strtab__cost(size_t len);
/* The bound of a share in bytes (0: none; needs strtab__set_limit()'s placeholder). */
void strtab__set_share_limit(struct strtab *st, size_t max_bytes);
size_t strtab__share_limit(const struct strtab *st);
/* Whether @id is the limit's placeholder (a refused name: not to be cached where other owners'
 * lookups would find it). */
bool strtab__is_refused(const struct strtab *st, int id);
/* New strings refused by their share, since strtab__new(). */
uint64_t strtab__share_refused(const struct strtab *st);

/*
 * Generations: a table whose ids are held only by caches and by owners that can renumber theirs
 * gives back the names nobody holds any more by starting over. strtab__renew() empties the table
 * (the ids given so far are void; the placeholder of a limit is interned again) and keeps the old
 * names readable for strtab__carry(), which interns old id @old_id's name again and returns its
 * new id (>= 0, or -ENOMEM, -EINVAL for an id that was not given); strtab__renew_done() frees the
 * old names (every strtab__str() pointer of them). Every holder of ids must carry or forget them
 * in between. strtab__renew(): 0, -ENOMEM (nothing changed) or -EBUSY (a renewal not done).
 * strtab__generation() counts the renewals: a cache of ids fills again when it changed.
 */
int strtab__renew(struct strtab *st);
int strtab__carry(struct strtab *st, uint32_t old_id);
void strtab__renew_done(struct strtab *st);
uint64_t strtab__generation(const struct strtab *st);

#endif
