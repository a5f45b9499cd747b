/*
 * store.h: what the service remembers across requests, worker processes
 * and restarts: each tenant's rate and running executions, and the
 * tenants' memory (a key-value store per tenant, /v1/memory).
 *
 * One small interface, two backends, chosen by store.backend in conf:
 *  - sqlite (the default): one file in WAL mode (store.c, store_memory.c,
 *    store_volumes.c), which every worker process of one host reads and
 *    writes at once;
 *  - redis: a Redis or Valkey server that several hosts share
 *    (store_redis.h). Each operation is one Lua script, so it is atomic and
 *    costs one round trip.
 * Each public function below is the SQLite code, which hands over to
 * Redis on its first line when the store is a Redis one.
 *
 * Ownership: a process opens its own store after fork (store_open) and
 * closes it with store_close: a connection never crosses a fork. Items
 * returned to the caller are the caller's (memory_item_free).
 *
 * Durability: the memory store's writes are synced before they are
 * acknowledged (synchronous=FULL); a rate or a running claim lost in a
 * power cut is harmless and is not synced (NORMAL).
 */
#ifndef ISOBOX_STORE_H
#define ISOBOX_STORE_H

#include "lib/base.h"
#include "lib/fault.h"
#include "store_types.h"

struct store;
struct redis_store;

void store_conf_free(struct store_conf *sc);
/* Would a store opened with a reach the same data as one opened with b? */
bool store_conf_same(const struct store_conf *a, const struct store_conf *b);

/*
 * Open (creating) the store; NULL with f filled if it cannot. host names
 * this host (conf's instance): claims are held in its name, so that a
 * host that dies loses them (Redis) when their lease runs out.
 */
struct store *store_open(const struct store_conf *sc, const char *host, struct fault *f);
void store_close(struct store *s);
/* The Redis side of a Redis store; NULL: an SQLite one. */
struct redis_store *store_redis(struct store *s);
/* The host it was opened for. */
const char *store_host(struct store *s);
/* "sqlite" or "redis", and whether it answers now (for /healthz). */
const char *store_backend_name(const struct store_conf *sc);
bool store_ping(struct store *s, struct fault *f);

/*
 * May tenant make one more request at now_ms, at most per_minute a minute
 * (a burst of per_minute, then one each 60/per_minute s: GCRA)? If not,
 * *retry_after_s says when it may (at least 1). per_minute 0: no limit.
 * false with f filled: the store failed (the caller decides; we refuse).
 */
bool store_rate_take(struct store *s, const char *tenant, int64_t per_minute, int64_t now_ms,
		     bool *allowed, int64_t *retry_after_s, struct fault *f);

/*
 * Claim one of at most `limit` running executions for tenant (0: no
 * limit), held by process pid. *claim > 0 to release; 0: all taken.
 */
bool store_running_claim(struct store *s, const char *tenant, int64_t limit, int pid,
			 int64_t *claim, struct fault *f);
void store_running_release(struct store *s, int64_t claim);
/* Forget the claims of a process that died holding them. */
void store_running_forget(struct store *s, int pid);
/* The master's upkeep, every few seconds: forget the claims of this
 * host's processes that are gone, and (Redis) renew the lease of the
 * rest and say that this host is alive (store_host_alive). */
void store_running_forget_dead(struct store *s);
/* The hosts alive now, by name (SQLite: this one). */
bool store_hosts_alive(struct store *s, struct strv *out, struct fault *f);
/* Has host renewed its lease lately? (SQLite: one host, always.) */
bool store_host_alive(struct store *s, const char *host, bool *alive, struct fault *f);

/* Running executions of a tenant now. */
int64_t store_running_count(struct store *s, const char *tenant);

/* For the store's own modules (store_memory.c): the connection, and a
 * write transaction that processes take in turn (BEGIN IMMEDIATE, waiting
 * up to STORE_BUSY_MS); durable: synced before commit returns. */
#define STORE_BUSY_MS 5000
struct sqlite3 *store_sqlite(struct store *s);
struct sqlite3_stmt *store_prepare(struct store *s, const char *sql); /* NULL: failed */
void store_finalize(struct sqlite3_stmt **st);
/* A prepared statement, finalized when it goes out of scope. */
#define autostmt __attribute__((cleanup(store_finalize))) struct sqlite3_stmt *
bool store_begin(struct store *s, bool durable, struct fault *f);
bool store_commit(struct store *s, struct fault *f);
void store_rollback(struct store *s);
/* An SQLite failure as a fault (E_STORE_UNAVAILABLE), logged. */
bool store_failed(struct store *s, const char *what, struct fault *f);

#endif
