// SPDX-License-Identifier: MIT
#include "ember/daemon/symbols/demangle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "ember/core/base/sbuf.h"

/* ".llvm.<digits>" at the end of @s (LLVM's ThinLTO/PGO promoted copies): its start, or NULL. */
static const char *llvm_suffix(const char *s)
{
	const char *p = strstr(s, ".llvm.");
	const char *d;

	for (; p; p = strstr(p + 1, ".llvm.")) {
		for (d = p + 6; *d >= '0' && *d <= '9'; d++)
			;
		if (d > p + 6 && !*d)
			return p;
	}
	return NULL;
}

/* libiberty's demangler (C++, Rust legacy and v0), without parameters: what perf shows. */
static char *demangle(const char *m)
{
	return cplus_demangle(m, DMGL_AUTO);
}

bool demangle_append(struct sbuf *sb, const char *raw)
{
	const char *m = raw, *cut;
	char *out = NULL, *tmp;

	if (m[0] == '_' && m[1] == '_' && m[2] == 'Z')
		m++; /* Mach-O style extra underscore, seen in some cross-built objects */
	if (m[0] != '_' || (m[1] != 'Z' && m[1] != 'R')) {
		sbuf_adds(sb, raw);
		return false;
	}
	cut = llvm_suffix(m);
	if (cut) {
		/* stripped first: a legacy Rust name ending in ".llvm.N" is no Rust name to some
		 * demanglers, and to the C++ one the suffix is a clone to print */
		tmp = strndup(m, (size_t)(cut - m));
		if (tmp)
			out = demangle(tmp);
		free(tmp);
	}
	if (!out)
		out = demangle(m);
	if (!out) {
		sbuf_adds(sb, raw);
		return false;
	}
	sbuf_adds(sb, out);
	free(out);
	return true;
}
