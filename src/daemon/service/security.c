// SPDX-License-Identifier: MIT
/* Listen policy, the token and TLS files (see include/ember/daemon/service/security.h). */
#include "ember/daemon/service/security.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ember/daemon/service/config.h"
#include "ember/core/base/log.h"
#include "ember/core/base/errbuf.h"
#include "ember/core/base/readall.h"

#define PEM_MAX (1u << 20)

bool security_listen_is_loopback(const char *listen)
{
	char host[64];
	const char *h = listen, *end;
	size_t n;
	struct in_addr a4;
	struct in6_addr a6;

	if (*h == '[') {
		h++;
		end = strchr(h, ']');
	} else {
		end = strrchr(h, ':');
	}
	if (!end)
		return false;
	n = (size_t)(end - h);
	if (n == 0 || n >= sizeof(host))
		return false;
	memcpy(host, h, n);
	host[n] = '\0';
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1) {
		if (IN6_IS_ADDR_LOOPBACK(&a6))
			return true;
		/* ::ffff:127.x.y.z */
		return IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127;
	}
	return false;
}

int security_check_listen(const struct ember_config *c, char *err, size_t errlen)
{
	bool tls = c->tls_cert[0] && c->tls_key[0];

	if ((c->tls_cert[0] != 0) != (c->tls_key[0] != 0)) {
		errbuf_set(err, errlen, -EINVAL,
			   "http.tls_cert and http.tls_key go together: set both or neither");
		return -EPERM;
	}
	if (security_listen_is_loopback(c->listen) || c->insecure)
		return 0;
	if (tls && c->auth_token_file[0])
		return 0;
	errbuf_set(err, errlen, -EINVAL,
		   "refusing to listen on non-loopback '%s' without %s%s%s: set them, or "
		   "http.insecure = yes to accept the exposure",
		   c->listen, tls ? "" : "TLS (http.tls_cert, http.tls_key)",
		   !tls && !c->auth_token_file[0] ? " and " : "",
		   c->auth_token_file[0] ? "" : "a bearer token (http.auth_token_file)");
	return -EPERM;
}

/* Opens @path and checks it: regular, at most @max bytes, no group/other bits when @private,
 * owned by root when @root. Returns the fd or -errno. */
static int open_checked(const char *path, bool private, bool root, size_t max, const char *what,
			char *err, size_t errlen)
{
	struct stat st;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		errbuf_set(err, errlen, -EINVAL, "cannot open %s '%s': %s", what, path,
			   strerror(-r));
		return r;
	}
	if (fstat(fd, &st)) {
		r = -errno;
		errbuf_set(err, errlen, -EINVAL, "cannot stat %s '%s': %s", what, path,
			   strerror(-r));
		goto bad;
	}
	if (!S_ISREG(st.st_mode)) {
		r = errbuf_set(err, errlen, -EINVAL, "%s '%s' is not a regular file", what, path);
		goto bad;
	}
	if (root && st.st_uid != 0) {
		errbuf_set(err, errlen, -EINVAL, "%s '%s' must be owned by root (uid %u)", what,
			   path, (unsigned int)st.st_uid);
		r = -EPERM;
		goto bad;
	}
	if (private && (st.st_mode & 077)) {
		errbuf_set(err, errlen, -EINVAL,
			   "%s '%s' is accessible to group or others (mode %04o): chmod 600", what,
			   path, (unsigned int)(st.st_mode & 07777));
		r = -EPERM;
		goto bad;
	}
	if ((uint64_t)st.st_size > max) {
		r = errbuf_set(err, errlen, -EINVAL, "%s '%s' is larger than %zu bytes", what, path,
			       max);
		goto bad;
	}
	return fd;
bad:
	close(fd);
	return r;
}

/* Reads all of @fd (at most @max bytes) into a NUL-terminated malloc'ed buffer, allocated once
 * (never moved: no copy of a secret left behind in freed memory). */
static int read_all(int fd, size_t max, char **ret, size_t *ret_len)
{
	size_t cap = max + 2;
	char *buf = malloc(cap);
	int r;

	if (!buf)
		return -ENOMEM;
	r = read_fd_all(fd, &buf, &cap, max, ret_len);
	if (r) {
		explicit_bzero(buf, cap);
		free(buf);
		return r;
	}
	*ret = buf;
	return 0;
}

int security_read_token(const char *path, char *ret, size_t size, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0, i;
	int fd, r;

	fd = open_checked(path, true, true, 4096, "token file", err, errlen);
	if (fd < 0)
		return fd;
	r = read_all(fd, 4096, &buf, &len);
	close(fd);
	if (r)
		return errbuf_set(err, errlen, -EINVAL, "cannot read token file '%s': %s", path,
				  strerror(-r));
	while (len && isspace((unsigned char)buf[len - 1]))
		buf[--len] = '\0';
	for (i = 0; i < len; i++)
		if (buf[i] <= 0x20 || buf[i] >= 0x7f)
			break;
	if (i < len || len < EMBER_TOKEN_MIN || len > EMBER_TOKEN_MAX || len >= size) {
		/* never echo the token itself */
		r = errbuf_set(err, errlen, -EINVAL,
			       "token file '%s' must hold one token of %d..%d visible ASCII "
			       "characters",
			       path, EMBER_TOKEN_MIN, EMBER_TOKEN_MAX);
		explicit_bzero(buf, len);
		free(buf);
		return r;
	}
	memcpy(ret, buf, len + 1);
	explicit_bzero(buf, len);
	free(buf);
	return 0;
}

int security_read_pem(const char *path, bool private, char **ret, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len;
	int fd, r;

	fd = open_checked(path, private, false, PEM_MAX, private ? "TLS key" : "TLS certificate",
			  err, errlen);
	if (fd < 0)
		return fd;
	r = read_all(fd, PEM_MAX, &buf, &len);
	close(fd);
	if (r)
		return errbuf_set(err, errlen, -EINVAL, "cannot read '%s': %s", path, strerror(-r));
	if (!strstr(buf, "-----BEGIN ")) {
		free(buf);
		return errbuf_set(err, errlen, -EINVAL, "'%s' is not a PEM file", path);
	}
	*ret = buf;
	return 0;
}

/* --- main ----------------------------------------------------------------------------------- */

void security_files_fini(struct security_files *f)
{
	free(f->tls_cert_pem);
	if (f->tls_key_pem)
		explicit_bzero(f->tls_key_pem, strlen(f->tls_key_pem));
	free(f->tls_key_pem);
	explicit_bzero(f->token, sizeof(f->token));
	*f = (struct security_files){0};
}

/* The token of @c into @tok ("" without a token file). Logs. */
static int load_token(const struct ember_config *c, char *tok, size_t size)
{
	char err[512];
	int r;

	tok[0] = '\0';
	if (!c->auth_token_file[0])
		return 0;
	r = security_read_token(c->auth_token_file, tok, size, err, sizeof(err));
	if (r)
		log_error("%s", err);
	return r;
}

int security_files_load(const struct ember_config *c, struct security_files *ret)
{
	struct security_files f = {0};
	char err[512];
	int r;

	r = security_check_listen(c, err, sizeof(err));
	if (r) {
		log_error("%s", err);
		return r;
	}
	if (!security_listen_is_loopback(c->listen) &&
	    !(c->tls_cert[0] && c->auth_token_file[0]))
		log_warn("INSECURE: listening on '%s' without %s (http.insecure = yes): anyone who "
			 "can reach it can read every profile", c->listen,
			 c->tls_cert[0] ? "a bearer token" : c->auth_token_file[0] ? "TLS" :
			 "TLS or a bearer token");
	r = load_token(c, f.token, sizeof(f.token));
	if (r)
		goto fail;
	if (c->tls_cert[0]) {
		r = security_read_pem(c->tls_cert, false, &f.tls_cert_pem, err, sizeof(err));
		if (!r)
			r = security_read_pem(c->tls_key, true, &f.tls_key_pem, err, sizeof(err));
		if (r) {
			log_error("%s", err);
			goto fail;
		}
	}
	log_info("http: %s, %s", c->tls_cert[0] ? "TLS" : "plain HTTP",
		 c->auth_token_file[0] ? "bearer token required (except /healthz)" :
		 "no authentication");
	*ret = f;
	return 0;
fail:
	security_files_fini(&f);
	return r;
}

int security_files_reload_token(const struct ember_config *c, struct security_files *f)
{
	char tok[EMBER_TOKEN_MAX + 1];
	int r = load_token(c, tok, sizeof(tok));

	if (r) {
		log_warn("reload: keeping the previous token");
	} else {
		memcpy(f->token, tok, sizeof(f->token));
		log_info("reload: %s", c->auth_token_file[0] ? "bearer token re-read" :
			 "authentication off");
	}
	explicit_bzero(tok, sizeof(tok));
	return r;
}

int emberd_security_check(const struct ember_config *c)
{
	char err[512], tok[EMBER_TOKEN_MAX + 1], *pem = NULL;
	int bad = 0;

	if (security_check_listen(c, err, sizeof(err))) {
		log_error("%s", err);
		bad++;
	} else if (!security_listen_is_loopback(c->listen) &&
		   !(c->tls_cert[0] && c->auth_token_file[0])) {
		log_warn("INSECURE: '%s' is not loopback and http.insecure = yes", c->listen);
	}
	if (c->auth_token_file[0]) {
		if (security_read_token(c->auth_token_file, tok, sizeof(tok), err, sizeof(err))) {
			log_error("%s", err);
			bad++;
		}
		explicit_bzero(tok, sizeof(tok));
	}
	if (c->tls_cert[0]) {
		if (security_read_pem(c->tls_cert, false, &pem, err, sizeof(err))) {
			log_error("%s", err);
			bad++;
		}
		free(pem);
		pem = NULL;
	}
	if (c->tls_key[0]) {
		if (security_read_pem(c->tls_key, true, &pem, err, sizeof(err))) {
			log_error("%s", err);
			bad++;
		}
		if (pem)
			explicit_bzero(pem, strlen(pem));
		free(pem);
	}
	if (c->user[0] && !getpwnam(c->user)) {
		log_error("security.user: no user '%s'", c->user);
		bad++;
	}
	return bad ? -EINVAL : 0;
}
