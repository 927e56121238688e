/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Nesting of ember's programs on one CPU, included once by sampler.bpf.c before the scratch
 * maps' users. A program that runs with interrupts on (the system calls' exit, exec, fork and
 * exit tracepoints, malloc's uprobe, a page fault's software event, block I/O from a softirq)
 * can be interrupted on its CPU by another of ember's (the CPU clock's sample in its hrtimer
 * interrupt, a wakeup in an interrupt, a hardware counter's NMI). A per-CPU scratch map with one
 * entry was then written by both: the off-CPU record being built at a system call's exit took
 * the kernel stack of a wakeup that interrupted it (test_offcpu: 24 ms of a nanosleep's blocked
 * time under ...;hrtimer_wakeup;try_to_wake_up). So every scratch map has one entry per level
 * of nesting (NEST_MAX: task, softirq, hardirq, NMI), every program counts its level up on
 * entry and down on its way out (NEST_RUN), and a scratch map's key is the running program's
 * level (NEST_KEY); a program refused for NEST_MAX already running is counted (the sampler's
 * nest_refused). Counting without atomics is safe: a program interrupting another returns
 * before it resumes, so the count is back where the interrupted one left it.
 */
#ifndef EMBER_NEST_BPF_H
#define EMBER_NEST_BPF_H

#define NEST_MAX EMBER_NEST_MAX /* bpf_shared.h */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct ember_nest_state);
	__uint(max_entries, 1);
} nest SEC(".maps");

/* 0, as a key in global data, not on the stack: the nest map's, and the scratch maps' when
 * the per-CPU state cannot be had (it always can: a one-element array) */
__u32 nest_key0 = 0;

static __always_inline struct ember_nest_state *nest_get(void)
{
	return bpf_map_lookup_elem(&nest, &nest_key0);
}

/*
 * A pointer to the running program's level, the key of its entries in the scratch maps, for
 * bpf_map_lookup_elem(): in the per-CPU map's value, not on the stack (6.1 bounds the stack of
 * a program and the functions it calls to 512 bytes together, and do_sample's is near it).
 */
static __always_inline __u32 *nest_keyp(void)
{
	struct ember_nest_state *n = nest_get();

	return n ? &n->key : &nest_key0;
}
#define NEST_KEY nest_keyp()

static __always_inline bool nest_enter(void)
{
	struct ember_nest_state *n = nest_get();

	if (!n)
		return false;
	if (n->depth >= NEST_MAX) {
		n->refused++;
		return false;
	}
	n->key = n->depth++;
	return true;
}

static __always_inline void nest_leave(void)
{
	struct ember_nest_state *n = nest_get();

	if (n && n->depth) {
		n->depth--;
		n->key = n->depth ? n->depth - 1 : 0;
	}
}

/* Runs @expr (an int: the program's return value) one level up; 0 when refused. */
#define NEST_RUN(expr)                                                                             \
	({                                                                                         \
		int __nest_r = 0;                                                                  \
		if (nest_enter()) {                                                                \
			__nest_r = (expr);                                                         \
			nest_leave();                                                              \
		}                                                                                  \
		__nest_r;                                                                          \
	})

#endif
