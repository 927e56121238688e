// SPDX-License-Identifier: MIT
#include "ember/core/render/heatmap_samples.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "ember/core/model/samples.h"
#include "ember/core/render/heatmap.h"

int heatmap_add_samples(struct heatmap *hm, const struct samples *s, const struct samples_filter *f)
{
	const struct heatmap_opts *o = &hm->o;
	struct samples_cursor *cur;
	unsigned int col, row;

	if (!samples__sorted(s))
		return -EINVAL;
	if (!samples__nr(s))
		return 0;
	cur = samples_cursor__new(s, f, o->start_ns);
	if (!cur)
		return -errno;
	/* the cells in time order: a column's rows, then the next column */
	for (col = 0; col < o->columns && !samples_cursor__end(cur); col++) {
		uint64_t col_start = o->start_ns + (uint64_t)col * o->column_ns;

		for (row = 0; row < o->rows; row++) {
			uint64_t end = col_start + heatmap_row_offset_ns(o, row + 1);

			hm->values[(size_t)col * o->rows + row] +=
			    (double)samples_cursor__sum_until(cur, end);
		}
	}
	samples_cursor__free(cur);
	heatmap_update_stats(hm);
	return 0;
}
