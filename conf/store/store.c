/*
 * store.c: the store's face (store.h) over its two backends (backend.h).
 * Each public function does what is the same for both (clear the outputs,
 * read the clock, a step that both take before their own), then calls the
 * backend's operation; nothing here knows SQL or Redis.
 */
#define _GNU_SOURCE
#include "store.h"
#include "backend.h"

#include <stdlib.h>
#include <string.h>

void store_conf_free(struct store_conf *sc)
{
	free(sc->path);
	free(sc->address);
	free(sc->password_file);
	free(sc->prefix);
	*sc = (struct store_conf){0};
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

bool store_conf_same(const struct store_conf *a, const struct store_conf *b)
{
	return a->backend == b->backend && same_str(a->path, b->path) && same_str(a->address, b->address) &&
	       same_str(a->password_file, b->password_file) && same_str(a->prefix, b->prefix) &&
	       a->timeout_ms == b->timeout_ms;
}

const char *store_backend_name(const struct store_conf *sc)
{
	return sc->backend == STORE_REDIS ? "redis" : sc->backend == STORE_SQLITE ? "sqlite" : "none";
}

struct store *store_open(const struct store_conf *sc, const char *host, struct fault *f)
{
	if (sc->backend == STORE_NONE) {
		fail(f, E_STORE_UNAVAILABLE, "this server has no store (store: in isobox.yaml)");
		return NULL;
	}
	struct store *s = xcalloc(1, sizeof *s);
	s->ops = sc->backend == STORE_REDIS ? &redis_ops : &sqlite_ops;
	s->host = xstrdup(host);
	if (!s->ops->open(s, sc, f)) {
		store_close(s);
		return NULL;
	}
	return s;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	s->ops->close(s);
	free(s->host);
	free(s);
}

const char *store_host(struct store *s)
{
	return s->host;
}

bool store_ping(struct store *s, struct fault *f)
{
	return s->ops->ping(s, f);
}

bool store_hosts_alive(struct store *s, struct strv *out, struct fault *f)
{
	return s->ops->hosts_alive(s, out, f);
}

bool store_host_alive(struct store *s, const char *host, bool *alive, struct fault *f)
{
	*alive = true;
	return s->ops->host_alive(s, host, alive, f);
}

bool store_rate_take(struct store *s, const char *tenant, int64_t per_minute, int64_t now_ms,
		     bool *allowed, int64_t *retry_after_s, struct fault *f)
{
	*allowed = true;
	*retry_after_s = 0;
	return per_minute <= 0 || s->ops->rate_take(s, tenant, per_minute, now_ms, allowed, retry_after_s, f);
}

bool store_running_claim(struct store *s, const char *tenant, int64_t limit, int pid,
			 int64_t *claim, struct fault *f)
{
	*claim = 0;
	return s->ops->running_claim(s, tenant, limit, pid, wall_ms(), claim, f);
}

void store_running_release(struct store *s, int64_t claim)
{
	if (claim > 0)
		s->ops->running_release(s, claim);
}

void store_running_forget(struct store *s, int pid)
{
	s->ops->running_forget(s, pid, wall_ms());
}

void store_running_forget_dead(struct store *s)
{
	s->ops->running_forget_dead(s, wall_ms());
}

int64_t store_running_count(struct store *s, const char *tenant)
{
	return s->ops->running_count(s, tenant, wall_ms());
}

void memory_item_free(struct memory_item *it)
{
	free(it->key);
	buf_free(&it->value);
	*it = (struct memory_item){0};
}

bool store_memory_get(struct store *s, const char *tenant, const char *key, int64_t now_ms,
		      struct memory_item *out, struct fault *f)
{
	*out = (struct memory_item){0};
	return s->ops->memory_get(s, tenant, key, now_ms, out, f);
}

bool store_memory_put(struct store *s, const char *tenant, const char *key, const void *value,
		      size_t len, const char *content_type, int64_t ttl_ms, enum memory_cond cond,
		      const char *etag, const struct memory_quota *q, int64_t now_ms, bool *created,
		      char etag_out[17], struct fault *f)
{
	return s->ops->memory_put(s, tenant, key, value, len, content_type, ttl_ms, cond, etag, q, now_ms,
				  created, etag_out, f);
}

bool store_memory_delete(struct store *s, const char *tenant, const char *key,
			 enum memory_cond cond, const char *etag, int64_t now_ms, struct fault *f)
{
	return s->ops->memory_delete(s, tenant, key, cond, etag, now_ms, f);
}

bool store_memory_list(struct store *s, const char *tenant, const char *prefix, const char *after,
		       int64_t limit, int64_t now_ms, struct memory_item **out, size_t *n, bool *more,
		       struct fault *f)
{
	*out = NULL;
	*n = 0;
	*more = false;
	return s->ops->memory_list(s, tenant, prefix, after, limit, now_ms, out, n, more, f);
}

bool store_memory_usage(struct store *s, const char *tenant, int64_t now_ms, int64_t *bytes,
			int64_t *keys, struct fault *f)
{
	return s->ops->memory_usage(s, tenant, now_ms, bytes, keys, f);
}

int64_t store_memory_expire(struct store *s, int64_t now_ms)
{
	return s->ops->memory_expire(s, now_ms);
}

bool store_volume_add(struct store *s, const char *tenant, const char *name, int64_t size_bytes,
		      int64_t max_count, int64_t max_bytes, int64_t now_ms, struct volume *out,
		      struct fault *f)
{
	return s->ops->volume_add(s, tenant, name, size_bytes, max_count, max_bytes, now_ms, out, f);
}

bool store_volume_set_state(struct store *s, const char *tenant, const char *name, const char *from,
			    const char *to, struct volume *out, struct fault *f)
{
	return s->ops->volume_set_state(s, tenant, name, from, to, out, f);
}

bool store_volume_get(struct store *s, const char *tenant, const char *name, struct volume *out,
		      struct fault *f)
{
	return s->ops->volume_get(s, tenant, name, out, f);
}

bool store_volume_list(struct store *s, const char *tenant, struct volume **out, size_t *n,
		       struct fault *f)
{
	*out = NULL;
	*n = 0;
	return s->ops->volume_list(s, tenant, out, n, f);
}

bool store_volume_drop(struct store *s, const char *tenant, const char *name, struct fault *f)
{
	return s->ops->volume_drop(s, tenant, name, f);
}

bool store_volume_use(struct store *s, const char *tenant, const char *name, enum volume_user by,
		      const char *owner, int64_t now_ms, struct volume *out, struct fault *f)
{
	return s->ops->volume_use(s, tenant, name, by, owner, now_ms, out, f);
}

bool store_volume_release(struct store *s, const char *owner)
{
	return s->ops->volume_release(s, owner);
}

bool store_volume_delete_begin(struct store *s, const char *tenant, const char *name, const char *owner,
			       int64_t now_ms, struct volume *out, struct fault *f)
{
	return s->ops->volume_delete_begin(s, tenant, name, owner, now_ms, out, f);
}

void store_volume_uses_keep(struct store *s, const struct strv *sessions, int64_t now_ms)
{
	s->ops->volume_uses_keep(s, sessions, now_ms);
}

bool store_session_claim(struct store *s, const char *tenant, const char *id, int64_t memory_bytes,
			 int64_t max_sessions, int64_t max_memory, int64_t now_ms, struct fault *f)
{
	return s->ops->session_claim(s, tenant, id, memory_bytes, max_sessions, max_memory, now_ms, f);
}

void store_session_release(struct store *s, const char *id)
{
	/* Whatever volume it had is free too (its sandbox is gone, or going:
	 * volumes_delete asks dockerd as well). */
	store_volume_release(s, id);
	s->ops->session_release(s, id, wall_ms());
}

void store_sessions_keep(struct store *s, const struct session_claim *alive, size_t n, int64_t now_ms)
{
	s->ops->sessions_keep(s, alive, n, now_ms);
}
