/* SPDX-License-Identifier: MIT */
/* heatmap_samples: the heat map of a struct samples (ember heatmap's flame scope). */
#ifndef EMBER_HEATMAP_SAMPLES_H
#define EMBER_HEATMAP_SAMPLES_H

struct heatmap;
struct samples;
struct samples_filter;

/*
 * Adds into @hm (already initialized with its arrangement) every sorted sample of @s in the
 * map's time span that passes @f (NULL: all), then updates the map's stats. Samples outside the
 * span are not counted anywhere; filtered ones neither. The cost follows the cells, not the
 * samples (samples_cursor__sum_until()). 0, -EINVAL (unsorted staged samples: call
 * samples__sort()) or -ENOMEM.
 */
int heatmap_add_samples(struct heatmap *hm, const struct samples *s,
			const struct samples_filter *f);

#endif
