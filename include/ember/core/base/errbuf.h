/* SPDX-License-Identifier: MIT */
/*
 * errbuf: the one-line reason that goes with an error return, written into a caller's buffer
 * (`char *err, size_t errlen` parameters): `return errbuf_set(err, errlen, -EINVAL, "...")`.
 */
#ifndef EMBER_ERRBUF_H
#define EMBER_ERRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Formats into @err (nothing when @err is NULL or @errlen 0) and returns @ret. */
static inline int __attribute__((format(printf, 4, 5)))
errbuf_set(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

#endif
