/*
 * store_sessions.h: each tenant's open sessions, counted in the store, so
 * that a tenant's share of sessions (sessions, sessionMemoryBytes) holds
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
#ifndef ISOBOX_STORE_SESSIONS_H
#define ISOBOX_STORE_SESSIONS_H

#include "store.h"

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

#endif
