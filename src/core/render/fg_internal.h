/* SPDX-License-Identifier: MIT */
/* Private to src/core/render/flamegraph.c and src/core/render/fg_palette.c: colours and UTF-8 helpers. */
#ifndef EMBER_FG_INTERNAL_H
#define EMBER_FG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember/core/render/flamegraph.h"

struct fg_rgb {
	int r, g, b;
};

struct fg_colorer {
	enum flamegraph_palette palette;
	enum flamegraph_colorby by;
	uint64_t *rng; /* state for FG_COLORBY_RANDOM */
};

/* The colour flamegraph.pl gives the frame name @s (annotations included). */
void fg_color(const struct fg_colorer *c, const char *s, size_t len, struct fg_rgb *ret);
/* Differential colour of @value (second - first) against the largest |delta| @max. */
void fg_color_scale(double value, double max, bool negate, struct fg_rgb *ret);
/* Uniform [0,1) from a xorshift state (never 0). */
double fg_rand01(uint64_t *state);

/* Code points in @s (an invalid byte counts as one), and the bytes of the first @chars. */
size_t fg_utf8_chars(const char *s, size_t len);
size_t fg_utf8_prefix(const char *s, size_t len, size_t chars);

#endif
