/*
 * store_redis_volumes.h: the tenants' volume records (store_volumes.h) in
 * Redis; store_volumes.c hands over to these when the store is Redis. The
 * keys' layout is in store_redis.h.
 */
#ifndef ISOBOX_STORE_REDIS_VOLUMES_H
#define ISOBOX_STORE_REDIS_VOLUMES_H

#include "store_redis.h"

bool redis_volume_add(struct redis_store *r, const char *tenant, const char *name, int64_t size_bytes,
		      int64_t max_count, int64_t max_bytes, int64_t now_ms, struct volume *out,
		      struct fault *f);
bool redis_volume_set_state(struct redis_store *r, const char *tenant, const char *name,
			    const char *from, const char *to, struct volume *out, struct fault *f);
bool redis_volume_get(struct redis_store *r, const char *tenant, const char *name, struct volume *out,
		      struct fault *f);
bool redis_volume_list(struct redis_store *r, const char *tenant, struct volume **out, size_t *n,
		       struct fault *f);
bool redis_volume_drop(struct redis_store *r, const char *tenant, const char *name, struct fault *f);
bool redis_volume_use(struct redis_store *r, const char *tenant, const char *name, enum volume_user by,
		      const char *owner, int64_t now_ms, struct volume *out, struct fault *f);
bool redis_volume_release(struct redis_store *r, const char *owner);
bool redis_volume_delete_begin(struct redis_store *r, const char *tenant, const char *name, const char *owner,
			       int64_t now_ms, struct volume *out, struct fault *f);
void redis_volume_uses_keep(struct redis_store *r, const struct strv *sessions, int64_t now_ms);

#endif
