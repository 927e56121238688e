// SPDX-License-Identifier: MIT
#include "ember/core/base/readall.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "ember/core/base/array.h"

#define CHUNK (64u << 10)

int read_fd_all(int fd, char **buf, size_t *cap, size_t max, size_t *ret_len)
{
	size_t len = 0;
	int err = 0;

	if (max > SIZE_MAX - 2)
		max = SIZE_MAX - 2;
	for (;;) {
		/* room for one more byte than @max (to see that there is more) and the NUL */
		size_t need = len + CHUNK + 1 < max + 2 ? len + CHUNK + 1 : max + 2;
		size_t room;
		ssize_t n;

		if (array_grow((void **)buf, cap, need, 1, CHUNK)) {
			err = -ENOMEM;
			break;
		}
		room = (*cap - 1 < max + 1 ? *cap - 1 : max + 1) - len;
		n = read(fd, *buf + len, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max) {
			len = max;
			err = -EFBIG;
			break;
		}
	}
	if (*buf)
		(*buf)[len] = '\0';
	*ret_len = len;
	return err;
}

int read_path_all(const char *path, char **buf, size_t *cap, size_t max, size_t *ret_len)
{
	int fd, err;

	*ret_len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = read_fd_all(fd, buf, cap, max, ret_len);
	close(fd);
	return err;
}
