/* SPDX-License-Identifier: MIT */
/*
 * python: Python functions by name in the stacks of CPython processes, with no help
 * from the program.
 *
 *   detection   a process sampled for the first time whose executable is named python*, or
 *               whose stack shows _PyEval_EvalFrameDefault, has its mappings read: the file
 *               (python3.X or libpython3.X.so) with _PyRuntime gives the addresses; the version
 *               comes from Py_Version (3.11+), or from the file name confirmed by a symbol new in
 *               3.10; the offsets from _Py_DebugOffsets (3.13+, checked) or a table per minor
 *               version (3.10 to 3.13). Supported processes are written to the sampler's map
 *               (struct ember_py_proc), whose program then reads the sampled thread's frames
 *               (bpf/python.bpf.h). Any other CPython (2.7, 3.9 and older, 3.14+, free-threaded,
 *               a build whose offsets do not check out) keeps native frames and is counted.
 *   names       each code object's qualified name (co_name before 3.11) and file come from the
 *               record the program sends at its first sample in a process, cached per process
 *               by (address, tag): the tag of its file, name and first line, read at every
 *               sample, so a reused address is not misnamed. Without a record (lost, or the
 *               cache was full) the code object is read from the process and its tag checked;
 *               a frame that cannot be named that way is "[unknown]_[py]", never a wrong name.
 *   merging     python__merge() puts each Python frame where the interpreter runs it: every
 *               native _PyEval_EvalFrameDefault frame is replaced by the Python frames it
 *               executed (from 3.11 one C call runs several), aligned from the root when both
 *               walks are whole, else from the leaf; Python frames with no eval frame left for
 *               them go at the root.
 *
 * Frame names: "qualname (file)_[py]", or "qualname (file:line)_[py]" with lines.
 *
 * Main thread only; non-logging (counters in python_stats).
 */
#ifndef EMBER_PYTHON_H
#define EMBER_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/elf/filecache.h"
#include "ember/daemon/elf/elfsym.h"
#include "ember/daemon/proc/mapfile.h"

#include <linux/types.h>

#include "ember/daemon/sample/bpf_shared.h"

struct sampler;
struct sampler_group;
struct strtab;

struct proc_tracker;

struct python_opts {
	bool lines;	       /* "file:line" in Python frame names */
	uint32_t max_procs;    /* CPython processes tracked (the sampler's python_procs) */
	uint32_t max_codes;    /* code objects named, over all processes */
	uint64_t max_code_bytes; /* their bytes (names, kept strings, line tables), over all
				    processes; one process at most half: past it, refused */
	const char *proc_root; /* "/proc" unless testing */
	struct proc_tracker *procs; /* where mappings come from (borrowed); NULL: its own */
	struct filecache *files;    /* per-file facts (elf/filecache.h; borrowed: the daemon's one,
				       its counters its own); NULL: one of its own, unreported */
	struct elfsym_source images; /* the symbolizer's images (elfsym.h); none: read here */
};

#define PYTHON_OPTS_DEFAULT                                                                        \
	{                                                                                          \
		.lines = false, .max_procs = 4096, .max_codes = 65536,                           \
		.max_code_bytes = 64 << 20, .proc_root = "/proc"                                   \
	}

struct python_stats {
	uint64_t procs; /* gauge: CPython processes whose Python frames are read */
	uint64_t
	    procs_unsupported;	/* gauge: CPython processes ember does not know: native frames */
	uint64_t procs_dropped; /* not tracked: max_procs reached, or the BPF map full */
	uint64_t detections;	/* processes whose mappings and files were examined */
	uint64_t detect_errors; /* ... that could not be read (gone, denied) */
	uint64_t detect_ns;	/* CPU time examining them (the kernel's BTF once included) */
	uint64_t merge_ns;	/* time naming and merging the stacks with Python frames */
	uint64_t names_ns;	/* time handling the name records */
	uint64_t samples;	/* samples with Python frames */
	uint64_t samples_unsupported; /* samples of an unsupported CPython (native frames only) */
	uint64_t frames;	      /* Python frames named */
	uint64_t frames_unknown; /* ... "[unknown]_[py]": code object gone, changed or unreadable */
	uint64_t names;		 /* name records from the BPF program */
	uint64_t code_reads;	 /* code objects read from the process instead */
	uint64_t codes;		 /* gauge: code objects cached */
	uint64_t mem_bytes;	 /* gauge: the processes' state, code objects, names, line tables */
	uint64_t code_evictions; /* caches emptied for room (max_codes) */
	uint64_t code_bytes;	 /* gauge: bytes charged to the cached code objects */
	uint64_t codes_refused;	 /* frames "[name refused]_[py]": past the process's share of
				    max_code_bytes, or the whole */
	uint64_t codes_renamed;	 /* cached code objects found another at their address (freed and
				    reused: same tag, new names): named again */
	uint64_t merged;	 /* stacks whose Python frames matched the eval frames one to one */
	uint64_t merged_aligned; /* ... did not (a walk cut short, a call being set up): aligned */
	uint64_t lines_unknown;	 /* frames whose line could not be computed ("file:?") */
	uint64_t walk_p50_ns, walk_p90_ns, walk_p99_ns; /* BPF walk times (bucket upper bounds) */
	int64_t fsbase_off;	 /* gauge: task_struct.thread.fsbase; -1 unknown, -2 failed */
	uint64_t fsbase_ns;	 /* the time finding it took (once, at the first CPython) */
	struct ember_py_bpf_stats bpf; /* the BPF walk's counters */
	struct mapfile_stats files;    /* mapped files opened and refused (proc/mapfile.h) */
};

/* struct python_stats described once (python_counters.c, core/base/counters.h) */
extern const struct counter_desc python_counters[];
extern const size_t python_counters_n;

struct python; /* opaque */

/*
 * @sampler (its Python map) and @names (where frame names are interned: the symbolizer's) are
 * borrowed and must outlive the object. @o may be NULL (PYTHON_OPTS_DEFAULT). NULL + errno
 * (ENOMEM). Free with python__free().
 */
struct python *python__new(struct sampler *sampler, struct strtab *names,
			   const struct python_opts *o);
/* NULL is a no-op; the processes written to the sampler's map stay there. */
void python__free(struct python *py);

/* A process was sampled for the first time (or after an exec): examine it if it looks like
 * Python. Cheap for others (one readlink of /proc/PID/exe). */
void python__note_pid(struct python *py, uint32_t pid);
/* exec or exit at @time_ns (CLOCK_MONOTONIC; 0: now): its map entry goes now, its names a
 * little later (samples taken before, still in flight, are named with them). A process's state
 * is the process tracker's extension (proc/proctrack.h): the tracker's own exec and exit events
 * end it, so emberd does not call this; a reader with a tracker of its own (no events) does. */
void python__forget_pid(struct python *py, uint32_t pid, uint64_t time_ns);
/* Housekeeping, e.g. every 5 s: drops what ended images left once their samples are named; the
 * states of processes gone without an exit told are ended by the tracker's sweep
 * (processes.ext_swept; the reader's own tracker swept here). */
void python__prune(struct python *py);

/*
 * The names' table is being renewed (strtab__renew()): carries every name id kept (code objects,
 * their lines, the fixed frames) into the new generation. 0, or -ENOMEM: a code object's name
 * that could not be carried became "[unknown]_[py]" until read again, a line's is forgotten; a
 * fixed frame's that could not be carried is -1 (python__merge() fails with -ENOMEM then, as on
 * any allocation failure). Main thread, between two drains.
 */
int python__names_carry(struct python *py);

/* A code object's names from the BPF program (sampler__set_pyname_fn()). */
void python__on_name(struct python *py, const struct ember_py_name_rec *r);

/*
 * The user frames of @g with its Python frames merged in (see the top). @native: the group's
 * symbolized user frames, root first (ids in the names strtab), borrowed. Returns the number of
 * frames in *@ret: @native itself when there is nothing to merge, else the object's scratch,
 * valid until the next call; or -ENOMEM.
 */
int python__merge(struct python *py, const struct sampler_group *g, const uint32_t *native,
		  size_t n, const uint32_t **ret);

/* Fills @ret (the BPF counters read from the sampler). */
void python__stats(struct python *py, struct python_stats *ret);

#endif
