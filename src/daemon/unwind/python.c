// SPDX-License-Identifier: MIT
/* python: Python frames of CPython processes (include/ember/daemon/unwind/python.h). */
#include "ember/daemon/unwind/python.h"
#include "ember/daemon/unwind/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "ember/core/base/array.h"
#include "ember/core/base/clock.h"
#include "ember/core/base/hash.h"
#include "ember/core/base/readall.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/base/utf8.h"
#include "ember/core/model/frame.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/elf/elfload.h"
#include "ember/daemon/elf/elfsym.h"
#include "ember/daemon/elf/filecache.h"
#include "ember/daemon/proc/procfs.h"
#include "ember/daemon/proc/procmaps.h"
#include "ember/daemon/proc/proctrack.h"

#define CODE_SLOTS_MIN 64
#define LINE_SLOTS     16		   /* per code object: (position -> name) direct-mapped */
#define GONE_KEEP_NS   (10 * NSEC_PER_SEC) /* names kept after exit/exec for samples in flight */
#define PY_MAX_SECTION_BYTES (64ull << 20) /* a symbol table read; CPython's are ~1-3 MB */
#define STR_MAX_CHARS  4096 /* longest name or file read from a process */
#define LINETABLE_MAX  (1u << 20)
#define DETECT_TRIES   20   /* examinations while ld.so has not mapped libc yet */
#define MERGE_MAX      2048 /* frames of a merged stack */
#define UNKNOWN_FRAME  "[unknown]_[py]"
#define REFUSED_FRAME  "[name refused]_[py]"
/* A cached code object is read again (its names) when sampled this long after its last look: a
 * code object freed and another made at its address can carry the same tag (its name and file
 * strings reused at their addresses too, the same first line), and would keep the old names. */
#define RECHECK_NS     (100 * 1000000ULL)

/*
 * --- layouts per version ----------------------------------------------------------------------
 *
 * From each version's headers (offsetof on PyThreadState, _PyInterpreterFrame or PyFrameObject,
 * PyCodeObject, PyASCIIObject, with Py_BUILD_CORE: scripts/py-offsets.c prints them, and
 * tests/integration/test_python.sh checks this table against the headers it finds). Patch
 * releases keep these layouts (3.11.2 and 3.11.7 agree).
 */
struct pyver {
	uint8_t minor;	     /* 3.minor */
	uint8_t kind;	     /* EMBER_PY_* */
	uint8_t entry_value; /* ENTRY_SHIM: FRAME_OWNED_BY_CSTACK */
	uint16_t interp_head, threads_head, tstate_next, tstate_thread_id, tstate_frame;
	uint16_t cframe_frame; /* 0xffff: none */
	uint16_t frame_previous, frame_code, frame_instr, frame_entry;
	uint16_t code_firstlineno, code_filename, code_name, code_linetable;
	uint16_t code_adaptive; /* co_code_adaptive (3.11+): instruction 0 */
	uint8_t str_ascii_size, str_compact_size;
};

static const struct pyver pyvers[] = {
	{ .minor = 10,
	  .kind = EMBER_PY_FRAMEOBJ,
	  .interp_head = 32,
	  .threads_head = 8,
	  .tstate_next = 8,
	  .tstate_thread_id = 176,
	  .tstate_frame = 24,
	  .cframe_frame = 0xffff,
	  .frame_previous = 24,
	  .frame_code = 32,
	  .frame_instr = 96,
	  .frame_entry = 0,
	  .code_firstlineno = 40,
	  .code_filename = 104,
	  .code_name = 112,
	  .code_linetable = 120,
	  .code_adaptive = 0,
	  .str_ascii_size = 48,
	  .str_compact_size = 72 },
	{ .minor = 11,
	  .kind = EMBER_PY_ENTRY_FLAG,
	  .interp_head = 40,
	  .threads_head = 16,
	  .tstate_next = 8,
	  .tstate_thread_id = 152,
	  .tstate_frame = 56,
	  .cframe_frame = 8,
	  .frame_previous = 48,
	  .frame_code = 32,
	  .frame_instr = 56,
	  .frame_entry = 68,
	  .code_firstlineno = 72,
	  .code_filename = 112,
	  .code_name = 128,
	  .code_linetable = 136,
	  .code_adaptive = 184,
	  .str_ascii_size = 48,
	  .str_compact_size = 72 },
	{ .minor = 12,
	  .kind = EMBER_PY_ENTRY_SHIM,
	  .entry_value = 3,
	  .interp_head = 40,
	  .threads_head = 72,
	  .tstate_next = 8,
	  .tstate_thread_id = 136,
	  .tstate_frame = 56,
	  .cframe_frame = 0,
	  .frame_previous = 8,
	  .frame_code = 0,
	  .frame_instr = 56,
	  .frame_entry = 70,
	  .code_firstlineno = 68,
	  .code_filename = 112,
	  .code_name = 128,
	  .code_linetable = 136,
	  .code_adaptive = 192,
	  .str_ascii_size = 40,
	  .str_compact_size = 56 },
	{ .minor = 13,
	  .kind = EMBER_PY_ENTRY_SHIM,
	  .entry_value = 3,
	  .interp_head = 632,
	  .threads_head = 7344,
	  .tstate_next = 8,
	  .tstate_thread_id = 152,
	  .tstate_frame = 72,
	  .cframe_frame = 0xffff,
	  .frame_previous = 8,
	  .frame_code = 0,
	  .frame_instr = 56,
	  .frame_entry = 70,
	  .code_firstlineno = 68,
	  .code_filename = 112,
	  .code_name = 128,
	  .code_linetable = 136,
	  .code_adaptive = 200,
	  .str_ascii_size = 40,
	  .str_compact_size = 56 },
};

/* The start of 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h), at &_PyRuntime. */
struct py_debug_offsets_313 {
	char cookie[8];
	uint64_t version, free_threaded;
	uint64_t runtime_size, runtime_finalizing, runtime_interpreters_head;
	uint64_t interp_size, interp_id, interp_next, interp_threads_head, interp_rest[9];
	uint64_t tstate_size, tstate_prev, tstate_next, tstate_interp, tstate_current_frame,
	    tstate_thread_id, tstate_native_thread_id, tstate_datastack_chunk, tstate_status;
	uint64_t frame_size, frame_previous, frame_executable, frame_instr_ptr, frame_localsplus,
	    frame_owner;
	uint64_t code_size, code_filename, code_name, code_qualname, code_linetable,
	    code_firstlineno, code_argcount, code_localsplusnames, code_localspluskinds,
	    code_co_code_adaptive;
	uint64_t pyobject[2], type_object[4], tuple_object[3], list_object[3], dict_object[3],
	    float_object[2], long_object[3], bytes_object[3];
	uint64_t unicode_size, unicode_state, unicode_length, unicode_asciiobject_size;
};

/* --- state ------------------------------------------------------------------------------- */

struct pyline {
	uint32_t pos;
	int32_t id; /* -1: empty */
};

struct pycode {
	struct pycode *next; /* hash chain */
	uint64_t addr;
	uint32_t tag;
	int32_t firstlineno;
	int32_t id;	       /* "qualname (file)_[py]" */
	uint64_t ident;	       /* hash of the names and first line: who it is */
	uint64_t checked_ns;   /* the names read (or received) last at (CLOCK_MONOTONIC) */
	size_t bytes;	       /* charged to the process's share of max_code_bytes */
	char *qualname, *file; /* with lines: for the "file:line" names */
	uint8_t *linetable;    /* with lines: co_linetable's bytes once read */
	uint32_t linetable_len;
	bool linetable_tried;
	struct pyline lines[LINE_SLOTS];
};

enum pystate {
	PYS_NEW = 0,
	PYS_RETRY,	 /* examined while ld.so was at work: again at its next sample */
	PYS_OTHER_EXE,	 /* not named python*: examined if a stack shows the eval loop */
	PYS_NOT,	 /* not a CPython (or gone before it could be read) */
	PYS_ON,		 /* in the sampler's map */
	PYS_UNSUPPORTED, /* a CPython ember does not know */
};

/* A process image's state: the process tracker's extension (proc/proctrack.h), current until
 * the image's exec or exit, then kept GONE_KEEP_NS for its samples in flight. */
struct pyproc {
	uint32_t pid;
	enum pystate state;
	bool ended;		/* its image ended (exec, exit): uncounted, off the sampler's map */
	unsigned int tries;	/* examinations */
	const struct pyver *v;
	struct ember_py_proc bpf;
	uint16_t code_linetable, code_adaptive;
	struct pycode **codes; /* hash of (address, tag) */
	size_t codes_cap, nr_codes;
	size_t code_bytes; /* the codes' bytes (struct pycode.bytes) */
	bool code_full;	   /* a code object refused: the next ones are, unread, until bytes are
			      given back */
};

struct python {
	struct python_opts o;
	char proc_root[256];
	struct sampler *sampler;
	struct strtab *names;
	int ext; /* the process tracker's extension holding the struct pyprocs */
	int32_t eval_id, eval_cold_id, unknown_id, refused_id;
	int64_t fsbase_off; /* -1: not looked up yet; -2: failed */
	struct proc_tracker *tracker;	  /* the mappings (proc/proctrack.h) */
	struct proc_tracker *own_tracker; /* ... when the caller gave none */
	struct filecache *files;	  /* CPython facts per file (elf/filecache.h) */
	struct filecache *own_files;	  /* ... when the caller gave none */
	struct sbuf name; /* scratch: a frame name */
	uint32_t out[MERGE_MAX];
	struct python_stats st;
};

/* --- helpers ------------------------------------------------------------------------------ */

/* Reads @len bytes at @addr of process @pid: 0, or -errno (-EFAULT when short). */
static int mem_read(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n;

	if (!len)
		return 0;
	n = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static uint64_t ld64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static int32_t ld32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Appends @cp as UTF-8. */
static void put_utf8(struct sbuf *sb, uint32_t cp)
{
	char b[4];

	if (cp < 0x80) {
		sbuf_addc(sb, (char)cp);
		return;
	}
	if (cp > 0x10ffff)
		cp = 0xfffd; /* no code point: nonsense read from the process */
	if (cp >= 0xd800 && cp < 0xe000) {
		/* a lone surrogate is no UTF-8: its bytes as the one rule writes bytes outside
		 * valid UTF-8 (utf8.h), as they would be read from a file */
		char esc[4];

		utf8_escape_byte(esc, (unsigned char)(0xe0 | cp >> 12));
		sbuf_add(sb, esc, 4);
		utf8_escape_byte(esc, (unsigned char)(0x80 | ((cp >> 6) & 0x3f)));
		sbuf_add(sb, esc, 4);
		utf8_escape_byte(esc, (unsigned char)(0x80 | (cp & 0x3f)));
		sbuf_add(sb, esc, 4);
		return;
	}
	if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		sbuf_add(sb, b, 2);
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		sbuf_add(sb, b, 3);
	} else {
		b[0] = (char)(0xf0 | cp >> 18);
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		sbuf_add(sb, b, 4);
	}
}

/* Appends a PyUnicode's data (@n bytes of @kind, ASCII or not) as UTF-8, tidied for folded
 * frames (';' -> ':', control characters -> "\xNN" as sbuf_add_frame() writes them). */
static void put_str(struct sbuf *sb, const uint8_t *data, size_t n, unsigned int kind)
{
	size_t i;

	for (i = 0; i + kind <= n; i += kind) {
		uint32_t cp = kind == 1	  ? data[i]
			      : kind == 2 ? (uint32_t)(data[i] | data[i + 1] << 8)
					  : (uint32_t)ld32(data + i);

		if (cp == ';') {
			cp = ':';
		} else if (cp < 0x20 || cp == 0x7f) { /* as sbuf_add_frame() writes them */
			sbuf_addf(sb, "\\x%02x", cp);
			continue;
		}
		put_utf8(sb, cp);
	}
}

/* Reads the PyUnicode object at @str of @pid into @sb (UTF-8, tidied). 0 or -errno. */
static int read_str(const struct pyproc *pp, uint64_t str, struct sbuf *sb)
{
	uint8_t hdr[96], *data;
	uint64_t len, at;
	uint32_t state, kind;
	int err;

	if (!str || pp->bpf.str_compact_size > sizeof(hdr) - 8)
		return -EINVAL;
	err = mem_read(pp->pid, str, hdr, pp->bpf.str_state + 4);
	if (err)
		return err;
	len = ld64(hdr + pp->bpf.str_length);
	state = (uint32_t)ld32(hdr + pp->bpf.str_state);
	kind = (state >> 2) & 7;
	if (!(state & (1u << 5)) || (kind != 1 && kind != 2 && kind != 4))
		return -EINVAL; /* not compact: no code object name is */
	if (len > STR_MAX_CHARS)
		len = STR_MAX_CHARS;
	at = str + ((state & (1u << 6)) ? pp->bpf.str_ascii_size : pp->bpf.str_compact_size);
	data = malloc(len * kind + 1);
	if (!data)
		return -ENOMEM;
	err = mem_read(pp->pid, at, data, len * kind);
	if (!err)
		put_str(sb, data, len * kind, kind);
	free(data);
	return err;
}

/* --- processes ---------------------------------------------------------------------------- */

/* @pid's state for the image it runs now; NULL: none. */
static struct pyproc *proc_cur(struct python *py, uint32_t pid)
{
	return proc_tracker__ext(py->tracker, py->ext, pid, false);
}

/* ... else that of its newest ended image (names for its samples in flight). */
static struct pyproc *proc_last(struct python *py, uint32_t pid)
{
	return proc_tracker__ext_last(py->tracker, py->ext, pid);
}

/* code_add()'s answer when the process's share (or the whole) of max_code_bytes is taken */
static struct pycode refused_code;
#define REFUSED (&refused_code)

static void code_free(struct pycode *c)
{
	free(c->qualname);
	free(c->file);
	free(c->linetable);
	free(c);
}

static void codes_clear(struct python *py, struct pyproc *pp)
{
	size_t i;

	for (i = 0; i < pp->codes_cap; i++) {
		struct pycode *c = pp->codes[i], *next;

		for (; c; c = next) {
			next = c->next;
			code_free(c);
		}
		pp->codes[i] = NULL;
	}
	py->st.codes -= pp->nr_codes;
	py->st.code_bytes -= pp->code_bytes;
	pp->nr_codes = 0;
	pp->code_bytes = 0;
	pp->code_full = false;
}

/* Whether @n more bytes fit in @pp's share of max_code_bytes (half) and in the whole. */
static bool code_fits(const struct python *py, const struct pyproc *pp, size_t n)
{
	return pp->code_bytes + n <= py->o.max_code_bytes / 2 &&
	       py->st.code_bytes + n <= py->o.max_code_bytes;
}

/* Whether a new code object of @pp is refused before it is read (its bytes unknown yet). */
static bool code_refused(const struct python *py, const struct pyproc *pp)
{
	return pp->code_full || !code_fits(py, pp, sizeof(struct pycode));
}

static void code_charge(struct python *py, struct pyproc *pp, struct pycode *c, size_t n)
{
	c->bytes += n;
	pp->code_bytes += n;
	py->st.code_bytes += n;
}

/* The extension's ops.ended: @pid's image exec'd or exited (the tracker's events, or its sweep
 * for an exit never told): off the sampler's map and uncounted; its names stay for its samples
 * in flight. */
static void proc_ended(void *ctx, uint32_t pid, void *state, uint64_t event_ns)
{
	struct python *py = ctx;
	struct pyproc *pp = state;

	(void)event_ns; /* whatever the time */
	if (pp->state == PYS_ON) {
		(void)sampler__python_del_proc(py->sampler, pid);
		py->st.procs--;
	} else if (pp->state == PYS_UNSUPPORTED) {
		py->st.procs_unsupported--;
	}
	pp->ended = true;
}

/* ... ops.release: what the state holds (the tracker frees the state). */
static void proc_release(void *ctx, uint32_t pid, void *state)
{
	struct python *py = ctx;
	struct pyproc *pp = state;

	(void)pid;
	if (!pp->ended && pp->state == PYS_ON) /* ended ones were uncounted then */
		py->st.procs--;
	else if (!pp->ended && pp->state == PYS_UNSUPPORTED)
		py->st.procs_unsupported--;
	codes_clear(py, pp);
	free(pp->codes);
	pp->codes = NULL;
}

static void set_state(struct python *py, struct pyproc *pp, enum pystate s)
{
	if (pp->state == PYS_ON)
		py->st.procs--;
	else if (pp->state == PYS_UNSUPPORTED)
		py->st.procs_unsupported--;
	pp->state = s;
	if (s == PYS_ON)
		py->st.procs++;
	else if (s == PYS_UNSUPPORTED)
		py->st.procs_unsupported++;
}

/* --- the kernel's fs base offset ---------------------------------------------------------- */

/* The byte offset of member @name in struct/union type @id (through typedefs), its type in
 * *@ret_type; -1 when none. */
static long member_offset(const struct btf *b, uint32_t id, const char *name, uint32_t *ret_type)
{
	const struct btf_type *t = btf__type_by_id(
	    b, btf__resolve_type(b, id) >= 0 ? (uint32_t)btf__resolve_type(b, id) : id);
	const struct btf_member *m;
	int i;

	if (!t || !(btf_is_struct(t) || btf_is_union(t)))
		return -1;
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(b, m->name_off);

		if (n && !strcmp(n, name)) {
			*ret_type = m->type;
			return (long)(btf_member_bit_offset(t, (uint32_t)i) / 8);
		}
	}
	return -1;
}

/*
 * task_struct.thread.fsbase, from the kernel's BTF: read once, at the first CPython process
 * (~55 ms of CPU and a ~10 MB peak, which a host without Python never pays; CO-RE in the BPF
 * program would pay it at every start).
 */
static int64_t fsbase_offset(struct python *py)
{
	uint64_t t0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	struct btf *b;
	uint32_t type;
	long th, fs;
	int id;

	if (py->fsbase_off != -1)
		return py->fsbase_off;
	py->fsbase_off = -2;
	/* the daemon's sampler read it with its other offsets: no second parse */
	if (sampler__task_fsbase_off(py->sampler) >= 0) {
		py->fsbase_off = sampler__task_fsbase_off(py->sampler);
		py->st.fsbase_off = py->fsbase_off;
		return py->fsbase_off;
	}
	b = btf__load_vmlinux_btf();
	if (!b)
		return py->fsbase_off;
	id = btf__find_by_name_kind(b, "task_struct", BTF_KIND_STRUCT);
	if (id > 0) {
		th = member_offset(b, (uint32_t)id, "thread", &type);
		fs = th >= 0 ? member_offset(b, type, "fsbase", &type) : -1;
		if (th >= 0 && fs >= 0 && th + fs < 0xffffffffL)
			py->fsbase_off = th + fs;
	}
	btf__free(b);
	py->st.fsbase_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - t0;
	return py->fsbase_off;
}

/* --- detection ------------------------------------------------------------------------------ */

struct candidate {
	uint64_t start, pgoff, end, inode;
	uint32_t dev_major, dev_minor;
	char path[512];
	bool lib; /* libpython*.so */
	bool deleted;
	bool x; /* the mapping is executable */
	const struct procmaps_entry *e; /* in the snapshot scanned (its identity) */
};

struct scan {
	struct candidate c[4];
	size_t n;
	bool libc; /* libc is mapped: ld.so has mapped the libraries */
};

static bool name_is_python(const char *b, size_t len, bool *ret_lib)
{
	*ret_lib = len >= 9 && !memcmp(b, "libpython", 9);
	return *ret_lib || (len >= 6 && !memcmp(b, "python", 6));
}

static int on_map(const struct procmaps_entry *e, void *ctx)
{
	struct scan *sc = ctx;
	const char *base;
	size_t blen, i;
	bool lib;

	if (e->kind != PROCMAPS_FILE || !e->path_len || e->path_len >= sizeof(sc->c[0].path))
		return 0;
	base = procmaps_basename(e, &blen);
	if (blen >= 5 && (!memcmp(base, "libc.", 5) || !memcmp(base, "libc-", 5)))
		sc->libc = true;
	if (!name_is_python(base, blen, &lib))
		return 0;
	for (i = 0; i < sc->n; i++)
		if (sc->c[i].inode == e->inode)
			return 0; /* its first mapping is enough */
	if (sc->n == sizeof(sc->c) / sizeof(sc->c[0]))
		return 0;
	sc->c[sc->n] = (struct candidate){ .start = e->start,
					   .end = e->end,
					   .pgoff = e->pgoff,
					   .inode = e->inode,
					   .dev_major = e->dev_major,
					   .dev_minor = e->dev_minor,
					   .lib = lib,
					   .deleted = e->deleted,
					   .x = e->x,
					   .e = e };
	memcpy(sc->c[sc->n].path, e->path, e->path_len);
	sc->c[sc->n].path[e->path_len] = '\0';
	sc->n++;
	return 0;
}


/* What a file's symbols say about the interpreter in it. */
struct elfinfo {
	uint64_t bias; /* runtime address - ELF virtual address */
	uint64_t runtime, py_version, code_type;
	bool has_runtime, has_version, has_code_type, has_is_none;
};

/* What mapfile.h needs to reach the candidate's file in process @pid. */
static struct mapfile_want candidate_want(uint32_t pid, const struct candidate *c)
{
	return (struct mapfile_want){ .pid = pid, .start = c->start, .end = c->end,
				      .path = c->path, .path_len = strlen(c->path),
				      .deleted = c->deleted, .dev_major = c->dev_major,
				      .dev_minor = c->dev_minor, .ino = c->inode };
}

/*
 * What one file says, whichever process maps it where (kept in the file cache, elf/filecache.h:
 * read once per file, not per process): its symbols (elfinfo without the bias) and its load
 * segments, from which each mapping's bias follows. Plain data.
 */
struct py_file_facts {
	struct elfinfo ei; /* bias 0 */
	struct elfload load;
	int err;	   /* 0, or -ENOEXEC: not ELF */
};

/*
 * @fd's symbols and load segments into @f: from the symbolizer's image of the file (read once
 * for both: elfsym.h's runtime symbols), or read here without one (tests).
 */
static void read_facts(struct python *py, int fd, const char *path, struct py_file_facts *f)
{
	struct elfsym_opts fallback = { .max_section_bytes = PY_MAX_SECTION_BYTES };
	struct elfsym_rtsym r;
	struct elfsym *es;

	memset(f, 0, sizeof(*f));
	es = elfsym_source_get(&py->o.images, fd, path, &fallback);
	if (!es) {
		f->err = errno == ENOEXEC ? -ENOEXEC : -(errno ? errno : EIO);
		return;
	}
	f->load = *elfsym__load(es);
	if (elfsym__rt_find(es, "_PyRuntime", &r) && r.object) {
		f->ei.runtime = r.value;
		f->ei.has_runtime = true;
	}
	if (elfsym__rt_find(es, "Py_Version", &r) && r.object) {
		f->ei.py_version = r.value;
		f->ei.has_version = true;
	}
	if (elfsym__rt_find(es, "PyCode_Type", &r) && r.object) {
		f->ei.code_type = r.value;
		f->ei.has_code_type = true;
	}
	f->ei.has_is_none = elfsym__rt_find(es, "Py_IsNone", &r) && !r.object;
	elfsym__free(es);
}

/*
 * The symbols of candidate @c's file and the bias of its mapping, into @ei: from the file cache
 * when this very file (device, inode, size and mtime, as the tracker's check of the mapping in
 * snapshot @m says: once per snapshot, shared with the other readers) was read before, else
 * read now through mapfile.h and kept under the open file's own identity. 0 or -errno
 * (-ENOEXEC: not ELF, or no segment holds the mapping).
 */
static int candidate_info(struct python *py, struct proc_maps *m, uint32_t pid,
			  const struct candidate *c, struct elfinfo *ei)
{
	struct mapfile_want w = candidate_want(pid, c);
	struct elfload_map em = { .start = c->start, .end = c->end, .pgoff = c->pgoff, .x = c->x };
	const struct py_file_facts *known = NULL;
	struct py_file_facts f;
	struct filecache_id id;
	struct stat st;
	int fd;

	if (proc_tracker__identity(py->tracker, m, c->e, pid, &st) == 0) {
		filecache_id_of(&st, &id);
		known = filecache__get(py->files, &id, FILECACHE_CPYTHON);
	}
	if (!known) {
		fd = mapfile_open(py->proc_root, &w, &py->st.files, &st);
		if (fd < 0)
			return fd;
		read_facts(py, fd, c->path, &f);
		close(fd);
		filecache_id_of(&st, &id); /* the file read, checked again by the open */
		if (!f.err || f.err == -ENOEXEC) /* what the file says, not a failure of the moment */
			(void)filecache__put(py->files, &id, FILECACHE_CPYTHON, &f, sizeof(f));
		known = &f;
	}
	*ei = known->ei;
	if (known->err)
		return known->err;
	return elfload_bias(&known->load, &em, &ei->bias) ? -ENOEXEC : 0;
}

/* "python3.10", "libpython3.10.so.1.0": 3 and 10; false when the name says no version. */
static bool version_of_name(const char *path, unsigned int *ret_major, unsigned int *ret_minor)
{
	const char *b = strrchr(path, '/'), *p;
	char *end;

	b = b ? b + 1 : path;
	p = strstr(b, "python");
	if (!p)
		return false;
	p += 6;
	if (*p < '0' || *p > '9')
		return false;
	*ret_major = (unsigned int)strtoul(p, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return false;
	*ret_minor = (unsigned int)strtoul(end + 1, NULL, 10);
	return true;
}

static const struct pyver *pyver_of(unsigned int major, unsigned int minor)
{
	size_t i;

	for (i = 0; major == 3 && i < sizeof(pyvers) / sizeof(pyvers[0]); i++)
		if (pyvers[i].minor == minor)
			return &pyvers[i];
	return NULL;
}

/* Fills the BPF entry from a version's layout; false when an offset does not fit the BPF
 * program's buffers. */
static bool fill_bpf(struct pyproc *pp, const struct pyver *v, const struct elfinfo *ei,
		     int64_t fsbase_off)
{
	struct ember_py_proc *b = &pp->bpf;
	uint32_t fsz, csz;

	*b = (struct ember_py_proc){
		.runtime = ei->bias + ei->runtime,
		.code_type = ei->bias + ei->code_type,
		.fsbase_off = (uint32_t)fsbase_off,
		.kind = v->kind,
		.entry_value = v->entry_value,
		.instr_ptr = v->kind != EMBER_PY_FRAMEOBJ,
		.interp_head = v->interp_head,
		.threads_head = v->threads_head,
		.tstate_next = v->tstate_next,
		.tstate_thread_id = v->tstate_thread_id,
		.tstate_frame = v->tstate_frame,
		.cframe_frame = v->cframe_frame,
		.frame_previous = v->frame_previous,
		.frame_code = v->frame_code,
		.frame_instr = v->frame_instr,
		.frame_entry = v->frame_entry,
		.code_firstlineno = v->code_firstlineno,
		.code_filename = v->code_filename,
		.code_name = v->code_name,
		.str_length = 16,
		.str_state = 32,
		.str_ascii_size = v->str_ascii_size,
		.str_compact_size = v->str_compact_size,
	};
	/* what the program reads of a frame and a code object: the fields above, whole */
	fsz = v->frame_previous + 8;
	fsz = fsz > v->frame_code + 8u ? fsz : v->frame_code + 8u;
	fsz = fsz > v->frame_instr + 8u ? fsz : v->frame_instr + 8u;
	fsz = fsz > v->frame_entry + 1u ? fsz : v->frame_entry + 1u;
	csz = v->code_firstlineno + 4;
	csz = csz > v->code_filename + 8u ? csz : v->code_filename + 8u;
	csz = csz > v->code_name + 8u ? csz : v->code_name + 8u;
	if (v->kind == EMBER_PY_FRAMEOBJ && v->frame_instr + 8u == fsz)
		fsz -= 4; /* f_lasti is an int */
	b->frame_size = (uint16_t)fsz;
	b->code_size = (uint16_t)csz;
	pp->code_linetable = v->code_linetable;
	pp->code_adaptive = v->code_adaptive;
	/* the program masks frame offsets to 127 and code offsets to 255 (python.bpf.h) */
	return fsz <= 128 && csz <= 192 && v->frame_previous < 121 && v->frame_code < 121 &&
	       v->frame_instr < 121 && v->frame_entry < 128 && v->code_filename < 249 &&
	       v->code_name < 249 && v->code_firstlineno < 253 && v->code_linetable < 4096;
}

/* 3.13: the offsets the interpreter states (_Py_DebugOffsets at &_PyRuntime) over the table's.
 * false: not the layout this program reads (cookie, version, free-threaded, sizes). */
static bool debug_offsets_313(struct pyproc *pp, uint64_t runtime, uint32_t version_hex,
			      struct pyver *v)
{
	struct py_debug_offsets_313 d;

	if (mem_read(pp->pid, runtime, &d, sizeof(d)) || memcmp(d.cookie, "xdebugpy", 8) ||
	    (d.version >> 16) != (version_hex >> 16) || d.free_threaded)
		return false;
#define TAKE(field, value)                                                                         \
	do {                                                                                       \
		if ((value) > 0xfffe)                                                              \
			return false;                                                              \
		v->field = (uint16_t)(value);                                                      \
	} while (0)
	TAKE(interp_head, d.runtime_interpreters_head);
	TAKE(threads_head, d.interp_threads_head);
	TAKE(tstate_next, d.tstate_next);
	TAKE(tstate_thread_id, d.tstate_thread_id);
	TAKE(tstate_frame, d.tstate_current_frame);
	TAKE(frame_previous, d.frame_previous);
	TAKE(frame_code, d.frame_executable);
	TAKE(frame_instr, d.frame_instr_ptr);
	TAKE(frame_entry, d.frame_owner);
	TAKE(code_firstlineno, d.code_firstlineno);
	TAKE(code_filename, d.code_filename);
	TAKE(code_name, d.code_qualname);
	TAKE(code_linetable, d.code_linetable);
	TAKE(code_adaptive, d.code_co_code_adaptive);
#undef TAKE
	if (d.unicode_length != 16 || d.unicode_state != 32 || d.unicode_asciiobject_size > 200)
		return false;
	v->str_ascii_size = (uint8_t)d.unicode_asciiobject_size;
	v->str_compact_size = (uint8_t)(d.unicode_asciiobject_size + 16); /* + utf8_length, utf8 */
	return true;
}

static void detect_one(struct python *py, struct pyproc *pp);

/* Examines @pp's mappings and interpreter file: PYS_ON, PYS_UNSUPPORTED, PYS_NOT or PYS_RETRY
 * (timed: detect_ns). */
static void detect(struct python *py, struct pyproc *pp)
{

	uint64_t t0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);

	detect_one(py, pp);
	py->st.detect_ns += clock_ns(CLOCK_PROCESS_CPUTIME_ID) - t0;
}

static void detect_one(struct python *py, struct pyproc *pp)
{
	struct scan sc = { .n = 0 };
	struct elfinfo ei = { 0 };
	const struct candidate *c = NULL;
	unsigned int major = 0, minor = 0;
	uint32_t version_hex = 0;
	struct pyver v;
	const struct pyver *pv;
	int64_t fsoff;
	struct proc_maps *m;
	size_t i, pass;

	py->st.detections++;
	pp->tries++;
	/* the process tracker's read of this event, shared with the symbolizer and unwinder; of
	 * the image it runs now (not the shell's it was forked from) */
	m = proc_tracker__image_maps(py->tracker, pp->pid);
	if (!m) {
		py->st.detect_errors++;
		set_state(py, pp, PYS_NOT);
		return;
	}
	(void)proc_maps__for_each(m, on_map, &sc);
	/* libpython first: an executable named python may only link it */
	for (pass = 0; pass < 2 && !c; pass++) {
		for (i = 0; i < sc.n && !c; i++) {
			if (sc.c[i].lib != !pass)
				continue;
			if (!candidate_info(py, m, pp->pid, &sc.c[i], &ei) && ei.has_runtime &&
			    ei.has_code_type)
				c = &sc.c[i];
		}
	}
	proc_maps__put(m); /* the candidates point into it (c->e) */
	if (!c && !sc.libc && pp->tries < DETECT_TRIES) {
		/* caught right after exec: libpython may not be mapped yet; at its next sample */
		set_state(py, pp, PYS_RETRY);
		sampler__renote_pid(py->sampler, pp->pid);
		return;
	}
	if (!c) {
		/* Python 2 and 3.6 have no _PyRuntime: CPython, but not one we read */
		set_state(py, pp, sc.n ? PYS_UNSUPPORTED : PYS_NOT);
		return;
	}
	if (ei.has_version) {
		if (mem_read(pp->pid, ei.bias + ei.py_version, &version_hex, sizeof(version_hex))) {
			py->st.detect_errors++;
			set_state(py, pp, PYS_NOT);
			return;
		}
		major = version_hex >> 24;
		minor = (version_hex >> 16) & 0xff;
	} else if (!version_of_name(c->path, &major, &minor) || major != 3 || minor != 10 ||
		   !ei.has_is_none) {
		/* before 3.11 only the file name says the version: 3.10 is taken when Py_IsNone,
		 * new in 3.10, confirms it; 3.7-3.9 are not supported */
		set_state(py, pp, PYS_UNSUPPORTED);
		return;
	}
	pv = pyver_of(major, minor);
	if (!pv) {
		set_state(py, pp, PYS_UNSUPPORTED);
		return;
	}
	v = *pv;
	if (minor == 13 && !debug_offsets_313(pp, ei.bias + ei.runtime, version_hex, &v)) {
		set_state(py, pp, PYS_UNSUPPORTED);
		return;
	}
	fsoff = fsbase_offset(py);
	if (fsoff < 0 || !fill_bpf(pp, &v, &ei, fsoff)) {
		set_state(py, pp, PYS_UNSUPPORTED);
		return;
	}
	pp->v = pv;
	if (sampler__python_set_proc(py->sampler, pp->pid, &pp->bpf)) {
		py->st.procs_dropped++;
		set_state(py, pp, PYS_NOT);
		return;
	}
	set_state(py, pp, PYS_ON);
}

/* Is the process's executable named python*? (one readlink) */
static int exe_is_python(struct python *py, uint32_t pid)
{
	char link[1024];
	const char *b;
	ssize_t n;
	bool lib;

	if (proc_tracker__gone(py->tracker, pid))
		return -ESRCH; /* its exit was told: no readlink */
	/* from the mappings the symbolizer's look had read and the executable's stat it made
	 * (a readlink of /proc/PID/exe was 7 % of emberd's CPU beside a /bin/true loop) */
	n = proc_tracker__exe_path(py->tracker, pid, link, sizeof(link));
	if (n == -ENOENT || n == -ENAMETOOLONG)
		n = procfs_exe_path(py->proc_root, pid, link, sizeof(link));
	if (n < 0)
		return (int)n;
	b = strrchr(link, '/');
	b = b ? b + 1 : link;
	return name_is_python(b, strlen(b), &lib);
}

void python__note_pid(struct python *py, uint32_t pid)
{
	struct pyproc *pp = proc_cur(py, pid);
	int r;

	if (pp && pp->state == PYS_RETRY) {
		detect(py, pp);
		return;
	}
	if (pp)
		return; /* known, alive */
	r = exe_is_python(py, pid);
	if (r < 0)
		return; /* gone: what it left stays for its samples in flight */
	if (proc_tracker__ext_count(py->tracker, py->ext) >= py->o.max_procs) {
		py->st.procs_dropped++;
		return;
	}
	/* a new process, or a new image (its previous one's state ended at the exec: its names
	 * stay for the samples taken before) */
	pp = proc_tracker__ext(py->tracker, py->ext, pid, true);
	if (!pp)
		return;
	pp->pid = pid;
	if (r)
		detect(py, pp);
	else
		set_state(py, pp, PYS_OTHER_EXE);
}

void python__forget_pid(struct python *py, uint32_t pid, uint64_t time_ns)
{
	/* (emberd's tracker has ended it already at the event: nothing then) */
	proc_tracker__ext_end(py->tracker, py->ext, pid, time_ns);
}

void python__prune(struct python *py)
{
	/* the tracker sweeps the states of processes gone without an exit told (emberd's at its
	 * own period; a tracker of the reader's own here) */
	if (py->own_tracker)
		(void)proc_tracker__sweep(py->own_tracker);
	proc_tracker__ext_prune(py->tracker, py->ext);
}

/* The id @id (>= 0) of the old names, interned again: the new id; < 0 ids stay (none). */
static int carry_id(struct python *py, int32_t *id, int32_t fallback)
{
	int r;

	if (*id < 0)
		return 0;
	r = strtab__carry(py->names, (uint32_t)*id);
	*id = r >= 0 ? r : fallback;
	return r < 0 ? r : 0;
}

static int carry_proc(struct python *py, struct pyproc *pp)
{
	struct pycode *c;
	size_t i, k;
	int err = 0;

	for (i = 0; i < pp->codes_cap; i++)
		for (c = pp->codes[i]; c; c = c->next) {
			/* a name that could not be carried: unknown until read again */
			if (carry_id(py, &c->id, py->unknown_id))
				err = -ENOMEM, c->checked_ns = 0;
			for (k = 0; k < LINE_SLOTS; k++)
				if (carry_id(py, &c->lines[k].id, -1))
					err = -ENOMEM;
		}
	return err;
}

struct carry_walk {
	struct python *py;
	int err;
};

static void carry_each(void *arg, uint32_t pid, void *state, bool ended)
{
	struct carry_walk *w = arg;

	(void)pid;
	(void)ended;
	if (carry_proc(w->py, state))
		w->err = -ENOMEM;
}

int python__names_carry(struct python *py)
{
	struct carry_walk w = { .py = py };

	/* the fixed names first: the fallback of the others */
	if (carry_id(py, &py->unknown_id, -1) || carry_id(py, &py->eval_id, -1) ||
	    carry_id(py, &py->eval_cold_id, -1) || carry_id(py, &py->refused_id, -1))
		return -ENOMEM;
	proc_tracker__ext_each(py->tracker, py->ext, carry_each, &w);
	return w.err;
}

/* --- code objects --------------------------------------------------------------------------- */

static size_t code_slot(const struct pyproc *pp, uint64_t addr, uint32_t tag)
{
	return hash_mix64(addr ^ (uint64_t)tag << 44) & (pp->codes_cap - 1);
}

static struct pycode *code_find(const struct pyproc *pp, uint64_t addr, uint32_t tag)
{
	struct pycode *c;

	if (!pp->codes_cap)
		return NULL;
	for (c = pp->codes[code_slot(pp, addr, tag)]; c; c = c->next)
		if (c->addr == addr && c->tag == tag)
			return c;
	return NULL;
}

/* Makes room for one more code object of @pp: its table grown, or emptied when max_codes are
 * held (then the process's code objects are read again as they come). 0 or -ENOMEM. */
static int code_room(struct python *py, struct pyproc *pp)
{
	struct pycode **nt;
	size_t ncap, i;

	if (py->st.codes >= py->o.max_codes) {
		codes_clear(py, pp);
		py->st.code_evictions++;
	}
	if (pp->nr_codes < pp->codes_cap)
		return 0;
	ncap = pp->codes_cap ? 2 * pp->codes_cap : CODE_SLOTS_MIN;
	nt = calloc(ncap, sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	for (i = 0; i < pp->codes_cap; i++) {
		struct pycode *c = pp->codes[i], *next;

		for (; c; c = next) {
			size_t s = hash_mix64(c->addr ^ (uint64_t)c->tag << 44) & (ncap - 1);

			next = c->next;
			c->next = nt[s];
			nt[s] = c;
		}
	}
	free(pp->codes);
	pp->codes = nt;
	pp->codes_cap = ncap;
	return 0;
}

/* "qualname (file)_[py]" into py->name, by the one frame formatter (frame.h); @line > 0 adds
 * ":line", 0 ":?". 0 or -ENOMEM. */
static int format_name(struct python *py, const char *qual, size_t qlen, const char *file,
		       size_t flen, int line, bool with_line)
{
	struct frame f = { .kind = FRAME_PYTHON, .form = FRAME_SYMBOL, .name = qual,
			   .name_len = qlen, .file = file, .file_len = flen,
			   .line = !with_line ? 0 : line > 0 ? line : FRAME_LINE_UNKNOWN };
	struct sbuf *sb = &py->name;

	sbuf_reset(sb);
	frame_format(sb, &f);
	return sbuf_error(sb) ? -ENOMEM : 0;
}

static uint64_t code_ident(const char *qual, size_t qlen, const char *file, size_t flen,
			   int32_t firstlineno)
{
	return hash_bytes(qual, qlen, hash_bytes(file, flen, (uint32_t)firstlineno));
}

/* Unlinks and frees code object @c of @pp, its bytes given back. */
static void code_drop(struct python *py, struct pyproc *pp, struct pycode *c)
{
	struct pycode **pc = &pp->codes[code_slot(pp, c->addr, c->tag)];

	while (*pc && *pc != c)
		pc = &(*pc)->next;
	if (*pc)
		*pc = c->next;
	pp->nr_codes--;
	py->st.codes--;
	pp->code_bytes -= c->bytes;
	py->st.code_bytes -= c->bytes;
	pp->code_full = false;
	code_free(c);
}

/* Interns py->name, charged to @pp's share of the names' table (proc/proctrack.h). */
static int intern_owned(struct python *py, const struct pyproc *pp)
{
	return proc_tracker__intern_name(py->tracker, pp->pid, py->names, py->name.buf,
					 py->name.len);
}

/*
 * Adds a code object with its decoded names. NULL on ENOMEM, REFUSED when its bytes (the struct,
 * its name as interned, the strings kept for lines) do not fit in the process's share of
 * max_code_bytes or in the whole: then nothing is interned.
 */
static struct pycode *code_add(struct python *py, struct pyproc *pp, uint64_t addr, uint32_t tag,
			       int32_t firstlineno, const char *qual, size_t qlen, const char *file,
			       size_t flen)
{
	struct pycode *c;
	size_t s, i, cost;
	int id;

	if (code_room(py, pp) || format_name(py, qual, qlen, file, flen, 0, false))
		return NULL;
	cost = sizeof(*c) + py->name.len + (py->o.lines ? qlen + flen + 2 : 0);
	if (!code_fits(py, pp, cost)) {
		pp->code_full = true;
		return REFUSED;
	}
	id = intern_owned(py, pp);
	if (id < 0)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->addr = addr;
	c->tag = tag;
	c->firstlineno = firstlineno;
	c->id = id;
	c->ident = code_ident(qual, qlen, file, flen, firstlineno);
	c->checked_ns = mono_ns();
	for (i = 0; i < LINE_SLOTS; i++)
		c->lines[i].id = -1;
	if (py->o.lines) {
		c->qualname = strndup(qual, qlen);
		c->file = strndup(file, flen);
		if (!c->qualname || !c->file) {
			code_free(c);
			return NULL;
		}
	}
	s = code_slot(pp, addr, tag);
	c->next = pp->codes[s];
	pp->codes[s] = c;
	pp->nr_codes++;
	py->st.codes++;
	code_charge(py, pp, c, cost);
	return c;
}

/* Reads the names of the code object at @addr from the process into @q and @f, its first line
 * into @line: its tag must be @tag. 0, or -errno (-ESTALE: another object there now). */
static int code_fetch(struct python *py, struct pyproc *pp, uint64_t addr, uint32_t tag,
		      struct sbuf *q, struct sbuf *f, int32_t *line)
{
	const struct ember_py_proc *b = &pp->bpf;
	uint8_t code[256];
	uint64_t file, name;

	py->st.code_reads++;
	if (b->code_size > sizeof(code) || mem_read(pp->pid, addr, code, b->code_size) ||
	    ld64(code + 8) != b->code_type)
		return -EFAULT;
	file = ld64(code + b->code_filename);
	name = ld64(code + b->code_name);
	*line = ld32(code + b->code_firstlineno);
	if (EMBER_PY_TAG(file, name, *line) != tag)
		return -ESTALE;
	if (read_str(pp, name, q) || read_str(pp, file, f) || sbuf_error(q) || sbuf_error(f))
		return -EFAULT;
	return 0;
}

/* Reads the code object at @addr from the process: its tag must be @tag. NULL when it cannot be
 * read or is another object now; REFUSED (code_add()). */
static struct pycode *code_read(struct python *py, struct pyproc *pp, uint64_t addr, uint32_t tag)
{
	struct sbuf q = SBUF_INIT, f = SBUF_INIT;
	struct pycode *c = NULL;
	int32_t line;

	if (!code_fetch(py, pp, addr, tag, &q, &f, &line))
		c = code_add(py, pp, addr, tag, line, q.buf ? q.buf : "", q.len, f.buf ? f.buf : "",
			     f.len);
	sbuf_fini(&q);
	sbuf_fini(&f);
	return c;
}

static void read_linetable(struct python *py, struct pyproc *pp, struct pycode *c);

/*
 * Code object @c of @pp, cached, reads its names again: another code object made where a freed
 * one was can carry the same tag. When they changed, @c gives way to the new one (returned: NULL
 * or REFUSED as code_add()). When they cannot be read (the process gone, the object freed), @c
 * stays: the samples may be older than that.
 */
static struct pycode *code_recheck(struct python *py, struct pyproc *pp, struct pycode *c,
				   uint64_t now)
{
	struct sbuf q = SBUF_INIT, f = SBUF_INIT;
	uint64_t addr = c->addr;
	uint32_t tag = c->tag;
	int32_t line;

	c->checked_ns = now;
	if (!code_fetch(py, pp, addr, tag, &q, &f, &line) &&
	    code_ident(q.buf ? q.buf : "", q.len, f.buf ? f.buf : "", f.len, line) != c->ident) {
		py->st.codes_renamed++;
		code_drop(py, pp, c);
		c = code_add(py, pp, addr, tag, line, q.buf ? q.buf : "", q.len,
			     f.buf ? f.buf : "", f.len);
		if (c && c != REFUSED && py->o.lines)
			read_linetable(py, pp, c);
	}
	sbuf_fini(&q);
	sbuf_fini(&f);
	return c;
}

/* The line table of @c, when it fits in the process's share (else its lines are unknown, the
 * refusal counted). */
static void read_linetable(struct python *py, struct pyproc *pp, struct pycode *c)
{
	uint8_t hdr[40];
	uint64_t obj, len;

	c->linetable_tried = true;
	if (mem_read(pp->pid, c->addr + pp->code_linetable, &obj, sizeof(obj)) || !obj ||
	    mem_read(pp->pid, obj, hdr, sizeof(hdr)))
		return;
	len = ld64(hdr + 16); /* PyBytesObject: ob_size at 16, the bytes at 32 */
	if (!len || len > LINETABLE_MAX)
		return;
	if (!code_fits(py, pp, len)) {
		py->st.codes_refused++;
		return;
	}
	c->linetable = malloc(len);
	if (!c->linetable)
		return;
	if (mem_read(pp->pid, obj + 32, c->linetable, len)) {
		free(c->linetable);
		c->linetable = NULL;
		return;
	}
	c->linetable_len = (uint32_t)len;
	code_charge(py, pp, c, len);
}

void python__on_name(struct python *py, const struct ember_py_name_rec *r)
{
	struct pyproc *pp = proc_last(py, r->pid);
	struct sbuf q = SBUF_INIT, f = SBUF_INIT;
	struct pycode *c, *old;
	size_t nb, fb;
	bool whole;

	uint64_t t0 = mono_ns();

	py->st.names++;
	if (!pp || pp->state != PYS_ON)
		return;
	nb = (size_t)r->name_len * r->name_kind;
	fb = (size_t)r->file_len * r->file_kind;
	whole = r->name_kind && r->file_kind && nb <= sizeof(r->name) && fb <= sizeof(r->file);
	old = code_find(pp, r->code, r->tag);
	if (old && !whole)
		return; /* checked again when sampled (code_recheck()) */
	if (!whole) {
		/* not read whole at sample time: from the process now, while it lives (unless its
		 * share is taken: the frame says so, without a read) */
		c = code_refused(py, pp) ? REFUSED : code_read(py, pp, r->code, r->tag);
	} else {
		put_str(&q, (const uint8_t *)r->name, nb, r->name_kind);
		put_str(&f, (const uint8_t *)r->file, fb, r->file_kind);
		c = NULL;
		if (old && !sbuf_error(&q) && !sbuf_error(&f) &&
		    code_ident(q.buf ? q.buf : "", q.len, f.buf ? f.buf : "", f.len,
			       r->firstlineno) == old->ident) {
			old->checked_ns = t0;
			goto out;
		}
		if (old) {
			/* the same tag, other names: a new code object where a freed one was */
			py->st.codes_renamed++;
			code_drop(py, pp, old);
		}
		if (!sbuf_error(&q) && !sbuf_error(&f))
			c = code_add(py, pp, r->code, r->tag, r->firstlineno, q.buf ? q.buf : "",
				     q.len, f.buf ? f.buf : "", f.len);
	}
	if (c == REFUSED) {
		py->st.codes_refused++;
		c = NULL;
	}
	/* lines: the line table now (the record woke us up), while the process lives */
	if (c && py->o.lines && !c->linetable_tried)
		read_linetable(py, pp, c);
out:
	sbuf_fini(&q);
	sbuf_fini(&f);
	py->st.names_ns += mono_ns() - t0;
}

/* --- lines ---------------------------------------------------------------------------------- */

/* 3.10's co_linetable: (bytecode delta, line delta) pairs; -128: no line. @addr in bytes. */
static int line_310(const uint8_t *t, size_t n, int first, int addr)
{
	int start = 0, end = 0, line = first, cur = -1;
	size_t i;

	for (i = 0; i + 1 < n; i += 2) {
		int ldelta = (int8_t)t[i + 1];

		start = end;
		end += t[i];
		if (ldelta == -128) {
			cur = -1;
		} else {
			line += ldelta;
			cur = line;
		}
		if (addr >= start && addr < end)
			return cur;
	}
	return -1;
}

static unsigned int scan_varint(const uint8_t *t, size_t n, size_t *i)
{
	unsigned int v = 0, shift = 0;
	uint8_t b;

	do {
		if (*i >= n || shift > 28)
			return v;
		b = t[(*i)++];
		v |= (unsigned int)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v;
}

static int scan_svarint(const uint8_t *t, size_t n, size_t *i)
{
	unsigned int v = scan_varint(t, n, i);

	return (v & 1) ? -(int)(v >> 1) : (int)(v >> 1);
}

/* 3.11+'s location table (Objects/locations.md). @addr in bytes. */
static int line_311(const uint8_t *t, size_t n, int first, int addr)
{
	int line = first, start = 0, end = 0, cur;
	size_t i = 0;

	while (i < n) {
		uint8_t b = t[i];
		int code = (b >> 3) & 15, delta = 0;
		size_t j = i + 1;

		if (!(b & 128))
			return -1; /* not an entry's first byte: a table we do not understand */
		if (code == 13 || code == 14)
			delta = scan_svarint(t, n, &j);
		else if (code == 11 || code == 12)
			delta = code - 10;
		line += delta;
		cur = code == 15 ? -1 : line;
		start = end;
		end += ((b & 7) + 1) * 2;
		if (addr >= start && addr < end)
			return cur;
		for (i = j; i < n && !(t[i] & 128); i++)
			;
	}
	return -1;
}

/* The name with the line of position @pos (the tag word's high half) in code object @c. */
static int line_name(struct python *py, struct pyproc *pp, struct pycode *c, uint32_t pos)
{
	struct pyline *l = &c->lines[hash_mix64(pos) & (LINE_SLOTS - 1)];
	int64_t lasti;
	int line = -1, id;

	if (l->id >= 0 && l->pos == pos)
		return l->id;
	if (!c->linetable_tried)
		read_linetable(py, pp, c);
	if (c->linetable) {
		if (pp->v->kind == EMBER_PY_FRAMEOBJ) {
			lasti = (int32_t)pos; /* f_lasti, in code units; -1: not started */
			line = lasti < 0 ? c->firstlineno
					 : line_310(c->linetable, c->linetable_len, c->firstlineno,
						    (int)lasti * 2);
		} else if (pos >= pp->code_adaptive && pos != 0xffffffffU) {
			lasti = (pos - pp->code_adaptive) / 2;
			line = line_311(c->linetable, c->linetable_len, c->firstlineno,
					(int)lasti * 2);
		}
	}
	if (line <= 0)
		py->st.lines_unknown++;
	if (format_name(py, c->qualname, strlen(c->qualname), c->file, strlen(c->file), line, true))
		return -ENOMEM;
	/* a line's name is charged to its code object the first time: 2 KiB names on every line of
	 * a long function would otherwise grow the names past the share */
	if (strtab__find(py->names, py->name.buf, py->name.len) < 0) {
		if (!code_fits(py, pp, py->name.len)) {
			py->st.codes_refused++;
			return c->id;
		}
		code_charge(py, pp, c, py->name.len);
	}
	id = intern_owned(py, pp);
	if (id >= 0) {
		l->pos = pos;
		l->id = id;
	}
	return id;
}

/* --- merging ---------------------------------------------------------------------------------- */

/* The name of a Python frame (words @w0, @w1). */
static int frame_name(struct python *py, struct pyproc *pp, uint64_t w0, uint64_t w1)
{
	uint64_t addr = w0 & EMBER_PYF_ADDR_MASK;
	uint32_t tag = (uint32_t)w1;
	struct pycode *c = code_find(pp, addr, tag);
	uint64_t now;

	if (c && !pp->ended && (now = mono_ns()) - c->checked_ns >= RECHECK_NS)
		c = code_recheck(py, pp, c, now);
	else if (!c)
		c = code_refused(py, pp) ? REFUSED : code_read(py, pp, addr, tag);
	if (c == REFUSED) {
		py->st.codes_refused++;
		return py->refused_id;
	}
	if (!c) {
		py->st.frames_unknown++;
		return py->unknown_id;
	}
	py->st.frames++;
	if (py->o.lines)
		return line_name(py, pp, c, (uint32_t)(w1 >> 32));
	return c->id;
}

static bool is_eval(const struct python *py, uint32_t id)
{
	return (int32_t)id == py->eval_id || (int32_t)id == py->eval_cold_id;
}

static int merge(struct python *py, struct pyproc *pp, const struct sampler_group *g,
		 const uint32_t *native, size_t n, const uint32_t **ret);

int python__merge(struct python *py, const struct sampler_group *g, const uint32_t *native,
		  size_t n, const uint32_t **ret)
{
	/* the image the samples were taken in: a previous one's (before its exec) may still be in
	 * flight */
	struct pyproc *pp = g->nr_times ? proc_tracker__ext_at(py->tracker, py->ext, g->pid,
							       g->times_ns[0])
					: proc_last(py, g->pid);
	uint64_t samples = g->nr_times + g->untimed, t0;
	size_t i;
	int r;

	*ret = native;
	if (!pp)
		return (int)n;
	/* a renewal of the names that could not carry the fixed frames (no memory) */
	if (py->unknown_id < 0 || py->refused_id < 0)
		return -ENOMEM;
	if (pp->state == PYS_UNSUPPORTED) {
		py->st.samples_unsupported += samples;
		return (int)n;
	}
	if (pp->state == PYS_OTHER_EXE) {
		/* not named python: an embedded interpreter shows itself by its eval loop (a
		 * current image only: an ended one's pid may run another now) */
		for (i = 0; i < n && !pp->ended; i++) {
			if (is_eval(py, native[i])) {
				detect(py, pp);
				break;
			}
		}
		return (int)n;
	}
	if (pp->state != PYS_ON || !g->py_words || !g->nr_py)
		return (int)n;
	t0 = mono_ns();
	r = merge(py, pp, g, native, n, ret);
	py->st.merge_ns += mono_ns() - t0;
	return r;
}

/* python__merge() for a group with Python frames of a process in state PYS_ON. */
static int merge(struct python *py, struct pyproc *pp, const struct sampler_group *g,
		 const uint32_t *native, size_t n, const uint32_t **ret)
{
	uint32_t names[EMBER_PY_MAX_FRAMES];
	size_t gstart[EMBER_PY_MAX_FRAMES + 1]; /* group i: names[gstart[i] .. gstart[i + 1]) */
	size_t evals[MERGE_MAX / 4], m = 0, k = 0, i, j, out = 0, nr = g->nr_py, lead = 0;
	uint64_t samples = g->nr_times + g->untimed;
	bool from_root;
	int id;

	if (nr > EMBER_PY_MAX_FRAMES)
		nr = EMBER_PY_MAX_FRAMES;
	py->st.samples += samples;
	/* names root first; a group starts at the root and at each entry frame */
	for (i = 0; i < nr; i++) {
		uint64_t w0 = g->py_words[EMBER_PY_WORDS * i],
			 w1 = g->py_words[EMBER_PY_WORDS * i + 1];

		if (!i || (w0 & EMBER_PYF_ENTRY))
			gstart[m++] = i;
		id = frame_name(py, pp, w0, w1);
		if (id < 0)
			return -ENOMEM;
		names[i] = (uint32_t)id;
	}
	gstart[m] = nr;
	for (i = 0; i < n && k < sizeof(evals) / sizeof(evals[0]); i++)
		if (is_eval(py, native[i]))
			evals[k++] = i;
	if (m == k)
		py->st.merged++;
	else
		py->st.merged_aligned++;
	/*
	 * Which group goes to which eval frame: both walks whole, from the root (a leaf group
	 * without its eval frame yet, or left, joins the innermost one); one cut short or walked
	 * by frame pointer only, from the leaf (groups past the outermost eval frame left go at
	 * the root).
	 */
	from_root =
	    !(g->user_flags & (EMBER_USTACK_TRUNC | EMBER_USTACK_FP | EMBER_USTACK_PY_TRUNC));
	if (!k || (!from_root && m > k))
		lead = k ? m - k : m; /* groups placed before every native frame */
	for (j = 0; j < lead; j++)
		for (i = gstart[j]; i < gstart[j + 1]; i++)
			py->out[out++] = names[i];
	for (i = 0, j = 0; i < n && out < MERGE_MAX - EMBER_PY_MAX_FRAMES; i++) {
		size_t e, g0, g1;

		if (j < k && evals[j] == i) {
			/* the j-th eval frame from the root: its groups */
			e = j++;
			if (from_root) {
				g0 = e;
				g1 = j == k ? m : e + 1; /* the innermost takes the rest */
				if (g0 >= m)
					g0 = g1 = m;
			} else if (e + m >= k) {
				g0 = e + m - k;
				g1 = g0 + 1;
			} else {
				g0 = g1 = 0; /* more eval frames than groups: this one stays */
			}
			if (g0 < g1 && g1 <= m) {
				for (; g0 < g1; g0++)
					for (size_t f = gstart[g0]; f < gstart[g0 + 1]; f++)
						py->out[out++] = names[f];
				continue;
			}
		}
		py->out[out++] = native[i];
	}
	*ret = py->out;
	return (int)out;
}

/* --- object ----------------------------------------------------------------------------------- */

struct python *python__new(struct sampler *sampler, struct strtab *names,
			   const struct python_opts *o)
{
	struct python_opts def = PYTHON_OPTS_DEFAULT;
	struct python *py = calloc(1, sizeof(*py));
	int a, b, c, d;

	if (!py)
		goto fail;
	py->ext = -1;
	py->o = o ? *o : def;
	if (!py->o.max_procs)
		py->o.max_procs = def.max_procs;
	if (!py->o.max_codes)
		py->o.max_codes = def.max_codes;
	if (!py->o.max_code_bytes)
		py->o.max_code_bytes = def.max_code_bytes;
	snprintf(py->proc_root, sizeof(py->proc_root), "%s",
		 py->o.proc_root ? py->o.proc_root : "/proc");
	py->o.proc_root = py->proc_root;
	py->tracker = py->o.procs;
	if (!py->tracker) {
		struct proc_tracker_opts po = { .proc_root = py->proc_root };

		py->tracker = py->own_tracker = proc_tracker__new(&po);
		if (!py->tracker)
			goto fail;
	}
	py->files = py->o.files;
	if (!py->files) {
		py->files = py->own_files = filecache__new(NULL);
		if (!py->files)
			goto fail;
	}
	{
		struct proc_ext_ops ops = { .name = "python", .size = sizeof(struct pyproc),
					    .keep_ns = GONE_KEEP_NS, .ended = proc_ended,
					    .release = proc_release, .ctx = py };

		py->ext = proc_tracker__ext_register(py->tracker, &ops);
		if (py->ext < 0)
			goto fail;
	}
	py->sampler = sampler;
	py->names = names;
	py->fsbase_off = -1;
	py->st.fsbase_off = -1;
	sbuf_init(&py->name);
	a = strtab__intern(names, "_PyEval_EvalFrameDefault", 24);
	b = strtab__intern(names, "_PyEval_EvalFrameDefault.cold", 29);
	c = strtab__intern(names, UNKNOWN_FRAME, strlen(UNKNOWN_FRAME));
	d = strtab__intern(names, REFUSED_FRAME, strlen(REFUSED_FRAME));
	if (a < 0 || b < 0 || c < 0 || d < 0)
		goto fail;
	py->refused_id = d;
	py->eval_id = a;
	py->eval_cold_id = b;
	py->unknown_id = c;
	(void)elf_version(EV_CURRENT);
	return py;
fail:
	python__free(py);
	errno = ENOMEM;
	return NULL;
}

void python__free(struct python *py)
{
	if (!py)
		return;
	if (py->tracker && py->ext >= 0)
		proc_tracker__ext_unregister(py->tracker, py->ext);
	proc_tracker__free(py->own_tracker);
	filecache__free(py->own_files);
	sbuf_fini(&py->name);
	free(py);
}

/* The upper bound of the bucket holding the @q-quantile of the walk times. */
static uint64_t quantile(const struct ember_py_bpf_stats *b, double q)
{
	uint64_t n = 0, acc = 0;
	size_t i;

	for (i = 0; i < EMBER_PY_HIST; i++)
		n += b->walk_hist[i];
	for (i = 0; n && i < EMBER_PY_HIST; i++) {
		acc += b->walk_hist[i];
		if ((double)acc >= q * (double)n)
			return 256ull << i;
	}
	return 0;
}

/* ext_each(): the bytes a state holds, added to *@arg */
static void proc_bytes(void *arg, uint32_t pid, void *state, bool ended)
{
	const struct pyproc *pp = state;
	const struct pycode *c;
	size_t *mem = arg, i;

	(void)pid;
	(void)ended;
	*mem += sizeof(*pp) + pp->codes_cap * sizeof(*pp->codes);
	for (i = 0; i < pp->codes_cap; i++)
		for (c = pp->codes[i]; c; c = c->next)
			*mem += sizeof(*c) + (c->qualname ? strlen(c->qualname) + 1 : 0) +
				(c->file ? strlen(c->file) + 1 : 0) + c->linetable_len;
}

void python__stats(struct python *py, struct python_stats *ret)
{
	size_t mem = sizeof(*py) + py->name.cap;

	proc_tracker__ext_each(py->tracker, py->ext, proc_bytes, &mem);
	py->st.mem_bytes = mem;
	*ret = py->st;
	ret->fsbase_off = py->fsbase_off;
	if (py->sampler && !sampler__python_stats(py->sampler, &ret->bpf)) {
		ret->walk_p50_ns = quantile(&ret->bpf, 0.5);
		ret->walk_p90_ns = quantile(&ret->bpf, 0.9);
		ret->walk_p99_ns = quantile(&ret->bpf, 0.99);
	}
}

/* --- the runtime interface (unwind/runtime.h) --------------------------------------------- */

static void rt_noted(void *rt, uint32_t pid)
{
	python__note_pid(rt, pid);
}

static int rt_merge(void *rt, const struct sampler_group *g, const uint32_t *native, size_t n,
		    const uint32_t **ret)
{
	return python__merge(rt, g, native, n, ret);
}

static int rt_names_carry(void *rt)
{
	return python__names_carry(rt);
}

static void rt_prune(void *rt)
{
	python__prune(rt);
}

const struct runtime_ops python_runtime_ops = {
	.name = "python",
	.words = RUNTIME_WORDS_NONE,
	.ustack_flag = EMBER_USTACK_PY,
	.noted = rt_noted,
	.merge = rt_merge,
	.names_carry = rt_names_carry,
	.prune = rt_prune,
};
