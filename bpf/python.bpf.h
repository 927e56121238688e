/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The Python frames of the sampled thread, included once by sampler.bpf.c before
 * unwind.bpf.h, whose walk_user() calls python_walk() first: for a process userspace marked as
 * a CPython it knows (py_procs: addresses and its version's offsets, src/daemon/unwind/
 * python.c), the thread's PyThreadState is found, its frame chain walked leaf first, and each
 * frame's code object address and tag stored at the top of the user stack's ips (bpf_shared.h).
 * Names are userspace's job, except for a code object this process has not sent yet: its
 * qualified name and file go to the py_names ring buffer now, so that a process that exits
 * before the next drain is still named.
 *
 * The thread: tstate->thread_id is pthread_self(), which on x86-64 (glibc, musl) is the thread
 * pointer, the fs base; the kernel keeps it in task_struct.thread.fsbase (its offset comes from
 * userspace, read from the kernel's BTF: no CO-RE, so libbpf does not parse the BTF at start).
 * This works for 3.10 (no native_thread_id) and in pid namespaces alike. The interpreter's
 * thread list is searched once per thread (py_threads caches the answer, checked at each use and
 * dropped when the thread exits); the GIL holder, which 3.11 keeps, may be another thread.
 *
 * Verifier: python_walk() is a global function, verified once on its own, its caller seeing one
 * return value: inlined, each of its ways out led the verifier through the native walk again
 * (36k instructions processed instead of 10.5k, and 0.2 s more at start). The frame walk and
 * the search are bpf_loop() callbacks; offsets into the scratch buffers are masked to their
 * size.
 */
#ifndef EMBER_PYTHON_BPF_H
#define EMBER_PYTHON_BPF_H

/* Record where each frame was (for file:line): set between open and load. */
const volatile bool py_lines = false;

/* Python processes (tgid), written by userspace; size set before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct ember_py_proc);
	__uint(max_entries, 4096);
} py_procs SEC(".maps");

/* Thread (tid) -> its PyThreadState, as found last; checked against the fs base at each use. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 16384);
} py_threads SEC(".maps");

/* Code objects whose names were sent: (pid, tag, address). */
struct py_known_key {
	__u64 code;
	__u32 pid;
	__u32 tag;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, struct py_known_key);
	__type(value, __u8);
	__uint(max_entries, 16384);
} py_known SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} py_names SEC(".maps");

/* Code objects this CPU found in py_known lately, direct-mapped: a hash lookup per frame cost
 * about as much as reading the frame. */
#define PY_SEEN_SLOTS 64
struct py_seen {
	__u64 code;
	__u32 pid;
	__u32 tag;
};

/* Per CPU: a frame and a code object as read (offsets are masked to 127 and 255: the buffers
 * are larger than any read, so a masked 8-byte load stays inside), and the known cache. */
struct py_scratch {
	__u8 frame[136];
	__u8 code[264];
	struct py_seen seen[PY_SEEN_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct py_scratch);
	__uint(max_entries, NEST_MAX); /* one per level (nest.bpf.h) */
} py_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct ember_py_bpf_stats);
	__uint(max_entries, 1);
} py_stats SEC(".maps");

#define PY_FRAME_READ 128
#define PY_CODE_READ  192

static __always_inline __u64 py_ld64(const __u8 *buf, __u32 off)
{
	return *(const __u64 *)(buf + off);
}

/* The walk time's bucket: 0 below 256 ns, b for [2^(b+7), 2^(b+8)) ns, the last from ~4 ms.
 * (A binary search: BPF has no count-leading-zeros.) */
static __always_inline __u32 py_log2_bucket(__u64 ns)
{
	__u32 b = 0;

	if (ns >> 32)
		return EMBER_PY_HIST - 1;
	if (ns >> 16) {
		b += 16;
		ns >>= 16;
	}
	if (ns >> 8) {
		b += 8;
		ns >>= 8;
	}
	if (ns >> 4) {
		b += 4;
		ns >>= 4;
	}
	if (ns >> 2) {
		b += 2;
		ns >>= 2;
	}
	if (ns >> 1)
		b += 1;
	b = b > 7 ? b - 7 : 0;
	return b < EMBER_PY_HIST ? b : EMBER_PY_HIST - 1;
}

/* The thread search's state, for its bpf_loop() callback (one thread state per call). */
struct py_search {
	const struct ember_py_proc *p;
	__u64 ts;   /* the thread state to look at next */
	__u64 want; /* the fs base of the sampled thread */
	__u64 found;
	__u32 steps;
};

static long py_search_step(__u32 i, void *ctx)
{
	struct py_search *s = ctx;
	__u64 id;

	if (!s->ts)
		return 1;
	s->steps++;
	if (bpf_probe_read_user(&id, sizeof(id), (void *)(s->ts + s->p->tstate_thread_id)))
		return 1;
	if (id == s->want) {
		s->found = s->ts;
		return 1;
	}
	if (bpf_probe_read_user(&s->ts, sizeof(s->ts), (void *)(s->ts + s->p->tstate_next)))
		return 1;
	return 0;
}

/* The sampled thread's PyThreadState, or 0. */
static __always_inline __u64 py_thread_state(const struct ember_py_proc *p, __u32 tid,
					     struct ember_py_bpf_stats *ps)
{
	struct py_search s = { .p = p };
	__u64 task = bpf_get_current_task(), id, interp, *cached;

	if (!p->fsbase_off ||
	    bpf_probe_read_kernel(&s.want, sizeof(s.want), (void *)(task + p->fsbase_off)) ||
	    !s.want)
		return 0;
	cached = bpf_map_lookup_elem(&py_threads, &tid);
	if (cached &&
	    !bpf_probe_read_user(&id, sizeof(id), (void *)(*cached + p->tstate_thread_id)) &&
	    id == s.want)
		return *cached;
	ps->searches++;
	if (bpf_probe_read_user(&interp, sizeof(interp), (void *)(p->runtime + p->interp_head)) ||
	    !interp || bpf_probe_read_user(&s.ts, sizeof(s.ts), (void *)(interp + p->threads_head)))
		return 0;
	bpf_loop(EMBER_PY_MAX_THREADS, py_search_step, &s, 0);
	ps->search_steps += s.steps;
	if (s.found)
		bpf_map_update_elem(&py_threads, &tid, &s.found, BPF_ANY);
	return s.found;
}

/* Reads a PyUnicode object's data (compact strings: all code object names are) into @dst. */
static __always_inline void py_read_str(const struct ember_py_proc *p, __u64 str, char *dst,
					__u32 size, __u32 *ret_len, __u8 *ret_kind, __u8 *ret_ascii)
{
	__u64 len, data, n;
	__u32 state, kind;

	*ret_kind = 0;
	if (!str || bpf_probe_read_user(&len, sizeof(len), (void *)(str + p->str_length)) ||
	    bpf_probe_read_user(&state, sizeof(state), (void *)(str + p->str_state)))
		return;
	kind = (state >> 2) & 7;
	if (!(state & (1 << 5)) || (kind != 1 && kind != 2 && kind != 4))
		return; /* not compact: userspace reads it */
	data = str + ((state & (1 << 6)) ? p->str_ascii_size : p->str_compact_size);
	n = len * kind;
	if (n > size)
		n = size;
	if (bpf_probe_read_user(dst, n, (void *)data))
		return;
	*ret_len = len > 0xffffffffULL ? 0xffffffffU : (__u32)len;
	*ret_kind = (__u8)kind;
	*ret_ascii = !!(state & (1 << 6));
}

/* Sends the names of the code object read into @code (the scratch) at @addr, once per process. */
static __always_inline void py_send_name(const struct ember_py_proc *p, __u32 pid, __u64 addr,
					 __u32 tag, struct py_scratch *sc,
					 struct ember_py_bpf_stats *ps)
{
	struct py_known_key k = { .code = addr, .pid = pid, .tag = tag };
	struct py_seen *seen = &sc->seen[((addr >> 4) ^ (addr >> 12)) & (PY_SEEN_SLOTS - 1)];
	const __u8 *code = sc->code;
	struct ember_py_name_rec *r;
	__u8 yes = 1;

	if (seen->code == addr && seen->pid == pid && seen->tag == tag)
		return;
	if (bpf_map_lookup_elem(&py_known, &k)) {
		seen->code = addr;
		seen->pid = pid;
		seen->tag = tag;
		return;
	}
	r = bpf_ringbuf_reserve(&py_names, sizeof(*r), 0);
	if (!r) {
		ps->name_drops++;
		return;
	}
	r->code = addr;
	r->pid = pid;
	r->tag = tag;
	r->firstlineno = *(const __s32 *)(code + (p->code_firstlineno & 255));
	r->name_len = r->file_len = 0;
	r->name_ascii = r->file_ascii = 0;
	py_read_str(p, py_ld64(code, p->code_name & 255), r->name, EMBER_PY_NAME_MAX, &r->name_len,
		    &r->name_kind, &r->name_ascii);
	py_read_str(p, py_ld64(code, p->code_filename & 255), r->file, EMBER_PY_FILE_MAX,
		    &r->file_len, &r->file_kind, &r->file_ascii);
	/* with lines, userspace reads the line table while the process lives: wake it now */
	bpf_ringbuf_submit(r, py_lines ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	bpf_map_update_elem(&py_known, &k, &yes, BPF_ANY);
	ps->names++;
}

/* The frame walk's state, for its bpf_loop() callback (one frame per call). */
struct py_walk {
	const struct ember_py_proc *p;
	struct ember_ustack *st;
	struct py_scratch *sc;
	struct ember_py_bpf_stats *ps;
	__u64 frame; /* the next frame to read */
	__u64 hash;
	__u32 pid;
	__u32 n;     /* frames stored */
	__u32 flags; /* EMBER_USTACK_PY* */
};

static long py_step(__u32 i, void *ctx)
{
	struct py_walk *w = ctx;
	const struct ember_py_proc *p = w->p;
	struct py_scratch *sc = w->sc;
	__u64 code, word0, word1 = 0, fsz, csz;
	__u32 tag, slot, n = w->n;
	__u8 entry = 0;

	if (!w->frame)
		return 1; /* the first frame of the thread: the walk is whole */
	fsz = p->frame_size;
	if (fsz > PY_FRAME_READ)
		fsz = PY_FRAME_READ;
	if (bpf_probe_read_user(sc->frame, fsz, (void *)w->frame))
		goto bad;
	code = py_ld64(sc->frame, p->frame_code & 127);
	w->frame = py_ld64(sc->frame, p->frame_previous & 127);
	if (p->kind != EMBER_PY_FRAMEOBJ)
		entry = sc->frame[p->frame_entry & 127];
	if (p->kind == EMBER_PY_ENTRY_SHIM && entry == p->entry_value) {
		/* a C eval call's shim: the frame stored last was the first it ran */
		slot = EMBER_MAX_STACK_DEPTH - 2 * n;
		barrier_var(slot); /* the verifier sees the check on the index itself */
		if (n && slot < EMBER_MAX_STACK_DEPTH) {
			w->st->ips[slot] |= EMBER_PYF_ENTRY;
			w->hash = (w->hash ^ slot) * 0x100000001b3ULL;
		}
		return 0;
	}
	if (n >= EMBER_PY_MAX_FRAMES) {
		w->flags |= EMBER_USTACK_PY_TRUNC;
		w->ps->truncated++;
		return 1;
	}
	csz = p->code_size;
	if (csz > PY_CODE_READ)
		csz = PY_CODE_READ;
	if (!code || bpf_probe_read_user(sc->code, csz, (void *)code) ||
	    py_ld64(sc->code, 8) != p->code_type)
		goto bad; /* a frame being set up or torn down, or not a frame at all */
	tag = EMBER_PY_TAG(py_ld64(sc->code, p->code_filename & 255),
			   py_ld64(sc->code, p->code_name & 255),
			   *(const __s32 *)(sc->code + (p->code_firstlineno & 255)));
	py_send_name(p, w->pid, code, tag, sc, w->ps);
	word0 = code & EMBER_PYF_ADDR_MASK;
	if (p->kind == EMBER_PY_FRAMEOBJ || (p->kind == EMBER_PY_ENTRY_FLAG && entry))
		word0 |= EMBER_PYF_ENTRY;
	if (py_lines) {
		__u64 at = py_ld64(sc->frame, p->frame_instr & 127);

		if (p->instr_ptr)
			at = at - code < 0xffffffffULL ? at - code : 0xffffffffULL;
		word1 = (at & 0xffffffffULL) << 32;
	}
	word1 |= tag;
	/* frame n at [MAX - 2 - 2n] (code word) and [MAX - 1 - 2n] (tag word) */
	slot = EMBER_MAX_STACK_DEPTH - 2 - 2 * n;
	barrier_var(slot);
	if (slot >= EMBER_MAX_STACK_DEPTH - 1)
		return 1; /* not with n < EMBER_PY_MAX_FRAMES */
	w->st->ips[slot] = word0;
	w->st->ips[slot + 1] = word1;
	w->hash = (w->hash ^ word0) * 0x100000001b3ULL;
	w->hash = (w->hash ^ word1) * 0x100000001b3ULL;
	w->n = n + 1;
	return 0;
bad:
	w->flags |= EMBER_USTACK_PY_TRUNC;
	w->ps->bad_frames++;
	return 1;
}

/*
 * Stores the current thread's Python frames at the top of @st->ips (bpf_shared.h) when process
 * @pid runs a CPython userspace knows, sets their flags in @st->flags and mixes them into
 * *@hash. Returns the number of ips entries used (0: none), which the native walk leaves alone.
 * Global (not static): see the verifier note at the top.
 */
__noinline int python_walk(__u32 pid, struct ember_ustack *st, __u64 *hash)
{
	struct py_walk w = { .st = st, .pid = pid, .flags = EMBER_USTACK_PY };
	__u32 zero = 0, tid = (__u32)bpf_get_current_pid_tgid();
	__u64 ts, t0;

	if (!st || !hash)
		return 0;
	w.p = bpf_map_lookup_elem(&py_procs, &pid);
	if (!w.p)
		return 0; /* not Python: one hash lookup is all it costs */
	w.sc = bpf_map_lookup_elem(&py_scratch, NEST_KEY);
	w.ps = bpf_map_lookup_elem(&py_stats, &zero);
	if (!w.sc || !w.ps)
		return 0;
	w.ps->walks++;
	t0 = bpf_ktime_get_ns(); /* what the walk costs, on /api/v1/stats (two clock reads) */
	ts = py_thread_state(w.p, tid, w.ps);
	if (!ts) {
		w.ps->no_thread++;
		goto out;
	}
	if (bpf_probe_read_user(&w.frame, sizeof(w.frame), (void *)(ts + w.p->tstate_frame)))
		goto out;
	if (w.p->cframe_frame != 0xffff && w.frame &&
	    bpf_probe_read_user(&w.frame, sizeof(w.frame), (void *)(w.frame + w.p->cframe_frame)))
		goto out;
	w.hash = 0xcbf29ce484222325ULL;
	/* shims take a step each without a frame stored */
	bpf_loop(2 * EMBER_PY_MAX_FRAMES + 2, py_step, &w, 0);
	w.ps->frames += w.n;
	st->flags |= w.flags | (w.n << EMBER_USTACK_PY_NR_SHIFT);
	*hash = (*hash ^ w.hash) * 0x100000001b3ULL;
out:
	t0 = bpf_ktime_get_ns() - t0;
	w.ps->walk_ns += t0;
	w.ps->walk_hist[py_log2_bucket(t0)]++;
	return 2 * w.n;
}

/* A thread exited: its cached thread state goes (a new thread may get the same fs base). */
static __always_inline void python_thread_exit(__u32 tid)
{
	bpf_map_delete_elem(&py_threads, &tid);
}

#endif
