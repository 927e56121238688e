// SPDX-License-Identifier: MIT
/* ember: the offline CLI. `ember CMD [ARGS]`; see `ember help`. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "ember/core/base/log.h"
#include "ember/core/base/version.h"

static const struct cli_cmd commands[] = {
#define EMBER_CMD(n, f, s) { .name = #n, .fn = f, .summary = s },
#include "commands.h"
#undef EMBER_CMD
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: ember [--version] [-v] COMMAND [ARGS]\n\n"
		   "ember works on CPU profiles offline: folded stacks, flame graphs, flame scope.\n\n"
		   "Commands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "  %-12s %s\n", "help", "this text, or `ember help COMMAND`");
	fprintf(f, "\nRun `ember COMMAND --help` for a command's options. "
		   "Exit status: 0 success, 1 failure, 2 bad usage or input.\n");
}

static const struct cli_cmd *find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct cli_cmd *cmd;
	char *help_argv[] = { NULL, (char *)"--help", NULL };

	log_set_prog("ember");
	while (argc > 1 && argv[1][0] == '-') {
		if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
			printf("ember %s\n", EMBER_VERSION);
			return CLI_EXIT_OK;
		} else if (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--verbose")) {
			log_set_level(LOG_LVL_DEBUG);
		} else if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			usage(stdout);
			return CLI_EXIT_OK;
		} else {
			log_error("unknown option '%s'", argv[1]);
			usage(stderr);
			return CLI_EXIT_USAGE;
		}
		argc--, argv++;
	}
	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			usage(stdout);
			return CLI_EXIT_OK;
		}
		cmd = find(argv[2]);
		if (!cmd) {
			log_error("unknown command '%s'; see `ember help`", argv[2]);
			return CLI_EXIT_USAGE;
		}
		help_argv[0] = argv[2];
		return cmd->fn(2, help_argv);
	}
	cmd = find(argv[1]);
	if (!cmd) {
		log_error("unknown command '%s'; see `ember help`", argv[1]);
		return CLI_EXIT_USAGE;
	}
	return cmd->fn(argc - 1, argv + 1);
}
