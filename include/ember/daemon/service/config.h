/* SPDX-License-Identifier: MIT */
/*
 * config: emberd's settings in one plain struct. Built-in defaults < config file < command-line
 * flags. Every setting has a key "section.name" in a table (config.c) with its type, default and
 * limits; the file format is INI-like:
 *
 *     # comment            ; comment
 *     [sampling]
 *     frequency = 99
 *     [store]
 *     memory_limit = 256M   # sizes take K, M, G (powers of 1024)
 *
 * Unknown keys and out-of-range values are errors (with file:line). To add a setting: a field
 * here, a row in the table in config.c, a line in config/emberd.conf and docs/emberd.md.
 */
#ifndef EMBER_CONFIG_H
#define EMBER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EMBER_LISTEN_MAX 128
#define EMBER_PATH_MAX	 4096
#define EMBER_LIST_MAX	 1024
#define EMBER_USER_MAX	 64

struct ember_config {
	/* [http] */
	char listen[EMBER_LISTEN_MAX];	/* "ADDR:PORT", "[v6]:PORT"; default 127.0.0.1:8080 */
	uint64_t http_max_connections;	/* 1..10000; default 64 */
	uint64_t http_threads;		/* MHD thread pool; 1..64; default 2 */
	uint64_t http_max_range_s;	/* longest query range; 1 s..366 days; default 7 days */
	uint64_t http_max_response_bytes; /* 1M..16G; default 256M */
	uint64_t http_max_captures;	/* captures kept; 1..1000; default 16 */
	uint64_t http_capture_memory_bytes; /* all captures; 1M..1T; default 256M */
	uint64_t http_max_capture_s;	/* longest capture; 1..86400; default 600 */
	uint64_t http_timeout_s;	/* idle connection timeout; 1..3600; default 30 */
	uint64_t http_max_body_bytes;	/* POST body; 1K..16M; default 64K */
	uint64_t http_max_request_bytes; /* request line + headers per connection; 8K..1M; 64K */
	uint64_t http_max_connections_per_ip; /* 1..10000; default 32 */
	uint64_t http_reserved_connections;  /* beyond the limits, cheap routes only; 0..1000; 16 */
	uint64_t http_request_timeout_s;     /* to deliver a whole request; 1..3600; default 10 */
	uint64_t http_render_threads;	     /* renders at once; 1..64; default 2 */
	uint64_t http_render_queue;	     /* renders waiting, then 503; 0..10000; default 16 */
	uint64_t http_response_memory_bytes; /* response bodies in all; 1M..64G; default 128M */
	char tls_cert[EMBER_PATH_MAX];	/* PEM certificate (chain); empty: plain HTTP */
	char tls_key[EMBER_PATH_MAX];	/* PEM private key; owner-only readable */
	char auth_token_file[EMBER_PATH_MAX]; /* bearer token; root-owned, mode 0600/0400 */
	bool insecure;			/* allow non-loopback without TLS + token (warns) */

	/* [sampling] */
	uint64_t frequency_hz;		/* 1..10000; default 99 */
	bool include_idle;		/* sample the idle task too (marked); default true */
	bool idle_stacks;		/* ... with its kernel stack (an unwind each); default false */
	bool hardware_event;		/* try PERF_COUNT_HW_CPU_CYCLES first; default true */
	uint64_t stack_map_entries;	/* ignored (no stack maps since whole stacks go through the ring buffer); accepted */
	uint64_t counts_map_entries;	/* ignored (no counts maps since whole stacks go through the ring buffer); accepted */
	uint64_t ringbuf_bytes;		/* time records; 64K..256M, power of 2; default 1M */
	uint64_t tick_ms;		/* drain interval; 10..10000; default 250 */

	/* [store] */
	uint64_t retention_s;		/* 1..30 days; default 3600 */
	uint64_t memory_limit_bytes;	/* 1M..1T; default 256M */

	/* [symbols] */
	bool perf_maps;			/* read /tmp/perf-PID.map; default true */
	bool inline_frames;		/* libdw inline frames as _[i]; default false */
	bool demangle;			/* default true */
	uint64_t max_pids;		/* processes with cached symbol state; default 4096 */
	char debug_dirs[EMBER_PATH_MAX]; /* ':'-separated debug-info roots; "/usr/lib/debug" */
	bool addr_offsets;		/* unresolved frames as "file+0xoff"; default false */
	uint64_t max_elfs;		/* ELF images with cached symbols; 16..65536, default 512 */
	bool unwind;			/* user stacks walked with CFI tables; default yes */
	uint64_t unwind_memory_bytes;	/* the tables' rows array (8 B a row); 1M..4G, default 16M */
	uint64_t unwind_procs;		/* processes listed for the walker; 16..1M, default 4096 */
	uint64_t max_perfmap_bytes;	/* larger perf maps are skipped; 1M..4G, default 64M */
	uint64_t max_symbols;		/* entries of one ELF symbol table; 1024..1G, default 2M */
	uint64_t max_perfmap_entries;	/* all perf maps together; 1024..1G, default 500000 */
	uint64_t max_perfmap_memory;	/* ... in bytes; 1M..64G, default 32M */
	uint64_t max_names_bytes;	/* the frame names' table; 1M..4G, default 32M */
	uint64_t max_names_share;	/* ... what one process may bring into it, in percent of
					   it per generation; 1..100, default 25 */
	uint64_t max_image_bytes;	/* all ELF images' symbols; 16M..64G, default 128M */
	uint64_t max_section_bytes;	/* an ELF section read, inflated; 1M..4G, default 128M */
	bool debuginfod;		/* fetch debug files from DEBUGINFOD_URLS; default yes */
	char debuginfod_cache[EMBER_PATH_MAX]; /* their folder; /var/cache/emberd/debuginfod */
	uint64_t debuginfod_cache_bytes;	/* its bound; 16M..1T, default 1G */
	uint64_t debuginfod_timeout_ms;	/* one fetch's bound; 100 ms..10 min, default 2 s */
	uint64_t debuginfod_threads;	/* fetches at once; 1..8, default 2 */
	uint64_t debuginfod_queue;	/* build-ids waiting; 1..4096, default 64 */
	uint64_t debuginfod_budget_ms;	/* fetch time per minute; 100 ms..10 min, default 30 s */

	/* [process] */
	bool process_maps_query; /* mappings by PROCMAP_QUERY where the kernel has it; default yes */
	uint64_t process_exec_batch_us; /* execs handed to the worker in bursts this long; 0..100000,
					   default 1000 (0: each at once) */
	uint64_t process_drain_period_ms; /* what is not urgent (forks, exits) read and handed
					     over in one batch this often; 0..1000, default 15 */

	/* [files]: the cache of mapped files' facts (elf/filecache.h), shared by the readers */
	uint64_t files_max;	   /* files with facts; 16..1M, default 1024 */
	uint64_t files_max_bytes;  /* their facts' bytes; 1M..64G, default 160M */

	/* [python] */
	bool python;	       /* Python frames of CPython processes; default yes */
	bool python_lines;     /* ... with "file:line"; default no */
	uint64_t python_procs; /* CPython processes read; 16..1M, default 4096 */
	uint64_t python_codes; /* code objects named; 1024..16M, default 65536 */
	uint64_t python_code_memory_bytes; /* their names and line tables; 1M..4G, default 64M */

	/* [v8] */
	bool v8; /* JavaScript frames of Node (V8) processes; default yes */
	/* [hotspot] */
	bool hotspot; /* Java frames of HotSpot JVMs; default yes */
	bool hotspot_lines; /* Java frames say "(File.java:line)"; default no */

	/* [offcpu] (docs/design/offcpu.md) */
	bool offcpu;			  /* off-CPU events; default no */
	char offcpu_states[EMBER_LIST_MAX]; /* ','-separated of S, D, R; default "S,D" */
	uint64_t offcpu_min_us;		  /* shorter periods: duration-weighted; default 1000 */
	uint64_t offcpu_max_us;		  /* longer: counted, not recorded; default 60 s */
	uint64_t offcpu_quantum_us;	  /* the weight's unit, <= min; default 1000 */
	uint64_t offcpu_pid;		  /* only this process; 0: any */
	uint64_t offcpu_cgroup_id;	  /* only this cgroup v2 id (its inode); 0: any */
	char offcpu_comm[EMBER_LIST_MAX]; /* only this comm (exact, <= 15 chars); empty: any */
	uint64_t offcpu_threads;	  /* threads tracked at once; default 65536 */
	uint64_t offcpu_memory_bytes;	  /* the off-CPU store's limit; default 64M */
	uint64_t offcpu_chain_depth;	  /* wakers in a chain graph's stack, 1..4; default 2 */
	bool offcpu_kernel_stacks;	  /* blocked kernel stacks (at the switch-out); default yes */
	/* memory and I/O events, each off by default (docs/emberd.md): [pagefault], [vmgrow],
	 * [blockio], [malloc]; max_rate: records per second per process (0: unbounded) */
	bool pagefault;
	uint64_t pagefault_period;	  /* one sample every N faults per CPU; default 16 */
	uint64_t pagefault_max_rate, pagefault_memory_bytes;
	bool vmgrow;
	uint64_t vmgrow_quantum;	  /* bytes a stored record stands for; default 64K */
	uint64_t vmgrow_max_rate, vmgrow_memory_bytes;
	bool blockio;
	uint64_t blockio_quantum;	  /* bytes a stored record stands for; default 16K */
	uint64_t blockio_latency_quantum_us; /* weight=latency's unit; default 100 us */
	uint64_t blockio_inflight;	  /* bios tracked for their latency at once; default 1024 */
	uint64_t blockio_max_rate, blockio_memory_bytes;
	bool malloc;
	uint64_t malloc_pid;		  /* only this process's malloc; 0: by comm */
	char malloc_comm[EMBER_LIST_MAX];  /* ... or this comm's (every process of the library
					     takes the breakpoint) */
	char malloc_library[EMBER_PATH_MAX]; /* absolute; empty: libc.so.6 by the loader's search */
	uint64_t malloc_interval;	  /* bytes between samples; default 512K */
	uint64_t malloc_max_rate, malloc_memory_bytes;
	bool pmc;			  /* hardware counters (cycles, instructions); default no */
	uint64_t pmc_period;		  /* events per sample; default 1000000 */
	uint64_t pmc_memory_bytes;

	/* [filter] (SIGHUP reloads them) */
	char exclude_comms[EMBER_LIST_MAX];   /* ','-separated comm globs; empty: none */
	char exclude_cgroups[EMBER_LIST_MAX]; /* ','-separated cgroup v2 path prefixes */

	/* [export] (SIGHUP reloads them; docs/integrations.md) */
	char export_otlp_endpoint[EMBER_PATH_MAX]; /* http(s) base URL; empty: off */
	uint64_t export_otlp_interval_ms;	/* 1 s..1 h; default 10 s */
	char export_pyroscope_url[EMBER_PATH_MAX]; /* http(s) base URL; empty: off */
	uint64_t export_pyroscope_interval_ms;	/* 1 s..1 h; default 10 s */
	char export_pyroscope_tenant[EMBER_USER_MAX * 4]; /* X-Scope-OrgID; empty: none */
	char export_basic_auth_file[EMBER_PATH_MAX];  /* "user:password"; empty: none */
	char export_bearer_token_file[EMBER_PATH_MAX]; /* a token; empty: none */
	char export_ca_file[EMBER_PATH_MAX];	/* PEM CA bundle; empty: the system's */
	char export_client_cert[EMBER_PATH_MAX]; /* PEM client certificate; empty: none */
	char export_client_key[EMBER_PATH_MAX];
	uint64_t export_queue_bytes;		/* 64K..4G; default 64M */
	uint64_t export_max_message_bytes;	/* 64K..1G; default 4M */
	uint64_t export_timeout_ms;		/* 100 ms..10 min; default 10 s */
	uint64_t export_retry_max_ms;		/* 1 s..1 h; default 60 s */
	char export_service_rules[EMBER_LIST_MAX]; /* identity.h; default "exe" */
	char export_service_regex[EMBER_LIST_MAX]; /* "NAME=ERE ..." for the "regex" rule; "" */

	/* [security] */
	char user[EMBER_USER_MAX];	/* run as this user after start-up; empty: stay root */
	bool drop_capabilities;		/* keep only the capabilities still needed; default yes */

	/* [log] */
	int log_level;			/* enum log_level; default info; -v: debug */

	/* command line only */
	char config_path[EMBER_PATH_MAX]; /* --config; empty: none */
	uint64_t dump_after_s;		/* --dump-after S: dump the folded profile and exit; 0: off */
	char dump_path[EMBER_PATH_MAX];	/* --dump-file F (also the SIGUSR1 dump); empty: stdout */
	int dump_root;			/* --dump-root none|comm|pid|tid (enum store_root); comm */
	bool dump_idle;			/* --dump-idle: include the idle task in dumps */
	bool check_config;		/* --check-config: validate, print, exit */
};

/* Fills @c with the built-in defaults. */
void ember_config_init(struct ember_config *c);

/*
 * Sets one key ("section.name") from its text value. 0, -ENOENT (unknown key) or -EINVAL (bad
 * or out-of-range value); on failure a one-line reason is written to @err (@errlen bytes).
 */
int ember_config_set(struct ember_config *c, const char *key, const char *value, char *err,
		     size_t errlen);

/*
 * Parses a whole config text (@name for messages). On the first bad line returns -EINVAL (or
 * -ENOENT for an unknown key) with "name:line: reason" in @err; @c keeps the lines before it.
 */
int ember_config_parse(struct ember_config *c, const char *text, size_t len, const char *name,
		       char *err, size_t errlen);

/* Reads and parses @path. Like ember_config_parse(), plus -errno of open/read. */
int ember_config_load(struct ember_config *c, const char *path, char *err, size_t errlen);

/*
 * The command line: --config FILE is loaded first, then the other flags override it.
 * Returns 0 (run), 1 (--help or --version was printed to @out: exit 0) or -EINVAL with a
 * message in @err. Uses getopt_long (resets optind).
 */
int ember_config_from_args(struct ember_config *c, int argc, char **argv, FILE *out, char *err,
			   size_t errlen);

/* Writes every key with its current value, in config-file syntax (for `emberd --print-config`). */
void ember_config_print(const struct ember_config *c, FILE *out);

#endif
