/* SPDX-License-Identifier: MIT */
/*
 * strtab: interns frame names. Each distinct byte string gets a stable id (0, 1, 2, ... in order
 * of first appearance); the table owns the bytes. Names may hold any bytes except NUL.
 * Not thread-safe.
 */
#ifndef EMBER_STRTAB_H
#define EMBER_STRTAB_H

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
/* New strings not kept for the limit, since strtab__new(). */
uint64_t strtab__refused(const struct strtab *st);

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
