/*
 * sqlite_memory.h: the tenants' memory in SQLite, for the backend's
 * table (sqlite_ops.c); store.h says what each does.
 */
#ifndef ISOBOX_STORE_SQLITE_MEMORY_H
#define ISOBOX_STORE_SQLITE_MEMORY_H

#include "../lib/fault.h"
#include "types.h"

struct store;

bool sqlite_memory_usage(struct store *s, const char *tenant, int64_t now_ms, int64_t *bytes,
			 int64_t *keys, struct fault *f);
bool sqlite_memory_get(struct store *s, const char *tenant, const char *key, int64_t now_ms,
		       struct memory_item *out, struct fault *f);
bool sqlite_memory_put(struct store *s, const char *tenant, const char *key, const void *value,
		       size_t len, const char *content_type, int64_t ttl_ms, enum memory_cond cond,
		       const char *etag, const struct memory_quota *q, int64_t now_ms, bool *created,
		       char etag_out[17], struct fault *f);
bool sqlite_memory_delete(struct store *s, const char *tenant, const char *key,
			  enum memory_cond cond, const char *etag, int64_t now_ms, struct fault *f);
bool sqlite_memory_list(struct store *s, const char *tenant, const char *prefix, const char *after,
			int64_t limit, int64_t now_ms, struct memory_item **out, size_t *n, bool *more,
			struct fault *f);
int64_t sqlite_memory_expire(struct store *s, int64_t now_ms);

#endif
