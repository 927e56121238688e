/* SPDX-License-Identifier: MIT */
/* hash: a fast non-cryptographic 64-bit hash for the interning tables (not for untrusted keys
 * where collisions matter for security: tables using it are bounded by their inputs). */
#ifndef EMBER_HASH_H
#define EMBER_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t hash_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static inline uint64_t hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ULL);
	uint64_t w;

	while (len >= 8) {
		memcpy(&w, p, 8);
		h = (h ^ hash_mix64(w)) * 0x9e3779b97f4a7c15ULL;
		p += 8;
		len -= 8;
	}
	w = 0;
	if (len) /* data may be NULL when len is 0 (memcpy's pointers are nonnull) */
		memcpy(&w, p, len);
	h = (h ^ hash_mix64(w ^ len)) * 0x9e3779b97f4a7c15ULL;
	return hash_mix64(h);
}

#endif
