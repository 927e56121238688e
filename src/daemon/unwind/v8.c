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
#include "ember/daemon/unwind/runtime.h"

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
#define V8_CODES	128		   /* code ranges known per process (pc -> Code) */
#define V8_TEXT_MAX	8		   /* executable mappings of node's files kept per process */
#define V8_INL		1024		   /* inlining stacks kept per process (direct-mapped) */
#define V8_SCAN_MAX	(256u << 10)	   /* bytes below a pc searched for its code's start */
#define V8_SCAN_PAGE	4096u		   /* ... read a page at a time */
#define V8_CODE_ALIGN	64u		   /* where V8 starts instructions (all four layouts) */
#define V8_SPT_MAX	(64u << 10)	   /* bytes of a source position table read */
#define V8_SCAN_PROC_BUDGET 4096u	   /* pages read to find code per window: one process */
#define V8_SCAN_ALL_BUDGET 16384u	   /* ... by all of them (64 MiB) */

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
	const struct v8_tf_layout *tf; /* TurboFan's inlining read by this layout; NULL: not */
	uint64_t text[V8_TEXT_MAX][2]; /* node's (libnode's) executable mappings: builtins */
	uint64_t is_map, code_map; /* the maps of its InstructionStreams and Codes, once seen */
	struct v8code *codes;	/* V8_CODES (made when first wanted) */
	struct v8inl *inl;	/* V8_INL */
	uint64_t code_stamp;
	struct v8window scan;	/* pages read to find code (V8_SCAN_PROC_BUDGET) */
};

/*
 * Where a V8 version keeps what TurboFan's inlined functions are read from (measured on each
 * build: docs/design/runtimes.md, "V8 as built", inlined functions). Offsets in bytes into the
 * object, indices into the DeoptimizationData. Those the binary's v8dbg_ data also gives must
 * agree with it (v8_tf_layout_for()).
 */
struct v8_tf_layout {
	int major, minor;  /* V8's version */
	int16_t code_is;   /* Code -> its InstructionStream; -1: the instructions are in the Code */
	int16_t code_start; /* Code's instruction_start (an address); code_is -1: the header size */
	int16_t code_size, code_flags, code_deopt, code_spt;
	int16_t is_code, is_start; /* InstructionStream: its Code, its header's size */
	int8_t dd_lits, dd_inl, dd_sfi; /* DeoptimizationData: literals, InliningPositions, SFI */
	int8_t wrapper_sfi; /* dd_sfi holds a SharedFunctionInfoWrapper: its SFI's offset; -1 */
	int8_t kind_tf;	    /* CodeKind::TURBOFAN (CodeKindBaseline + 2; MAGLEV one less) */
};

static const struct v8_tf_layout tf_layouts[] = {
	/* Node 18 (V8 10.2): instructions inside the Code, after a 128-byte header */
	{ 10, 2, -1, 128, 40, 48, 16, 24, 0, 0, 2, 7, 6, -1, 13 },
	/* Node 20 (V8 11.3): Code and InstructionStream apart; half of it not in v8dbg_ */
	{ 11, 3, 32, 40, 56, 48, 16, 24, 8, 16, 2, 7, 6, -1, 13 },
	/* Node 22 (V8 12.4): the Code in trusted space (an ordinary one with the sandbox off) */
	{ 12, 4, 32, 40, 52, 48, 8, 16, 8, 32, 2, 7, 6, -1, 12 },
	/* Node 24 (V8 13.6): the SFI behind a wrapper, the Code's flags moved by a dispatch handle */
	{ 13, 6, 32, 40, 56, 52, 8, 16, 8, 32, 3, 8, 7, 8, 12 },
};

/* Code objects by the range of their instructions, or a range known to hold none (code 0). */
struct v8code {
	uint64_t start, end;
	uint64_t code; /* tagged */
	uint64_t checked, used;
	uint8_t kind;
};

/* The functions inlined at one position of one Code: the SFIs (untagged), innermost last. */
#define V8_MAX_INLINE 8
struct v8inl {
	uint64_t start; /* the Code's instructions; 0: an empty slot */
	uint64_t root;	/* the frame's own function (untagged SFI) */
	uint64_t checked;
	uint64_t sfi[V8_MAX_INLINE];
	uint32_t off; /* the pc's offset looked up */
	uint8_t n;
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
	uint8_t *code_buf;		  /* V8_SPT_MAX bytes: a page scanned, a position table */
	struct v8window scan;		  /* all processes' pages read (V8_SCAN_ALL_BUDGET) */
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
	 * not an answer to keep for long (sfi_name() reads it again after V8_RETRY_NS) */
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
	if (pp->codes)
		v->st.mem_bytes -= V8_CODES * sizeof(*pp->codes);
	if (pp->inl)
		v->st.mem_bytes -= V8_INL * sizeof(*pp->inl);
	free(pp->codes);
	free(pp->inl);
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
	uint64_t text[V8_TEXT_MAX][2]; /* the files' executable mappings, each */
	size_t n, ntext;
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
	/* each executable mapping on its own: V8 maps a copy of node's embedded builtins next to
	 * its JIT code (short calls), so one range from a file's first to its last took in all of
	 * the JIT code too (no inlined function read for the process: 1 run in 6 of
	 * test_node_versions, where node was examined after that copy was mapped) */
	if (sc->ntext < V8_TEXT_MAX) {
		sc->text[sc->ntext][0] = e->start;
		sc->text[sc->ntext][1] = e->end;
		sc->ntext++;
	}
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
	/* TurboFan's inlining read where this V8's layout is known and its data agrees */
	pp->tf = v8_tf_layout_for(&ff->f, &why);
	if (!pp->tf)
		v->st.inline_layouts_refused++;
	memcpy(pp->text, sc.text, sizeof(pp->text));
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

/* The id of the name of @sfi (untagged) in process @pp, read or cached; -1: none, -ENOMEM. */
static int sfi_name(struct v8 *v, struct v8proc *pp, uint64_t sfi)
{
	struct v8name *e;
	uint64_t now, key, map, nos;
	int32_t id;
	int r;

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

static int inline_at(struct v8 *v, struct v8proc *pp, uint64_t sfi, uint64_t pc,
		     const uint64_t **out);

/* @pid's state when its JavaScript frames are named: its image's, or, exited or exec'ed, the
 * last one's while kept; NULL (counted unnamed) */
static struct v8proc *named_proc(struct v8 *v, uint32_t pid, uint64_t word)
{
	struct v8proc *pp;

	if (!v || !EMBER_V8F_IS(word))
		return NULL;
	pp = proc_tracker__ext_last(v->tracker, v->ext, pid);
	if (!pp || (pp->state != V8S_ON && pp->state != V8S_GONE) ||
	    !(word & EMBER_V8F_ADDR_MASK)) {
		v->st.frames_unnamed++;
		return NULL;
	}
	return pp;
}

int v8__frame_names(struct v8 *v, uint32_t pid, uint64_t word, uint64_t ip, bool leaf,
		    uint32_t *ids, size_t max)
{
	struct v8proc *pp = named_proc(v, pid, word);
	uint64_t sfi = word & EMBER_V8F_ADDR_MASK;
	const uint64_t *in;
	size_t k = 1;
	int id, n;

	if (!pp || !max)
		return -1;
	id = sfi_name(v, pp, sfi);
	if (id < 0)
		return id;
	ids[0] = (uint32_t)id;
	/* a return address is the instruction after the call: its position is the call's */
	n = inline_at(v, pp, sfi, leaf || !ip ? ip : ip - 1, &in);
	for (int i = 0; i < n && k < max; i++) {
		id = sfi_name(v, pp, in[i]);
		if (id == -ENOMEM)
			return id;
		if (id < 0) {
			v->st.inline_unreadable++;
			break; /* the functions inside it stay in the frame above */
		}
		ids[k++] = (uint32_t)id;
		v->st.inline_frames++;
	}
	return (int)k;
}

/* --- TurboFan's inlined functions ---------------------------------------------------------- */

/*
 * A frame of optimized code runs its function and whatever TurboFan inlined into it, with no
 * frame of their own. The Code object keeps what V8's own stack traces expand them from: its
 * source position table (v8_srcpos.c) maps the pc's offset to a SourcePosition whose inlining
 * id (bits 31..46, plus one) indexes the DeoptimizationData's InliningPositions: 16-byte records
 * of the call's own position in its caller (a SourcePosition again, itself inlined or not) and
 * the inlined function's index into the DeoptimizationData's literals, where its
 * SharedFunctionInfo is. The Code is found from the pc: down from it, at V8's code alignment,
 * the first InstructionStream (or, V8 10, Code) header whose object points back at it and whose
 * instructions hold the pc. The function's own code slot would be quicker, but holds another
 * code for on-stack-replaced loops, and V8 13 (Node 24) keeps none. All of it is the process's
 * own memory, read bounded; a frame whose code's first SFI is not the frame's own function (a
 * pc in a callee's first instructions, its frame not yet made) is not expanded.
 */

const struct v8_tf_layout *v8_tf_layout_for(const struct rtintro_v8 *f, int *why)
{
	const struct v8_tf_layout *l = NULL;
	const int32_t *x = f->val;

	*why = RTI_MISSING;
	for (size_t i = 0; i < sizeof(tf_layouts) / sizeof(tf_layouts[0]); i++)
		if (tf_layouts[i].major == f->major && tf_layouts[i].minor == f->minor)
			l = &tf_layouts[i];
	if (!l || !f->have[RTI_V8_CODE_KIND_MASK] || !f->have[RTI_V8_CODE_KIND_BASELINE] ||
	    (l->code_is >= 0 && !f->have[RTI_V8_TYPE_ISTREAM]))
		return NULL;
	*why = RTI_BAD_VALUE;
#define AGREES(item, want) (!f->have[RTI_V8_##item] || x[RTI_V8_##item] == (want))
	if (x[RTI_V8_CODE_KIND_MASK] != 15 || x[RTI_V8_CODE_KIND_BASELINE] + 2 != l->kind_tf ||
	    !AGREES(CODE_INSTRUCTION_SIZE, l->code_size) || !AGREES(CODE_FLAGS, l->code_flags) ||
	    !AGREES(CODE_DEOPT_DATA, l->code_deopt) ||
	    !AGREES(CODE_SOURCE_POSITIONS, l->code_spt) ||
	    !AGREES(CODE_INSTRUCTION_START, l->code_start) ||
	    (l->code_is >= 0 && (!AGREES(CODE_ISTREAM, l->code_is) ||
				 !AGREES(ISTREAM_START, l->is_start))) ||
	    !AGREES(DD_LITERALS, l->dd_lits) || !AGREES(DD_INLINING_POSITIONS, l->dd_inl) ||
	    (l->wrapper_sfi < 0 ? !AGREES(DD_SFI, l->dd_sfi)
				: !AGREES(DD_SFI_WRAPPED, l->dd_sfi) ||
					  !AGREES(SFI_WRAPPER_SFI, l->wrapper_sfi)) ||
	    !AGREES(FIXED_ARRAY_LENGTH, 8) || !AGREES(FIXED_ARRAY_DATA, 16))
		return NULL;
#undef AGREES
	*why = RTI_OK;
	return l;
}

/* Bytes before the instructions where the header the search looks for starts: the
 * InstructionStream's (V8 11+), or the Code's that holds them (V8 10). */
static uint64_t code_hdr(const struct v8_tf_layout *l)
{
	return (uint64_t)(l->code_is < 0 ? l->code_start : l->is_start);
}

/* Optimized code: TurboFan's, and Maglev's (Node 24 runs much of its code there, its inlined
 * functions kept the same way). */
static bool optimized(const struct v8proc *pp, const struct v8code *c)
{
	return c && c->code &&
	       (c->kind == (uint8_t)pp->tf->kind_tf || c->kind == (uint8_t)pp->tf->kind_tf - 1);
}

static bool in_text(const struct v8proc *pp, uint64_t pc)
{
	for (int i = 0; i < V8_TEXT_MAX; i++)
		if (pc >= pp->text[i][0] && pc < pp->text[i][1])
			return true;
	return false;
}

/* A u32 of @pid at @addr: 0 or -errno. */
static int rd32(uint32_t pid, uint64_t addr, uint32_t *ret)
{
	return mem_read(pid, addr, ret, sizeof(*ret));
}

/* The heap object at the start of a candidate header @h (untagged) is an InstructionStream
 * (V8 11+) or a Code (V8 10) whose instructions start at @cand: its Code (tagged), its kind and
 * its instructions' size, or 0. @w: the header's first two words, as read. */
static uint64_t code_header(struct v8proc *pp, uint64_t h, uint64_t cand, const uint64_t *w,
			    uint32_t *size, uint8_t *kind)
{
	const struct v8_tf_layout *l = pp->tf;
	uint64_t tag = (uint64_t)VAL(pp, HEAP_OBJECT_TAG), code, back = 0, start = 0, cmap = 0;
	uint32_t flags = 0;

	if (!is_heap(pp, w[0]))
		return 0;
	if (l->code_is < 0) {
		/* V8 10: the Code itself, its instructions after its header */
		if (pp->code_map ? w[0] != pp->code_map : map_type(pp, w[0]) != VAL(pp, TYPE_CODE))
			return 0;
		code = h + tag;
		cmap = w[0];
	} else {
		if (!is_heap(pp, w[1]) || (pp->is_map ? w[0] != pp->is_map
						     : map_type(pp, w[0]) != VAL(pp, TYPE_ISTREAM)))
			return 0;
		code = w[1];
		if (type_of(pp, code, &cmap) != VAL(pp, TYPE_CODE) ||
		    field(pp, code, l->code_is, &back) || back != h + tag ||
		    field(pp, code, l->code_start, &start) || start != cand)
			return 0;
		pp->is_map = w[0];
	}
	if (rd32(pp->pid, code - tag + (uint64_t)l->code_size, size) ||
	    rd32(pp->pid, code - tag + (uint64_t)l->code_flags, &flags))
		return 0;
	pp->code_map = cmap;
	*kind = (uint8_t)(flags & (uint32_t)VAL(pp, CODE_KIND_MASK));
	return code;
}

/* The Code whose instructions hold @pc, found down from it (V8_SCAN_MAX at most): 0 and *@ret,
 * -ENOENT (none: a gap, freed code, not JIT code), -EAGAIN (the pages to read are over budget),
 * or another -errno. When there is none, *@ret (code 0) is the range known to hold none: from
 * the end of the code below (or where the search stopped) to the pc's next code alignment. */
static int code_scan(struct v8 *v, struct v8proc *pp, uint64_t pc, struct v8code *ret)
{
	const struct v8_tf_layout *l = pp->tf;
	uint64_t hdr = code_hdr(l);
	uint64_t cand = pc & ~(uint64_t)(V8_CODE_ALIGN - 1), page = 0, now = mono_ns();
	bool have = false;

	*ret = (struct v8code){ .start = cand, .end = cand + V8_CODE_ALIGN };
	if (!v->code_buf)
		return -ENOMEM;
	for (; cand > hdr && pc - cand < V8_SCAN_MAX; cand -= V8_CODE_ALIGN) {
		uint64_t h = cand - hdr, w[2], code;
		uint32_t size;
		uint8_t kind;
		int r;

		if (!have || (h & ~(uint64_t)(V8_SCAN_PAGE - 1)) != page) {
			if (!window_fits(&pp->scan, now, 1, V8_SCAN_PROC_BUDGET) ||
			    !window_fits(&v->scan, now, 1, V8_SCAN_ALL_BUDGET)) {
				v->st.inline_scans_deferred++;
				return -EAGAIN;
			}
			pp->scan.used++;
			v->scan.used++;
			v->st.inline_scan_pages++;
			page = h & ~(uint64_t)(V8_SCAN_PAGE - 1);
			r = mem_read(pp->pid, page, v->code_buf, V8_SCAN_PAGE);
			if (r)
				return r; /* the range from the page above */
			have = true;
		}
		ret->start = cand;
		/* h is 16-aligned: both words within the page */
		memcpy(&w[0], v->code_buf + (h - page), 8);
		memcpy(&w[1], v->code_buf + (h - page) + (l->code_is < 0 ? 0 : l->is_code), 8);
		code = code_header(pp, h, cand, w, &size, &kind);
		if (!code)
			continue;
		if (pc >= cand + size) {
			ret->start = cand + size; /* the nearest code below ends before the pc */
			return -ENOENT;
		}
		*ret = (struct v8code){ .start = cand, .end = cand + size, .code = code,
					.kind = kind };
		return 0;
	}
	return -ENOENT;
}

/* The code range known for @pc (found, or looked for, in the last V8_RECHECK_NS), else NULL. */
static struct v8code *code_find(struct v8 *v, struct v8proc *pp, uint64_t pc)
{
	struct v8code *e = NULL, *old = NULL, found;
	uint64_t now = mono_ns();
	int r;

	if (!pp->codes) {
		pp->codes = calloc(V8_CODES, sizeof(*pp->codes));
		if (!pp->codes)
			return NULL;
		v->st.mem_bytes += V8_CODES * sizeof(*pp->codes);
	}
	for (size_t i = 0; i < V8_CODES; i++) {
		struct v8code *c = &pp->codes[i];

		if (c->end && pc >= c->start && pc < c->end) {
			e = c;
			break;
		}
		if (!old || c->used < old->used)
			old = c;
	}
	/* a range is looked at again after a second (code is freed, its memory reused), one
	 * that held none after V8_RETRY_NS (new code is put where old code was freed: a range
	 * known empty for a second left a new optimized function's frames without their inlined
	 * functions for that second, 14-15 % of a window in 2 runs of 8), but not once the
	 * process has ended: its memory is gone and no longer changes */
	if (e && (now - e->checked < (e->code ? V8_RECHECK_NS : V8_RETRY_NS) ||
		  pp->state == V8S_GONE)) {
		e->used = ++pp->code_stamp;
		return e;
	}
	if (pp->state == V8S_GONE)
		return NULL;
	r = code_scan(v, pp, pc, &found);
	if (r == -EAGAIN || r == -ESRCH)
		return e; /* what was known, if anything */
	if (r)
		found.code = 0; /* none there: the range known to hold none */
	v->st.inline_scans++;
	v->st.inline_scan_misses += r != 0;
	if (!e)
		e = old;
	*e = found;
	e->checked = now;
	e->used = ++pp->code_stamp;
	return e;
}

/* Whether the code range @c found earlier still holds that code: its header's words (the
 * InstructionStream's map and Code, or V10's Code's map) read again. */
static bool code_still(struct v8proc *pp, const struct v8code *c)
{
	const struct v8_tf_layout *l = pp->tf;
	uint64_t hdr = code_hdr(l), w[2];

	if (l->code_is < 0)
		return !rd64(pp->pid, c->start - hdr, &w[0]) && w[0] == pp->code_map;
	return !rd64(pp->pid, c->start - hdr, &w[0]) &&
	       !rd64(pp->pid, c->start - hdr + (uint64_t)l->is_code, &w[1]) &&
	       w[0] == pp->is_map && w[1] == c->code;
}

/* The DeoptimizationData's slots @code needs: 0, or -EINVAL (not what a layout says). */
struct v8deopt {
	uint64_t lits, inl, root; /* tagged */
	uint64_t nlits, ninl;	  /* literals; InliningPositions' records */
};

static int deopt_of(struct v8proc *pp, uint64_t code, struct v8deopt *d)
{
	const struct v8_tf_layout *l = pp->tf;
	uint64_t tag = (uint64_t)VAL(pp, HEAP_OBJECT_TAG), dd, w[2 + 16], n;
	int top = l->dd_lits;

	if (l->dd_inl > top)
		top = l->dd_inl;
	if (l->dd_sfi > top)
		top = l->dd_sfi;
	/* the map, the length (a Smi), then the slots up to the last one wanted */
	if (field(pp, code, l->code_deopt, &dd) || !is_heap(pp, dd) ||
	    mem_read(pp->pid, dd - tag, w, (size_t)(2 + top + 1) * 8) || !is_smi(pp, w[1]))
		return -EINVAL;
	n = (uint64_t)smi_value(w[1]);
	if (n <= (uint64_t)top)
		return -EINVAL; /* no inlining data: not optimized code, or another layout */
	d->lits = w[2 + l->dd_lits];
	d->inl = w[2 + l->dd_inl];
	d->root = w[2 + l->dd_sfi];
	if (l->wrapper_sfi >= 0 && field(pp, d->root, l->wrapper_sfi, &d->root))
		return -EINVAL;
	if (!is_heap(pp, d->lits) || !is_heap(pp, d->inl) || !is_heap(pp, d->root) ||
	    field(pp, d->lits, 8, &w[0]) || !is_smi(pp, w[0]) || field(pp, d->inl, 8, &w[1]) ||
	    !is_smi(pp, w[1]) || smi_value(w[0]) < 0 || smi_value(w[1]) < 0)
		return -EINVAL;
	d->nlits = (uint64_t)smi_value(w[0]);
	d->ninl = (uint64_t)smi_value(w[1]) / 16;
	return 0;
}

/*
 * The functions inlined at @off of TurboFan code @c whose own function is @sfi (untagged): their
 * SFIs in @out, innermost last. Count (0: none there), or -EINVAL (unreadable, not this
 * function's code, a chain past V8_MAX_INLINE).
 */
static int inline_read(struct v8 *v, struct v8proc *pp, const struct v8code *c, uint64_t sfi,
		       uint32_t off, uint64_t *out)
{
	uint64_t tag = (uint64_t)VAL(pp, HEAP_OBJECT_TAG), spt, len, pos, chain[V8_MAX_INLINE];
	struct v8deopt d;
	int n = 0, r;

	if (deopt_of(pp, c->code, &d))
		return -EINVAL;
	if (d.root != sfi + tag) {
		v->st.inline_other_root++;
		return -EINVAL;
	}
	if (field(pp, c->code, pp->tf->code_spt, &spt) || !is_heap(pp, spt) ||
	    field(pp, spt, 8, &len) || !is_smi(pp, len) || smi_value(len) < 0 ||
	    (uint64_t)smi_value(len) > V8_SPT_MAX || !v->code_buf ||
	    mem_read(pp->pid, spt - tag + 16, v->code_buf, (size_t)smi_value(len)))
		return -EINVAL;
	r = v8_srcpos_lookup(v->code_buf, (size_t)smi_value(len), off, &pos);
	if (r == -ENOENT)
		return 0;
	if (r)
		return -EINVAL;
	/* from the pc's position out: each inlined function, then the position of its call */
	for (;;) {
		int64_t id = (int64_t)((pos >> 31) & 0xffff) - 1;
		uint64_t rec[2], lit;

		if (id < 0)
			break;
		if (n == V8_MAX_INLINE || (uint64_t)id >= d.ninl ||
		    mem_read(pp->pid, d.inl - tag + 16 + (uint64_t)id * 16, rec, 12))
			return -EINVAL;
		/* the record's int32 index (its last 4 bytes are padding, never written) */
		rec[1] &= 0xffffffffULL;
		if (rec[1] >= d.nlits || field(pp, d.lits, 16 + (int32_t)rec[1] * 8, &lit))
			return -EINVAL;
		if ((lit & 3) == 3)
			lit &= ~2ULL; /* a weak reference: the object itself */
		if (!is_heap(pp, lit))
			return -EINVAL;
		chain[n++] = (lit - tag) & EMBER_V8F_ADDR_MASK;
		pos = rec[0];
	}
	for (int i = 0; i < n; i++)
		out[i] = chain[n - 1 - i];
	return n;
}

/* The inlining stack at @pc in the frame of @sfi (untagged), cached: its SFIs, innermost last,
 * in *@out (pp's cache, valid until the next call). Count, 0 when none. */
static int inline_at(struct v8 *v, struct v8proc *pp, uint64_t sfi, uint64_t pc,
		     const uint64_t **out)
{
	struct v8code *c;
	struct v8inl *e;
	uint64_t now = mono_ns();
	uint32_t off;
	int n;

	if (!pp->tf || !pc || in_text(pp, pc))
		return 0;
	c = code_find(v, pp, pc);
	if (!optimized(pp, c))
		return 0;
	off = (uint32_t)(pc - c->start);
	if (!pp->inl) {
		pp->inl = calloc(V8_INL, sizeof(*pp->inl));
		if (!pp->inl)
			return 0;
		v->st.mem_bytes += V8_INL * sizeof(*pp->inl);
	}
	e = &pp->inl[hash_mix64(c->start ^ ((uint64_t)off << 40) ^ sfi) & (V8_INL - 1)];
	if (e->start != c->start || e->off != off || e->root != sfi ||
	    (now - e->checked >= V8_RECHECK_NS && pp->state != V8S_GONE)) {
		uint64_t got[V8_MAX_INLINE], checked = now;

		/* a range known for up to a second may hold other code now (freed and reused):
		 * its header read again first, and the range searched again when it changed */
		if (pp->state != V8S_GONE && !code_still(pp, c)) {
			c->checked = 0;
			c = code_find(v, pp, pc);
			if (!optimized(pp, c))
				return 0;
			off = (uint32_t)(pc - c->start);
			e = &pp->inl[hash_mix64(c->start ^ ((uint64_t)off << 40) ^ sfi) &
				     (V8_INL - 1)];
		}
		n = inline_read(v, pp, c, sfi, off, got);
		if (n < 0) {
			v->st.inline_unreadable += n == -EINVAL;
			n = 0;
			checked = now - V8_RECHECK_NS + V8_RETRY_NS; /* tried again sooner */
		}
		*e = (struct v8inl){ .start = c->start, .root = sfi, .off = off, .checked = checked,
				     .n = (uint8_t)n };
		for (int i = 0; i < n; i++)
			e->sfi[i] = got[i];
	}
	*out = e->sfi;
	return e->n;
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
	v->code_buf = malloc(V8_SPT_MAX);   /* NULL: no inlined functions */
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
	free(v->code_buf);
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

/* --- the runtime interface (unwind/runtime.h) --------------------------------------------- */

static void rt_sampled(void *rt, uint32_t pid)
{
	v8__sampled(rt, pid);
}

static int rt_frame_names(void *rt, uint32_t pid, uint64_t word, uint64_t ip, bool leaf,
			  uint32_t *ids, size_t max)
{
	return v8__frame_names(rt, pid, word, ip, leaf, ids, max);
}

static int rt_names_carry(void *rt)
{
	return v8__names_carry(rt);
}

static void rt_prune(void *rt)
{
	v8__prune(rt);
}

_Static_assert(V8_MAX_FRAMES <= RUNTIME_MAX_FRAMES, "the ingest's room for a word's frames");

const struct runtime_ops v8_runtime_ops = {
	.name = "v8",
	.words = RUNTIME_WORDS_AFTER,
	.ustack_flag = EMBER_USTACK_V8,
	.max_frames = V8_MAX_FRAMES,
	.sampled = rt_sampled,
	.frame_names = rt_frame_names,
	.names_carry = rt_names_carry,
	.prune = rt_prune,
};
