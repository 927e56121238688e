// SPDX-License-Identifier: MIT
#include "ember/daemon/service/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember/core/base/log.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/version.h"
#include "ember/core/base/errbuf.h"

enum opt_type { OPT_U64, OPT_SIZE, OPT_BOOL, OPT_LISTEN, OPT_LEVEL, OPT_PATH, OPT_DIRS, OPT_LIST,
	       OPT_USER, OPT_MS, OPT_URL, OPT_WORD, OPT_TEXT };

/*
 * One row per setting: the whole schema. min/max bound OPT_U64 and OPT_SIZE; for the string
 * types (OPT_PATH, OPT_DIRS, OPT_LIST, OPT_USER) max is the size of the char array.
 */
struct opt {
	const char *key;
	enum opt_type type;
	size_t off;
	uint64_t min, max;
	bool pow2;
	bool auto0; /* 0 (automatic) is allowed below min */
};

#define F(field) offsetof(struct ember_config, field)
#define KiB	 (1ULL << 10)
#define MiB	 (1ULL << 20)
#define GiB	 (1ULL << 30)

static const struct opt opts[] = {
	{ "http.listen", OPT_LISTEN, F(listen), 0, 0, false, false },
	{ "http.max_connections", OPT_U64, F(http_max_connections), 1, 10000, false, false },
	{ "http.threads", OPT_U64, F(http_threads), 1, 64, false, false },
	{ "http.max_range", OPT_U64, F(http_max_range_s), 1, 366 * 86400, false, false },
	{ "http.max_response", OPT_SIZE, F(http_max_response_bytes), MiB, 16 * GiB, false, false },
	{ "http.max_captures", OPT_U64, F(http_max_captures), 1, 1000, false, false },
	{ "http.capture_memory", OPT_SIZE, F(http_capture_memory_bytes), MiB, 1024 * GiB, false,
	  false },
	{ "http.max_capture", OPT_U64, F(http_max_capture_s), 1, 86400, false, false },
	{ "http.timeout", OPT_U64, F(http_timeout_s), 1, 3600, false, false },
	{ "http.max_body", OPT_SIZE, F(http_max_body_bytes), KiB, 16 * MiB, false, false },
	{ "http.max_request", OPT_SIZE, F(http_max_request_bytes), 8 * KiB, MiB, false, false },
	{ "http.max_connections_per_ip", OPT_U64, F(http_max_connections_per_ip), 1, 10000, false,
	  false },
	{ "http.reserved_connections", OPT_U64, F(http_reserved_connections), 0, 1000, false,
	  false },
	{ "http.request_timeout", OPT_U64, F(http_request_timeout_s), 1, 3600, false, false },
	{ "http.render_threads", OPT_U64, F(http_render_threads), 1, 64, false, false },
	{ "http.render_queue", OPT_U64, F(http_render_queue), 0, 10000, false, false },
	{ "http.response_memory", OPT_SIZE, F(http_response_memory_bytes), MiB, 64 * GiB, false,
	  false },
	{ "http.tls_cert", OPT_PATH, F(tls_cert), 0, EMBER_PATH_MAX, false, false },
	{ "http.tls_key", OPT_PATH, F(tls_key), 0, EMBER_PATH_MAX, false, false },
	{ "http.auth_token_file", OPT_PATH, F(auth_token_file), 0, EMBER_PATH_MAX, false, false },
	{ "http.insecure", OPT_BOOL, F(insecure), 0, 0, false, false },
	{ "sampling.frequency", OPT_U64, F(frequency_hz), 1, 10000, false, false },
	{ "sampling.include_idle", OPT_BOOL, F(include_idle), 0, 0, false, false },
	{ "sampling.idle_stacks", OPT_BOOL, F(idle_stacks), 0, 0, false, false },
	{ "sampling.hardware_event", OPT_BOOL, F(hardware_event), 0, 0, false, false },
	{ "sampling.stack_map_entries", OPT_U64, F(stack_map_entries), 1024, 1 << 20, true, true },
	{ "sampling.counts_map_entries", OPT_U64, F(counts_map_entries), 0, 1 << 20, false, false },
	{ "sampling.ringbuf_size", OPT_SIZE, F(ringbuf_bytes), 64 * KiB, 256 * MiB, true, false },
	{ "sampling.tick_ms", OPT_U64, F(tick_ms), 10, 10000, false, false },
	{ "store.retention", OPT_U64, F(retention_s), 1, 30 * 86400, false, false },
	{ "store.memory_limit", OPT_SIZE, F(memory_limit_bytes), MiB, 1024 * GiB, false, false },
	{ "symbols.perf_maps", OPT_BOOL, F(perf_maps), 0, 0, false, false },
	{ "symbols.inline_frames", OPT_BOOL, F(inline_frames), 0, 0, false, false },
	{ "symbols.demangle", OPT_BOOL, F(demangle), 0, 0, false, false },
	{ "symbols.max_pids", OPT_U64, F(max_pids), 16, 1 << 20, false, false },
	{ "symbols.debug_dirs", OPT_DIRS, F(debug_dirs), 0, EMBER_PATH_MAX, false, false },
	{ "symbols.addr_offsets", OPT_BOOL, F(addr_offsets), 0, 0, false, false },
	{ "symbols.max_elfs", OPT_U64, F(max_elfs), 16, 65536, false, false },
	{ "symbols.max_perfmap_size", OPT_SIZE, F(max_perfmap_bytes), MiB, 4 * GiB, false, false },
	{ "symbols.max_symbols", OPT_U64, F(max_symbols), 1024, 1 << 30, false, false },
	{ "symbols.max_perfmap_entries", OPT_U64, F(max_perfmap_entries), 1024, 1 << 30, false,
	  false },
	{ "symbols.max_perfmap_memory", OPT_SIZE, F(max_perfmap_memory), MiB, 64 * GiB, false,
	  false },
	{ "symbols.max_names_memory", OPT_SIZE, F(max_names_bytes), MiB, 4 * GiB, false, false },
	{ "symbols.max_names_share", OPT_U64, F(max_names_share), 1, 100, false, false },
	{ "symbols.max_image_memory", OPT_SIZE, F(max_image_bytes), 16 * MiB, 64 * GiB, false,
	  false },
	{ "symbols.max_section_size", OPT_SIZE, F(max_section_bytes), MiB, 4 * GiB, false, false },
	{ "symbols.debuginfod", OPT_BOOL, F(debuginfod), 0, 0, false, false },
	{ "symbols.debuginfod_cache", OPT_PATH, F(debuginfod_cache), 0, EMBER_PATH_MAX, false,
	  false },
	{ "symbols.debuginfod_cache_size", OPT_SIZE, F(debuginfod_cache_bytes), 16 * MiB,
	  1024 * GiB, false, false },
	{ "symbols.debuginfod_timeout", OPT_MS, F(debuginfod_timeout_ms), 100, 600000, false,
	  false },
	{ "symbols.debuginfod_threads", OPT_U64, F(debuginfod_threads), 1, 8, false, false },
	{ "symbols.debuginfod_queue", OPT_U64, F(debuginfod_queue), 1, 4096, false, false },
	{ "symbols.debuginfod_budget", OPT_MS, F(debuginfod_budget_ms), 100, 600000, false,
	  false },
	{ "unwind.enabled", OPT_BOOL, F(unwind), 0, 0, false, false },
	{ "unwind.memory", OPT_SIZE, F(unwind_memory_bytes), MiB, 4 * GiB, false, false },
	{ "unwind.processes", OPT_U64, F(unwind_procs), 16, 1 << 20, false, false },
	{ "process.maps_query", OPT_BOOL, F(process_maps_query), 0, 0, false, false },
	{ "process.exec_batch_us", OPT_U64, F(process_exec_batch_us), 0, 100000, false, false },
	{ "process.drain_period_ms", OPT_U64, F(process_drain_period_ms), 0, 1000, false, false },
	{ "files.max_files", OPT_U64, F(files_max), 16, 1 << 20, false, false },
	{ "files.max_memory", OPT_SIZE, F(files_max_bytes), MiB, 64 * GiB, false, false },
	{ "python.enabled", OPT_BOOL, F(python), 0, 0, false, false },
	{ "python.lines", OPT_BOOL, F(python_lines), 0, 0, false, false },
	{ "python.processes", OPT_U64, F(python_procs), 16, 1 << 20, false, false },
	{ "python.code_objects", OPT_U64, F(python_codes), 1024, 1 << 24, false, false },
	{ "python.code_memory", OPT_SIZE, F(python_code_memory_bytes), MiB, 4 * GiB, false, false },
	{ "v8.enabled", OPT_BOOL, F(v8), 0, 0, false, false },
	{ "hotspot.enabled", OPT_BOOL, F(hotspot), 0, 0, false, false },
	{ "hotspot.lines", OPT_BOOL, F(hotspot_lines), 0, 0, false, false },
	{ "offcpu.enabled", OPT_BOOL, F(offcpu), 0, 0, false, false },
	{ "offcpu.states", OPT_LIST, F(offcpu_states), 0, EMBER_LIST_MAX, false, false },
	{ "offcpu.min_blocked_us", OPT_U64, F(offcpu_min_us), 1, 60000000, false, false },
	{ "offcpu.max_blocked_us", OPT_U64, F(offcpu_max_us), 1, 86400000000ULL, false, false },
	{ "offcpu.quantum_us", OPT_U64, F(offcpu_quantum_us), 1, 60000000, false, false },
	{ "offcpu.pid", OPT_U64, F(offcpu_pid), 0, 1 << 30, false, false },
	{ "offcpu.cgroup_id", OPT_U64, F(offcpu_cgroup_id), 0, UINT64_MAX, false, false },
	{ "offcpu.comm", OPT_LIST, F(offcpu_comm), 0, EMBER_LIST_MAX, false, false },
	{ "offcpu.threads", OPT_U64, F(offcpu_threads), 1024, 1 << 22, false, false },
	{ "offcpu.memory_limit", OPT_SIZE, F(offcpu_memory_bytes), 4 * MiB, 1024 * GiB, false, false },
	{ "offcpu.chain_depth", OPT_U64, F(offcpu_chain_depth), 1, 4, false, false },
	{ "offcpu.kernel_stacks", OPT_BOOL, F(offcpu_kernel_stacks), 0, 0, false, false },
	{ "pagefault.enabled", OPT_BOOL, F(pagefault), 0, 0, false, false },
	{ "pagefault.period", OPT_U64, F(pagefault_period), 1, 1 << 20, false, false },
	{ "pagefault.max_rate", OPT_U64, F(pagefault_max_rate), 0, 1 << 24, false, false },
	{ "pagefault.memory_limit", OPT_SIZE, F(pagefault_memory_bytes), MiB, 1024 * GiB, false,
	  false },
	{ "vmgrow.enabled", OPT_BOOL, F(vmgrow), 0, 0, false, false },
	{ "vmgrow.quantum", OPT_SIZE, F(vmgrow_quantum), 4 * KiB, GiB, false, false },
	{ "vmgrow.max_rate", OPT_U64, F(vmgrow_max_rate), 0, 1 << 24, false, false },
	{ "vmgrow.memory_limit", OPT_SIZE, F(vmgrow_memory_bytes), MiB, 1024 * GiB, false, false },
	{ "blockio.enabled", OPT_BOOL, F(blockio), 0, 0, false, false },
	{ "blockio.quantum", OPT_SIZE, F(blockio_quantum), 512, GiB, false, false },
	{ "blockio.latency_quantum_us", OPT_U64, F(blockio_latency_quantum_us), 1, 60000000, false,
	  false },
	{ "blockio.inflight", OPT_U64, F(blockio_inflight), 16, 1 << 16, false, false },
	{ "blockio.max_rate", OPT_U64, F(blockio_max_rate), 0, 1 << 24, false, false },
	{ "blockio.memory_limit", OPT_SIZE, F(blockio_memory_bytes), MiB, 1024 * GiB, false, false },
	{ "malloc.enabled", OPT_BOOL, F(malloc), 0, 0, false, false },
	{ "malloc.pid", OPT_U64, F(malloc_pid), 0, 1 << 30, false, false },
	{ "malloc.comm", OPT_LIST, F(malloc_comm), 0, EMBER_LIST_MAX, false, false },
	{ "malloc.library", OPT_PATH, F(malloc_library), 0, EMBER_PATH_MAX, false, false },
	{ "malloc.interval", OPT_SIZE, F(malloc_interval), 1, GiB, false, false },
	{ "malloc.max_rate", OPT_U64, F(malloc_max_rate), 0, 1 << 24, false, false },
	{ "malloc.memory_limit", OPT_SIZE, F(malloc_memory_bytes), MiB, 1024 * GiB, false, false },
	{ "pmc.enabled", OPT_BOOL, F(pmc), 0, 0, false, false },
	{ "pmc.period", OPT_U64, F(pmc_period), 1000, 1ULL << 31, false, false },
	{ "pmc.memory_limit", OPT_SIZE, F(pmc_memory_bytes), MiB, 1024 * GiB, false, false },
	{ "filter.exclude_comms", OPT_LIST, F(exclude_comms), 0, EMBER_LIST_MAX, false, false },
	{ "filter.exclude_cgroups", OPT_LIST, F(exclude_cgroups), 0, EMBER_LIST_MAX, false, false },
	{ "export.otlp_endpoint", OPT_URL, F(export_otlp_endpoint), 0, EMBER_PATH_MAX, false,
	  false },
	{ "export.otlp_interval", OPT_MS, F(export_otlp_interval_ms), 1000, 3600000, false, false },
	{ "export.pyroscope_url", OPT_URL, F(export_pyroscope_url), 0, EMBER_PATH_MAX, false,
	  false },
	{ "export.pyroscope_interval", OPT_MS, F(export_pyroscope_interval_ms), 1000, 3600000, false,
	  false },
	{ "export.pyroscope_tenant", OPT_WORD, F(export_pyroscope_tenant), 0, EMBER_USER_MAX * 4,
	  false, false },
	{ "export.basic_auth_file", OPT_PATH, F(export_basic_auth_file), 0, EMBER_PATH_MAX, false,
	  false },
	{ "export.bearer_token_file", OPT_PATH, F(export_bearer_token_file), 0, EMBER_PATH_MAX,
	  false, false },
	{ "export.ca_file", OPT_PATH, F(export_ca_file), 0, EMBER_PATH_MAX, false, false },
	{ "export.client_cert", OPT_PATH, F(export_client_cert), 0, EMBER_PATH_MAX, false, false },
	{ "export.client_key", OPT_PATH, F(export_client_key), 0, EMBER_PATH_MAX, false, false },
	{ "export.queue_memory", OPT_SIZE, F(export_queue_bytes), 64 * KiB, 4 * GiB, false, false },
	{ "export.max_message", OPT_SIZE, F(export_max_message_bytes), 64 * KiB, GiB, false, false },
	{ "export.timeout", OPT_MS, F(export_timeout_ms), 100, 600000, false, false },
	{ "export.retry_max", OPT_MS, F(export_retry_max_ms), 1000, 3600000, false, false },
	{ "export.service_rules", OPT_LIST, F(export_service_rules), 0, EMBER_LIST_MAX, false,
	  false },
	{ "export.service_regex", OPT_TEXT, F(export_service_regex), 0, EMBER_LIST_MAX, false,
	  false },
	{ "security.user", OPT_USER, F(user), 0, EMBER_USER_MAX, false, false },
	{ "security.drop_capabilities", OPT_BOOL, F(drop_capabilities), 0, 0, false, false },
	{ "log.level", OPT_LEVEL, F(log_level), 0, 0, false, false },
};

void ember_config_init(struct ember_config *c)
{
	*c = (struct ember_config){
		.listen = "127.0.0.1:8080",
		.http_max_connections = 64,
		.http_threads = 2,
		.http_max_range_s = 7 * 86400,
		.http_max_response_bytes = 256 * MiB,
		.http_max_captures = 16,
		.http_capture_memory_bytes = 256 * MiB,
		.http_max_capture_s = 600,
		.http_timeout_s = 30,
		.http_max_body_bytes = 64 * KiB,
		.http_max_request_bytes = 64 * KiB,
		.http_max_connections_per_ip = 32,
		.http_reserved_connections = 16,
		.http_request_timeout_s = 10,
		.http_render_threads = 2,
		.http_render_queue = 16,
		.http_response_memory_bytes = 128 * MiB,
		.frequency_hz = 99,
		.include_idle = true,
		.hardware_event = true,
		.stack_map_entries = 0,	 /* automatic */
		.counts_map_entries = 0, /* automatic */
		.ringbuf_bytes = 1 * MiB,
		.tick_ms = 1000,
		.retention_s = 3600,
		.memory_limit_bytes = 256 * MiB,
		.perf_maps = true,
		.inline_frames = false,
		.demangle = true,
		.max_pids = 4096,
		.debug_dirs = "/usr/lib/debug",
		.debuginfod = true,
		.debuginfod_cache = "/var/cache/emberd/debuginfod",
		.debuginfod_cache_bytes = GiB,
		.debuginfod_timeout_ms = 2000,
		.debuginfod_threads = 2,
		.debuginfod_queue = 64,
		.debuginfod_budget_ms = 30000,
		.max_elfs = 512,
		.max_perfmap_bytes = 64 * MiB,
		.max_symbols = 2000000,
		.max_perfmap_entries = 500000,
		.max_perfmap_memory = 32 * MiB,
		.max_names_bytes = 32 * MiB,
		.max_names_share = 25,
		.max_image_bytes = 128 * MiB,
		.max_section_bytes = 128 * MiB,
		.unwind = true,
		.unwind_memory_bytes = 16 * MiB,
		.unwind_procs = 4096,
		.process_maps_query = true,
		.process_exec_batch_us = 1000,
		.process_drain_period_ms = 0, /* 15 walked exec'ed children with their parent's tables */
		.files_max = 1024,
		.files_max_bytes = 160 * MiB,
		.python = true,
		.v8 = true,
		.hotspot = true,
		.offcpu = false,
		.offcpu_states = "S,D",
		.offcpu_min_us = 1000,
		.offcpu_max_us = 60000000,
		.offcpu_quantum_us = 1000,
		.offcpu_threads = 65536,
		.offcpu_memory_bytes = 64 * MiB,
		.offcpu_chain_depth = 2,
		.offcpu_kernel_stacks = true,
		.pagefault_period = 16,
		.pagefault_max_rate = 1000,
		.pagefault_memory_bytes = 16 * MiB,
		.vmgrow_quantum = 64 * KiB,
		.vmgrow_max_rate = 1000,
		.vmgrow_memory_bytes = 16 * MiB,
		.blockio_quantum = 16 * KiB,
		.blockio_latency_quantum_us = 100,
		.blockio_inflight = 1024,
		.blockio_max_rate = 2000,
		.blockio_memory_bytes = 16 * MiB,
		.malloc_interval = 512 * KiB,
		.malloc_max_rate = 1000,
		.malloc_memory_bytes = 16 * MiB,
		.pmc_period = 1000000,
		.pmc_memory_bytes = 16 * MiB,
		.python_procs = 4096,
		.python_codes = 65536,
		.python_code_memory_bytes = 64 * MiB,
		.export_otlp_interval_ms = 10000,
		.export_pyroscope_interval_ms = 10000,
		.export_queue_bytes = 64 * MiB,
		.export_max_message_bytes = 4 * MiB,
		.export_timeout_ms = 10000,
		.export_retry_max_ms = 60000,
		.export_service_rules = "exe",
		.drop_capabilities = true,
		.log_level = LOG_LVL_INFO,
		.dump_root = 1,
	};
}

static int parse_u64(const char *s, bool size, uint64_t *ret)
{
	unsigned long long v, mul = 1;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (size && *end) {
		switch (*end) {
		case 'k': case 'K': mul = KiB; break;
		case 'm': case 'M': mul = MiB; break;
		case 'g': case 'G': mul = GiB; break;
		default: return -EINVAL;
		}
		end++;
		if (*end == 'i' && end[1] == 'B')
			end += 2;
		else if (*end == 'B')
			end++;
	}
	if (*end)
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -EINVAL;
	*ret = v * mul;
	return 0;
}

/* A duration in milliseconds: N (seconds), Nms, Ns, Nm, Nh. */
static int parse_ms(const char *s, uint64_t *ret)
{
	unsigned long long v, mul = 1000;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (!strcmp(end, "ms"))
		mul = 1;
	else if (!strcmp(end, "s") || !*end)
		mul = 1000;
	else if (!strcmp(end, "m"))
		mul = 60000;
	else if (!strcmp(end, "h"))
		mul = 3600000;
	else
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -EINVAL;
	*ret = v * mul;
	return 0;
}

static int parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i])) {
			*ret = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* "ADDR:PORT" or "[V6ADDR]:PORT" with PORT 1..65535 and a non-empty address. */
static int check_listen(const char *s)
{
	const char *colon = strrchr(s, ':');
	uint64_t port;

	if (!colon || colon == s || strlen(s) >= EMBER_LISTEN_MAX)
		return -EINVAL;
	if (s[0] == '[' && colon[-1] != ']')
		return -EINVAL;
	if (s[0] != '[' && memchr(s, ':', (size_t)(colon - s)))
		return -EINVAL;
	if (parse_u64(colon + 1, false, &port) || port > 65535) /* 0: any free port */
		return -EINVAL;
	return 0;
}

/*
 * The string types. OPT_PATH: empty or absolute; OPT_DIRS: ':'-separated absolute paths;
 * OPT_LIST: ','-separated non-empty items without spaces; OPT_USER: empty or a user name
 * ([a-z_][a-z0-9_-]*). No control characters anywhere.
 */
static const char *check_string(enum opt_type t, const char *s, size_t size)
{
	const char *p;

	if (strlen(s) >= size)
		return "is too long";
	for (p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return "contains a control character";
	switch (t) {
	case OPT_PATH:
		if (*s && *s != '/')
			return "is not an absolute path";
		break;
	case OPT_DIRS:
		for (p = s; *p; p = strchr(p, ':') ? strchr(p, ':') + 1 : p + strlen(p))
			if (*p != '/')
				return "is not a ':'-separated list of absolute paths";
		if (*s && s[strlen(s) - 1] == ':')
			return "is not a ':'-separated list of absolute paths";
		break;
	case OPT_LIST:
		for (p = s; *p; p++)
			if (isspace((unsigned char)*p) || (*p == ',' && (p == s || p[1] == ',' ||
									 !p[1])))
				return "is not a ','-separated list (no spaces, no empty items)";
		break;
	case OPT_URL:
		if (*s && strncmp(s, "http://", 7) && strncmp(s, "https://", 8))
			return "is not an http:// or https:// URL";
		for (p = s; *p; p++)
			if (isspace((unsigned char)*p))
				return "is not a URL (spaces)";
		break;
	case OPT_WORD:
		for (p = s; *p; p++)
			if (isspace((unsigned char)*p) || *p == '"' || *p == '\\')
				return "has spaces, quotes or backslashes";
		break;
	case OPT_USER:
		if (*s && !(islower((unsigned char)*s) || *s == '_'))
			return "is not a user name";
		for (p = s; *p; p++)
			if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) &&
			    *p != '_' && *p != '-')
				return "is not a user name";
		break;
	default:
		break;
	}
	return NULL;
}

int ember_config_set(struct ember_config *c, const char *key, const char *value, char *err,
		     size_t errlen)
{
	const char *why;
	const struct opt *o = NULL;
	char *base = (char *)c;
	uint64_t v;
	size_t i;
	bool b;
	enum log_level lvl;

	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		if (!strcmp(opts[i].key, key)) {
			o = &opts[i];
			break;
		}
	}
	if (!o) {
		errbuf_set(err, errlen, -EINVAL, "unknown key '%s'", key);
		return -ENOENT;
	}
	switch (o->type) {
	case OPT_U64:
	case OPT_SIZE:
		if (parse_u64(value, o->type == OPT_SIZE, &v))
			return errbuf_set(err, errlen, -EINVAL, "%s: '%s' is not a %s", key, value,
					  o->type == OPT_SIZE ? "size (N, NK, NM, NG)" : "number");
		if ((v < o->min && !(v == 0 && o->auto0)) || v > o->max)
			return errbuf_set(err, errlen, -EINVAL,
					  "%s: %" PRIu64 " is out of range %" PRIu64 "..%" PRIu64,
					  key, v, o->min, o->max);
		if (o->pow2 && (v & (v - 1)))
			return errbuf_set(err, errlen, -EINVAL,
					  "%s: %" PRIu64 " is not a power of 2", key, v);
		memcpy(base + o->off, &v, sizeof(v));
		return 0;
	case OPT_MS:
		if (parse_ms(value, &v))
			return errbuf_set(err, errlen, -EINVAL,
					  "%s: '%s' is not a duration (N, Nms, Ns, Nm, Nh)", key,
					  value);
		if (v < o->min || v > o->max)
			return errbuf_set(err, errlen, -EINVAL,
					  "%s: %" PRIu64 " ms is out of range %" PRIu64 "..%" PRIu64
					  " ms", key, v, o->min, o->max);
		memcpy(base + o->off, &v, sizeof(v));
		return 0;
	case OPT_BOOL:
		if (parse_bool(value, &b))
			return errbuf_set(err, errlen, -EINVAL,
					  "%s: '%s' is not a boolean (yes/no)", key, value);
		memcpy(base + o->off, &b, sizeof(b));
		return 0;
	case OPT_LISTEN:
		if (check_listen(value))
			return errbuf_set(err, errlen, -EINVAL, "%s: '%s' is not ADDR:PORT", key,
					  value);
		strcpy(base + o->off, value);
		return 0;
	case OPT_LEVEL:
		if (log_level_parse(value, &lvl))
			return errbuf_set(err, errlen, -EINVAL,
					  "%s: '%s' is not error, warn, info or debug", key, value);
		*(int *)(base + o->off) = (int)lvl;
		return 0;
	case OPT_PATH:
	case OPT_DIRS:
	case OPT_LIST:
	case OPT_USER:
	case OPT_URL:
	case OPT_WORD:
	case OPT_TEXT: /* any bytes but control characters; the owner checks the rest */
		why = check_string(o->type, value, (size_t)o->max);
		if (why)
			return errbuf_set(err, errlen, -EINVAL, "%s: '%s' %s", key, value, why);
		strcpy(base + o->off, value);
		return 0;
	}
	return -EINVAL;
}

static void trim(char **s, char **e)
{
	while (*s < *e && isspace((unsigned char)**s))
		(*s)++;
	while (*e > *s && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

int ember_config_parse(struct ember_config *c, const char *text, size_t len, const char *name,
		       char *err, size_t errlen)
{
	char section[64] = "", key[160], line[1024], reason[256];
	unsigned long lineno = 0;
	size_t pos = 0;
	int r;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - text - pos) : len - pos;
		char *s, *e, *eq, *k, *ke, *v, *ve;

		lineno++;
		if (ll >= sizeof(line))
			return errbuf_set(err, errlen, -EINVAL, "%s:%lu: line too long", name,
					  lineno);
		memcpy(line, text + pos, ll);
		line[ll] = '\0';
		pos += ll + (nl ? 1 : 0);
		if (strlen(line) != ll)
			return errbuf_set(err, errlen, -EINVAL, "%s:%lu: NUL byte", name, lineno);
		s = line;
		e = line + ll;
		/* comments: '#' or ';' at the start or after whitespace */
		for (k = s; k < e; k++) {
			if ((*k == '#' || *k == ';') && (k == s || isspace((unsigned char)k[-1]))) {
				e = k;
				break;
			}
		}
		trim(&s, &e);
		if (s == e)
			continue;
		if (*s == '[') {
			if (e[-1] != ']' || e - s - 2 <= 0 || (size_t)(e - s - 2) >= sizeof(section))
				return errbuf_set(err, errlen, -EINVAL,
						  "%s:%lu: bad section header", name, lineno);
			memcpy(section, s + 1, (size_t)(e - s - 2));
			section[e - s - 2] = '\0';
			continue;
		}
		eq = memchr(s, '=', (size_t)(e - s));
		if (!eq)
			return errbuf_set(err, errlen, -EINVAL, "%s:%lu: expected 'key = value'",
					  name, lineno);
		k = s;
		ke = eq;
		v = eq + 1;
		ve = e;
		trim(&k, &ke);
		trim(&v, &ve);
		if (k == ke)
			return errbuf_set(err, errlen, -EINVAL, "%s:%lu: empty key", name, lineno);
		if (!section[0])
			return errbuf_set(err, errlen, -EINVAL, "%s:%lu: key outside a [section]",
					  name, lineno);
		*ke = '\0';
		*ve = '\0';
		if (ve - v >= 2 && (*v == '"' || *v == '\'') && ve[-1] == *v) {
			v++;
			*--ve = '\0';
		}
		snprintf(key, sizeof(key), "%s.%s", section, k);
		r = ember_config_set(c, key, v, reason, sizeof(reason));
		if (r) {
			errbuf_set(err, errlen, -EINVAL, "%s:%lu: %s", name, lineno, reason);
			return r;
		}
	}
	return 0;
}

int ember_config_load(struct ember_config *c, const char *path, char *err, size_t errlen)
{
	struct sbuf sb = SBUF_INIT;
	char buf[4096];
	ssize_t n;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		errbuf_set(err, errlen, -EINVAL, "cannot open config '%s': %s", path, strerror(-r));
		return r;
	}
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			errbuf_set(err, errlen, -EINVAL, "cannot read config '%s': %s", path,
				   strerror(-r));
			goto out;
		}
		if (n == 0)
			break;
		if (sb.len + (size_t)n > 1024 * 1024) {
			r = errbuf_set(err, errlen, -EINVAL, "config '%s' is larger than 1 MiB",
				       path);
			goto out;
		}
		sbuf_add(&sb, buf, (size_t)n);
	}
	if (sbuf_error(&sb)) {
		r = -ENOMEM;
		errbuf_set(err, errlen, -EINVAL, "out of memory reading '%s'", path);
		goto out;
	}
	r = ember_config_parse(c, sb.buf ? sb.buf : "", sb.len, path, err, errlen);
out:
	close(fd);
	sbuf_fini(&sb);
	return r;
}

enum {
	ARG_DUMP_AFTER = 0x100,
	ARG_DUMP_FILE,
	ARG_PRINT_CONFIG,
	ARG_DUMP_ROOT,
	ARG_DUMP_IDLE,
	ARG_CHECK_CONFIG,
};

/* Flags that are shorthands for keys. */
static const struct {
	int val;
	const char *flag;
	const char *key;
} flag_keys[] = {
	{ 'l', "--listen", "http.listen" },
	{ 'F', "--frequency", "sampling.frequency" },
	{ 'r', "--retention", "store.retention" },
	{ 'm', "--memory-limit", "store.memory_limit" },
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: emberd [--config FILE] [--listen ADDR:PORT] [--frequency HZ] [--retention S]\n"
		"              [--memory-limit BYTES] [-o SECTION.KEY=VALUE]... [-v]\n"
		"              [--dump-after S] [--dump-file FILE] [--print-config] [--check-config]\n"
		"\n"
		"Always-on CPU profiler: samples every CPU with eBPF, keeps timestamped stacks.\n"
		"  -c, --config FILE        read settings from FILE (flags override it)\n"
		"  -l, --listen ADDR:PORT   HTTP address (default 127.0.0.1:8080)\n"
		"  -F, --frequency HZ       samples per second per CPU (default 99, max 10000)\n"
		"  -r, --retention S        keep samples for S seconds (default 3600)\n"
		"  -m, --memory-limit BYTES store memory bound, K/M/G suffixes (default 256M)\n"
		"  -o, --set KEY=VALUE      any config key, e.g. -o sampling.tick_ms=100\n"
		"  -v, --verbose            debug logging (libbpf too)\n"
		"      --dump-after S       sample for S seconds, write the folded profile, exit\n"
		"      --dump-file FILE     where --dump-after and SIGUSR1 write (default stdout)\n"
		"      --dump-root MODE     dump root frame: none, comm (default), pid (comm-PID),\n"
		"                           tid (comm-PID/TID)\n"
		"      --dump-idle          include the idle task in dumps\n"
		"      --print-config       print the effective configuration and exit\n"
		"      --check-config       also check files, token and listen policy; exit 0 if valid\n"
		"      --replay FILE...     serve recorded `perf script` (plain or gzip) or\n"
		"                           ember-samples files over HTTP instead of sampling\n"
		"                           (no BPF, no root; docs/http-api.md)\n"
		"  -h, --help, -V, --version\n");
}

int ember_config_from_args(struct ember_config *c, int argc, char **argv, FILE *out, char *err,
			   size_t errlen)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, 'l' },
		{ "frequency", required_argument, NULL, 'F' },
		{ "retention", required_argument, NULL, 'r' },
		{ "memory-limit", required_argument, NULL, 'm' },
		{ "set", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "dump-after", required_argument, NULL, ARG_DUMP_AFTER },
		{ "dump-file", required_argument, NULL, ARG_DUMP_FILE },
		{ "print-config", no_argument, NULL, ARG_PRINT_CONFIG },
		{ "dump-root", required_argument, NULL, ARG_DUMP_ROOT },
		{ "dump-idle", no_argument, NULL, ARG_DUMP_IDLE },
		{ "check-config", no_argument, NULL, ARG_CHECK_CONFIG },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *shortopts = "+c:l:F:r:m:o:vhV";
	bool print = false;
	char reason[512];
	int opt, r, pass;
	size_t i;

	/* Pass 0 loads --config, pass 1 applies everything else on top of it. */
	for (pass = 0; pass < 2; pass++) {
		optind = 0;
		opterr = 0;
		while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
			const char *key = NULL, *flag = NULL;

			if (opt == '?' || opt == ':') {
				if (pass)
					continue;
				if (optopt && optopt < 0x100)
					return errbuf_set(err, errlen, -EINVAL,
							  "bad option '-%c' (see --help)", optopt);
				return errbuf_set(err, errlen, -EINVAL,
						  "bad option '%s' (see --help)", argv[optind - 1]);
			}
			if (pass == 0) {
				if (opt == 'c') {
					if (strlen(optarg) >= sizeof(c->config_path))
						return errbuf_set(err, errlen, -EINVAL,
								  "config path too long");
					strcpy(c->config_path, optarg);
					r = ember_config_load(c, optarg, err, errlen);
					if (r)
						return r;
				} else if (opt == 'h') {
					usage(out);
					return 1;
				} else if (opt == 'V') {
					fprintf(out, "emberd %s\n", EMBER_VERSION);
					return 1;
				}
				continue;
			}
			for (i = 0; i < sizeof(flag_keys) / sizeof(flag_keys[0]); i++)
				if (flag_keys[i].val == opt) {
					key = flag_keys[i].key;
					flag = flag_keys[i].flag;
				}
			if (key) {
				r = ember_config_set(c, key, optarg, reason, sizeof(reason));
				if (r)
					return errbuf_set(err, errlen, -EINVAL, "%s: %s", flag,
							  reason);
				continue;
			}
			switch (opt) {
			case 'o': {
				char kbuf[160];
				const char *eq = strchr(optarg, '=');

				if (!eq || (size_t)(eq - optarg) >= sizeof(kbuf))
					return errbuf_set(err, errlen, -EINVAL,
							  "-o expects KEY=VALUE, got '%s'", optarg);
				memcpy(kbuf, optarg, (size_t)(eq - optarg));
				kbuf[eq - optarg] = '\0';
				r = ember_config_set(c, kbuf, eq + 1, reason, sizeof(reason));
				if (r)
					return errbuf_set(err, errlen, -EINVAL, "-o %s", reason);
				break;
			}
			case 'v':
				c->log_level = LOG_LVL_DEBUG;
				break;
			case ARG_DUMP_AFTER:
				if (parse_u64(optarg, false, &c->dump_after_s) || !c->dump_after_s ||
				    c->dump_after_s > 86400)
					return errbuf_set(
					    err, errlen, -EINVAL,
					    "--dump-after: '%s' is not 1..86400 seconds", optarg);
				break;
			case ARG_DUMP_FILE:
				if (strlen(optarg) >= sizeof(c->dump_path) || !optarg[0])
					return errbuf_set(err, errlen, -EINVAL,
							  "--dump-file: bad path");
				strcpy(c->dump_path, optarg);
				break;
			case ARG_DUMP_ROOT: {
				static const char *const roots[] = { "none", "comm", "pid", "tid" };
				int k;

				for (k = 0; k < 4 && strcmp(optarg, roots[k]); k++)
					;
				if (k == 4)
					return errbuf_set(
					    err, errlen, -EINVAL,
					    "--dump-root: '%s' is not none, comm, pid or tid",
					    optarg);
				c->dump_root = k;
				break;
			}
			case ARG_DUMP_IDLE:
				c->dump_idle = true;
				break;
			case ARG_PRINT_CONFIG:
				print = true;
				break;
			case ARG_CHECK_CONFIG:
				c->check_config = true; /* main() checks, prints and exits */
				break;
			default:
				break;
			}
		}
	}
	if (optind < argc)
		return errbuf_set(err, errlen, -EINVAL, "unexpected argument '%s' (see --help)",
				  argv[optind]);
	optind = 0;
	if (print) {
		ember_config_print(c, out);
		return 1;
	}
	return 0;
}

void ember_config_print(const struct ember_config *c, FILE *out)
{
	static const char *const levels[] = { "error", "warn", "info", "debug" };
	const char *base = (const char *)c;
	char section[64] = "";
	size_t i;

	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		const struct opt *o = &opts[i];
		const char *dot = strchr(o->key, '.');
		uint64_t v;
		bool b;
		int lvl;

		if (strncmp(section, o->key, (size_t)(dot - o->key)) ||
		    section[dot - o->key] != '\0') {
			memcpy(section, o->key, (size_t)(dot - o->key));
			section[dot - o->key] = '\0';
			fprintf(out, "%s[%s]\n", i ? "\n" : "", section);
		}
		fprintf(out, "%s = ", dot + 1);
		switch (o->type) {
		case OPT_U64:
		case OPT_SIZE:
			memcpy(&v, base + o->off, sizeof(v));
			fprintf(out, "%" PRIu64 "\n", v);
			break;
		case OPT_BOOL:
			memcpy(&b, base + o->off, sizeof(b));
			fprintf(out, "%s\n", b ? "yes" : "no");
			break;
		case OPT_MS:
			memcpy(&v, base + o->off, sizeof(v));
			if (v % 1000)
				fprintf(out, "%" PRIu64 "ms\n", v);
			else
				fprintf(out, "%" PRIu64 "s\n", v / 1000);
			break;
		case OPT_LISTEN:
		case OPT_PATH:
		case OPT_DIRS:
		case OPT_LIST:
		case OPT_USER:
		case OPT_URL:
		case OPT_WORD:
		case OPT_TEXT:
			fprintf(out, "%s\n", base + o->off);
			break;
		case OPT_LEVEL:
			lvl = *(const int *)(base + o->off);
			fprintf(out, "%s\n", lvl >= 0 && lvl <= 3 ? levels[lvl] : "info");
			break;
		}
	}
}
