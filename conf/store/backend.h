/*
 * backend.h: what a backend of the store gives the face (store.h), and
 * the one struct both see. Only the store's own files include it.
 *
 * Each backend fills one table of operations (sqlite_ops.c: sqlite_ops,
 * redis_ops.c: redis_ops); store_open picks the table from conf and every
 * public function of store.h is one call through it, after the steps
 * that are the same for both (store.c). An operation takes the store
 * and reaches its own connection through it (s->sqlite or s->redis).
 *
 * The arguments are store.h's, and mean what it says there; outputs come
 * cleared (store.c clears them once, for both backends); now_ms is
 * the wall clock, read once by the face so that both backends see the
 * same instant (Redis' leases are kept in it).
 */
#ifndef ISOBOX_STORE_BACKEND_H
#define ISOBOX_STORE_BACKEND_H

#include "../lib/fault.h"
#include "types.h"

struct sqlite_store;
struct redis_store;

/* Ownership: the struct and its connection are the process's that
 * opened them (store_open); store_close frees both. */
struct store {
	const struct store_ops *ops;
	struct sqlite_store *sqlite; /* the SQLite backend's connection, or NULL */
	struct redis_store *redis;   /* the Redis backend's, or NULL */
	char *host;                  /* this host's name (conf's instance) */
};

struct store_ops {
	/* Connect (s->sqlite or s->redis); false with f filled. close: what
	 * open made, also after a failed open. */
	bool (*open)(struct store *s, const struct store_conf *sc, struct fault *f);
	void (*close)(struct store *s);
	bool (*ping)(struct store *s, struct fault *f);
	bool (*hosts_alive)(struct store *s, struct strv *out, struct fault *f);
	bool (*host_alive)(struct store *s, const char *host, bool *alive, struct fault *f);

	bool (*rate_take)(struct store *s, const char *tenant, int64_t per_minute, int64_t now_ms,
			  bool *allowed, int64_t *retry_after_s, struct fault *f);
	bool (*running_claim)(struct store *s, const char *tenant, int64_t limit, int pid, int64_t now_ms,
			      int64_t *claim, struct fault *f);
	void (*running_release)(struct store *s, int64_t claim);
	void (*running_forget)(struct store *s, int pid, int64_t now_ms);
	void (*running_forget_dead)(struct store *s, int64_t now_ms);
	int64_t (*running_count)(struct store *s, const char *tenant, int64_t now_ms);

	bool (*memory_get)(struct store *s, const char *tenant, const char *key, int64_t now_ms,
			   struct memory_item *out, struct fault *f);
	bool (*memory_put)(struct store *s, const char *tenant, const char *key, const void *value, size_t len,
			   const char *content_type, int64_t ttl_ms, enum memory_cond cond, const char *etag,
			   const struct memory_quota *q, int64_t now_ms, bool *created, char etag_out[17],
			   struct fault *f);
	bool (*memory_delete)(struct store *s, const char *tenant, const char *key, enum memory_cond cond,
			      const char *etag, int64_t now_ms, struct fault *f);
	bool (*memory_list)(struct store *s, const char *tenant, const char *prefix, const char *after,
			    int64_t limit, int64_t now_ms, struct memory_item **out, size_t *n, bool *more,
			    struct fault *f);
	bool (*memory_usage)(struct store *s, const char *tenant, int64_t now_ms, int64_t *bytes, int64_t *keys,
			     struct fault *f);
	int64_t (*memory_expire)(struct store *s, int64_t now_ms);

	bool (*volume_add)(struct store *s, const char *tenant, const char *name, int64_t size_bytes,
			   int64_t max_count, int64_t max_bytes, int64_t now_ms, struct volume *out,
			   struct fault *f);
	bool (*volume_set_state)(struct store *s, const char *tenant, const char *name, const char *from,
				 const char *to, struct volume *out, struct fault *f);
	bool (*volume_get)(struct store *s, const char *tenant, const char *name, struct volume *out,
			   struct fault *f);
	bool (*volume_list)(struct store *s, const char *tenant, struct volume **out, size_t *n, struct fault *f);
	bool (*volume_drop)(struct store *s, const char *tenant, const char *name, struct fault *f);
	bool (*volume_use)(struct store *s, const char *tenant, const char *name, enum volume_user by,
			   const char *owner, int64_t now_ms, struct volume *out, struct fault *f);
	bool (*volume_release)(struct store *s, const char *owner);
	bool (*volume_delete_begin)(struct store *s, const char *tenant, const char *name, const char *owner,
				    int64_t now_ms, struct volume *out, struct fault *f);
	void (*volume_uses_keep)(struct store *s, const struct strv *sessions, int64_t now_ms);

	bool (*session_claim)(struct store *s, const char *tenant, const char *id, int64_t memory_bytes,
			      int64_t max_sessions, int64_t max_memory, int64_t now_ms, struct fault *f);
	void (*session_release)(struct store *s, const char *id, int64_t now_ms);
	void (*sessions_keep)(struct store *s, const struct session_claim *alive, size_t n, int64_t now_ms);
};

extern const struct store_ops sqlite_ops, redis_ops;

#endif
