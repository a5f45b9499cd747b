/*
 * store_redis_sessions.h: the claims of open sessions (store_sessions.h)
 * in Redis; store_sessions.c hands over to these when the store is Redis.
 * The keys' layout is in store_redis.h.
 */
#ifndef ISOBOX_STORE_REDIS_SESSIONS_H
#define ISOBOX_STORE_REDIS_SESSIONS_H

#include "store_redis.h"

bool redis_session_claim(struct redis_store *r, const char *tenant, const char *id, int64_t memory_bytes,
			 int64_t max_sessions, int64_t max_memory, int64_t now_ms, struct fault *f);
void redis_session_release(struct redis_store *r, const char *id);
void redis_sessions_keep(struct redis_store *r, const struct session_claim *alive, size_t n, int64_t now_ms);

#endif
