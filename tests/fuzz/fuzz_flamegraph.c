// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: folded input (any bytes) through the flame graph renderer. The first byte
 * picks the options (reverse, inverted, flame chart, palette, minwidth, hash); the rest is the
 * input. Besides not crashing, the SVG must hold no byte that breaks XML (a control character)
 * and exactly one "]]>" (the end of the script's CDATA).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/render/flamegraph.h"
#include "ember/core/formats/folded.h"
#include "ember/core/base/lineread.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_svg(const struct sbuf *sb)
{
	const char *end;
	size_t i;

	for (i = 0; i < sb->len; i++) {
		unsigned char c = (unsigned char)sb->buf[i];

		if (c < 0x20 && c != '\n' && c != '\t')
			abort();
	}
	end = strstr(sb->buf, "]]>");
	if (!end || strstr(end + 3, "]]>"))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const pals[] = { "hot", "java", "js", "perl", "chain", "mem", "io", "red" };
	struct flamegraph_opts o;
	struct strtab *st = strtab__new();
	struct profile *p = st ? profile__new(st) : NULL;
	struct lineread *lr;
	struct flamegraph_event *ev = NULL;
	struct sbuf sb = SBUF_INIT;
	size_t nev = 0, cap = 0;
	const char *line;
	size_t len;
	uint8_t flags;
	int r;

	if (!p || size < 1)
		goto out;
	flags = data[0];
	flamegraph_opts_init(&o);
	(void)flamegraph_opts_set(&o, "reverse", flags & 1 ? "1" : "0");
	(void)flamegraph_opts_set(&o, "inverted", flags & 2 ? "1" : "0");
	(void)flamegraph_opts_set(&o, "flamechart", flags & 4 ? "1" : "0");
	(void)flamegraph_opts_set(&o, "colors", pals[(flags >> 3) & 7]);
	(void)flamegraph_opts_set(&o, "minwidth", flags & 64 ? "0" : "1%");
	(void)flamegraph_opts_set(&o, "hash", flags & 128 ? "1" : "0");
	lr = lineread__new_mem(data + 1, size - 1, 512);
	while (lr && (r = lineread__next(lr, &line, &len)) != 0) {
		struct folded_line fl;
		int idx;

		if (r < 0 || folded_parse_line(line, len, FOLDED_COLUMNS_AUTO, &fl, NULL) != 1)
			continue;
		idx = folded_add_stack(p, fl.stack, fl.stack_len, fl.count, fl.count2,
				       fl.ncounts == 2, 64);
		if (idx < 0)
			continue;
		if (nev == cap) {
			struct flamegraph_event *ne = realloc(ev, (cap ? cap * 2 : 16) * sizeof(*ne));

			if (!ne)
				break;
			ev = ne;
			cap = cap ? cap * 2 : 16;
		}
		ev[nev++] = (struct flamegraph_event){ (size_t)idx, fl.count, fl.count2 };
	}
	lineread__free(lr);
	r = o.flamechart ? flamegraph_render_events(p, ev, nev, &o, &sb, NULL)
			 : flamegraph_render(p, &o, &sb);
	if (r == 0)
		check_svg(&sb);
	else if (r != -ENODATA && r != -ENOMEM)
		abort();
	sbuf_reset(&sb);
	(void)flamegraph_frames_tsv(p, &o, &sb);
	flamegraph_opts_fini(&o);
out:
	free(ev);
	sbuf_fini(&sb);
	profile__free(p);
	strtab__free(st);
	return 0;
}
