// SPDX-License-Identifier: MIT
/* The sampler's process events (exec, exit, a new process's first sample, CPython names), on the
 * worker, fanned out to the stages that keep per-process state. */
#include <stdlib.h>

#include "ember/daemon/pipeline/emberd.h"
#include "ember/daemon/unwind/runtime.h"

/* A new process was sampled: capture its mappings while it lives; the files its first walk
 * reached (@ips) get their tables at its list. */
void emberd_on_new_pid(uint32_t pid, bool exec_follows, const uint64_t *ips, size_t n, void *ctx)
{
	struct emberd *d = ctx;

	if (exec_follows) {
		/* sampled before an exec later in this batch: /proc may show the new image
		 * already, so the old one is named from the tracker's snapshot (a fork's copy of
		 * its parent's), retired at the exec; the new image is listed by the exec and
		 * noted at its own first sample */
		symbolizer__note_pid_before_exec(d->sym, pid);
		return;
	}
	/* one read for the three below; none for a fork that runs its parent's image as the
	 * tracker has it (and the walker's list its parent's, copied at the fork) */
	(void)proc_tracker__first_sample(d->procs, pid);
	symbolizer__note_pid(d->sym, pid);
	unwinder__note_pid(d->unwind, pid);
	unwinder__reached(d->unwind, pid, ips, n, 0); /* its samples are counted at ingest */
	runtime_set_noted(ingest__runtimes(d->ingest), pid); /* e.g. a CPython's map entry */
}

/* A sampled process's leader exited: gone, or other threads still run (its next exit tells). */
void emberd_on_exit_pid(uint32_t pid, uint64_t time_ns, bool gone, void *ctx)
{
	struct emberd *d = ctx;

	(void)gone;
	proc_tracker__exit_at(d->procs, pid, time_ns);
	symbolizer__check_pid(d->sym, pid);
	/* the BPF program deleted its list at the exit; a thread left behind notes it again */
	unwinder__forget_pid_at(d->unwind, pid, time_ns);
	/* (the Python, V8 and HotSpot readers' and the exporter's identity states: ended by the
	 * tracker's exit above) */
}

/* EMBERD_EXEC_LIST=1: every exec listed at once, seeded or not (the behaviour before seeded
 * execs were left to BPF; for comparisons). Read once, on the worker. */
static bool exec_list_always(void)
{
	static int v = -1;

	if (v < 0) {
		const char *e = getenv("EMBERD_EXEC_LIST");

		v = e && *e && *e != '0';
	}
	return v;
}

/*
 * A process called exec (every one, sampled or not): its cached mappings are the old
 * image's. The new image is listed for the walker now, from its first instruction, so that a
 * process living a few milliseconds is walked with its tables from its first sample; its next
 * sample calls on_new_pid() again (the BPF program forgot it too), when ld.so has mapped the
 * libraries. @gone: its exit is in the same batch (it lived less than process.exec_batch_us):
 * nothing to read or list. @img: its executable as the kernel told it, kept by the tracker for
 * a process gone before any read.
 */
void emberd_on_exec(uint32_t pid, uint64_t time_ns, bool gone, const struct sampler_image *img,
		    void *ctx)
{
	struct emberd *d = ctx;
	/* the kernel's word on the new executable: what names its samples if it is gone before
	 * any read (the file found by device and inode among those read before, else opened by
	 * the exec's path: mapfile.h) */
	struct procmaps_entry ke = { .start = img ? img->start : 0, .end = img ? img->end : 0,
				     .pgoff = img ? img->pgoff : 0, .inode = img ? img->ino : 0,
				     .dev_major = img ? img->dev_major : 0,
				     .dev_minor = img ? img->dev_minor : 0, .r = true, .x = true,
				     .exec_image = true, .kind = PROCMAPS_FILE, .path = "" };
	char path[EMBER_EXEC_PATH_MAX];
	int n = ke.inode ? sampler__exec_path(d->sampler, pid, time_ns, path, sizeof(path)) : -1;

	if (n > 0) {
		ke.path = path;
		ke.path_len = (size_t)n;
	}

	/* kept for the old image's samples not drained yet (up to two ticks' worth); before the
	 * tracker drops its snapshots: a fork's copy names them if /proc was read after the exec */
	symbolizer__retire_pid(d->sym, pid, time_ns);
	proc_tracker__exec(d->procs, pid, gone, &ke, time_ns);
	/* the BPF program deleted its list at the exec; deleted again if written since (from a
	 * read before the exec): it would walk the new image wrong */
	unwinder__forget_pid_at(d->unwind, pid, time_ns);
	if (!gone)
		unwinder__exec_pid(d->unwind, pid, img && img->seeded && !exec_list_always());
	/* (the Python, V8 and HotSpot readers' and the exporter's identity states: ended by the
	 * tracker's exec above) */
}

/*
 * A new process by fork: it runs its parent's image, so it is listed for the
 * walker with its parent's list and shares its parent's mappings, no /proc read. @gone: its exec
 * or exit is in the same batch: nothing to do.
 */
void emberd_on_fork(uint32_t parent, uint32_t child, uint64_t time_ns, bool gone, void *ctx)
{
	struct emberd *d = ctx;

	proc_tracker__fork(d->procs, parent, child, gone,
			   !gone && !unwinder__fork_pid(d->unwind, parent, child), time_ns);
}

/* A code object's names, sent by the BPF program at its first sample in a process. */
void emberd_on_pyname(const struct ember_py_name_rec *r, void *ctx)
{
	struct emberd *d = ctx;

	if (d->py)
		python__on_name(d->py, r);
}

