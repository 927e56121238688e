// SPDX-License-Identifier: MIT
/*
 * Frame colours as flamegraph.pl picks them: the palettes, the annotation rules of the multi
 * palettes, its three ways of turning a name into numbers (the default seeded draw, --hash's
 * namehash, --random) and the differential scale. Written from flamegraph.pl's documented
 * behaviour so that the same name gets the same colour as there.
 */
#include "fg_internal.h"

#include <string.h>

#include "ember/core/model/frame.h"

/*
 * perl's rand() is a drand48 with perl's own seeding: srand(s) sets the 48-bit state to
 * (s << 16) + 0x330e; rand(1) steps the LCG once and returns state / 2^48.
 */
static double perl_srand_rand(uint64_t seed)
{
	uint64_t x = ((seed << 16) + 0x330e) & ((1ULL << 48) - 1);

	x = (0x5DEECE66DULL * x + 0xB) & ((1ULL << 48) - 1);
	return (double)x / 281474976710656.0;
}

/* Decodes one UTF-8 code point; invalid bytes count as one code point each (their value). */
static size_t utf8_next(const unsigned char *s, size_t len, uint32_t *cp)
{
	uint32_t c = s[0];
	size_t n, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if ((c & 0xe0) == 0xc0)
		n = 2, c &= 0x1f;
	else if ((c & 0xf0) == 0xe0)
		n = 3, c &= 0x0f;
	else if ((c & 0xf8) == 0xf0)
		n = 4, c &= 0x07;
	else
		goto bad;
	if (n > len)
		goto bad;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			goto bad;
		c = (c << 6) | (s[i] & 0x3f);
	}
	*cp = c;
	return n;
bad:
	*cp = s[0];
	return 1;
}

size_t fg_utf8_chars(const char *s, size_t len)
{
	size_t n = 0, i = 0;
	uint32_t cp;

	while (i < len) {
		i += utf8_next((const unsigned char *)s + i, len - i, &cp);
		n++;
	}
	return n;
}

size_t fg_utf8_prefix(const char *s, size_t len, size_t chars)
{
	size_t i = 0;
	uint32_t cp;

	while (i < len && chars--)
		i += utf8_next((const unsigned char *)s + i, len - i, &cp);
	return i;
}

/* The default: perl's srand(sum of code points) then rand(1), identical for v1, v2 and v3. */
static double name_draw(const char *s, size_t len)
{
	uint32_t sum = 0, cp;
	size_t i = 0;

	while (i < len) {
		i += utf8_next((const unsigned char *)s + i, len - i, &cp);
		sum += cp;
	}
	return perl_srand_rand(sum);
}

/* --hash: flamegraph.pl's namehash over up to three leading code points, module prefix cut. */
static double namehash(const uint32_t *cps, size_t n)
{
	double vector = 0, weight = 1, max = 1;
	size_t i = 0, j;
	int mod = 10;

	/* "mod`func": everything up to the first backtick after the first character goes */
	for (j = 1; j < n; j++)
		if (cps[j] == '`') {
			i = j + 1;
			break;
		}
	for (; i < n; i++) {
		int k = (int)(cps[i] % (uint32_t)mod);

		vector += ((double)k / (mod - 1)) * weight;
		mod++;
		max += weight;
		weight *= 0.70;
		if (mod > 12)
			break;
	}
	return 1 - vector / max;
}

static void hash_pair(const char *s, size_t len, double *v1, double *v23)
{
	uint32_t buf[64] = { 0 }, cp;
	uint32_t rev[64] = { 0 };
	size_t n = 0, i = 0, k;

	/* namehash looks at most at the backtick position plus three code points; names are
	 * short in practice and a longer name only matters through its first 64 code points */
	while (i < len && n < 64) {
		i += utf8_next((const unsigned char *)s + i, len - i, &cp);
		buf[n++] = cp;
	}
	*v1 = namehash(buf, n);
	/* the reversed name: decode all of it, keep the last 64 code points reversed */
	if (i >= len) {
		for (k = 0; k < n; k++)
			rev[k] = buf[n - 1 - k];
		*v23 = namehash(rev, n);
		return;
	}
	{
		uint32_t ring[64];
		size_t total = 0;

		i = 0;
		while (i < len) {
			i += utf8_next((const unsigned char *)s + i, len - i, &cp);
			ring[total % 64] = cp;
			total++;
		}
		n = total < 64 ? total : 64;
		for (k = 0; k < n; k++)
			rev[k] = ring[(total - 1 - k) % 64];
		*v23 = namehash(rev, n);
	}
}

static bool contains(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle), i;

	for (i = 0; i + n <= len; i++)
		if (!memcmp(s + i, needle, n))
			return true;
	return false;
}

/* java: ^L?(java|javax|jdk|net|org|com|io|sun)/ */
static bool java_prefix(const char *s, size_t len)
{
	static const char *const pkgs[] = { "java/", "javax/", "jdk/", "net/",
					    "org/", "com/", "io/", "sun/" };
	size_t i, off = (len && s[0] == 'L') ? 1 : 0, k;

	for (k = 0; k <= off; k++)
		for (i = 0; i < sizeof(pkgs) / sizeof(pkgs[0]); i++) {
			size_t n = strlen(pkgs[i]);

			if (len - k >= n && !memcmp(s + k, pkgs[i], n))
				return true;
		}
	return false;
}

/* js: m:/.*\.js: a '/' followed later by ".js" */
static bool js_path(const char *s, size_t len)
{
	const char *slash = memchr(s, '/', len);

	return slash && contains(slash + 1, len - (size_t)(slash + 1 - s), ".js");
}

/*
 * flamegraph.pl's palettes, its tests kept: the kinds are suffix matches (frame_kind_of()), and
 * the js palette's "_[k]" anywhere in the name is its regex's, kept as such.
 */
static enum flamegraph_palette resolve(enum flamegraph_palette pal, const char *s, size_t len)
{
	enum frame_kind kind = frame_kind_of(s, len);
	struct frame f;

	switch (pal) {
	case FG_PALETTE_JAVA:
		if (kind == FRAME_JIT)
			return FG_PALETTE_GREEN;
		if (kind == FRAME_INLINED)
			return FG_PALETTE_AQUA;
		if (java_prefix(s, len) || contains(s, len, ":::"))
			return FG_PALETTE_GREEN;
		if (contains(s, len, "::"))
			return FG_PALETTE_YELLOW;
		if (kind == FRAME_KERNEL)
			return FG_PALETTE_ORANGE;
		return FG_PALETTE_RED;
	case FG_PALETTE_PERL:
		if (contains(s, len, "::"))
			return FG_PALETTE_YELLOW;
		if (contains(s, len, "Perl") || contains(s, len, ".pl"))
			return FG_PALETTE_GREEN;
		if (kind == FRAME_KERNEL)
			return FG_PALETTE_ORANGE;
		return FG_PALETTE_RED;
	case FG_PALETTE_JS:
		if (kind == FRAME_JIT)
			return memchr(s, '/', len) ? FG_PALETTE_GREEN : FG_PALETTE_AQUA;
		if (contains(s, len, "::"))
			return FG_PALETTE_YELLOW;
		if (js_path(s, len))
			return FG_PALETTE_GREEN;
		if (memchr(s, ':', len))
			return FG_PALETTE_AQUA;
		if (len == 1 && s[0] == ' ')
			return FG_PALETTE_GREEN;
		if (contains(s, len, "_[k]"))
			return FG_PALETTE_ORANGE;
		return FG_PALETTE_RED;
	case FG_PALETTE_WAKEUP:
		return FG_PALETTE_AQUA;
	case FG_PALETTE_CHAIN:
		frame_parse(s, len, &f);
		return f.waker ? FG_PALETTE_AQUA : FG_PALETTE_BLUE;
	default:
		return pal;
	}
}

void fg_color(const struct fg_colorer *c, const char *s, size_t len, struct fg_rgb *ret)
{
	double v1, v2, v3;
	enum flamegraph_palette pal;

	switch (c->by) {
	case FG_COLORBY_HASH:
		hash_pair(s, len, &v1, &v2);
		v3 = v2;
		break;
	case FG_COLORBY_RANDOM:
		v1 = fg_rand01(c->rng);
		v2 = fg_rand01(c->rng);
		v3 = fg_rand01(c->rng);
		break;
	default:
		v1 = v2 = v3 = name_draw(s, len);
		break;
	}
	pal = resolve(c->palette, s, len);
	switch (pal) {
	case FG_PALETTE_HOT:
		*ret = (struct fg_rgb){ 205 + (int)(50 * v3), (int)(230 * v1), (int)(55 * v2) };
		return;
	case FG_PALETTE_MEM:
		*ret = (struct fg_rgb){ 0, 190 + (int)(50 * v2), (int)(210 * v1) };
		return;
	case FG_PALETTE_IO: {
		int r = 80 + (int)(60 * v1);

		*ret = (struct fg_rgb){ r, r, 190 + (int)(55 * v2) };
		return;
	}
	case FG_PALETTE_RED: {
		int x = 50 + (int)(80 * v1);

		*ret = (struct fg_rgb){ 200 + (int)(55 * v1), x, x };
		return;
	}
	case FG_PALETTE_GREEN: {
		int x = 50 + (int)(60 * v1);

		*ret = (struct fg_rgb){ x, 200 + (int)(55 * v1), x };
		return;
	}
	case FG_PALETTE_BLUE: {
		int x = 80 + (int)(60 * v1);

		*ret = (struct fg_rgb){ x, x, 205 + (int)(50 * v1) };
		return;
	}
	case FG_PALETTE_YELLOW: {
		int x = 175 + (int)(55 * v1);

		*ret = (struct fg_rgb){ x, x, 50 + (int)(20 * v1) };
		return;
	}
	case FG_PALETTE_PURPLE: {
		int x = 190 + (int)(65 * v1);

		*ret = (struct fg_rgb){ x, 80 + (int)(60 * v1), x };
		return;
	}
	case FG_PALETTE_AQUA:
		*ret = (struct fg_rgb){ 50 + (int)(60 * v1), 165 + (int)(55 * v1),
					165 + (int)(55 * v1) };
		return;
	case FG_PALETTE_ORANGE:
		*ret = (struct fg_rgb){ 190 + (int)(65 * v1), 90 + (int)(65 * v1), 0 };
		return;
	default:
		*ret = (struct fg_rgb){ 0, 0, 0 };
		return;
	}
}

void fg_color_scale(double value, double max, bool negate, struct fg_rgb *ret)
{
	int r = 255, g = 255, b = 255;

	if (negate)
		value = -value;
	if (value > 0)
		g = b = (int)(210 * (max - value) / max);
	else if (value < 0)
		r = g = (int)(210 * (max + value) / max);
	*ret = (struct fg_rgb){ r, g, b };
}

double fg_rand01(uint64_t *state)
{
	/* xorshift64*: only for --random, where any decent generator will do */
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}
