/*
 * store_redis.h: the store (store.h) in Redis or Valkey, which several
 * hosts share. store.c, store_memory.c and store_volumes.c hand over to
 * these functions when store.backend is redis; callers use store.h.
 *
 * Each operation is one Lua script (EVAL): atomic on the server, one
 * round trip. The memory store's scripts are in store_redis_memory.c,
 * the sessions' in store_redis_sessions.c.
 * Keys, under the prefix P from conf (a tenant name never
 * holds ':'):
 *   P rate:T             GCRA's "theoretical arrival time" of tenant T (us)
 *   P run:T              zset: T's running claims, scored by lease end (ms)
 *   P claims:H           hash: host H's claims, id -> "pid tenant"
 *   P run-seq            the last claim id
 *   P host:H             H is alive (renewed by its master, STORE_LEASE_MS)
 *   P hosts              zset: the hosts, by the end of their lease
 *   P m:T:KEY            hash: a memory value and its metadata
 *   P mi:T, P mx:T       zsets: T's keys (by name), expiring keys (by time)
 *   P mu:T               hash: T's memory usage (bytes, keys)
 *   P mxt                set: tenants with expiring keys
 *   P v:T:NAME, P vi:T   hash: a volume's record; zset: T's volume names
 *   P vu:ID              zset: the marks in use of volume ID, "H OWNER", by lease end
 *   P vuh:H              hash: host H's marks, "OWNER ID" -> "KIND SINCE_MS"
 *   P sess:T, P sessm:T  zset: T's open sessions, by lease end; hash: their memory
 *   P hsess:H            hash: host H's sessions, id -> "tenant since_ms"
 *   P sessgone:ID        a session released in the last minute
 * Scripts touch keys they were not given in KEYS, so this runs on one
 * Redis (with replicas and Sentinel), not on Redis Cluster.
 *
 * Times are the hosts' wall clocks: keep them in sync (NTP).
 *
 * Ownership: a struct redis_store is one connection, of one process; it
 * reconnects by itself after Redis restarts.
 */
#ifndef ISOBOX_STORE_REDIS_H
#define ISOBOX_STORE_REDIS_H

#include "lib/fault.h"
#include "store_types.h"

struct redis_store *redis_open(const struct store_conf *sc, const char *host, struct fault *f);
void redis_close(struct redis_store *r);
bool redis_ping(struct redis_store *r, struct fault *f);
/* The connection r has now, numbered in the order this process made
 * them (0: none yet): what was set up on one need not be there on the
 * next (a server restarted without its data, or another server). */
unsigned redis_connection(const struct redis_store *r);

bool redis_rate_take(struct redis_store *r, const char *tenant, int64_t per_minute, int64_t now_ms,
		     bool *allowed, int64_t *retry_after_s, struct fault *f);
bool redis_running_claim(struct redis_store *r, const char *tenant, int64_t limit, int pid,
			 int64_t now_ms, int64_t *claim, struct fault *f);
void redis_running_release(struct redis_store *r, int64_t claim);
/* The pids holding this host's claims (at most max of them). */
size_t redis_running_pids(struct redis_store *r, int *pids, size_t max);
/* Forget the claims of the dead pids; renew the rest and this host's life. */
void redis_running_upkeep(struct redis_store *r, const int *dead, size_t n_dead, int64_t now_ms);
int64_t redis_running_count(struct redis_store *r, const char *tenant, int64_t now_ms);
bool redis_host_alive(struct redis_store *r, const char *host, bool *alive, struct fault *f);
bool redis_hosts_alive(struct redis_store *r, struct strv *out, struct fault *f);

/* For store_redis*.c: a script's arguments after P (binary-safe), and
 * running it. The reply is the caller's (freeReplyObject); NULL: f says. */
#define REDIS_MAX_ARGS 24
struct redis_args {
	const char *v[REDIS_MAX_ARGS];
	size_t len[REDIS_MAX_ARGS];
	char num[REDIS_MAX_ARGS][24]; /* room for the integers among them */
	int n;
};
void redis_arg(struct redis_args *a, const void *v, size_t len);
void redis_arg_str(struct redis_args *a, const char *s);
void redis_arg_int(struct redis_args *a, int64_t v);
struct redisReply *redis_eval(struct redis_store *r, const char *what, const char *script,
			      const struct redis_args *a, struct fault *f);
/* A script run for what it does, its answer dropped: false (f says) when
 * Redis did not answer. */
bool redis_run(struct redis_store *r, const char *what, const char *script, const struct redis_args *a,
	       struct fault *f);
/* One command as it is (a blocking one, which scripts cannot run), of
 * argc strings after f. */
struct redisReply *redis_command(struct redis_store *r, const char *what, int argc, const char **argv,
				 const size_t *lens, struct fault *f);
struct redisReply *redis_cmd(struct redis_store *r, const char *what, struct fault *f, int argc, ...);
/* A reply not of the shape asked for: freed, and f says so (false). */
bool redis_bad_reply(struct redisReply *rep, const char *what, struct fault *f);
/* The key prefix P. */
const char *redis_prefix(struct redis_store *r);
const char *redis_host(struct redis_store *r);

#endif
