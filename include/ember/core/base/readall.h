/* SPDX-License-Identifier: MIT */
/*
 * readall: a whole file into a growable buffer, up to a limit. The /proc readers (maps, stat,
 * status), the token and certificate files and the CLI's binary inputs all read this way.
 */
#ifndef EMBER_READALL_H
#define EMBER_READALL_H

#include <stddef.h>

/*
 * Reads @fd to its end into *@buf (malloc'ed, *@cap bytes; NULL and 0 to start, reused across
 * calls, grown as needed, left to the caller to free), NUL-terminated. *@ret_len is the length
 * read (set on errors too). A file longer than @max bytes is -EFBIG, with its first @max bytes
 * in the buffer; an allocation failure -ENOMEM; a read error -errno (EINTR is retried). A buffer
 * allocated beforehand with at least @max + 2 bytes is never moved (nothing is left behind in
 * freed memory: the token and key files).
 */
int read_fd_all(int fd, char **buf, size_t *cap, size_t max, size_t *ret_len);

/* The same for the file at @path (opened read-only, close-on-exec; -errno if it cannot be). */
int read_path_all(const char *path, char **buf, size_t *cap, size_t max, size_t *ret_len);

#endif
