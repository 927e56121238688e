/* SPDX-License-Identifier: MIT */
/*
 * idle: the one rule for "this sample is the CPU being idle", shared by the live store (emberd's
 * ingest), recordings (--replay, captures) and sample files (ember heatmap), so that a heat map
 * and its flame graphs agree whichever way the samples came in. It is FlameScope's rule:
 *
 *   the idle task was running (pid 0; where a format has no pid, the comm "swapper" or
 *   "swapper/N") AND its stack is in an idle function (cpu_idle, do_idle, intel_idle, ... see
 *   idle.c) or is emberd's "[idle]" marker (an idle sample taken without its stack).
 *
 * An interrupt served on the idle task's stack is CPU work, not idle. libc only, thread-safe.
 */
#ifndef EMBER_IDLE_H
#define EMBER_IDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The idle task: @pid 0, or @pid < 0 (unknown) and @comm[0..len) "swapper" or "swapper/..."
 * (@comm may be NULL). */
bool idle_task(int64_t pid, const char *comm, size_t len);

/* @name[0..len) is an idle function's frame (any suffix such as "_[k]" or "+0x1a" allowed). */
bool idle_frame(const char *name, size_t len);

/* A folded stack text "a;b;c" holds an idle frame. */
bool idle_stack_text(const char *stack, size_t len);

/* The name of emberd's marker frame for an idle sample without its stack. */
#define IDLE_MARKER_FRAME "[idle]_[k]"

#endif
