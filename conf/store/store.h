/*
 * store.h: the store's face: what the service remembers across requests,
 * worker processes and hosts. The tenants' rates and running executions,
 * their memory (a key-value store per tenant, /v1/memory), their volumes'
 * records, the claims of open sessions, and queue mode's jobs (queue.h).
 * Layers above include this header and no other of conf/store/.
 *
 * One interface, two backends, chosen by store.backend in conf, each one
 * table of operations behind this face (backend.h):
 *  - sqlite (the default): one file in WAL mode (sqlite*.c), which every
 *    worker process of one host reads and writes at once;
 *  - redis: a Redis or Valkey server that several hosts share (redis*.c).
 *    Each operation is one Lua script, so it is atomic and costs one
 *    round trip.
 * What both decide alike (conditions, quotas, the words of a refusal) is
 * rules.c, so that a tenant gets the same answer from either.
 *
 * Ownership: a process opens its own store after fork (store_open) and
 * closes it with store_close: a connection never crosses a fork. Items
 * and records returned are the caller's (memory_item_free; a list of
 * volumes is freed with free()).
 *
 * Durability: the memory store's and the volumes' writes are synced before
 * they are acknowledged (synchronous=FULL); a rate or a running claim lost
 * in a power cut is harmless and is not synced (NORMAL).
 */
#ifndef ISOBOX_STORE_H
#define ISOBOX_STORE_H

#include "../lib/base.h"
#include "../lib/fault.h"
#include "types.h"
#include "queue.h"

struct store;

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

/*
 * The tenants' memory, a key-value store per tenant (/v1/memory).
 *
 * Keys are any bytes but NUL (the caller checks them), compared byte by
 * byte; values any bytes, with their Content-Type. A value's etag changes
 * at every write, so that two agents can write without overwriting each
 * other blindly (a condition on the etag). Expired keys are gone to every
 * reader at once, and removed by the master's duty.
 */
void memory_item_free(struct memory_item *it);

/* Get one (E_KEY_NOT_FOUND if absent or expired). */
bool store_memory_get(struct store *s, const char *tenant, const char *key, int64_t now_ms,
		      struct memory_item *out, struct fault *f);

/* Put one: E_PRECONDITION_FAILED when cond does not hold, E_QUOTA_EXCEEDED
 * past q. ttl_ms 0: kept until deleted. *created: it was not there. The
 * new etag goes to etag_out. */
bool store_memory_put(struct store *s, const char *tenant, const char *key, const void *value,
		      size_t len, const char *content_type, int64_t ttl_ms, enum memory_cond cond,
		      const char *etag, const struct memory_quota *q, int64_t now_ms, bool *created,
		      char etag_out[17], struct fault *f);

/* Delete one: E_KEY_NOT_FOUND, E_PRECONDITION_FAILED. */
bool store_memory_delete(struct store *s, const char *tenant, const char *key,
			 enum memory_cond cond, const char *etag, int64_t now_ms, struct fault *f);

/*
 * Keys of tenant that start with prefix, after `after` (a cursor: the last
 * key of the previous page; "" for the first), in byte order, at most
 * limit. *more: there are more after the last one returned.
 */
bool store_memory_list(struct store *s, const char *tenant, const char *prefix, const char *after,
		       int64_t limit, int64_t now_ms, struct memory_item **out, size_t *n, bool *more,
		       struct fault *f);

/* What tenant holds now (bytes of keys and values, keys). */
bool store_memory_usage(struct store *s, const char *tenant, int64_t now_ms, int64_t *bytes,
			int64_t *keys, struct fault *f);

/* Remove what expired (the master's duty): how many. */
int64_t store_memory_expire(struct store *s, int64_t now_ms);

/*
 * The records of the tenants' volumes. The bytes live elsewhere: an image per volume, made and
 * mounted by isobox-volumed (sandbox/volume.c); a record says which image
 * (its id) belongs to which tenant under which name, and in what state.
 *
 * A volume is "creating" from its record until its image is mounted,
 * "ready" after, "deleting" while its image goes: only a ready one is
 * mounted into runs.
 */

/* Is name a volume name ([a-z0-9][a-z0-9_.-]*, at most 63)? */
bool volume_name_valid(const char *name);

/*
 * Record a new volume of tenant (state creating, a new random id in
 * out->id), within its share: at most max_count volumes, max_bytes in all
 * (0: no limit). 409 volume_exists, 403 quota_exceeded.
 */
bool store_volume_add(struct store *s, const char *tenant, const char *name, int64_t size_bytes,
		      int64_t max_count, int64_t max_bytes, int64_t now_ms, struct volume *out,
		      struct fault *f);
/* Move it to a state ("ready", "deleting"); from: only if it is in that
 * one (NULL: any). 404 volume_not_found. */
bool store_volume_set_state(struct store *s, const char *tenant, const char *name, const char *from,
			    const char *to, struct volume *out, struct fault *f);
bool store_volume_get(struct store *s, const char *tenant, const char *name, struct volume *out,
		      struct fault *f);
bool store_volume_list(struct store *s, const char *tenant, struct volume **out, size_t *n,
		       struct fault *f);
/* Forget it (its image is gone). */
bool store_volume_drop(struct store *s, const char *tenant, const char *name, struct fault *f);

/*
 * Who uses a volume. A run, a session or a files call marks the volume in
 * use before any sandbox that mounts it is made, in one step with the check
 * that it is ready; a delete is begun only in one step with the check that
 * no one uses it. So a delete that comes first leaves it "deleting" (the
 * user is refused, 404), and one that comes after is refused (409
 * volume_busy): never a sandbox writing into a volume being removed.
 *
 * A mark names its owner (enum volume_user, types.h):
 *  - VOLUME_BY_WORKER, a worker's request (a run, a files call): owner is
 *    the worker process, process_id() ("PID.STARTTIME"). Released when the
 *    request's sandbox has ended; if the worker dies first, by its master's
 *    upkeep (the owner is gone); one older than any request
 *    (STORE_CLAIM_MAX_MS) lost its release, and goes too.
 *  - VOLUME_BY_SESSION, a session for its whole life: owner is its id.
 *    Released when it ends (DELETE, a failed create, the master's list of
 *    the sessions it ended); the upkeep also forgets one whose session it
 *    does not list once older than STORE_SESSION_GRACE_MS (a worker killed
 *    half-way through a create, a session that ended unseen).
 * With Redis a mark is a lease that its host's master renews: a dead
 * host's marks stop counting STORE_LEASE_MS after its last upkeep.
 */

/* Mark tenant's volume name in use by owner, if it is ready; out: its
 * record. 404 volume_not_found if there is none, or it is being made or
 * deleted. Marking it again (the same owner) is one mark. */
bool store_volume_use(struct store *s, const char *tenant, const char *name, enum volume_user by,
		      const char *owner, int64_t now_ms, struct volume *out, struct fault *f);
/* owner uses no volume any more: every mark it holds, made on this host,
 * goes. false: the store failed (logged), the mark stays. */
bool store_volume_release(struct store *s, const char *owner);
/* Move it to "deleting" (from any state: a delete that died half-way is
 * done again), only if no one uses it at now_ms, and mark it in use by
 * owner, the deleter (VOLUME_BY_WORKER): a second delete is refused while
 * this one runs, or until the upkeep sees its owner dead. 409 volume_busy
 * if someone uses it, 404 volume_not_found. out: its record. */
bool store_volume_delete_begin(struct store *s, const char *tenant, const char *name, const char *owner,
			       int64_t now_ms, struct volume *out, struct fault *f);
/* The master's upkeep of this host's marks: forget those whose owner is
 * over (volume_use_over, rules.h) and (Redis) renew the rest.
 * sessions: the ids of the host's sessions alive now; NULL if they could
 * not be listed (sessions' marks are then left as they are). */
void store_volume_uses_keep(struct store *s, const struct strv *sessions, int64_t now_ms);

/*
 * Each tenant's open sessions, counted in the store, so that a tenant's share of sessions (sessions, sessionMemoryBytes) holds
 * across every worker and every host. A session itself lives on its host
 * (sandbox/session.c); the store holds a claim for it: its tenant, its
 * host and the memory it holds.
 *
 * A claim is made before the session starts and dropped when it ends. The
 * master of each host says which of its sessions are alive every few
 * seconds (store_sessions_keep); claims of its sessions that ended any
 * other way (expired, died, a worker killed half-way) go then, and (Redis)
 * those of a host that died go when their lease runs out.
 */

/* Claim a place for session id of tenant holding memory_bytes, within
 * max_sessions and max_memory (0: no limit); 403 quota_exceeded past them. */
bool store_session_claim(struct store *s, const char *tenant, const char *id, int64_t memory_bytes,
			 int64_t max_sessions, int64_t max_memory, int64_t now_ms, struct fault *f);
/* It ended: its place, and its marks on volumes (store_volume_release). */
void store_session_release(struct store *s, const char *id);
/* This host's sessions alive now are these: claim any that lack one (a
 * claim dropped while its session was being made), renew them, and
 * forget the host's other claims. */
void store_sessions_keep(struct store *s, const struct session_claim *alive, size_t n, int64_t now_ms);

/* May a tenant with count open sessions holding held bytes of memory open
 * one more of memory_bytes (max_*: its share; 0, no limit)? Else the
 * fault says why. (rules.c: the sessions' own host checks it too.) */
bool session_quota_holds(const char *tenant, int64_t count, int64_t held, int64_t memory_bytes,
			 int64_t max_sessions, int64_t max_memory, struct fault *f);

#endif
