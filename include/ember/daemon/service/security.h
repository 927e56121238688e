/* SPDX-License-Identifier: MIT */
/*
 * security: who may talk to emberd, over what, and with which privileges (docs/security.md).
 *
 *   - listen policy: a loopback address (127.0.0.0/8, ::1) is always allowed; any other address
 *     needs TLS (http.tls_cert + http.tls_key) AND a bearer token (http.auth_token_file), or
 *     http.insecure = yes, which logs a warning at every start;
 *   - bearer token: read from a regular file owned by root and not accessible to group or
 *     others; the HTTP server compares it in constant time (http_auth.c); every endpoint but
 *     /healthz needs it once set; a failure is a bare 401 (no detail about why);
 *   - TLS: libmicrohttpd's GnuTLS support with the PEM certificate and key loaded at start (the
 *     key file must not be accessible to group or others);
 *   - privileges: after BPF is loaded and attached and the socket is bound, emberd keeps only
 *     the capabilities it still needs (privs.c) and optionally becomes security.user.
 */
#ifndef EMBER_SECURITY_H
#define EMBER_SECURITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ember_config;

#define EMBER_TOKEN_MIN 16  /* bytes; shorter tokens are refused */
#define EMBER_TOKEN_MAX 512

/* True when @listen ("ADDR:PORT", "[V6]:PORT") names a loopback address. */
bool security_listen_is_loopback(const char *listen);

/*
 * The listen policy over @c (see above). 0, or -EPERM with the reason in @err. Does not read
 * any file; emberd_security_setup() also checks that the files are usable.
 */
int security_check_listen(const struct ember_config *c, char *err, size_t errlen);

/*
 * Reads the token at @path into @ret (@size >= EMBER_TOKEN_MAX + 1), after checking that it is
 * a regular file owned by root with no group/other permission bits. Trailing whitespace is
 * dropped; the token must be EMBER_TOKEN_MIN..EMBER_TOKEN_MAX visible ASCII characters.
 * 0 or -errno (-EPERM for bad ownership or mode, -EINVAL for a bad token) with @err filled.
 */
int security_read_token(const char *path, char *ret, size_t size, char *err, size_t errlen);

/*
 * Reads a PEM file (at most 1 MiB) into a NUL-terminated malloc'ed string (*ret, caller frees).
 * With @private, the file must not be accessible to group or others (a TLS key).
 */
int security_read_pem(const char *path, bool private, char **ret, char *err, size_t errlen);

/* --- emberd's main (logging) --------------------------------------------------------------- */

/* The secrets emberd serves with: read at start, the token again on SIGHUP. */
struct security_files {
	char token[EMBER_TOKEN_MAX + 1];  /* "": no authentication */
	char *tls_cert_pem, *tls_key_pem; /* NULL: plain HTTP; owned */
};

/*
 * Applies the listen policy to @c and reads its token and TLS files into *@ret (free with
 * security_files_fini()). Logs what is wrong. 0 or -errno.
 */
int security_files_load(const struct ember_config *c, struct security_files *ret);
/* SIGHUP: re-reads the token file of @c (rotation) into @f; on failure keeps the old token.
 * Logs. 0 or -errno. */
int security_files_reload_token(const struct ember_config *c, struct security_files *f);
/* Wipes the secrets and frees the PEMs; a zeroed struct is fine. */
void security_files_fini(struct security_files *f);

/*
 * `emberd --check-config`: the policy, the token and TLS files and the user, without starting
 * anything. Logs each problem; 0 when everything is usable, -EINVAL otherwise.
 */
int emberd_security_check(const struct ember_config *c);

/*
 * privs.c: after start-up, keeps only the capabilities emberd still needs (PRIVS_KEEP_MASK,
 * limited to what it has), drops the rest from the bounding set, clears ambient ones, sets
 * no_new_privs, and switches to c->user when set. No-op when security.drop_capabilities = no
 * and no user is set. Logs; 0 or -errno.
 */
int emberd_drop_privileges(const struct ember_config *c);

/* The capabilities kept (bit numbers of <linux/capability.h>), for tests and docs. */
uint64_t privs_keep_mask(void);

#endif
