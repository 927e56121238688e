// SPDX-License-Identifier: MIT
/*
 * flamegraph: profile -> frames -> SVG, with flamegraph.pl's layout. The entry points: options are
 * parsed in fg_options.c, the frames laid out in fg_layout.c, drawn in fg_svg.c with the colours
 * of fg_palette.c (fg_internal.h).
 */
#include "ember/core/render/flamegraph.h"

#include <errno.h>
#include <string.h>

#include "ember/core/base/sbuf.h"
#include "fg_internal.h"

static int render_any(const struct profile *p, const struct flamegraph_event *ev, size_t nev,
		      bool events, const struct flamegraph_opts *o, struct sbuf *out,
		      struct flamegraph_stats *ret_stats, bool tsv)
{
	struct fg_ctx c;
	int err;

	if (o->width < 2 * FG_XPAD + 1 || o->height < 1 || !(o->fontsize > 0) ||
	    !(o->fontwidth > 0) || !(o->factor > 0) || !(o->minwidth >= 0) ||
	    (o->notes && (strpbrk(o->notes, "<>") || strstr(o->notes, "--"))) ||
	    (o->bgcolors && !fg_valid_bgcolors(o->bgcolors)) ||
	    (unsigned)o->colors >= FG_PALETTE__COUNT)
		return -EINVAL;
	err = fg_layout(&c, p, ev, nev, events, o);
	if (err == -ENODATA && !tsv)
		fg_error_svg(o, out);
	if (!err)
		err = tsv ? fg_render_tsv(&c, out) : fg_render_svg(&c, out);
	if (!err && ret_stats)
		*ret_stats = c.stats;
	fg_ctx_fini(&c);
	if (!err)
		err = sbuf_error(out);
	return err;
}

int flamegraph_render(const struct profile *p, const struct flamegraph_opts *o, struct sbuf *out)
{
	return render_any(p, NULL, 0, false, o, out, NULL, false);
}

int flamegraph_render_stats(const struct profile *p, const struct flamegraph_opts *o,
			    struct sbuf *out, struct flamegraph_stats *ret_stats)
{
	return render_any(p, NULL, 0, false, o, out, ret_stats, false);
}

int flamegraph_frames_tsv(const struct profile *p, const struct flamegraph_opts *o,
			  struct sbuf *out)
{
	return render_any(p, NULL, 0, false, o, out, NULL, true);
}

int flamegraph_render_events(const struct profile *p, const struct flamegraph_event *ev,
			     size_t nev, const struct flamegraph_opts *o, struct sbuf *out,
			     struct flamegraph_stats *ret_stats)
{
	return render_any(p, ev, nev, ev != NULL, o, out, ret_stats, false);
}

int flamegraph_frames_tsv_events(const struct profile *p, const struct flamegraph_event *ev,
				 size_t nev, const struct flamegraph_opts *o, struct sbuf *out)
{
	return render_any(p, ev, nev, ev != NULL, o, out, NULL, true);
}
