/* SPDX-License-Identifier: MIT */
/* array: growth of a malloc'ed array by doubling, shared by the parsers and tables. */
#ifndef EMBER_ARRAY_H
#define EMBER_ARRAY_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Makes *@buf hold at least @need elements of @elem bytes, doubling *@cap from @min. On success
 * 0 (*@buf and *@cap updated); -ENOMEM (buffer untouched) on allocation failure or overflow.
 */
static inline int array_grow(void **buf, size_t *cap, size_t need, size_t elem, size_t min)
{
	size_t ncap;
	void *nb;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : min;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (elem && ncap > SIZE_MAX / elem)
		return -ENOMEM;
	nb = realloc(*buf, ncap * elem);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = ncap;
	return 0;
}

#endif
