/*
 * redis_volumes.h: the tenants' volume records (store.h) in
 * Redis; the backend's table (redis_ops.c) holds them. The
 * keys' layout is in redis.h.
 */
#ifndef ISOBOX_STORE_REDIS_VOLUMES_H
#define ISOBOX_STORE_REDIS_VOLUMES_H

#include "redis.h"

struct store;

bool redis_volume_add(struct store *s, const char *tenant, const char *name, int64_t size_bytes,
		      int64_t max_count, int64_t max_bytes, int64_t now_ms, struct volume *out,
		      struct fault *f);
bool redis_volume_set_state(struct store *s, const char *tenant, const char *name,
			    const char *from, const char *to, struct volume *out, struct fault *f);
bool redis_volume_get(struct store *s, const char *tenant, const char *name, struct volume *out,
		      struct fault *f);
bool redis_volume_list(struct store *s, const char *tenant, struct volume **out, size_t *n,
		       struct fault *f);
bool redis_volume_drop(struct store *s, const char *tenant, const char *name, struct fault *f);
bool redis_volume_use(struct store *s, const char *tenant, const char *name, enum volume_user by,
		      const char *owner, int64_t now_ms, struct volume *out, struct fault *f);
bool redis_volume_release(struct store *s, const char *owner);
bool redis_volume_delete_begin(struct store *s, const char *tenant, const char *name, const char *owner,
			       int64_t now_ms, struct volume *out, struct fault *f);
void redis_volume_uses_keep(struct store *s, const struct strv *sessions, int64_t now_ms);

#endif
