/*
 * redis_sessions.h: the claims of open sessions (store.h)
 * in Redis; the backend's table (redis_ops.c) holds them.
 * The keys' layout is in redis.h.
 */
#ifndef ISOBOX_STORE_REDIS_SESSIONS_H
#define ISOBOX_STORE_REDIS_SESSIONS_H

#include "redis.h"

struct store;

bool redis_session_claim(struct store *s, const char *tenant, const char *id, int64_t memory_bytes,
			 int64_t max_sessions, int64_t max_memory, int64_t now_ms, struct fault *f);
void redis_session_release(struct store *s, const char *id, int64_t now_ms);
void redis_sessions_keep(struct store *s, const struct session_claim *alive, size_t n, int64_t now_ms);

#endif
