/*
 * store_memory.h: the tenants' memory, a key-value store per tenant
 * (/v1/memory), kept in the store (store.h).
 *
 * Keys are any bytes but NUL (the caller checks them), compared byte by
 * byte; values any bytes, with their Content-Type. A value's etag changes
 * at every write, so that two agents can write without overwriting each
 * other blindly (a condition on the etag). Expired keys are gone to every
 * reader at once, and removed by the master's duty.
 *
 * Ownership: items returned are the caller's (memory_item_free).
 */
#ifndef ISOBOX_STORE_MEMORY_H
#define ISOBOX_STORE_MEMORY_H

#include "store.h"

/* The memory store. */
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


#endif
