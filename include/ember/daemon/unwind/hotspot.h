/* SPDX-License-Identifier: MIT */
/*
 * hotspot: Java methods by name in the stacks of HotSpot JVMs (OpenJDK's libjvm.so), with no
 * flag in the program (no -XX:+PreserveFramePointer, no perf map agent).
 *
 *   detection   at a process's first sample (hotspot__sampled(), on the worker): an executable
 *               mapping of a file named libjvm.so whose vmStructs tables (elf/rtintro.h) hold
 *               every item the walk and the names need, of a JDK whose layout the walker knows
 *               (11 to 22: code blobs with pointers, not offsets), completed from the process's
 *               memory (rtintro_hotspot_resolve) with its code heaps (CodeCache::_heaps: range,
 *               segment map), is written to the sampler's JVM map (struct ember_hs_proc): the
 *               BPF walk then steps its interpreted, compiled and stub frames and stores a word
 *               per Java frame in place of its ip (bpf/hotspot.bpf.h). A JVM whose data is
 *               missing or of another layout is counted (procs_unsupported, by reason) and its
 *               frames stay native, never a guess. One whose code cache is not set up yet (the
 *               launcher loads libjvm, then initialises it) is looked at again, a few times.
 *   names       Method* -> ConstMethod -> ConstantPool -> the method's name Symbol, and the pool
 *               holder's Klass name: "pkg.Class.method_[j]" (no signature: overloads share a
 *               name, as in a Java stack trace; a hidden class's "/0x..." address suffix is
 *               dropped, so lambda classes keep one name). A compiled frame's nmethod gives its
 *               Method*; a stub is named by its code blob's name. Read with process_vm_readv of
 *               that process only, bounded (Symbols to HS_SYM_MAX bytes); cached per process by
 *               address, a compiled method's checked again after HS_RECHECK_NS (the code cache
 *               reuses memory). A frame that cannot be read is named "[hotspot <kind>]_[j]"
 *               and counted (frames_unnamed).
 *
 * Worker thread only (ingest); non-logging (counters in hotspot_stats).
 */
#ifndef EMBER_HOTSPOT_H
#define EMBER_HOTSPOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/elf/filecache.h"
#include "ember/daemon/elf/elfsym.h"
#include "ember/daemon/elf/rtintro.h"
#include "ember/daemon/proc/mapfile.h"

#include <linux/types.h>

#include "ember/daemon/sample/bpf_shared.h"

struct sampler;
struct strtab;
struct proc_tracker;

struct hotspot_opts {
	uint32_t max_procs;	    /* processes looked at (JVM or not, while they live) */
	uint32_t max_names;	    /* methods named, per process */
	const char *proc_root;	    /* "/proc" unless testing */
	struct proc_tracker *procs; /* where mappings come from (borrowed); NULL: its own */
	struct filecache *files;    /* per-file facts (borrowed); NULL: one of its own */
	struct elfsym_source images; /* the symbolizer's images (elfsym.h); none: read here */
	bool lines;		    /* names say their source file and line ([hotspot] lines) */
};

#define HOTSPOT_OPTS_DEFAULT { .max_procs = 65536, .max_names = 16384, .proc_root = "/proc" }

struct hotspot_stats {
	uint64_t procs;		    /* gauge: JVMs whose Java frames are read */
	uint64_t mem_bytes;	    /* gauge: the reader's processes and their names' caches */
	uint64_t procs_unsupported; /* gauge: JVMs whose data is missing or of another layout */
	uint64_t procs_dropped;	    /* not tracked: max_procs reached, or the BPF map full */
	uint64_t detections;	    /* processes examined (a JVM not initialised: again) */
	uint64_t detect_ns;	    /* time examining them */
	uint64_t not_ready;	    /* JVMs examined before their code cache was set up */
	uint64_t bad_version;	    /* ... refused: a JDK whose layout the walk does not know */
	uint64_t bad_heaps;	    /* ... refused: code heaps unreadable or out of bounds */
	uint64_t frames;	    /* Java frames named by their method */
	uint64_t frames_stub;	    /* ... stubs named by their code blob */
	uint64_t frames_unnamed;    /* ... not readable (freed, forged, gone) */
	uint64_t inline_frames;	    /* methods inlined into compiled frames, named */
	uint64_t inline_unreadable; /* ... whose scopes or method could not be read */
	uint64_t lines;		    /* with lines: methods named with their source line */
	uint64_t lines_unknown;	    /* ... with their file only (":?"), or neither */
	uint64_t names;		    /* methods read */
	uint64_t name_rechecks;	    /* compiled methods' names checked again */
	uint64_t name_evictions;    /* a process's name cache emptied for room (max_names) */
	uint64_t reasons[RTI__REASONS]; /* why libjvm files were refused (rtintro.h) */
	uint64_t walk_ns_per_walk;  /* BPF: mean time of a JVM's stack walk */
	struct ember_hs_bpf_stats bpf;
	struct mapfile_stats files;
};

extern const struct counter_desc hotspot_counters[];
extern const size_t hotspot_counters_n;

struct hotspot; /* opaque */

/* @sampler (its JVM map) and @names (the symbolizer's strtab) are borrowed. NULL + errno. */
struct hotspot *hotspot__new(struct sampler *sampler, struct strtab *names,
			     const struct hotspot_opts *o);
void hotspot__free(struct hotspot *hs);

/* A group of @pid's samples is being ingested: examine it if it is new (or not ready). */
void hotspot__sampled(struct hotspot *hs, uint32_t pid);

/* Frames a compiled frame is expanded into at most: itself and the methods inlined into it. */
#define HOTSPOT_MAX_INLINE 8

/*
 * The ids (in @names) of the Java frame whose BPF word is @word in process @pid, root first
 * into @ids (at most @max): its method, and for a compiled frame the methods inlined into it at
 * its pc (JDK 11-19: their scopes' encoding). Count (>= 1), or -ENOMEM. A frame that cannot be
 * read gets its kind's placeholder name, never another's.
 */
int hotspot__frame_names(struct hotspot *hs, uint32_t pid, uint64_t word, uint32_t *ids,
			 size_t max);

/* The names' table started over: the ids held are carried into it. 0, or -ENOMEM. Worker. */
int hotspot__names_carry(struct hotspot *hs);
/* Housekeeping: forgets processes that exited or exec'ed. */
void hotspot__prune(struct hotspot *hs);

void hotspot__stats(struct hotspot *hs, struct hotspot_stats *ret);

/*
 * Exposed for tests: "pkg/Class" and "method" (Symbol bytes) as the frame's name
 * "pkg.Class.method" into @out (@cap bytes, NUL-terminated): '/' becomes '.', a hidden class's
 * "/0x..." suffix is dropped, ';' and control bytes are replaced. Returns its length.
 */
size_t hotspot_method_name(const char *klass, size_t klen, const char *method, size_t mlen,
			   char *out, size_t cap);

/*
 * Exposed for tests: a JVM's facts (offsets resolved) -> the BPF entry's offsets and frame slots
 * (its code heaps are the process's, filled apart); refused (false) when an item is missing
 * (*@why RTI_MISSING), out of range (RTI_BAD_VALUE) or the JDK's layout is not the walker's
 * (RTI__REASONS: counted as refused_version).
 */
bool hotspot_facts_check(const struct rtintro_hotspot *h, struct ember_hs_proc *ret, int *why);

/*
 * Exposed for tests: one int of a compiled method's scope data (CompressedReadStream before
 * JDK 20) at *@pos of @buf (@len bytes), *@pos moved past it. 0, or -EINVAL when cut short.
 */
int hotspot_read_int(const uint8_t *buf, size_t len, size_t *pos, int32_t *ret);

/*
 * Exposed for tests: the source line of bytecode index @bci in a method's compressed line number
 * table @tab (@len bytes, as ConstMethod holds it after the bytecodes: pairs of a bci and a line
 * delta, one byte (bci << 3 | line) when both are small, else 0xff and two signed ints of
 * CompressedReadStream; 0 ends it), as HotSpot's Method::line_number_from_bci() finds it: the
 * pair at @bci, else the last one before it. The line (> 0), 0 when the table names none, or
 * -EINVAL when it runs past @len or holds a number the JDK's encoding (before 20) cannot.
 */
int hotspot_line_at(const uint8_t *tab, size_t len, uint32_t bci);

#endif
