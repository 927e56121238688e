// SPDX-License-Identifier: MIT
/* libFuzzer target: emberd's config file parser, then printing what it accepted. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ember/daemon/service/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ember_config c;
	char err[256];
	FILE *null = fopen("/dev/null", "we");

	ember_config_init(&c);
	if (ember_config_parse(&c, (const char *)data, size, "fuzz", err, sizeof(err)) == 0 && null)
		ember_config_print(&c, null);
	if (null)
		fclose(null);
	return 0;
}
