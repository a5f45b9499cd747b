/*
 * redis.h: the store (store.h) in Redis or Valkey, which several hosts
 * share: the connection and what the backend's modules share. The
 * backend's table of operations (redis_ops, backend.h) is in redis_ops.c;
 * callers use store.h.
 *
 * Each operation is one Lua script (EVAL): atomic on the server, one
 * round trip. The memory store's scripts are in redis_memory.c, the
 * sessions' in redis_sessions.c, the volumes' in redis_volumes.c, and
 * queue mode's streams in queue.c.
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

#include "../lib/fault.h"
#include "types.h"

struct store;
struct redis_store;

/* Open and close s->redis (operations of the backend's table). Not
 * connected at open: the first command connects, so that a Redis that is
 * down fails that command (503), not the worker. */
bool redis_store_open(struct store *s, const struct store_conf *sc, struct fault *f);
void redis_store_close(struct store *s);

/* The connection r has now, numbered in the order this process made
 * them (0: none yet): what was set up on one need not be there on the
 * next (a server restarted without its data, or another server). */
unsigned redis_connection(const struct redis_store *r);

/* For redis*.c and queue.c: a script's arguments after P (binary-safe), and
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
