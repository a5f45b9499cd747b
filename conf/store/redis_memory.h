/*
 * redis_memory.h: the tenants' memory (store.h) in Redis;
 * the backend's table (redis_ops.c) holds them. The keys'
 * layout is in redis.h.
 */
#ifndef ISOBOX_STORE_REDIS_MEMORY_H
#define ISOBOX_STORE_REDIS_MEMORY_H

#include "redis.h"

struct store;

bool redis_memory_get(struct store *s, const char *tenant, const char *key, int64_t now_ms,
		      struct memory_item *out, struct fault *f);
bool redis_memory_put(struct store *s, const char *tenant, const char *key, const void *value,
		      size_t len, const char *content_type, int64_t ttl_ms, enum memory_cond cond,
		      const char *etag, const struct memory_quota *q, int64_t now_ms, bool *created,
		      char etag_out[17], struct fault *f);
bool redis_memory_delete(struct store *s, const char *tenant, const char *key,
			 enum memory_cond cond, const char *etag, int64_t now_ms, struct fault *f);
bool redis_memory_list(struct store *s, const char *tenant, const char *prefix, const char *after,
		       int64_t limit, int64_t now_ms, struct memory_item **out, size_t *n, bool *more,
		       struct fault *f);
bool redis_memory_usage(struct store *s, const char *tenant, int64_t now_ms, int64_t *bytes,
			int64_t *keys, struct fault *f);
int64_t redis_memory_expire(struct store *s, int64_t now_ms);

#endif
