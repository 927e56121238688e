// SPDX-License-Identifier: MIT
/* [sampling] of the configuration as the sampler's options, and the walker the kernel allows. */
#include "ember/daemon/sample/sampler.h"

#include <linux/types.h>
#include <stdbool.h>
#include <string.h>

#include "ember/core/base/log.h"
#include "ember/daemon/sample/bpf_shared.h"
#include "ember/daemon/service/config.h"

void sampler_opts_from_config(const struct ember_config *c, struct sampler_opts *so)
{
	*so = (struct sampler_opts){
		.freq_hz = c->frequency_hz,
		.include_idle = c->include_idle,
		.idle_stacks = c->idle_stacks,
		.hardware_event = c->hardware_event,
		.tick_ms = (uint32_t)c->tick_ms,
		.ringbuf_bytes = (uint32_t)c->ringbuf_bytes,
		.unwind_rows = c->unwind ? (uint32_t)(c->unwind_memory_bytes /
						      sizeof(struct ember_unwind_prow))
					 : 0,
		.unwind_procs = (uint32_t)c->unwind_procs,
		.exec_batch_ns = c->process_exec_batch_us * 1000,
		.drain_period_ns = c->process_drain_period_ms * 1000000,
		.python_procs = (uint32_t)c->python_procs,
		.python_lines = c->python_lines,
	};
}

void sampler_opts_probe(struct sampler_opts *so, bool pretend_no_loop)
{
	/* a kernel without bpf_loop() (< 5.17: Debian 11, Ubuntu 22.04's GA kernel) cannot run the
	 * walker: sample anyway, by frame pointer, and say once what that costs.
	 * EMBERD_PRETEND_NO_BPF_LOOP=1 takes that path on any kernel (test_degraded.sh) */
	int r = sampler_probe_walker();

	if (pretend_no_loop || r == 0) {
		so->fp_only = true;
		so->unwind_rows = 0;
		log_warn("kernel has no bpf_loop() (Linux < 5.17)%s: user stacks by frame pointer "
			 "only, without unwind tables or Python frames; programs built without "
			 "frame pointers (most distribution packages) lose their callers: their "
			 "stacks end after 1-3 frames",
			 pretend_no_loop ? " [EMBERD_PRETEND_NO_BPF_LOOP]" : "");
	} else if (r < 0) {
		log_debug("bpf_loop() probe failed (%s): trying the BPF walker", strerror(-r));
	}
	if (so->fp_only && so->offcpu.enabled) {
		/* the off-CPU programs walk user stacks with the BPF walker (bpf_loop) */
		log_warn("[offcpu] needs the BPF walker (bpf_loop(), Linux 5.17+): off-CPU events "
			 "are off");
		so->offcpu.enabled = false;
	}
}
