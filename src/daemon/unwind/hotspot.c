// SPDX-License-Identifier: MIT
/* hotspot: Java frames of HotSpot JVMs (include/ember/daemon/unwind/hotspot.h). */
#include "ember/daemon/unwind/hotspot.h"
#include "ember/daemon/unwind/runtime.h"

#include <elf.h>
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
#include "ember/daemon/elf/elfload.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/proc/procmaps.h"
#include "ember/daemon/proc/proctrack.h"

#define HS_GONE_KEEP_NS	 (10 * NSEC_PER_SEC) /* an exited JVM's names: its samples in flight */
#define HS_SYM_MAX	 512		    /* bytes of a Symbol read (class or method name) */
#define HS_STUB_NAME_MAX 64		    /* bytes of a code blob's name read */
#define HS_RECHECK_NS	 (1 * NSEC_PER_SEC) /* a compiled frame's method read again after this */
#define HS_RETRY_NS	 (NSEC_PER_SEC / 5) /* a JVM not set up yet: looked at again after */
/* a process that is no JVM: looked at again after (just under the 1 s tick that ingests its
 * samples: at 1 s, a tick a little early made it every other tick, 2 s, and a program that
 * loaded libjvm after its first look and ran 2 s was never seen as one) */
#define HS_NOT_RECHECK_NS (NSEC_PER_SEC * 9 / 10)
#define DETECT_TRIES	 100		    /* ... this many times (20 s) */
#define RESOLVE_TRIES	 10		    /* tables unreadable: looked at again (2 s) */
#define HS_MAX_OFF	 4096		    /* a field's offset believed */
#define HS_MIN_MAJOR	 11		    /* code blobs with pointers, CompiledMethod or nmethod */
#define HS_MAX_MAJOR	 22		    /* JDK 23 made them offsets (not read yet) */
#define HS_MAX_HEAP	 (4ull << 30)	    /* a code heap's reserved size believed */
#define HS_MAX_PCDESC	 (64u << 10)	    /* bytes of a compiled method's PcDesc table read */
#define HS_MAX_SCOPE	 64		    /* bytes of a scope's record read */
#define HS_UNSIGNED5_MAX 19		    /* JDK 20 changed the scopes' compressed encoding */
#define HS_LINETAB_MAX	 1024		    /* bytes of a method's line number table read */

enum hsstate {
	HSS_NOT,	 /* no libjvm mapped */
	HSS_RETRY,	 /* libjvm mapped, its code cache not set up yet */
	HSS_ON,		 /* in the BPF map: frames read */
	HSS_UNSUPPORTED, /* data missing, another layout: native frames */
	HSS_GONE,	 /* was ON, exited or exec'ed: its names kept HS_GONE_KEEP_NS for the
			  * samples taken before, still in flight */
};

struct hsname {
	uint64_t key;	  /* the word (a compiled frame's with its pc offset, the others' without
			     their aux bits); 0: empty slot */
	uint64_t method;  /* the Method* it was read from (compiled frames: rechecked) */
	uint64_t checked; /* last read (CLOCK_MONOTONIC) */
	int32_t id[HOTSPOT_MAX_INLINE]; /* in names, root first: the compiled method, then the
					   methods inlined into it at the frame's pc */
	uint32_t n;	  /* ids */
};

/* A process's state: the process tracker's extension (proc_tracker__ext_register()), made at its
 * first sample, ended at its exit or exec (HSS_GONE), released by the tracker's rule. */
struct hsproc {
	uint32_t pid;
	enum hsstate state;
	unsigned int tries;
	bool reread;		   /* not a JVM: its mappings read again (once) since */
	uint64_t seen_ns;	   /* last examined */
	uint64_t exe_ino, exe_dev; /* its executable then */
	struct rtintro_hotspot h;  /* its libjvm's facts, offsets resolved in it */
	struct hsname *names;	   /* open addressing by key */
	size_t cap, n;
};

struct hs_file_facts {
	struct rtintro_hotspot h;
	int err;		/* 0, or -reason */
	uint64_t load_off[4];	/* PT_LOAD segments: p_offset, p_filesz, p_vaddr - p_offset */
	uint64_t load_len[4];
	int64_t load_delta[4];
	unsigned int nr_load;
};

struct hotspot {
	struct hotspot_opts o;
	char proc_root[256];
	struct sampler *sampler;
	struct strtab *names;
	int ext;		/* its processes: the tracker's extension */
	struct proc_tracker *tracker, *own_tracker;
	struct filecache *files, *own_files;
	struct sbuf name, file;
	struct hotspot_stats st;
};

/* --- memory of the process ---------------------------------------------------------------- */

static int mem_read(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n;

	if (!len)
		return 0;
	if (!addr || addr > EMBER_HSF_ADDR_MASK || len > EMBER_HSF_ADDR_MASK - addr)
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

static bool rd_cb(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return !mem_read((uint32_t)(uintptr_t)ctx, addr, buf, len);
}

#define VAL(pp, id) ((pp)->h.val[RTI_HS_##id])

/* --- names -------------------------------------------------------------------------------- */

size_t hotspot_method_name(const char *klass, size_t klen, const char *method, size_t mlen,
			   char *out, size_t cap)
{
	size_t n = 0, i, cut = klen;

	if (!cap)
		return 0;
	/* a hidden class (lambdas, lambda forms): its Symbol ends "+0x<address>" (JDK 17: the
	 * "App$$Lambda$14/0x..." of Class.getName()), another for every run */
	for (i = klen; i-- > 0;) {
		if (klass[i] == '/' || klass[i] == '+') {
			if (i + 2 < klen && klass[i + 1] == '0' && klass[i + 2] == 'x')
				cut = i;
			break;
		}
	}
	for (i = 0; i < cut + 1 + mlen && n + 1 < cap; i++) {
		char c = i < cut ? klass[i] : i == cut ? '.' : method[i - cut - 1];

		if (i < cut && c == '/')
			c = '.';
		if (c == ';')
			c = ':';
		if ((unsigned char)c < 0x20 || c == 0x7f)
			c = '?';
		out[n++] = c;
	}
	out[n] = '\0';
	return n;
}

/* The bytes of Symbol @sym (at most HS_SYM_MAX) into @buf: length, or -1. */
static int read_symbol(const struct hsproc *pp, uint64_t sym, char *buf)
{
	uint16_t len = 0;

	if (mem_read(pp->pid, sym + VAL(pp, SYMBOL_LENGTH), &len, sizeof(len)))
		return -1;
	if (len > HS_SYM_MAX)
		len = HS_SYM_MAX;
	if (mem_read(pp->pid, sym + VAL(pp, SYMBOL_BODY), buf, len))
		return -1;
	return len;
}

/* Appends the name of Method @m of @pp to @sb ("pkg.Class.method"): 0, or -1 unreadable. */
static int method_name(const struct hsproc *pp, uint64_t m, struct sbuf *sb)
{
	uint64_t cm = 0, cp = 0, holder = 0, ksym = 0, msym = 0;
	uint16_t ni = 0;
	char k[HS_SYM_MAX], mn[HS_SYM_MAX], out[2 * HS_SYM_MAX + 2];
	int kl, ml;
	size_t n;

	if (rd64(pp->pid, m + VAL(pp, METHOD_CONSTMETHOD), &cm) ||
	    rd64(pp->pid, cm + VAL(pp, CONSTMETHOD_CONSTANTS), &cp) ||
	    mem_read(pp->pid, cm + VAL(pp, CONSTMETHOD_NAME_INDEX), &ni, sizeof(ni)) ||
	    rd64(pp->pid, cp + VAL(pp, CPOOL_POOL_HOLDER), &holder) ||
	    rd64(pp->pid, holder + VAL(pp, KLASS_NAME), &ksym) ||
	    rd64(pp->pid, cp + VAL(pp, CPOOL_SIZEOF) + (uint64_t)ni * 8, &msym))
		return -1;
	kl = read_symbol(pp, ksym, k);
	ml = kl < 0 ? -1 : read_symbol(pp, msym, mn);
	if (ml <= 0 || kl <= 0)
		return -1;
	n = hotspot_method_name(k, (size_t)kl, mn, (size_t)ml, out, sizeof(out));
	(void)sbuf_add_utf8(sb, out, n);
	return 0;
}

/*
 * The source file of Method @m's class into @file (its Symbol's bytes: "App.java") and the line
 * of bytecode index @bci (*@line: > 0, or FRAME_LINE_UNKNOWN). -1 when the class names no file
 * or it cannot be read.
 */
static int method_source(const struct hsproc *pp, uint64_t m, int32_t bci, struct sbuf *file,
			 int64_t *line)
{
	uint64_t cm = 0, cp = 0, holder = 0, sym = 0, at;
	uint16_t si = 0, flags = 0, code_size = 0;
	uint8_t tab[HS_LINETAB_MAX];
	char b[HS_SYM_MAX];
	int n, l;

	*line = FRAME_LINE_UNKNOWN;
	if (rd64(pp->pid, m + VAL(pp, METHOD_CONSTMETHOD), &cm) ||
	    rd64(pp->pid, cm + VAL(pp, CONSTMETHOD_CONSTANTS), &cp))
		return -1;
	/* the file's index in the constant pool: the pool's own (JDK 9+) or the class's */
	if (pp->h.have[RTI_HS_CPOOL_SOURCE_FILE]) {
		if (mem_read(pp->pid, cp + VAL(pp, CPOOL_SOURCE_FILE), &si, sizeof(si)))
			return -1;
	} else if (pp->h.have[RTI_HS_IKLASS_SOURCE_FILE]) {
		if (rd64(pp->pid, cp + VAL(pp, CPOOL_POOL_HOLDER), &holder) ||
		    mem_read(pp->pid, holder + VAL(pp, IKLASS_SOURCE_FILE), &si, sizeof(si)))
			return -1;
	}
	if (!si || rd64(pp->pid, cp + VAL(pp, CPOOL_SIZEOF) + (uint64_t)si * 8, &sym) || !sym ||
	    (n = read_symbol(pp, sym, b)) <= 0)
		return -1;
	sbuf_reset(file);
	(void)sbuf_add_utf8(file, b, (size_t)n);
	/* the line: the compressed table after the bytecodes (JDK 11-19's encoding), read in one
	 * piece, or a smaller one where the metaspace ends sooner */
	if (bci < 0 || pp->h.major > HS_UNSIGNED5_MAX || !pp->h.have[RTI_HS_CONSTMETHOD_FLAGS] ||
	    !pp->h.have[RTI_HS_CONSTMETHOD_HAS_LINES] ||
	    mem_read(pp->pid, cm + VAL(pp, CONSTMETHOD_FLAGS), &flags, sizeof(flags)) ||
	    !(flags & VAL(pp, CONSTMETHOD_HAS_LINES)) ||
	    mem_read(pp->pid, cm + VAL(pp, CONSTMETHOD_CODE_SIZE), &code_size, sizeof(code_size)) ||
	    (uint32_t)bci >= code_size)
		return 0;
	at = cm + VAL(pp, CONSTMETHOD_SIZEOF) + code_size;
	for (size_t want = sizeof(tab); want >= 64; want /= 4) {
		if (mem_read(pp->pid, at, tab, want))
			continue;
		l = hotspot_line_at(tab, want, (uint32_t)bci);
		if (l > 0)
			*line = l;
		break;
	}
	return 0;
}

/* The name of code blob @blob ("StubRoutines (1)"), or -1. */
static int blob_name(const struct hsproc *pp, uint64_t blob, struct sbuf *sb)
{
	uint64_t p = 0;
	char b[HS_STUB_NAME_MAX + 1];
	size_t n = 0;

	if (rd64(pp->pid, blob + VAL(pp, CODEBLOB_NAME), &p))
		return -1;
	/* byte by byte: a name may end just before an unmapped page */
	while (n < HS_STUB_NAME_MAX && !mem_read(pp->pid, p + n, &b[n], 1) && b[n])
		n++;
	if (!n || n == HS_STUB_NAME_MAX)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (b[i] == ';' || (unsigned char)b[i] < 0x20 || b[i] == 0x7f)
			b[i] = '?';
	(void)sbuf_add_utf8(sb, b, n);
	return 0;
}

/* The Method* of compiled frame's nmethod @nm, checked to be an nmethod by its blob name: 0,
 * -EINVAL (not one), or a read's -errno (-ESRCH: the process is gone). */
static int nmethod_method(const struct hsproc *pp, uint64_t nm, uint64_t *ret)
{
	uint64_t p = 0;
	char b[8] = { 0 };
	int r;

	if ((r = rd64(pp->pid, nm + VAL(pp, CODEBLOB_NAME), &p)) ||
	    (r = mem_read(pp->pid, p, b, sizeof(b))))
		return r;
	if (memcmp(b, "nmethod", 8) && memcmp(b, "native n", 8))
		return -EINVAL;
	if ((r = rd64(pp->pid, nm + VAL(pp, NMETHOD_METHOD), ret)))
		return r;
	return *ret ? 0 : -EINVAL;
}

/* --- inlined methods --------------------------------------------------------------------- */

int hotspot_read_int(const uint8_t *buf, size_t len, size_t *pos, int32_t *ret)
{
	/* CompressedReadStream::read_int() before JDK 20: bytes < 192 end a number, each byte
	 * adds its value << 6 * i, at most 5 bytes */
	uint32_t sum = 0, b;
	unsigned int i, shift = 0;

	for (i = 0; i < 5; i++) {
		if (*pos >= len)
			return -EINVAL;
		b = buf[(*pos)++];
		sum += b << shift;
		if (b < 192 || i == 4)
			break;
		shift += 6;
	}
	*ret = (int32_t)sum;
	return 0;
}

int hotspot_line_at(const uint8_t *tab, size_t len, uint32_t bci)
{
	int64_t b = 0, line = 0, best_bci = 0, best = 0;
	size_t pos = 0;

	for (;;) {
		int32_t db, dl;
		uint8_t next;

		if (pos >= len)
			return -EINVAL;
		next = tab[pos++];
		if (!next)
			break;
		if (next == 0xff) {
			/* two signed ints (CompressedReadStream::read_signed_int: zigzag) */
			if (hotspot_read_int(tab, len, &pos, &db) ||
			    hotspot_read_int(tab, len, &pos, &dl))
				return -EINVAL;
			db = (int32_t)(((uint32_t)db >> 1) ^ -((uint32_t)db & 1));
			dl = (int32_t)(((uint32_t)dl >> 1) ^ -((uint32_t)dl & 1));
		} else {
			db = next >> 3;
			dl = next & 7;
		}
		b += db;
		line += dl;
		if (b < 0 || b > 65535 || line < 0 || line > INT32_MAX)
			return -EINVAL;
		if (b == bci)
			return (int)line;
		if (b < bci && b >= best_bci) {
			best_bci = b;
			best = line;
		}
	}
	return (int)best;
}

/*
 * The methods inlined at pc offset @aux of compiled method @nm, innermost first, into @ret (at
 * most @max), with the bytecode index each was at into @bcis: from the first PcDesc past the pc
 * (a return address's own, or the next safepoint of a leaf), its scope's chain of senders. Count
 * (0: none known), or -1 unreadable.
 */
static int inlined(const struct hsproc *pp, uint64_t nm, uint32_t aux, uint64_t *ret,
		   int32_t *bcis, size_t max)
{
	uint64_t pcs = VAL(pp, NMETHOD_SCOPES_PCS), deps = VAL(pp, NMETHOD_DEPENDENCIES),
		 psz = VAL(pp, PCDESC_SIZEOF), sdata = 0, mdata;
	int32_t pcoff = 0, decode = 0, sender, midx, bci;
	uint8_t tab[4096], rec[HS_MAX_SCOPE];
	size_t len, at, n = 0, pos;
	bool found = false;
	int32_t v = 0;

	if (pp->h.major > HS_UNSIGNED5_MAX || !pp->h.have[RTI_HS_NMETHOD_DEPENDENCIES] ||
	    !pp->h.have[RTI_HS_NMETHOD_METADATA] || aux >= EMBER_HSF_AUX_NONE || psz < 8 ||
	    psz > 64 || VAL(pp, PCDESC_PC_OFFSET) + 4 > psz || VAL(pp, PCDESC_SCOPE_DECODE) + 4 > psz)
		return 0;
	/* the table's bounds: offsets from the nmethod (int fields) */
	if (mem_read(pp->pid, nm + pcs, &pcoff, sizeof(pcoff)) ||
	    mem_read(pp->pid, nm + deps, &v, sizeof(v)) || pcoff <= 0 || v <= pcoff ||
	    (uint32_t)(v - pcoff) > HS_MAX_PCDESC)
		return -1;
	len = (size_t)(v - pcoff);
	/* the first PcDesc whose pc offset is past the pc, a page at a time */
	for (at = 0; at < len && !found; at += sizeof(tab) - sizeof(tab) % psz) {
		size_t chunk = len - at < sizeof(tab) - sizeof(tab) % psz ? len - at
									: sizeof(tab) - sizeof(tab) % psz;

		if (mem_read(pp->pid, nm + (uint64_t)pcoff + at, tab, chunk))
			return -1;
		for (size_t k = 0; k + psz <= chunk; k += psz) {
			int32_t off;

			memcpy(&off, tab + k + VAL(pp, PCDESC_PC_OFFSET), sizeof(off));
			if (off > (int32_t)aux) {
				memcpy(&decode, tab + k + VAL(pp, PCDESC_SCOPE_DECODE), sizeof(decode));
				found = true;
				break;
			}
		}
	}
	if (!found || decode <= 0)
		return 0; /* no scope recorded there (serialized_null is 0) */
	if (rd64(pp->pid, nm + VAL(pp, NMETHOD_SCOPES_DATA), &sdata) || !sdata)
		return -1;
	if (mem_read(pp->pid, nm + VAL(pp, NMETHOD_METADATA), &v, sizeof(v)) || v <= 0)
		return -1;
	mdata = nm + (uint64_t)v;
	/* innermost first: each scope's sender is the method it was inlined into */
	while (decode > 0 && n < max) {
		if (mem_read(pp->pid, sdata + (uint64_t)decode, rec, sizeof(rec)))
			return -1;
		pos = 0;
		if (hotspot_read_int(rec, sizeof(rec), &pos, &sender) ||
		    hotspot_read_int(rec, sizeof(rec), &pos, &midx) ||
		    hotspot_read_int(rec, sizeof(rec), &pos, &bci) || midx <= 0 || midx > 65536)
			return -1;
		if (rd64(pp->pid, mdata + 8ull * (uint64_t)(midx - 1), &ret[n]) || !ret[n])
			return -1;
		bcis[n] = bci;
		n++;
		/* senders are recorded before the scopes they hold: a chain only goes back */
		if (sender >= decode)
			break;
		decode = sender;
	}
	return (int)n;
}

/* --- processes ---------------------------------------------------------------------------- */

/* @pid's state for the image it runs now (none: not looked at since its exec). */
static struct hsproc *proc_find(struct hotspot *hs, uint32_t pid)
{
	return proc_tracker__ext(hs->tracker, hs->ext, pid, false);
}

static void set_state(struct hotspot *hs, struct hsproc *pp, enum hsstate s)
{
	if (pp->state == HSS_ON)
		hs->st.procs--;
	else if (pp->state == HSS_UNSUPPORTED)
		hs->st.procs_unsupported--;
	pp->state = s;
	if (s == HSS_ON)
		hs->st.procs++;
	else if (s == HSS_UNSUPPORTED)
		hs->st.procs_unsupported++;
}

/* The tracker's ops.ended: the JVM exited or exec'ed (the BPF program deleted its entry then).
 * Its names stay HS_GONE_KEEP_NS for the samples of its last moments still on their way (a
 * worker behind under load), as the V8 reader's. */
static void proc_ended(void *ctx, uint32_t pid, void *state, uint64_t event_ns)
{
	struct hsproc *pp = state;

	(void)event_ns; /* whatever the time */
	(void)pid;
	set_state(ctx, pp, pp->state == HSS_ON ? HSS_GONE : HSS_NOT);
}

/* The tracker's ops.release: what the state holds. */
static void proc_release(void *ctx, uint32_t pid, void *state)
{
	struct hotspot *hs = ctx;
	struct hsproc *pp = state;

	(void)pid;
	set_state(hs, pp, HSS_NOT);
	hs->st.mem_bytes -= sizeof(*pp) + pp->cap * sizeof(*pp->names);
	free(pp->names);
}

struct scan {
	struct procmaps_entry e;
	char path[512];
	bool found, libc, launcher;
};

static int on_map(const struct procmaps_entry *e, void *ctx)
{
	struct scan *sc = ctx;
	const char *base;
	size_t blen;

	if (e->kind != PROCMAPS_FILE || !e->path_len || e->path_len >= sizeof(sc->path))
		return 0;
	base = procmaps_basename(e, &blen);
	if (blen >= 5 && (!memcmp(base, "libc.", 5) || !memcmp(base, "libc-", 5)))
		sc->libc = true;
	if (blen == 9 && !memcmp(base, "libjli.so", 9))
		sc->launcher = true; /* the java launcher: libjvm comes next */
	if (!e->x || sc->found || blen != 9 || memcmp(base, "libjvm.so", 9))
		return 0;
	sc->e = *e;
	memcpy(sc->path, e->path, e->path_len);
	sc->path[e->path_len] = '\0';
	sc->e.path = sc->path;
	sc->found = true;
	return 0;
}

/* The PT_LOAD segments of the ELF file at @fd, for the load bias. */
/* The PT_LOAD segments of image @es (the first four) into @ff. */
static void read_loads(const struct elfsym *es, struct hs_file_facts *ff)
{
	const struct elfload *l = es ? elfsym__load(es) : NULL;

	for (unsigned int i = 0; l && i < l->n && ff->nr_load < 4; i++) {
		ff->load_off[ff->nr_load] = l->segs[i].off;
		ff->load_len[ff->nr_load] = l->segs[i].filesz;
		ff->load_delta[ff->nr_load] = (int64_t)(l->segs[i].vaddr - l->segs[i].off);
		ff->nr_load++;
	}
}

static const struct hs_file_facts *file_facts(struct hotspot *hs, uint32_t pid,
					      const struct procmaps_entry *e)
{
	struct mapfile_want w = mapfile_want_of(pid, e);
	const struct hs_file_facts *known;
	struct filecache_id id;
	struct stat st;
	int fd;

	fd = mapfile_open(hs->proc_root, &w, &hs->st.files, &st);
	if (fd < 0)
		return NULL;
	filecache_id_of(&st, &id);
	known = filecache__get(hs->files, &id, FILECACHE_HOTSPOT);
	if (!known) {
		struct rtintro_stats rs = { 0 };
		struct hs_file_facts *ff = calloc(1, sizeof(*ff));

		if (!ff) {
			close(fd);
			return NULL;
		}
		struct elfsym *es;

		/* the symbolizer's image of libjvm.so: its symbols read once for both */
		{
			char path[512]; /* e's is not NUL-terminated (procmaps.h) */

			snprintf(path, sizeof(path), "%.*s", (int)e->path_len, e->path);
			es = elfsym_source_get(&hs->o.images, fd, path, NULL);
		}
		ff->err = rtintro_hotspot_read_image(fd, es, &ff->h, &rs);
		read_loads(es, ff);
		elfsym__free(es);
		for (int i = 0; i < RTI__REASONS; i++)
			hs->st.reasons[i] += rs.reason[i];
		(void)filecache__put(hs->files, &id, FILECACHE_HOTSPOT, ff, sizeof(*ff));
		free(ff);
		known = filecache__get(hs->files, &id, FILECACHE_HOTSPOT);
	}
	close(fd);
	return known;
}

/* The interpreter frame slot @i (words from rbp), @def when the VM does not say, 0 when what it
 * says is no slot below rbp. */
static int8_t slot(const struct rtintro_hotspot *h, enum rtintro_hs_item i, int8_t def)
{
	int64_t v = (int64_t)h->val[i];

	if (!h->have[i])
		return def;
	return v >= -16 && v < 0 ? (int8_t)v : 0;
}

bool hotspot_facts_check(const struct rtintro_hotspot *h, struct ember_hs_proc *ret, int *why)
{
	static const enum rtintro_hs_item need[] = {
		RTI_HS_CODEBLOB_NAME,	    RTI_HS_CODEBLOB_FRAME_SIZE, RTI_HS_CODEBLOB_FRAME_COMPLETE,
		RTI_HS_CODEBLOB_CODE_BEGIN, RTI_HS_HEAPBLOCK_SIZEOF,	RTI_HS_METHOD_CONSTMETHOD,
		RTI_HS_CONSTMETHOD_SIZEOF,  RTI_HS_CODEHEAP_MEMORY,	RTI_HS_CODEHEAP_SEGMAP,
		RTI_HS_CODEHEAP_LOG2_SEG,   RTI_HS_VSPACE_LOW,		RTI_HS_VSPACE_HIGH,
		RTI_HS_GROWABLE_LEN,	    RTI_HS_GROWABLE_INT_DATA,	RTI_HS_NMETHOD_METHOD,
		RTI_HS_CONSTMETHOD_CONSTANTS, RTI_HS_CONSTMETHOD_NAME_INDEX,
		RTI_HS_CPOOL_POOL_HOLDER,   RTI_HS_CPOOL_SIZEOF,	RTI_HS_KLASS_NAME,
		RTI_HS_SYMBOL_LENGTH,	    RTI_HS_SYMBOL_BODY,		RTI_HS_CODECACHE_HEAPS,
	};
	unsigned int i;

	/* JDK 23 made code blobs' code and data offsets from the blob, not pointers */
	*why = RTI__REASONS;
	if (h->major < HS_MIN_MAJOR || h->major > HS_MAX_MAJOR || h->have[RTI_HS_NMETHOD_IMMUTABLE])
		return false;
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		*why = RTI_MISSING;
		if (!h->have[need[i]])
			return false;
		*why = RTI_BAD_VALUE;
		if (need[i] != RTI_HS_CODECACHE_HEAPS && h->val[need[i]] > HS_MAX_OFF)
			return false;
	}
	*ret = (struct ember_hs_proc){
		.blob_name = (__u16)h->val[RTI_HS_CODEBLOB_NAME],
		.blob_frame_size = (__u16)h->val[RTI_HS_CODEBLOB_FRAME_SIZE],
		.blob_frame_complete = (__u16)h->val[RTI_HS_CODEBLOB_FRAME_COMPLETE],
		.blob_code_begin = (__u16)h->val[RTI_HS_CODEBLOB_CODE_BEGIN],
		.heapblock_size = (__u16)h->val[RTI_HS_HEAPBLOCK_SIZEOF],
		.method_constmethod = (__u16)h->val[RTI_HS_METHOD_CONSTMETHOD],
		.constmethod_size = (__u16)h->val[RTI_HS_CONSTMETHOD_SIZEOF],
		/* x86-64 frame_x86.hpp since JDK 9 (the mirror slot), unless the VM says */
		.interp_method = slot(h, RTI_HS_FRAME_INTERP_METHOD, -3),
		.interp_bcp = slot(h, RTI_HS_FRAME_INTERP_BCP, -8),
		.interp_sender_sp = slot(h, RTI_HS_FRAME_INTERP_SENDER_SP, -1),
	};
	*why = RTI_BAD_VALUE;
	if (!ret->interp_method || !ret->interp_bcp || !ret->interp_sender_sp ||
	    ret->interp_method == ret->interp_bcp || ret->interp_method == ret->interp_sender_sp ||
	    ret->interp_bcp == ret->interp_sender_sp)
		return false;
	*why = RTI_OK;
	return true;
}

/* Fills @bp from the resolved facts and the process's code heaps: 0, 1 not set up yet, or -1
 * (refused, counted). */
static int proc_entry(struct hotspot *hs, struct hsproc *pp, uint64_t bias,
		      struct ember_hs_proc *bp)
{
	uint64_t ga = 0, data = 0, heap;
	int32_t len = 0, lg = 0;
	unsigned int i;
	int why;

	if (!hotspot_facts_check(&pp->h, bp, &why)) {
		if (why == RTI__REASONS)
			hs->st.bad_version++;
		else
			hs->st.reasons[why]++;
		return -1;
	}
	/* CodeCache::_heaps: a GrowableArray<CodeHeap*>*, NULL until the VM sets it up */
	if (rd64(pp->pid, bias + VAL(pp, CODECACHE_HEAPS), &ga))
		goto bad;
	if (!ga)
		return 1;
	if (mem_read(pp->pid, ga + VAL(pp, GROWABLE_LEN), &len, sizeof(len)) ||
	    rd64(pp->pid, ga + VAL(pp, GROWABLE_INT_DATA), &data))
		goto bad;
	if (!len)
		return 1;
	if (len < 0 || len > EMBER_HS_MAX_HEAPS)
		goto bad;
	for (i = 0; i < (unsigned int)len; i++) {
		uint64_t mem, low = 0, high = 0, seg = 0;

		if (rd64(pp->pid, data + 8ull * i, &heap))
			goto bad;
		mem = heap + VAL(pp, CODEHEAP_MEMORY);
		if (rd64(pp->pid, mem + VAL(pp, VSPACE_LOW), &low) ||
		    rd64(pp->pid, mem + VAL(pp, VSPACE_HIGH), &high) ||
		    rd64(pp->pid, heap + VAL(pp, CODEHEAP_SEGMAP) + VAL(pp, VSPACE_LOW), &seg) ||
		    mem_read(pp->pid, heap + VAL(pp, CODEHEAP_LOG2_SEG), &lg, sizeof(lg)))
			goto bad;
		if (!low || high <= low || high - low > HS_MAX_HEAP || high > EMBER_HSF_ADDR_MASK ||
		    !seg || lg < 4 || lg > 16)
			goto bad;
		bp->low[i] = low;
		bp->high[i] = high;
		bp->segmap[i] = seg;
		bp->log2_seg[i] = (__u8)lg;
	}
	bp->nr_heaps = (__u32)len;
	return 0;
bad:
	hs->st.bad_heaps++;
	return -1;
}

/* The process's last mappings read (no new read) hold an executable libjvm.so. */
/* @pid maps a libjvm.so: in its mappings read last, or read not before @min_read_ns */
static bool maps_have_libjvm(struct hotspot *hs, uint32_t pid, uint64_t min_read_ns)
{
	struct scan sc = { .found = false };
	struct proc_maps *m = proc_tracker__maps(hs->tracker, pid, min_read_ns);

	if (!m)
		return false;
	(void)proc_maps__for_each(m, on_map, &sc);
	proc_maps__put(m);
	return sc.found;
}

static void detect(struct hotspot *hs, struct hsproc *pp)
{
	struct scan sc = { .found = false };
	const struct hs_file_facts *ff;
	struct ember_hs_proc bp;
	struct rtintro_stats rs = { 0 };
	struct proc_maps *m;
	uint64_t t0 = mono_ns(), bias = 0;
	bool have_bias = false;
	unsigned int i;
	int r;

	hs->st.detections++;
	/* first, the image it runs now (not a shell's it was forked from); looked at again:
	 * mappings read since the last look (the launcher maps libjvm late) */
	m = pp->tries ? proc_tracker__maps(hs->tracker, pp->pid, pp->seen_ns)
		      : proc_tracker__image_maps(hs->tracker, pp->pid);
	pp->tries++;
	pp->seen_ns = t0;
	if (!m) {
		set_state(hs, pp, HSS_NOT);
		goto out;
	}
	(void)proc_maps__for_each(m, on_map, &sc);
	proc_maps__put(m);
	if (!sc.found) {
		/* right after exec (no libc yet), or the java launcher before it loads libjvm */
		if (pp->tries < DETECT_TRIES && (sc.launcher || (!sc.libc && pp->tries < 5)))
			set_state(hs, pp, HSS_RETRY);
		else
			set_state(hs, pp, HSS_NOT);
		goto out;
	}
	ff = file_facts(hs, pp->pid, &sc.e);
	if (!ff) {
		set_state(hs, pp, pp->tries < DETECT_TRIES ? HSS_RETRY : HSS_NOT);
		goto out;
	}
	if (ff->err == -RTI_NO_TABLES) {
		set_state(hs, pp, HSS_NOT); /* a libjvm.so that is no HotSpot */
		goto out;
	}
	if (ff->err || ff->h.missing_required) {
		if (!ff->err)
			hs->st.reasons[RTI_MISSING]++;
		set_state(hs, pp, HSS_UNSUPPORTED);
		goto out;
	}
	for (i = 0; i < ff->nr_load && !have_bias; i++) {
		if (sc.e.pgoff >= (ff->load_off[i] & ~0xfffull) &&
		    sc.e.pgoff < ff->load_off[i] + ff->load_len[i]) {
			bias = sc.e.start - sc.e.pgoff - (uint64_t)ff->load_delta[i];
			have_bias = true;
		}
	}
	if (!have_bias) {
		hs->st.reasons[RTI_BAD_POINTER]++;
		set_state(hs, pp, HSS_UNSUPPORTED);
		goto out;
	}
	pp->h = ff->h;
	r = rtintro_hotspot_resolve(&pp->h, bias, rd_cb, (void *)(uintptr_t)pp->pid, &rs);
	if (r && pp->tries < RESOLVE_TRIES) {
		/* read while ld.so was relocating libjvm (the launcher's dlopen; test_java's fake
		 * JVM beside a loaded CI lane: "bad layout", its names never read): the tables
		 * held values not relocated yet; looked at again before calling it unsupported */
		set_state(hs, pp, HSS_RETRY);
		goto out;
	}
	for (i = 0; i < RTI__REASONS; i++)
		hs->st.reasons[i] += rs.reason[i];
	if (r) {
		set_state(hs, pp, HSS_UNSUPPORTED);
		goto out;
	}
	r = proc_entry(hs, pp, bias, &bp);
	if (r > 0) {
		hs->st.not_ready++;
		set_state(hs, pp, pp->tries < DETECT_TRIES ? HSS_RETRY : HSS_UNSUPPORTED);
		goto out;
	}
	if (r < 0) {
		set_state(hs, pp, HSS_UNSUPPORTED);
		goto out;
	}
	if (sampler__hs_set_proc(hs->sampler, pp->pid, &bp)) {
		hs->st.procs_dropped++;
		set_state(hs, pp, HSS_NOT);
		goto out;
	}
	set_state(hs, pp, HSS_ON);
out:
	hs->st.detect_ns += mono_ns() - t0;
}

void hotspot__sampled(struct hotspot *hs, uint32_t pid)
{
	struct hsproc *pp;
	uint64_t dev, ino;

	if (!hs || !pid)
		return;
	pp = proc_find(hs, pid);
	if (pp) {
		if (pp->state == HSS_RETRY && mono_ns() - pp->seen_ns >= HS_RETRY_NS) {
			detect(hs, pp);
		} else if (pp->state == HSS_NOT && mono_ns() - pp->seen_ns >= HS_NOT_RECHECK_NS) {
			/* an exec since (a shell that became java)? its executable tells */
			pp->seen_ns = mono_ns();
			if (!proc_tracker__exe_id(hs->tracker, pid, HS_NOT_RECHECK_NS, &dev, &ino) &&
			    (ino != pp->exe_ino || dev != pp->exe_dev)) {
				pp->exe_ino = ino;
				pp->exe_dev = dev;
				pp->tries = 0;
				pp->reread = false; /* a new image: read again once, as a new process */
				detect(hs, pp);
			} else {
				/*
				 * a program that loaded libjvm itself (JNI_CreateJavaVM, dlopen) since it
				 * was looked at: the first time, a read of its own (a process looked at
				 * while it was still loading libjvm shows it now); later, the mappings
				 * others read (at a new address)
				 */
				bool fresh = !pp->reread;

				pp->reread = true;
				if (maps_have_libjvm(hs, pid, fresh ? pp->seen_ns : 0)) {
					pp->tries = 0;
					detect(hs, pp);
				}
			}
		}
		return;
	}
	/* its exit told (its last samples, handled after it, say "new" again): its ended state
	 * names them, no new one is made */
	if (proc_tracker__gone(hs->tracker, pid))
		return;
	if (proc_tracker__ext_count(hs->tracker, hs->ext) >= hs->o.max_procs) {
		hs->st.procs_dropped++;
		return;
	}
	pp = proc_tracker__ext(hs->tracker, hs->ext, pid, true);
	if (!pp)
		return;
	hs->st.mem_bytes += sizeof(*pp);
	pp->pid = pid;
	if (proc_tracker__exe_id(hs->tracker, pid, PROC_EXE_MAX_AGE_NS, &dev, &ino) == 0) {
		pp->exe_ino = ino;
		pp->exe_dev = dev;
	}
	detect(hs, pp);
}

/* --- frames ------------------------------------------------------------------------------- */

static struct hsname *name_slot(struct hotspot *hs, struct hsproc *pp, uint64_t key)
{
	size_t i, mask;

	if (!pp->cap || pp->n >= pp->cap / 2) {
		size_t cap = pp->cap ? pp->cap * 2 : 64;
		struct hsname *nt;

		if (pp->n >= hs->o.max_names) {
			memset(pp->names, 0, pp->cap * sizeof(*pp->names));
			pp->n = 0;
			hs->st.name_evictions++;
		} else {
			nt = calloc(cap, sizeof(*nt));
			if (!nt)
				return NULL;
			for (i = 0; i < pp->cap; i++) {
				size_t j;

				if (!pp->names[i].key)
					continue;
				for (j = hash_mix64(pp->names[i].key) & (cap - 1); nt[j].key;
				     j = (j + 1) & (cap - 1))
					;
				nt[j] = pp->names[i];
			}
			free(pp->names);
			hs->st.mem_bytes += (cap - pp->cap) * sizeof(*nt);
			pp->names = nt;
			pp->cap = cap;
		}
	}
	mask = pp->cap - 1;
	for (i = hash_mix64(key) & mask; pp->names[i].key; i = (i + 1) & mask)
		if (pp->names[i].key == key)
			return &pp->names[i];
	return &pp->names[i];
}

/* "name_[j]", or with a source file "name (file:line)_[j]" (core/model/frame.h) */
static int intern_src(struct hotspot *hs, uint32_t pid, const char *s, size_t len,
		      const struct sbuf *file, int64_t line)
{
	struct frame f = { .kind = FRAME_JIT, .form = FRAME_SYMBOL, .name = s, .name_len = len };
	struct sbuf out;
	int r;

	if (file && file->len) {
		f.file = file->buf;
		f.file_len = file->len;
		f.line = line;
	}
	sbuf_init(&out);
	frame_format(&out, &f);
	if (sbuf_error(&out)) {
		sbuf_fini(&out);
		return -ENOMEM;
	}
	r = proc_tracker__intern_name(hs->tracker, pid, hs->names, out.buf, out.len);
	sbuf_fini(&out);
	return r < 0 ? -ENOMEM : r;
}

static int intern(struct hotspot *hs, uint32_t pid, const char *s, size_t len)
{
	return intern_src(hs, pid, s, len, NULL, 0);
}

static int placeholder(struct hotspot *hs, uint32_t pid, unsigned int kind)
{
	static const char *const what[] = { "[hotspot]", "[hotspot interpreted]",
					    "[hotspot compiled]", "[hotspot stub]" };
	const char *s = what[kind & 3];

	hs->st.frames_unnamed++;
	return intern(hs, pid, s, strlen(s));
}

/* A method's name interned (with lines, its file and the line of bytecode index @bci, < 0 when
 * not known): 0 and *@id, -1 unreadable, -ENOMEM. */
static int method_id(struct hotspot *hs, struct hsproc *pp, uint64_t method, int32_t bci,
		     int32_t *id)
{
	int64_t line = 0;
	int r;

	sbuf_reset(&hs->name);
	r = method_name(pp, method, &hs->name);
	if (sbuf_error(&hs->name))
		return -ENOMEM;
	if (r)
		return -1;
	sbuf_reset(&hs->file);
	if (hs->o.lines) {
		if (method_source(pp, method, bci, &hs->file, &line))
			hs->st.lines_unknown++;
		else if (line > 0)
			hs->st.lines++;
		else
			hs->st.lines_unknown++;
		if (sbuf_error(&hs->file))
			return -ENOMEM;
	}
	r = intern_src(hs, pp->pid, hs->name.buf, hs->name.len, &hs->file, line);
	if (r < 0)
		return r;
	*id = r;
	return 0;
}

int hotspot__frame_names(struct hotspot *hs, uint32_t pid, uint64_t word, uint32_t *ids,
			 size_t max)
{
	unsigned int kind, aux;
	uint64_t key, addr, method = 0, now, chain[HOTSPOT_MAX_INLINE];
	int32_t id, bcis[HOTSPOT_MAX_INLINE];
	struct hsproc *pp;
	struct hsname *e;
	int r, c = 0, n = 0;

	if (!hs || !EMBER_HSF_IS(word) || !max)
		return -EINVAL;
	kind = EMBER_HSF_KIND(word);
	aux = EMBER_HSF_AUX(word);
	addr = word & EMBER_HSF_ADDR_MASK;
	/* a compiled frame's name is by its pc (the methods inlined there); an interpreted one's
	 * by its method, and with lines by its bytecode index too */
	key = kind == EMBER_HSF_COMPILED || (kind == EMBER_HSF_INTERP && hs->o.lines)
		      ? word
		      : word & ~(0x3fffull << EMBER_HSF_AUX_SHIFT);
	/* its image's state, or, exited or exec'ed, the last one's while kept */
	pp = proc_tracker__ext_last(hs->tracker, hs->ext, pid);
	if (!pp || (pp->state != HSS_ON && pp->state != HSS_GONE) || !addr)
		goto unnamed;
	e = name_slot(hs, pp, key);
	if (!e)
		return -ENOMEM;
	now = mono_ns();
	if (e->key == key) {
		if (kind != EMBER_HSF_COMPILED || now - e->checked < HS_RECHECK_NS)
			goto have;
		/* the code cache reuses freed nmethods' memory: still that method's? */
		hs->st.name_rechecks++;
		e->checked = now;
		r = nmethod_method(pp, addr, &method);
		if (r == -ESRCH || (!r && method == e->method))
			goto have;
	}
	hs->st.names++;
	if (kind == EMBER_HSF_STUB) {
		sbuf_reset(&hs->name);
		r = blob_name(pp, addr, &hs->name);
		if (sbuf_error(&hs->name))
			return -ENOMEM;
		if (r)
			goto unnamed; /* not cached: read again next time */
		r = intern(hs, pid, hs->name.buf, hs->name.len);
		if (r < 0)
			return r;
		id = r;
	} else {
		int32_t bci = -1;

		if (kind == EMBER_HSF_INTERP) {
			method = addr;
			bci = aux < EMBER_HSF_AUX_NONE ? (int32_t)aux : -1;
		} else if (nmethod_method(pp, addr, &method)) {
			goto unnamed;
		} else {
			/* the methods inlined at this pc, innermost first (expanded below); the
			 * outermost is the method itself, at the bytecode index its scope says */
			c = inlined(pp, addr, aux, chain, bcis, HOTSPOT_MAX_INLINE);
			if (c > 0 && chain[c - 1] == method)
				bci = bcis[c - 1];
		}
		r = method_id(hs, pp, method, bci, &id);
		if (r == -ENOMEM)
			return r;
		if (r)
			goto unnamed;
	}
	if (e->key != key)
		pp->n++;
	*e = (struct hsname){ .key = key, .method = method, .checked = now, .n = 1 };
	e->id[0] = id;
	if (kind == EMBER_HSF_COMPILED) {
		if (c < 0)
			hs->st.inline_unreadable++;
		for (int k = c - 2; k >= 0 && e->n < HOTSPOT_MAX_INLINE; k--) {
			r = method_id(hs, pp, chain[k], bcis[k], &id);
			if (r == -ENOMEM)
				return r;
			if (r) {
				hs->st.inline_unreadable++;
				break;
			}
			e->id[e->n++] = id;
			hs->st.inline_frames++;
		}
	}
have:
	if (kind == EMBER_HSF_STUB)
		hs->st.frames_stub++;
	else
		hs->st.frames++;
	for (uint32_t k = 0; k < e->n && (size_t)n < max; k++)
		ids[n++] = (uint32_t)e->id[k];
	return n;
unnamed:
	r = placeholder(hs, pid, kind);
	if (r < 0)
		return r;
	ids[0] = (uint32_t)r;
	return 1;
}

struct carry {
	struct hotspot *hs;
	int err;
};

static void carry_one(void *arg, uint32_t pid, void *state, bool ended)
{
	struct carry *c = arg;
	struct hsproc *pp = state;
	size_t j;
	uint32_t k;
	int r;

	(void)pid;
	(void)ended;
	for (j = 0; j < pp->cap; j++) {
		struct hsname *e = &pp->names[j];

		if (!e->key)
			continue;
		for (k = 0; k < e->n; k++) {
			r = strtab__carry(c->hs->names, (uint32_t)e->id[k]);
			if (r < 0)
				break;
			e->id[k] = r;
		}
		if (k == e->n)
			continue;
		/* dropped from the cache: read again when sampled; the slot stays taken with a
		 * key no word has (bit 63 clear) */
		e->key = 1;
		c->err = -ENOMEM;
	}
}

int hotspot__names_carry(struct hotspot *hs)
{
	struct carry c = { .hs = hs };

	if (!hs)
		return 0;
	proc_tracker__ext_each(hs->tracker, hs->ext, carry_one, &c);
	return c.err;
}

void hotspot__prune(struct hotspot *hs)
{
	if (!hs)
		return;
	/* what ended HS_GONE_KEEP_NS ago (its exit, exec or the tracker's sweep told) */
	proc_tracker__ext_prune(hs->tracker, hs->ext);
}

struct hotspot *hotspot__new(struct sampler *sampler, struct strtab *names,
			     const struct hotspot_opts *o)
{
	struct hotspot_opts def = HOTSPOT_OPTS_DEFAULT;
	struct hotspot *hs = calloc(1, sizeof(*hs));

	if (!hs)
		goto fail;
	hs->ext = -1;
	hs->o = o ? *o : def;
	if (!hs->o.max_procs)
		hs->o.max_procs = def.max_procs;
	if (!hs->o.max_names)
		hs->o.max_names = def.max_names;
	snprintf(hs->proc_root, sizeof(hs->proc_root), "%s",
		 hs->o.proc_root ? hs->o.proc_root : "/proc");
	hs->o.proc_root = hs->proc_root;
	hs->tracker = hs->o.procs;
	if (!hs->tracker) {
		struct proc_tracker_opts po = { .proc_root = hs->proc_root };

		hs->tracker = hs->own_tracker = proc_tracker__new(&po);
		if (!hs->tracker)
			goto fail;
	}
	{
		struct proc_ext_ops xo = { .name = "hotspot", .size = sizeof(struct hsproc),
					   .keep_ns = HS_GONE_KEEP_NS, .ended = proc_ended,
					   .release = proc_release, .ctx = hs };

		hs->ext = proc_tracker__ext_register(hs->tracker, &xo);
		if (hs->ext < 0)
			goto fail;
	}
	hs->files = hs->o.files;
	if (!hs->files) {
		hs->files = hs->own_files = filecache__new(NULL);
		if (!hs->files)
			goto fail;
	}
	hs->sampler = sampler;
	hs->names = names;
	sbuf_init(&hs->name);
	sbuf_init(&hs->file);
	return hs;
fail:
	hotspot__free(hs);
	errno = ENOMEM;
	return NULL;
}

void hotspot__free(struct hotspot *hs)
{
	if (!hs)
		return;
	if (hs->tracker && hs->ext >= 0)
		proc_tracker__ext_unregister(hs->tracker, hs->ext);
	proc_tracker__free(hs->own_tracker);
	filecache__free(hs->own_files);
	sbuf_fini(&hs->name);
	sbuf_fini(&hs->file);
	free(hs);
}

void hotspot__stats(struct hotspot *hs, struct hotspot_stats *ret)
{
	if (!hs) {
		memset(ret, 0, sizeof(*ret));
		return;
	}
	*ret = hs->st;
	(void)sampler__hs_stats(hs->sampler, &ret->bpf);
	ret->walk_ns_per_walk = ret->bpf.walks ? ret->bpf.walk_ns / ret->bpf.walks : 0;
}

/* --- the runtime interface (unwind/runtime.h) --------------------------------------------- */

static void rt_sampled(void *rt, uint32_t pid)
{
	hotspot__sampled(rt, pid);
}

/* a word in place of its frame's ip: the ip is in the word (its pc offset) */
static int rt_frame_names(void *rt, uint32_t pid, uint64_t word, uint64_t ip, bool leaf,
			  uint32_t *ids, size_t max)
{
	(void)ip;
	(void)leaf;
	return hotspot__frame_names(rt, pid, word, ids, max);
}

static int rt_names_carry(void *rt)
{
	return hotspot__names_carry(rt);
}

static void rt_prune(void *rt)
{
	hotspot__prune(rt);
}

_Static_assert(HOTSPOT_MAX_INLINE <= RUNTIME_MAX_FRAMES, "the ingest's room for a word's frames");

const struct runtime_ops hotspot_runtime_ops = {
	.name = "hotspot",
	.words = RUNTIME_WORDS_IN_PLACE,
	.ustack_flag = EMBER_USTACK_HS,
	.max_frames = HOTSPOT_MAX_INLINE,
	.sampled = rt_sampled,
	.frame_names = rt_frame_names,
	.names_carry = rt_names_carry,
	.prune = rt_prune,
};
