/*
 * store.h: what the service remembers across requests, worker processes
 * and restarts: each tenant's rate and running executions, and the
 * tenants' memory (a key-value store per tenant, /v1/memory).
 *
 * One small interface. Behind it now: SQLite, one file in WAL mode
 * (store.c; the memory store in store_memory.h), which every worker
 * process reads and writes at once; a Redis/Valkey implementation can
 * take its place later.
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

struct store;

/* Open (creating) the store at path; NULL with f filled if it cannot. */
struct store *store_open(const char *path, struct fault *f);
void store_close(struct store *s);

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
/* Forget the claims of a process that died holding them (the master,
 * when it reaps a worker; and at its start, for every pid gone). */
void store_running_forget(struct store *s, int pid);
void store_running_forget_dead(struct store *s);
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
