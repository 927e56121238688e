/* SPDX-License-Identifier: MIT */
/* Shared by every parser of outside input: where and why a parse failed. */
#ifndef EMBER_PARSE_H
#define EMBER_PARSE_H

struct parse_error {
	unsigned long line;	/* 1-based line number, 0 if unknown */
	unsigned int col;	/* 1-based column, 0 if unknown */
	const char *reason;	/* static string, lower case, no trailing period */
};

#endif
