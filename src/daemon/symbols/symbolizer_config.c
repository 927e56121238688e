// SPDX-License-Identifier: MIT
/* [symbols] of the configuration as the symbolizer's options. */
#include "ember/daemon/symbols/symbolizer.h"

#include "ember/daemon/service/config.h"

void symbolizer_opts_from_config(const struct ember_config *c, struct symbolizer_opts *yo)
{
	*yo = (struct symbolizer_opts)SYMBOLIZER_OPTS_DEFAULT;
	yo->perf_maps = c->perf_maps;
	yo->inline_frames = c->inline_frames;
	yo->demangle = c->demangle;
	yo->max_pids = c->max_pids;
	yo->debug_dirs = c->debug_dirs;
	yo->addr_offsets = c->addr_offsets;
	yo->max_elfs = c->max_elfs;
	yo->max_perfmap_bytes = c->max_perfmap_bytes;
	yo->max_symbols = c->max_symbols;
	yo->max_perfmap_entries = c->max_perfmap_entries;
	yo->max_perfmap_memory = c->max_perfmap_memory;
	yo->max_image_bytes = c->max_image_bytes;
	yo->max_section_bytes = c->max_section_bytes;
}
