// SPDX-License-Identifier: MIT
/*
 * Connection bounds. MHD counts connections and closes those that stay silent for
 * http.timeout, but a connection that trickles its headers a byte at a time, a TLS handshake
 * left half done, or a flood of idle connections from one address would keep every slot (and
 * /healthz) away for as long as the attack lasts. So every connection is tracked here from
 * accept to close (MHD_OPTION_NOTIFY_CONNECTION), with its address and state:
 *
 *   idle  no request yet, or between two (TLS handshake, request line and headers arriving)
 *   body  headers in, the request body arriving
 *   busy  a request being answered
 *
 * - A connection idle (or in its body) for longer than http.request_timeout is closed: the
 *   whole request, whatever the pace of its bytes, must arrive within that time (the watcher
 *   checks every 250 ms).
 * - Over http.max_connections in all, or http.max_connections_per_ip from one address, a new
 *   connection closes the idle one (of that address first) silent for longest: idle connections
 *   cannot keep anyone out.
 * - When busy connections already fill those limits, a request is "over budget": it may use
 *   only the cheap routes (/healthz, /metrics, stats), others get 503. MHD's own limits are the
 *   same plus http.reserved_connections, so that the liveness probe always finds a slot.
 *
 * Closing is shutdown(2) on the socket: MHD sees the end of the stream and closes the
 * connection itself; the socket stays valid until MHD's close notification, which takes the
 * same lock, so the descriptor is never someone else's.
 */
#include <errno.h>
#include <stddef.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "ember/core/base/clock.h"
#include "ember/core/base/log.h"
#include "http_internal.h"

enum conn_state { CONN_IDLE = 0, CONN_BODY, CONN_BUSY };

/*
 * A connection silent for less than this is not closed to make room: a client sends its
 * request right after connecting, but not in the same instant. (Under a flood of clients
 * reconnecting as soon as they are closed, ~5000 a second, an idle connection used to be the
 * oldest within a millisecond or two, and a liveness probe was closed before its request
 * arrived about once in 40.)
 */
#define EVICT_GRACE_MS 20
/*
 * One that sent bytes and then kept silent this long (a stalled TLS handshake, a slow-loris
 * between two bytes) may be closed to make room too; before, its silence may be ours.
 */
#define EVICT_TALKER_MS 1000

struct http_conn {
	int fd;
	unsigned char addr[17]; /* family byte + IPv4 or IPv6 address */
	enum conn_state state;
	int64_t since_ns;	       /* CLOCK_MONOTONIC: when the state began */
	bool evicted;		       /* shut down, waiting for MHD to close it */
	struct http_conn *prev, *next; /* oldest first */
};

void http_conn_init(struct http_server *s)
{
	pthread_mutex_init(&s->conn_lock, NULL);
}

void http_conn_fini(struct http_server *s)
{
	struct http_conn *c, *n;

	for (c = s->conns_head; c; c = n) {
		n = c->next;
		free(c);
	}
	s->conns_head = s->conns_tail = NULL;
	pthread_mutex_destroy(&s->conn_lock);
}

static void addr_key(const struct sockaddr *sa, unsigned char key[17])
{
	memset(key, 0, 17);
	if (!sa)
		return;
	key[0] = (unsigned char)sa->sa_family;
	if (sa->sa_family == AF_INET)
		memcpy(key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	else if (sa->sa_family == AF_INET6)
		memcpy(key + 1, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
}

/* Bytes waiting in @fd's receive queue (0 when unknown). */
static int pending_input(int fd)
{
	int n = 0;

	return ioctl(fd, FIONREAD, &n) ? 0 : n;
}

/* Under conn_lock. */
static void evict_locked(struct http_server *s, struct http_conn *c, bool timeout)
{
	c->evicted = true;
	(void)shutdown(c->fd, SHUT_RDWR);
	if (timeout)
		s->evicted_timeout++;
	else
		s->evicted_pressure++;
	if (c->state != CONN_IDLE)
		s->nr_busy--;
}

/*
 * How long @c has kept silent: milliseconds since its last byte, or since its accept when it
 * never sent one (*@ret_talked false).
 */
static int64_t silent_ms(const struct http_conn *c, int64_t now, bool *ret_talked)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	*ret_talked = false;
	if (getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) ||
	    len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti.tcpi_bytes_received))
		return (now - c->since_ns) / 1000000; /* not TCP, or an old kernel: its age */
	*ret_talked = ti.tcpi_bytes_received > 0;
	return *ret_talked ? (int64_t)ti.tcpi_last_data_recv : (now - c->since_ns) / 1000000;
}

/*
 * Under conn_lock: the idle connection (of @addr when not NULL, never @skip) to close to make
 * room, NULL for none: the oldest of those that never sent a byte (older than EVICT_GRACE_MS),
 * else the one silent longest among those that did, if for more than EVICT_TALKER_MS. A flood
 * of connections that send nothing, or stall in a TLS handshake, goes first; a client whose
 * request or handshake is under way stays, even from the same address (its silence may be
 * ours: the server's half of a handshake comes late under load). Without @grace (MHD's own
 * limit is near), the oldest silent one, or else the oldest idle one that talked (the longest
 * silent past EVICT_TALKER_MS first). One with bytes waiting is always spared: MHD reads
 * eagerly, so that is a request about to be read. Called for every connection accepted over
 * the limits, thousands a second under a flood: the system calls are for candidates only.
 */
static struct http_conn *victim_locked(struct http_server *s, const unsigned char *addr,
				       const struct http_conn *skip, bool grace)
{
	int64_t now = (int64_t)mono_ns(), best_ms = EVICT_TALKER_MS - 1, age_ms, ms;
	struct http_conn *c, *best = NULL, *oldest_talker = NULL;
	bool talked;

	for (c = s->conns_head; c; c = c->next) {
		if (c == skip || c->evicted || c->state != CONN_IDLE ||
		    (addr && memcmp(c->addr, addr, sizeof(c->addr))))
			continue;
		age_ms = (now - c->since_ns) / 1000000;
		if (grace && age_ms < EVICT_GRACE_MS)
			continue;
		ms = silent_ms(c, now, &talked);
		if (!talked) {
			if (!pending_input(c->fd))
				return c; /* the oldest that never said a word */
			continue;
		}
		/*
		 * Past EVICT_TALKER_MS, the one silent longest; without grace, else the oldest that
		 * talked, whatever its silence. (That fallback once took the place of a silent one:
		 * it set the bar to its own few milliseconds, and a younger connection silent a
		 * little longer replaced it: a liveness probe in its TLS handshake, 5 ms old, among
		 * 2000 reconnecting clients that had finished theirs, about once in 77 probes.)
		 */
		if (ms > best_ms && !pending_input(c->fd)) {
			best = c;
			best_ms = ms;
		} else if (!grace && !oldest_talker && !pending_input(c->fd)) {
			oldest_talker = c;
		}
	}
	return best ? best : oldest_talker;
}

/*
 * Under conn_lock: closes idle connections while over the limits (@c: a new one, never closed
 * here; NULL from the reaper). The young and the talking ones (victim_locked()) are spared
 * until 4 x the per-address limit or 2 x the limit in all, a quarter of MHD's own: then they go
 * too, before MHD's limits are reached (its threads stop accepting at theirs, and new
 * connections, the liveness probe among them, waited in the listen queue behind the flood:
 * 0.5 s at 2000 reconnecting clients). At 2 x per address, a TLS probe in its handshake (70
 * half-open handshakes from its address) was closed once in 70.
 */
static void enforce_locked(struct http_server *s, const struct http_conn *c)
{
	struct http_conn *v;
	unsigned int live = 0, from_addr = 0;
	const unsigned int per_ip = s->cfg.max_connections_per_ip, all = s->cfg.max_connections;

	for (v = s->conns_head; v; v = v->next) {
		if (v->evicted)
			continue;
		live++;
		from_addr += c && !memcmp(v->addr, c->addr, sizeof(v->addr));
	}
	while (c && from_addr > per_ip) {
		v = victim_locked(s, c->addr, c, true);
		if (!v && from_addr >= 4 * per_ip)
			v = victim_locked(s, c->addr, c, false);
		if (!v)
			break;
		evict_locked(s, v, false);
		from_addr--;
		live--;
	}
	while (live > all) {
		v = victim_locked(s, NULL, c, true);
		if (!v && live >= 2 * all)
			v = victim_locked(s, NULL, c, false);
		if (!v)
			break;
		evict_locked(s, v, false);
		live--;
	}
}

struct http_conn *http_conn_started(struct http_server *s, int fd, const struct sockaddr *addr)
{
	struct http_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL; /* untracked: MHD's own limits still apply */
	c->fd = fd;
	addr_key(addr, c->addr);
	c->since_ns = (int64_t)mono_ns();
	pthread_mutex_lock(&s->conn_lock);
	c->prev = s->conns_tail;
	if (s->conns_tail)
		s->conns_tail->next = c;
	else
		s->conns_head = c;
	s->conns_tail = c;
	s->nr_conns++;
	s->conns_accepted++;
	/* over the limits: the idle connections silent longest make room (this address first) */
	enforce_locked(s, c);
	pthread_mutex_unlock(&s->conn_lock);
	return c;
}

void http_conn_closed(struct http_server *s, struct http_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&s->conn_lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns_head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		s->conns_tail = c->prev;
	s->nr_conns--;
	if (!c->evicted && c->state != CONN_IDLE)
		s->nr_busy--;
	pthread_mutex_unlock(&s->conn_lock);
	free(c);
}

void http_conn_busy(struct http_server *s, struct http_conn *c, bool body)
{
	if (!c)
		return;
	pthread_mutex_lock(&s->conn_lock);
	if (!c->evicted && c->state == CONN_IDLE)
		s->nr_busy++;
	c->state = body ? CONN_BODY : CONN_BUSY;
	c->since_ns = (int64_t)mono_ns();
	pthread_mutex_unlock(&s->conn_lock);
}

void http_conn_idle(struct http_server *s, struct http_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&s->conn_lock);
	if (!c->evicted && c->state != CONN_IDLE)
		s->nr_busy--;
	c->state = CONN_IDLE;
	c->since_ns = (int64_t)mono_ns();
	pthread_mutex_unlock(&s->conn_lock);
}

bool http_conn_over_budget(struct http_server *s, struct http_conn *c)
{
	struct http_conn *v;
	unsigned int busy = 0, from_addr = 0;

	if (!c)
		return false;
	pthread_mutex_lock(&s->conn_lock);
	for (v = s->conns_head; v; v = v->next) {
		if (v == c || v->evicted || v->state == CONN_IDLE)
			continue;
		busy++;
		from_addr += !memcmp(v->addr, c->addr, sizeof(c->addr));
	}
	pthread_mutex_unlock(&s->conn_lock);
	return busy >= s->cfg.max_connections || from_addr >= s->cfg.max_connections_per_ip;
}

void http_conn_reap(struct http_server *s, int64_t now_mono_ns)
{
	int64_t limit = (int64_t)s->cfg.request_timeout_s * 1000000000LL;
	struct http_conn *c;

	pthread_mutex_lock(&s->conn_lock);
	for (c = s->conns_head; c; c = c->next)
		if (!c->evicted && c->state != CONN_BUSY && now_mono_ns - c->since_ns > limit)
			evict_locked(s, c, true);
	/* young connections spared at their accept may be over the limits now */
	enforce_locked(s, NULL);
	pthread_mutex_unlock(&s->conn_lock);
}

void http_conn_counts(struct http_server *s, unsigned int *ret_conns, unsigned int *ret_busy)
{
	pthread_mutex_lock(&s->conn_lock);
	*ret_conns = s->nr_conns;
	*ret_busy = s->nr_busy;
	pthread_mutex_unlock(&s->conn_lock);
}
