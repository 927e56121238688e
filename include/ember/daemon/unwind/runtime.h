/* SPDX-License-Identifier: MIT */
/*
 * runtime: the readers of language runtimes' own data behind one interface: CPython (python.h),
 * V8 (v8.h) and HotSpot (hotspot.h). Each reader finds the processes it reads by the files they
 * map, reads its per-file facts once per file (elf/filecache.h, by build-id and identity), keeps
 * its per-process state as an extension of the process manager (proc/proctrack.h: made at a
 * process's first sample, ended at its exec or exit, released by the manager's rule: a process
 * never sampled costs none of them anything), and names the frames its BPF walk marked. main.c
 * makes each from its configuration and adds it to the ingest's set; the ingest (naming each
 * group's frames) and the worker (names carried into a new table, pruning) call them all alike
 * through the set, and know none of them by name.
 *
 * How a reader's frames come out of the BPF walk (sample/bpf_shared.h) says how they are named:
 *   RUNTIME_WORDS_AFTER     one word per frame after the native ips, with the index of the
 *                           native ip it names (V8: EMBER_V8F_*); a frame may expand into
 *                           several (functions inlined into it)
 *   RUNTIME_WORDS_IN_PLACE  words in place of the native ips of its frames (HotSpot:
 *                           EMBER_HSF_*), each one or more frames (methods inlined)
 *   RUNTIME_WORDS_NONE      no words: its frames are merged into the native ones afterwards
 *                           (CPython: its own BPF records, ops->merge)
 *
 * Worker thread only, as the readers are.
 */
#ifndef EMBER_RUNTIME_H
#define EMBER_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sampler_group;

enum runtime_words {
	RUNTIME_WORDS_NONE,
	RUNTIME_WORDS_AFTER,
	RUNTIME_WORDS_IN_PLACE,
};

struct runtime_ops {
	const char *name;	   /* "python", "v8", "hotspot": its config section and stats */
	enum runtime_words words;
	uint32_t ustack_flag;	   /* EMBER_USTACK_*: the walk stored this reader's words */
	unsigned int max_frames;   /* frames one word may name, at most */
	/* A process was noted (its first sample, a capture's): examine it. May be NULL. */
	void (*noted)(void *rt, uint32_t pid);
	/* A group of @pid's samples is being ingested: examine it if it is new. May be NULL. */
	void (*sampled)(void *rt, uint32_t pid);
	/* The frames of @word (ids in the names table, root first, at most @max in @ids); @ip the
	 * native ip it stands for (the sampled pc when @leaf). Count; -1: name the native ip;
	 * -ENOMEM. NULL for RUNTIME_WORDS_NONE. */
	int (*frame_names)(void *rt, uint32_t pid, uint64_t word, uint64_t ip, bool leaf,
			   uint32_t *ids, size_t max);
	/* The group's frames @native (@n, root first) with this reader's frames merged in: count
	 * and *@ret, or -errno. NULL unless RUNTIME_WORDS_NONE. */
	int (*merge)(void *rt, const struct sampler_group *g, const uint32_t *native, size_t n,
		     const uint32_t **ret);
	/* The names table started over: carry the ids held. 0, or -ENOMEM (named again). */
	int (*names_carry)(void *rt);
	/* Housekeeping (every 5 s): forget what ended. */
	void (*prune)(void *rt);
};

extern const struct runtime_ops python_runtime_ops, v8_runtime_ops, hotspot_runtime_ops;

#define RUNTIME_MAX 4
#define RUNTIME_MAX_FRAMES 9 /* frames one word names at most, whatever the reader */

struct runtime_set {
	struct {
		const struct runtime_ops *ops;
		void *rt;
	} r[RUNTIME_MAX];
	size_t n;
};

/* Adds reader @rt (NULL: nothing added) to @s. 0, or -ENOSPC. */
int runtime_set_add(struct runtime_set *s, const struct runtime_ops *ops, void *rt);
/* The reader named @name in @s, or NULL. */
void *runtime_set_get(const struct runtime_set *s, const char *name);
void runtime_set_noted(const struct runtime_set *s, uint32_t pid);
void runtime_set_sampled(const struct runtime_set *s, uint32_t pid);
/* Each reader's names_carry(): the first failure's name in *@failed (NULL: none). 0 or -ENOMEM. */
int runtime_set_names_carry(const struct runtime_set *s, const char **failed);
void runtime_set_prune(const struct runtime_set *s);

#endif
