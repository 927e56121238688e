// SPDX-License-Identifier: MIT
/* v8: JavaScript frames of Node processes (include/ember/daemon/unwind/v8.h). */
#include "ember/daemon/unwind/v8.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ember/core/base/clock.h"
#include "ember/core/base/hash.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/base/utf8.h"
#include "ember/core/model/frame.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/proc/procmaps.h"
#include "ember/daemon/proc/proctrack.h"

#define V8_STR_MAX	512		   /* characters of a name or file read */
#define V8_STR_DEPTH	6		   /* cons/thin/sliced strings followed */
#define V8_RECHECK_NS	(1 * NSEC_PER_SEC) /* a cached name's SFI read again after this */
#define V8_RETRY_NS	(NSEC_PER_SEC / 10) /* ... an SFI that could not be read, after this */
#define V8_GONE_KEEP_NS (10 * NSEC_PER_SEC) /* an exited one's names: its samples in flight */
#define V8_SCOPE_SCAN	6		   /* ScopeInfo slots looked at for the name */
#define V8_MAX_LOCALS	4096		   /* a ScopeInfo's context locals believed */
#define V8_INLINE_LOCALS 75		   /* kScopeInfoMaxInlinedLocalNamesSize */
#define V8_MAX_OFF	4096		   /* an object field's offset believed */
#define DETECT_TRIES	20		   /* examinations while ld.so has not mapped libnode */
#define V8_POS_SCAN	10		   /* ScopeInfo slots looked at for the position */
#define V8_CHUNK	4096		   /* bytes of a string read at once */
#define V8_SRC_MAX	(16u << 20)	   /* characters of a script's source read for its lines */
#define V8_SRC_LINES	(1u << 20)	   /* line ends kept for one script */
#define V8_SCRIPTS	32		   /* scripts' line ends kept per process */
#define V8_LINES_BYTES	(32u << 20)	   /* ... and for all processes together */
#define V8_SRC_WINDOW_NS (10 * NSEC_PER_SEC) /* sources' characters read: per window... */
#define V8_SRC_PROC_BUDGET (32u << 20)	   /* ... by one process's scripts */
#define V8_SRC_ALL_BUDGET (64u << 20)	   /* ... by all of them */
#define V8_SRC_CHUNK	(64u << 10)	   /* bytes of a source read at once */
#define ANON		"(anonymous)"

enum v8state {
	V8S_NOT,	 /* no V8 mapped */
	V8S_RETRY,	 /* caught before its libraries were mapped */
	V8S_ON,		 /* in the BPF map: frames read */
	V8S_UNSUPPORTED, /* a V8 whose data is missing or inconsistent: native frames */
	V8S_GONE,	 /* was ON, exited or exec'ed: its names kept V8_GONE_KEEP_NS for the
			  * samples taken before, still in flight */
};

struct v8name {
	uint64_t sfi;	    /* 0: empty slot */
	uint64_t key;	    /* what the name was read from: the SFI's map ^ name_or_scope_info */
	uint64_t checked;   /* last read (CLOCK_MONOTONIC) */
	int32_t id;	    /* in names, or -1: not a SharedFunctionInfo (native name) */
};

/*
 * A script's line ends (the offsets of its line terminators, as V8's own Script::line_ends:
 * '\n', '\r' not before '\n', U+2028, U+2029), read from its source once, for the line of each
 * of its functions. Keyed by the Script and its source and length: a Script moved by the GC
 * is read again; a source that cannot be read (an external string, a length over V8_SRC_MAX) is
 * kept too, with no ends, so that it is not tried for each function.
 */
struct v8script {
	uint64_t script, source; /* tagged; script 0: an empty slot */
	uint32_t len;		 /* the source's length */
	uint32_t n;		 /* line ends */
	uint32_t *ends;		 /* n of them (NULL when none) */
	bool read;		 /* the source was read: ends are its own; else no lines from it */
	uint64_t used;		 /* LRU stamp */
};

/* Characters of sources read in the current V8_SRC_WINDOW_NS window (window_fits()). */
struct v8window {
	uint64_t since_ns, used;
};

/* A process's state: the process tracker's extension (proc_tracker__ext_register()), made at its
 * first sample, ended at its exit or exec (V8S_GONE: its names kept V8_GONE_KEEP_NS), released
 * by the tracker's rule. */
struct v8proc {
	uint32_t pid;
	enum v8state state;
	unsigned int tries;
	uint64_t seen_ns;	  /* not V8: its executable last looked at */
	uint64_t exe_ino, exe_dev; /* ... and what it was */
	struct rtintro_v8 f; /* its binary's facts */
	struct v8name *names; /* open addressing by SFI address */
	size_t cap, n;
	struct v8script scripts[V8_SCRIPTS];
	struct v8window src;	/* its sources' characters read (V8_SRC_PROC_BUDGET) */
};

struct v8_file_facts {
	struct rtintro_v8 f;
	int err; /* 0, or -reason */
};

struct v8 {
	struct v8_opts o;
	char proc_root[256];
	struct sampler *sampler;
	struct strtab *names;
	int ext;		/* its processes: the tracker's extension */
	struct proc_tracker *tracker, *own_tracker;
	struct filecache *files, *own_files;
	struct sbuf name, file, out;
	uint64_t script_stamp;
	uint64_t lines_bytes; /* all processes' line ends (V8_LINES_BYTES) */
	struct v8window src;		  /* all processes' (V8_SRC_ALL_BUDGET) */
	uint8_t *src_buf;		  /* V8_SRC_CHUNK bytes: a source's reads */
	struct v8_stats st;
};

/* --- memory of the process ---------------------------------------------------------------- */

/* Reads @len bytes at @addr of @pid: 0, or -errno (-EFAULT when short). */
static int mem_read(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n;

	if (!len)
		return 0;
	if (addr > EMBER_V8F_ADDR_MASK || len > EMBER_V8F_ADDR_MASK - addr)
		return -EFAULT; /* not a user address */
	n = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int rd64(uint32_t pid, uint64_t addr, uint64_t *ret)
{
	return mem_read(pid, addr, ret, sizeof(*ret));
}

#define VAL(pp, id) ((pp)->f.val[RTI_V8_##id])

static bool is_heap(const struct v8proc *pp, uint64_t tagged)
{
	return (tagged & (uint64_t)VAL(pp, HEAP_OBJECT_TAG_MASK)) ==
		   (uint64_t)VAL(pp, HEAP_OBJECT_TAG) &&
	       tagged > 0xffff && tagged <= EMBER_V8F_ADDR_MASK;
}

/* A tagged field of the object @obj (tagged) at @off: 0 or -errno. */
static int field(const struct v8proc *pp, uint64_t obj, int32_t off, uint64_t *ret)
{
	return rd64(pp->pid, obj - (uint64_t)VAL(pp, HEAP_OBJECT_TAG) + (uint64_t)(int64_t)off,
		    ret);
}

static bool is_smi(const struct v8proc *pp, uint64_t tagged)
{
	return (tagged & (uint64_t)VAL(pp, SMI_TAG_MASK)) == (uint64_t)VAL(pp, SMI_TAG);
}

/* A Smi's value (uncompressed: the high half, v8_facts_check()). */
static int64_t smi_value(uint64_t tagged)
{
	return (int64_t)tagged >> 32;
}

/* The instance type a map (tagged) gives its objects, or -1. */
static int map_type(const struct v8proc *pp, uint64_t map)
{
	uint16_t t;

	if (!is_heap(pp, map) ||
	    mem_read(pp->pid,
		     map - (uint64_t)VAL(pp, HEAP_OBJECT_TAG) + (uint64_t)VAL(pp, MAP_INSTANCE_TYPE),
		     &t, sizeof(t)))
		return -1;
	return t;
}

/* The instance type of heap object @obj, or -1; its map in *@map. */
static int type_of(const struct v8proc *pp, uint64_t obj, uint64_t *map)
{
	if (!is_heap(pp, obj) || field(pp, obj, VAL(pp, HEAPOBJECT_MAP), map))
		return -1;
	return map_type(pp, *map);
}

/* Appends a code unit of a name, tidied for folded frames as python.c's reader does. */
static void put_unit(struct sbuf *sb, uint32_t cp)
{
	char b[4];

	if (cp == ';')
		cp = ':';
	if (cp < 0x20 || cp == 0x7f) {
		sbuf_addf(sb, "\\x%02x", cp);
		return;
	}
	if (cp >= 0xd800 && cp < 0xe000)
		cp = 0xfffd; /* a UTF-16 surrogate: no pair joined here */
	if (cp < 0x80) {
		sbuf_addc(sb, (char)cp);
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		sbuf_add(sb, b, 2);
	} else {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		sbuf_add(sb, b, 3);
	}
}

/* A source's line ends as its characters go by (struct v8script). */
struct v8lines {
	uint32_t *ends;
	uint32_t n, cap;
	uint32_t pos; /* characters seen */
	bool cr;      /* the last one was a '\r': its end waits for the next */
	bool full;    /* over V8_SRC_LINES, or no memory: given up */
};

static void lines_end(struct v8lines *ln, uint32_t at)
{
	uint32_t *e;

	if (ln->full)
		return;
	if (ln->n == ln->cap) {
		uint32_t cap = ln->cap ? ln->cap * 2 : 256;

		if (ln->cap >= V8_SRC_LINES || !(e = realloc(ln->ends, cap * sizeof(*e)))) {
			ln->full = true;
			return;
		}
		ln->ends = e;
		ln->cap = cap;
	}
	ln->ends[ln->n++] = at;
}

static void lines_unit(struct v8lines *ln, uint32_t c)
{
	if (ln->cr && c != '\n')
		lines_end(ln, ln->pos - 1);
	ln->cr = c == '\r';
	if (c == '\n' || c == 0x2028 || c == 0x2029)
		lines_end(ln, ln->pos);
	ln->pos++;
}

/* Where a string's characters go: a name's text (tidied) or a source's line ends (read
 * through @buf, @buf_len bytes, when given: else V8_CHUNK bytes on the stack). */
struct str_sink {
	struct sbuf *sb;
	struct v8lines *ln;
	uint8_t *buf;
	uint32_t buf_len;
};

/* @n characters of a sequential string at @a (one byte or two each) to @k. 0 or -1. */
static int read_seq(const struct v8proc *pp, uint64_t a, uint32_t n, bool one, struct str_sink *k)
{
	uint8_t stack_buf[V8_CHUNK];
	uint8_t *buf = k->buf ? k->buf : stack_buf;
	uint32_t cap = k->buf ? k->buf_len : V8_CHUNK;
	uint32_t w = one ? 1 : 2, i, m;

	while (n) {
		m = n < cap / w ? n : cap / w;
		if (mem_read(pp->pid, a, buf, (size_t)m * w))
			return -1;
		for (i = 0; i < m; i++) {
			uint32_t c = one ? buf[i] : (uint32_t)(buf[2 * i] | buf[2 * i + 1] << 8);

			if (k->sb)
				put_unit(k->sb, c);
			else
				lines_unit(k->ln, c);
		}
		if (k->ln && k->ln->full)
			return -1; /* more lines than kept: the rest is not read */
		a += (uint64_t)m * w;
		n -= m;
	}
	return 0;
}

/*
 * Gives the characters [@from, @from + @len) of the V8 String @str (tagged) to @k, at most
 * *@budget of them (decremented): sequential one- and two-byte strings, cons (both halves),
 * thin and sliced strings, @depth levels deep. 0, or -1 when it is no string it can read.
 */
static int read_string(const struct v8proc *pp, uint64_t str, uint32_t from, uint32_t len,
		       unsigned int depth, struct str_sink *k, uint32_t *budget)
{
	uint64_t map, a, b;
	int32_t slen;
	int type;
	uint32_t repr, n;

	type = type_of(pp, str, &map);
	if (type < 0 || type >= VAL(pp, FIRST_NONSTRING_TYPE) || !depth)
		return -1;
	if (mem_read(pp->pid, str - 1 + (uint64_t)VAL(pp, STRING_LENGTH), &slen, sizeof(slen)) ||
	    slen < 0)
		return -1;
	if (len == UINT32_MAX || from > (uint32_t)slen || len > (uint32_t)slen - from) {
		if (len != UINT32_MAX)
			return -1; /* a slice past its parent */
		from = 0;
		len = (uint32_t)slen;
	}
	repr = (uint32_t)type & (uint32_t)VAL(pp, STRING_REPR_MASK);
	if (repr == (uint32_t)VAL(pp, SEQ_STRING_TAG)) {
		bool one = ((uint32_t)type & (uint32_t)VAL(pp, STRING_ENCODING_MASK)) ==
			   (uint32_t)VAL(pp, ONE_BYTE_STRING_TAG);

		n = len < *budget ? len : *budget;
		if (!one && !pp->f.have[RTI_V8_SEQ_TWO_BYTE_CHARS])
			return -1;
		a = str - 1 +
		    (uint64_t)(one ? VAL(pp, SEQ_ONE_BYTE_CHARS) : VAL(pp, SEQ_TWO_BYTE_CHARS)) +
		    (uint64_t)from * (one ? 1 : 2);
		if (read_seq(pp, a, n, one, k))
			return -1;
		*budget -= n;
		return 0;
	}
	if (repr == (uint32_t)VAL(pp, CONS_STRING_TAG) && pp->f.have[RTI_V8_CONS_FIRST] &&
	    pp->f.have[RTI_V8_CONS_SECOND]) {
		int32_t flen;

		if (field(pp, str, VAL(pp, CONS_FIRST), &a) ||
		    field(pp, str, VAL(pp, CONS_SECOND), &b) || type_of(pp, a, &map) < 0 ||
		    mem_read(pp->pid, a - 1 + (uint64_t)VAL(pp, STRING_LENGTH), &flen,
			     sizeof(flen)) ||
		    flen < 0)
			return -1;
		/* the part of [from, from + len) in each half */
		if (from < (uint32_t)flen) {
			uint32_t l = (uint32_t)flen - from < len ? (uint32_t)flen - from : len;

			if (read_string(pp, a, from, l, depth - 1, k, budget))
				return -1;
			len -= l;
			from = 0;
		} else {
			from -= (uint32_t)flen;
		}
		if (!len || !*budget)
			return 0;
		return read_string(pp, b, from, len, depth - 1, k, budget);
	}
	if (repr == (uint32_t)VAL(pp, THIN_STRING_TAG) && pp->f.have[RTI_V8_THIN_ACTUAL]) {
		if (field(pp, str, VAL(pp, THIN_ACTUAL), &a))
			return -1;
		return read_string(pp, a, from, len, depth - 1, k, budget);
	}
	if (repr == (uint32_t)VAL(pp, SLICED_STRING_TAG) && pp->f.have[RTI_V8_SLICED_PARENT] &&
	    pp->f.have[RTI_V8_SLICED_OFFSET]) {
		uint64_t off;

		if (field(pp, str, VAL(pp, SLICED_PARENT), &a) ||
		    field(pp, str, VAL(pp, SLICED_OFFSET), &off))
			return -1;
		off = (uint64_t)smi_value(off);
		if (off > UINT32_MAX - (uint64_t)from)
			return -1;
		return read_string(pp, a, from + (uint32_t)off, len, depth - 1, k, budget);
	}
	return -1; /* external strings: their bytes live outside the heap; not read */
}

/* Reads string @str whole (bounded) into @sb, reset first. 0 or -1. */
static int string_of(const struct v8proc *pp, uint64_t str, struct sbuf *sb)
{
	struct str_sink k = { .sb = sb };
	uint32_t budget = V8_STR_MAX;

	sbuf_reset(sb);
	return read_string(pp, str, 0, UINT32_MAX, V8_STR_DEPTH, &k, &budget);
}

/*
 * The index of the first slot after the context locals of the ScopeInfo @si (their names, inline
 * or one hash table when there are many, then their infos): where its optional slots begin.
 * 0 or -1.
 */
static int scope_optional_at(const struct v8proc *pp, uint64_t si, uint64_t *at)
{
	uint64_t nlocals;

	if (field(pp, si, 8 + 8 * VAL(pp, SCOPEINFO_IDX_NLOCALS), &nlocals))
		return -1;
	nlocals = (uint64_t)smi_value(nlocals);
	if (nlocals > V8_MAX_LOCALS)
		return -1;
	*at = (uint64_t)VAL(pp, SCOPEINFO_IDX_FIRST_VARS) +
	      (nlocals < V8_INLINE_LOCALS ? 2 * nlocals : nlocals + 1);
	return 0;
}

/*
 * The function's name in the ScopeInfo @si: after the header's Smis (flags, parameter count,
 * context local count: v8dbg_scopeinfo_idx_*), the context locals' names and infos (or one hash
 * table when there are many), then optional slots of which the first String is the function's
 * name and the next, when that is empty, the name V8 inferred. The layout of the optional part
 * is not in the postmortem data: the scan is bounded and takes Strings only.
 */
static int scope_name(const struct v8proc *pp, uint64_t si, struct sbuf *sb)
{
	uint64_t slots[V8_SCOPE_SCAN], map, at;
	size_t i;
	int t;

	if (scope_optional_at(pp, si, &at) ||
	    mem_read(pp->pid, si - 1 + 8 + 8 * at, slots, sizeof(slots)))
		return -1;
	for (i = 0; i < V8_SCOPE_SCAN; i++) {
		if (!is_heap(pp, slots[i]))
			continue;
		t = type_of(pp, slots[i], &map);
		if (t < 0)
			return -1;
		if (t == VAL(pp, TYPE_SCOPE_INFO))
			break; /* the outer scope: past the names */
		if (t >= VAL(pp, FIRST_NONSTRING_TYPE))
			continue; /* undefined, the hole */
		if (string_of(pp, slots[i], sb))
			return -1;
		if (sb->len)
			return 0;
	}
	sbuf_reset(sb);
	return 0;
}

/* V8 12.8.44 and later: a ScopeInfo's position info at fixed slots of its header */
static bool scope_position_fixed(const struct v8proc *pp)
{
	const struct rtintro_v8 *f = &pp->f;

	return (f->major > 12 ||
		(f->major == 12 && (f->minor > 8 || (f->minor == 8 && f->build >= 44)))) &&
	       VAL(pp, SCOPEINFO_IDX_FIRST_VARS) >= 5;
}

/*
 * The start position of the function whose ScopeInfo is @si (tagged): the offset in its
 * script's source that V8 gives the function (its parameter list's opening parenthesis), or -1.
 * From V8 12.8.44 the position is in slots 3 and 4 of the header (start, end). Before, it comes
 * after the context locals' names and infos, among optional slots that the flags say are there
 * and whose layout the postmortem data does not describe: the function's name (a String), its
 * variable's slot (a Smi), the inferred name (a String or undefined), the start and end (Smis),
 * the outer scope's ScopeInfo (Node 18, 20 and 22 alike). Taken there: the last two Smis of
 * the first run of two or more that a heap object ends, start < end (a lone Smi before the name,
 * a class's saved variable, is not a run).
 */
static int64_t scope_start(const struct v8proc *pp, uint64_t si)
{
	uint64_t slots[V8_POS_SCAN], at;
	int64_t a, b;
	size_t i, run = 0;

	if (scope_position_fixed(pp)) {
		if (mem_read(pp->pid, si - 1 + 8 + 8 * 3, slots, 2 * sizeof(slots[0])) ||
		    !is_smi(pp, slots[0]) || !is_smi(pp, slots[1]))
			return -1;
		a = smi_value(slots[0]);
		b = smi_value(slots[1]);
		return a >= 0 && a < b ? a : -1;
	}
	if (scope_optional_at(pp, si, &at) ||
	    mem_read(pp->pid, si - 1 + 8 + 8 * at, slots, sizeof(slots)))
		return -1;
	for (i = 0; i < V8_POS_SCAN; i++) {
		if (is_smi(pp, slots[i])) {
			run++;
			continue;
		}
		if (!is_heap(pp, slots[i]))
			return -1;
		if (run >= 2) {
			a = smi_value(slots[i - 2]);
			b = smi_value(slots[i - 1]);
			return a >= 0 && a < b ? a : -1;
		}
		run = 0;
	}
	return -1;
}

/* Whether @n more characters fit in @w's window (a new one begun when the last has passed). */
static bool window_fits(struct v8window *w, uint64_t now, uint64_t n, uint64_t limit)
{
	if (now - w->since_ns >= V8_SRC_WINDOW_NS) {
		w->since_ns = now;
		w->used = 0;
	}
	return w->used + n <= limit;
}

static void script_drop(struct v8 *v, struct v8script *sc)
{
	v->lines_bytes -= (uint64_t)sc->n * sizeof(*sc->ends);
	v->st.mem_bytes -= (uint64_t)sc->n * sizeof(*sc->ends);
	free(sc->ends);
	memset(sc, 0, sizeof(*sc));
}

/*
 * The line (from 1) of position @pos in the source of Script @scr (tagged) of @pp, or 0 when
 * it cannot be told: the line ends of the source (struct v8script), read once per script.
 */
static int64_t script_line(struct v8 *v, struct v8proc *pp, uint64_t scr, int64_t pos)
{
	struct v8lines ln = { 0 };
	struct str_sink k = { .ln = &ln };
	struct v8script *sc = NULL;
	uint64_t src, map;
	uint32_t budget = V8_SRC_MAX, lo, hi;
	int32_t len;
	size_t i;
	int t;

	if (pos < 0 || !pp->f.have[RTI_V8_SCRIPT_SOURCE] ||
	    field(pp, scr, VAL(pp, SCRIPT_SOURCE), &src) || (t = type_of(pp, src, &map)) < 0 ||
	    t >= VAL(pp, FIRST_NONSTRING_TYPE) ||
	    mem_read(pp->pid, src - 1 + (uint64_t)VAL(pp, STRING_LENGTH), &len, sizeof(len)) ||
	    len < 0 || pos > len)
		return 0;
	for (i = 0; i < V8_SCRIPTS; i++) {
		struct v8script *c = &pp->scripts[i];

		if (c->script == scr && c->source == src && c->len == (uint32_t)len) {
			sc = c;
			break;
		}
	}
	if (!sc) {
		uint64_t now = mono_ns();

		/* the characters read for lines are bounded per window, per process and for all: a
		 * process whose objects change all the time (or that has many scripts) cannot make
		 * the worker read sources without end; past it, names without their line, counted */
		if ((uint32_t)len <= V8_SRC_MAX) { /* a longer one is not read at all (below) */
			if (!window_fits(&pp->src, now, (uint32_t)len, V8_SRC_PROC_BUDGET) ||
			    !window_fits(&v->src, now, (uint32_t)len, V8_SRC_ALL_BUDGET) || !v->src_buf) {
				v->st.line_sources_deferred++;
				return 0;
			}
			pp->src.used += (uint32_t)len;
			v->src.used += (uint32_t)len;
		}
		k.buf = v->src_buf;
		k.buf_len = V8_SRC_CHUNK;
		/* the least recently used slot, emptied */
		sc = &pp->scripts[0];
		for (i = 1; i < V8_SCRIPTS; i++)
			if (pp->scripts[i].used < sc->used)
				sc = &pp->scripts[i];
		if (sc->script)
			script_drop(v, sc);
		sc->script = scr;
		sc->source = src;
		sc->len = (uint32_t)len;
		v->st.line_sources++;
		if ((uint32_t)len <= V8_SRC_MAX &&
		    !read_string(pp, src, 0, UINT32_MAX, V8_STR_DEPTH, &k, &budget) &&
		    ln.pos == (uint32_t)len) {
			if (ln.cr)
				lines_end(&ln, ln.pos - 1);
			if (!ln.full &&
			    v->lines_bytes + (uint64_t)ln.n * sizeof(*ln.ends) <= V8_LINES_BYTES) {
				uint32_t *e = ln.n ? realloc(ln.ends, ln.n * sizeof(*e)) : NULL;

				if (e || !ln.n) {
					sc->ends = e;
					sc->n = ln.n;
					sc->read = true;
					ln.ends = e ? NULL : ln.ends;
					v->lines_bytes += (uint64_t)sc->n * sizeof(*sc->ends);
					v->st.mem_bytes += (uint64_t)sc->n * sizeof(*sc->ends);
				}
			}
		}
		free(ln.ends);
		if (!sc->read)
			v->st.line_sources_unread++;
		v->st.line_read_ns += mono_ns() - now;
	}
	sc->used = ++v->script_stamp;
	if (!sc->read)
		return 0;
	/* the line ends before @pos, as V8's Script::GetPositionInfo counts them */
	lo = 0;
	hi = sc->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (sc->ends[mid] < (uint64_t)pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int64_t)lo + 1;
}

/*
 * Reads the SharedFunctionInfo at @sfi (untagged) of @pp: its interned frame name in *@id
 * (-1: not one, -2: a builtin's, named natively), and in *@key what the name was read from. 0, or -ENOMEM.
 */
static int read_sfi(struct v8 *v, struct v8proc *pp, uint64_t sfi, uint64_t *key, int32_t *id)
{
	uint64_t obj = sfi + (uint64_t)VAL(pp, HEAP_OBJECT_TAG), map, nos, scr, smap, sname;
	struct frame f = { .kind = FRAME_JIT, .form = FRAME_SYMBOL };
	int t, r, nos_type = -1;

	*id = -1;
	*key = 0;
	v->st.names++;
	/* the object's own words unreadable (a page V8 has just given back, a process dying):
	 * not an answer to keep for long (v8__frame_name() reads it again after V8_RETRY_NS) */
	r = field(pp, obj, VAL(pp, HEAPOBJECT_MAP), &map);
	if (!r)
		r = field(pp, obj, VAL(pp, SFI_NAME_OR_SCOPE), &nos);
	if (r < 0) {
		v->st.name_read_errors++;
		return r;
	}
	if (map_type(pp, map) != VAL(pp, TYPE_SFI))
		return 0;
	*key = map ^ nos;
	sbuf_reset(&v->name);
	if (is_heap(pp, nos)) {
		t = type_of(pp, nos, &map);
		nos_type = t;
		if (t >= 0 && t < VAL(pp, FIRST_NONSTRING_TYPE))
			r = string_of(pp, nos, &v->name);
		else if (t == VAL(pp, TYPE_SCOPE_INFO))
			r = scope_name(pp, nos, &v->name);
		else
			r = -1;
		if (r)
			return 0;
	}
	/* the script's name: the file (a DebugInfo in its place, or none: no file) */
	sbuf_reset(&v->file);
	if (!field(pp, obj, VAL(pp, SFI_SCRIPT), &scr) &&
	    type_of(pp, scr, &smap) == VAL(pp, TYPE_SCRIPT) &&
	    !field(pp, scr, VAL(pp, SCRIPT_NAME), &sname) && is_heap(pp, sname) &&
	    string_of(pp, sname, &v->file))
		sbuf_reset(&v->file);
	/* the function's line in it (its start position, through the source's line ends) */
	if (v->file.len && nos_type == VAL(pp, TYPE_SCOPE_INFO)) {
		f.line = script_line(v, pp, scr, scope_start(pp, nos));
		v->st.lines += f.line > 0;
		v->st.lines_unknown += f.line <= 0;
	}
	if (!v->file.len && !v->name.len) {
		*id = -2; /* a builtin's closure (no script, no name): its native name says more */
		return 0;
	}
	/* "name (script)": the frame model's JIT form with a file (core/model/frame.h) */
	sbuf_reset(&v->out);
	sbuf_add(&v->out, v->name.len ? v->name.buf : ANON, v->name.len ? v->name.len : strlen(ANON));
	if (sbuf_error(&v->out) || sbuf_error(&v->name) || sbuf_error(&v->file))
		return -ENOMEM;
	f.name = v->out.buf;
	f.name_len = v->out.len;
	if (v->file.len) {
		f.file = v->file.buf;
		f.file_len = v->file.len;
	}
	sbuf_reset(&v->name);
	frame_format(&v->name, &f);
	if (sbuf_error(&v->name))
		return -ENOMEM;
	/* charged to the process's share of the names' table (proc/proctrack.h) */
	r = proc_tracker__intern_name(v->tracker, pp->pid, v->names, v->name.buf, v->name.len);
	if (r < 0)
		return -ENOMEM;
	*id = r;
	return 0;
}

/* --- processes ---------------------------------------------------------------------------- */

/* @pid's state for the image it runs now (none: not looked at since its exec). */
static struct v8proc *proc_find(struct v8 *v, uint32_t pid)
{
	return proc_tracker__ext(v->tracker, v->ext, pid, false);
}

static void set_state(struct v8 *v, struct v8proc *pp, enum v8state s)
{
	if (pp->state == V8S_ON)
		v->st.procs--;
	else if (pp->state == V8S_UNSUPPORTED)
		v->st.procs_unsupported--;
	pp->state = s;
	if (s == V8S_ON)
		v->st.procs++;
	else if (s == V8S_UNSUPPORTED)
		v->st.procs_unsupported++;
}

/* The tracker's ops.ended: the process exited or exec'ed (the BPF program deleted its entry
 * then, a V8's). Its names stay a while: the samples of its last seconds may still be on their
 * way (a worker behind under load; removed at once, they came out unnamed: 91 and 98 of the last
 * two seconds' samples in test_node_versions, ZD2). */
static void proc_ended(void *ctx, uint32_t pid, void *state, uint64_t event_ns)
{
	struct v8proc *pp = state;

	(void)event_ns; /* whatever the time */
	set_state(ctx, pp, pp->state == V8S_ON ? V8S_GONE : V8S_NOT);
}

/* The tracker's ops.release: what the state holds. */
static void proc_release(void *ctx, uint32_t pid, void *state)
{
	struct v8 *v = ctx;
	struct v8proc *pp = state;

	(void)pid;
	set_state(v, pp, V8S_NOT);
	for (size_t i = 0; i < V8_SCRIPTS; i++)
		script_drop(v, &pp->scripts[i]);
	v->st.mem_bytes -= sizeof(*pp) + pp->cap * sizeof(*pp->names);
	free(pp->names);
}

bool v8_facts_check(const struct rtintro_v8 *f, struct ember_v8_proc *ret, int *why)
{
	const int32_t *x = f->val;

	*why = RTI_MISSING;
	if (f->missing_required || !f->have[RTI_V8_SCOPEINFO_IDX_NLOCALS] ||
	    !f->have[RTI_V8_SCOPEINFO_IDX_FIRST_VARS])
		return false;
	*why = RTI_BAD_VALUE;
	/* uncompressed tagged pointers (every official Node build): 32-bit Smis in the high half,
	 * 8-byte fields; pointer compression or the sandbox would need the cage base */
	if (x[RTI_V8_SMI_SHIFT_SIZE] != 31 || x[RTI_V8_HEAP_OBJECT_TAG] != 1 ||
	    x[RTI_V8_HEAP_OBJECT_TAG_MASK] != 3 || x[RTI_V8_SMI_TAG] != 0 ||
	    x[RTI_V8_SMI_TAG_MASK] != 1)
		return false;
	/* the slots below the frame pointer, as x86-64 V8 lays them out */
	if (x[RTI_V8_OFF_FP_CONTEXT] > -8 || x[RTI_V8_OFF_FP_CONTEXT] < -64 ||
	    x[RTI_V8_OFF_FP_CONTEXT] % 8 || x[RTI_V8_OFF_FP_FUNCTION] > -8 ||
	    x[RTI_V8_OFF_FP_FUNCTION] < -64 || x[RTI_V8_OFF_FP_FUNCTION] % 8 ||
	    x[RTI_V8_OFF_FP_FUNCTION] == x[RTI_V8_OFF_FP_CONTEXT])
		return false;
	for (int i = 0; i < RTI_V8__COUNT; i++) {
		if (!f->have[i])
			continue;
		switch (i) {
		case RTI_V8_HEAPOBJECT_MAP:
		case RTI_V8_MAP_INSTANCE_TYPE:
		case RTI_V8_JSFUNCTION_SHARED:
		case RTI_V8_SFI_NAME_OR_SCOPE:
		case RTI_V8_SFI_SCRIPT:
		case RTI_V8_SCRIPT_NAME:
		case RTI_V8_SCRIPT_SOURCE:
		case RTI_V8_STRING_LENGTH:
		case RTI_V8_SEQ_ONE_BYTE_CHARS:
		case RTI_V8_SEQ_TWO_BYTE_CHARS:
		case RTI_V8_CONS_FIRST:
		case RTI_V8_CONS_SECOND:
		case RTI_V8_THIN_ACTUAL:
		case RTI_V8_SLICED_PARENT:
		case RTI_V8_SLICED_OFFSET:
			if (x[i] < 0 || x[i] > V8_MAX_OFF)
				return false;
			break;
		case RTI_V8_SCOPEINFO_IDX_NLOCALS:
		case RTI_V8_SCOPEINFO_IDX_FIRST_VARS:
			if (x[i] < 0 || x[i] > 16)
				return false;
			break;
		default:
			break;
		}
	}
	if (x[RTI_V8_TYPE_SFI] < 0 || x[RTI_V8_TYPE_SFI] > 0xffff || x[RTI_V8_MAP_INSTANCE_TYPE] % 2)
		return false;
	*ret = (struct ember_v8_proc){
		.fp_context = (__s8)x[RTI_V8_OFF_FP_CONTEXT],
		.fp_function = (__s8)x[RTI_V8_OFF_FP_FUNCTION],
		.heap_tag = 1,
		.heap_tag_mask = 3,
		.map_off = (__u16)x[RTI_V8_HEAPOBJECT_MAP],
		.instance_type_off = (__u16)x[RTI_V8_MAP_INSTANCE_TYPE],
		.shared_off = (__u16)x[RTI_V8_JSFUNCTION_SHARED],
		.type_sfi = (__u16)x[RTI_V8_TYPE_SFI],
	};
	*why = RTI_OK;
	return true;
}

struct scan {
	struct procmaps_entry e[2];
	char path[2][512];
	size_t n;
	bool libc;
};

static bool name_is_node(const char *b, size_t len)
{
	return (len >= 4 && !memcmp(b, "node", 4)) || (len >= 10 && !memcmp(b, "libnode.so", 10));
}

static int on_map(const struct procmaps_entry *e, void *ctx)
{
	struct scan *sc = ctx;
	const char *base;
	size_t blen, i;

	if (e->kind != PROCMAPS_FILE || !e->path_len || e->path_len >= sizeof(sc->path[0]))
		return 0;
	base = procmaps_basename(e, &blen);
	if (blen >= 5 && (!memcmp(base, "libc.", 5) || !memcmp(base, "libc-", 5)))
		sc->libc = true;
	if (!e->x || !name_is_node(base, blen))
		return 0;
	for (i = 0; i < sc->n; i++)
		if (sc->e[i].inode == e->inode)
			return 0;
	if (sc->n == 2)
		return 0;
	sc->e[sc->n] = *e;
	memcpy(sc->path[sc->n], e->path, e->path_len);
	sc->path[sc->n][e->path_len] = '\0';
	sc->e[sc->n].path = sc->path[sc->n];
	sc->n++;
	return 0;
}

/* The facts of the file of mapping @e (of snapshot @m, at @me there): cached per file. */
static const struct v8_file_facts *file_facts(struct v8 *v, struct proc_maps *m, uint32_t pid,
					      const struct procmaps_entry *e)
{
	struct mapfile_want w = { .pid = pid, .start = e->start, .end = e->end, .path = e->path,
				  .path_len = e->path_len, .deleted = e->deleted,
				  .dev_major = e->dev_major, .dev_minor = e->dev_minor,
				  .ino = e->inode };
	const struct v8_file_facts *known;
	struct v8_file_facts ff;
	struct filecache_id id;
	struct stat st;
	int fd;

	(void)m;
	fd = mapfile_open(v->proc_root, &w, &v->st.files, &st);
	if (fd < 0)
		return NULL;
	filecache_id_of(&st, &id);
	known = filecache__get(v->files, &id, FILECACHE_V8);
	if (!known) {
		struct rtintro_stats rs = { 0 };

		struct elfsym *es;

		memset(&ff, 0, sizeof(ff));
		/* the symbolizer's image of node (or libnode.so): its symbols read once for both */
		{
			char path[512]; /* e's is not NUL-terminated (procmaps.h) */

			snprintf(path, sizeof(path), "%.*s", (int)e->path_len, e->path);
			es = elfsym_source_get(&v->o.images, fd, path, NULL);
		}
		ff.err = rtintro_v8_read_image(fd, es, &ff.f, &rs);
		elfsym__free(es);
		for (int i = 0; i < RTI__REASONS; i++)
			v->st.reasons[i] += rs.reason[i];
		(void)filecache__put(v->files, &id, FILECACHE_V8, &ff, sizeof(ff));
		known = filecache__get(v->files, &id, FILECACHE_V8);
		if (!known) {
			close(fd);
			return NULL;
		}
	}
	close(fd);
	return known;
}

static void detect(struct v8 *v, struct v8proc *pp)
{
	struct scan sc = { .n = 0 };
	const struct v8_file_facts *ff = NULL;
	struct ember_v8_proc bp;
	struct proc_maps *m;
	uint64_t t0 = mono_ns();
	int why = RTI_NO_TABLES;
	size_t i;

	v->st.detections++;
	pp->tries++;
	/* the image it runs now: the shell it was forked from has libc and no node, and a process
	 * judged from that snapshot stayed unnamed for its life (its executable, looked at again
	 * later, had not changed since it was first seen) */
	m = proc_tracker__image_maps(v->tracker, pp->pid);
	if (!m) {
		set_state(v, pp, V8S_NOT);
		goto out;
	}
	(void)proc_maps__for_each(m, on_map, &sc);
	for (i = 0; i < sc.n && !ff; i++) {
		ff = file_facts(v, m, pp->pid, &sc.e[i]);
		if (ff && ff->err == -RTI_NO_TABLES)
			ff = NULL; /* a program named node* that is no V8 */
	}
	proc_maps__put(m);
	if (!ff) {
		if (!sc.libc && pp->tries < DETECT_TRIES) {
			set_state(v, pp, V8S_RETRY); /* right after exec: libnode not mapped yet */
			sampler__renote_pid(v->sampler, pp->pid);
		} else {
			set_state(v, pp, V8S_NOT);
		}
		goto out;
	}
	pp->f = ff->f;
	if (ff->err || !v8_facts_check(&ff->f, &bp, &why)) {
		if (!ff->err)
			v->st.reasons[why]++;
		set_state(v, pp, V8S_UNSUPPORTED);
		goto out;
	}
	if (sampler__v8_set_proc(v->sampler, pp->pid, &bp)) {
		v->st.procs_dropped++;
		set_state(v, pp, V8S_NOT);
		goto out;
	}
	set_state(v, pp, V8S_ON);
out:
	v->st.detect_ns += mono_ns() - t0;
}

void v8__sampled(struct v8 *v, uint32_t pid)
{
	struct v8proc *pp;

	if (!v || !pid)
		return;
	pp = proc_find(v, pid);
	if (pp) {
		if (pp->state == V8S_RETRY) {
			detect(v, pp);
		} else if (pp->state == V8S_NOT && mono_ns() - pp->seen_ns >= V8_RECHECK_NS) {
			/* an exec since (a shell that became node)? its executable tells */
			uint64_t dev, ino;

			pp->seen_ns = mono_ns();
			if (!proc_tracker__exe_id(v->tracker, pid, V8_RECHECK_NS, &dev, &ino) &&
			    (ino != pp->exe_ino || dev != pp->exe_dev)) {
				pp->exe_ino = ino;
				pp->exe_dev = dev;
				pp->tries = 0;
				detect(v, pp);
			}
		}
		return;
	}
	/* its exit told (the samples of its last moments, handled after it, say "new" again: the
	 * BPF program forgot it at the exit): its ended state names them, no new one is made
	 * (a new one, not a V8 once the process is gone, answered first and left 86 of them
	 * [unknown]) */
	if (proc_tracker__gone(v->tracker, pid))
		return;
	if (proc_tracker__ext_count(v->tracker, v->ext) >= v->o.max_procs) {
		v->st.procs_dropped++;
		return;
	}
	pp = proc_tracker__ext(v->tracker, v->ext, pid, true);
	if (!pp)
		return;
	v->st.mem_bytes += sizeof(*pp);
	pp->pid = pid;
	pp->seen_ns = mono_ns();
	(void)proc_tracker__exe_id(v->tracker, pid, PROC_EXE_MAX_AGE_NS, &pp->exe_dev, &pp->exe_ino);
	detect(v, pp);
}

/* --- names -------------------------------------------------------------------------------- */

static struct v8name *name_slot(struct v8 *v, struct v8proc *pp, uint64_t sfi)
{
	size_t i, mask;

	if (!pp->cap || pp->n >= pp->cap / 2) {
		size_t cap = pp->cap ? pp->cap * 2 : 64;
		struct v8name *nt;

		if (pp->n >= v->o.max_names || cap > 2 * (size_t)v->o.max_names * 2) {
			/* full: start again (names are re-read, cheap) */
			memset(pp->names, 0, pp->cap * sizeof(*pp->names));
			pp->n = 0;
			v->st.name_evictions++;
		} else {
			nt = calloc(cap, sizeof(*nt));
			if (!nt)
				return NULL;
			for (i = 0; i < pp->cap; i++) {
				size_t j;

				if (!pp->names[i].sfi)
					continue;
				for (j = hash_mix64(pp->names[i].sfi) & (cap - 1); nt[j].sfi;
				     j = (j + 1) & (cap - 1))
					;
				nt[j] = pp->names[i];
			}
			free(pp->names);
			v->st.mem_bytes += (cap - pp->cap) * sizeof(*nt);
			pp->names = nt;
			pp->cap = cap;
		}
	}
	mask = pp->cap - 1;
	for (i = hash_mix64(sfi) & mask; pp->names[i].sfi; i = (i + 1) & mask)
		if (pp->names[i].sfi == sfi)
			return &pp->names[i];
	return &pp->names[i];
}

int v8__frame_name(struct v8 *v, uint32_t pid, uint64_t word)
{
	struct v8proc *pp;
	struct v8name *e;
	uint64_t sfi = word & EMBER_V8F_ADDR_MASK, now, key, map, nos;
	int32_t id;
	int r;

	if (!v || !EMBER_V8F_IS(word))
		return -1;
	/* its image's state, or, exited or exec'ed, the last one's while kept */
	pp = proc_tracker__ext_last(v->tracker, v->ext, pid);
	if (!pp || (pp->state != V8S_ON && pp->state != V8S_GONE) || !sfi) {
		v->st.frames_unnamed++;
		return -1;
	}
	e = name_slot(v, pp, sfi);
	if (!e)
		return -ENOMEM;
	now = mono_ns();
	if (e->sfi == sfi) {
		/* an ended image's names are not checked again: its memory no longer changes (an
		 * exit's: a dying process's reads fail otherwise than ESRCH too, and its last
		 * second's samples, named after it, came out unnamed: 9.9 % named in one run) */
		if (now - e->checked < V8_RECHECK_NS || pp->state == V8S_GONE)
			goto have;
		/* GC moves objects: the same address may now hold another function */
		v->st.name_rechecks++;
		e->checked = now;
		r = field(pp, sfi + 1, VAL(pp, HEAPOBJECT_MAP), &map);
		if (!r)
			r = field(pp, sfi + 1, VAL(pp, SFI_NAME_OR_SCOPE), &nos);
		/* gone (exited, its memory with it): the samples of its last tick come in after
		 * it, and keep the names it had when it ran rather than none; nor does a read that
		 * failed say the address holds another function now (a name dropped for a second
		 * on a failed read would leave a whole second of samples unnamed) */
		if (r < 0 && r != -ESRCH)
			v->st.name_read_errors++;
		if (r < 0 || (map ^ nos) == e->key)
			goto have;
	}
	r = read_sfi(v, pp, sfi, &key, &id);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		/* unreadable now: unnamed, and read again after V8_RETRY_NS rather than a
		 * second (a process whose frames all point at unmapped memory still costs one
		 * read per function and retry, not one per frame and sample); a name known for
		 * that address stays (the check above does not come here) */
		if (e->sfi != sfi)
			pp->n++;
		*e = (struct v8name){ .sfi = sfi, .key = ~0ULL,
				      .checked = now - V8_RECHECK_NS + V8_RETRY_NS, .id = -1 };
		goto have;
	}
	if (e->sfi != sfi)
		pp->n++;
	*e = (struct v8name){ .sfi = sfi, .key = key, .checked = now, .id = id };
have:
	if (e->id == -2) {
		v->st.frames_builtin++;
		return -1;
	}
	if (e->id < 0) {
		v->st.frames_unnamed++;
		return -1;
	}
	v->st.frames++;
	return e->id;
}

struct carry {
	struct v8 *v;
	int err;
};

static void carry_one(void *arg, uint32_t pid, void *state, bool ended)
{
	struct carry *c = arg;
	struct v8proc *pp = state;
	size_t j;
	int r;

	(void)pid;
	(void)ended;
	for (j = 0; j < pp->cap; j++) {
		struct v8name *e = &pp->names[j];

		if (!e->sfi || e->id < 0)
			continue;
		r = strtab__carry(c->v->names, (uint32_t)e->id);
		if (r >= 0) {
			e->id = r;
			continue;
		}
		/* read again when sampled (an exited process's: unnamed) */
		e->checked = 0;
		e->key = ~0ULL;
		e->id = -1;
		c->err = -ENOMEM;
	}
}

int v8__names_carry(struct v8 *v)
{
	struct carry c = { .v = v };

	if (!v)
		return 0;
	proc_tracker__ext_each(v->tracker, v->ext, carry_one, &c);
	return c.err;
}

void v8__prune(struct v8 *v)
{
	if (!v)
		return;
	/* what ended V8_GONE_KEEP_NS ago (its exit, exec or the tracker's sweep told) */
	proc_tracker__ext_prune(v->tracker, v->ext);
}

struct v8 *v8__new(struct sampler *sampler, struct strtab *names, const struct v8_opts *o)
{
	struct v8_opts def = V8_OPTS_DEFAULT;
	struct v8 *v = calloc(1, sizeof(*v));

	if (!v)
		goto fail;
	v->ext = -1;
	v->o = o ? *o : def;
	if (!v->o.max_procs)
		v->o.max_procs = def.max_procs;
	if (!v->o.max_names)
		v->o.max_names = def.max_names;
	snprintf(v->proc_root, sizeof(v->proc_root), "%s",
		 v->o.proc_root ? v->o.proc_root : "/proc");
	v->o.proc_root = v->proc_root;
	v->tracker = v->o.procs;
	if (!v->tracker) {
		struct proc_tracker_opts po = { .proc_root = v->proc_root };

		v->tracker = v->own_tracker = proc_tracker__new(&po);
		if (!v->tracker)
			goto fail;
	}
	{
		struct proc_ext_ops xo = { .name = "v8", .size = sizeof(struct v8proc),
					   .keep_ns = V8_GONE_KEEP_NS, .ended = proc_ended,
					   .release = proc_release, .ctx = v };

		v->ext = proc_tracker__ext_register(v->tracker, &xo);
		if (v->ext < 0)
			goto fail;
	}
	v->files = v->o.files;
	if (!v->files) {
		v->files = v->own_files = filecache__new(NULL);
		if (!v->files)
			goto fail;
	}
	v->sampler = sampler;
	v->names = names;
	sbuf_init(&v->name);
	sbuf_init(&v->file);
	sbuf_init(&v->out);
	v->src_buf = malloc(V8_SRC_CHUNK); /* NULL: no lines (counted deferred) */
	return v;
fail:
	v8__free(v);
	errno = ENOMEM;
	return NULL;
}

void v8__free(struct v8 *v)
{
	if (!v)
		return;
	if (v->tracker && v->ext >= 0)
		proc_tracker__ext_unregister(v->tracker, v->ext);
	proc_tracker__free(v->own_tracker);
	filecache__free(v->own_files);
	sbuf_fini(&v->name);
	sbuf_fini(&v->file);
	sbuf_fini(&v->out);
	free(v->src_buf);
	free(v);
}

void v8__stats(struct v8 *v, struct v8_stats *ret)
{
	if (!v) {
		memset(ret, 0, sizeof(*ret));
		return;
	}
	*ret = v->st;
	(void)sampler__v8_stats(v->sampler, &ret->bpf);
	/* each frame looked at is one of three (bpf/v8.bpf.h): one counter less in BPF */
	ret->bpf.checks = ret->bpf.frames + ret->bpf.markers + ret->bpf.not_js;
	ret->walk_ns_per_walk = ret->bpf.walks ? ret->bpf.walk_ns / ret->bpf.walks : 0;
}
