/*
 * store_volumes.c: volume records (store_volumes.h) in the store's SQLite
 * file; (tenant, name) is the key, so a tenant never reaches another's.
 */
#define _GNU_SOURCE
#include "store_volumes.h"
#include "store_redis_volumes.h"
#include "store_rules.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

bool volume_name_valid(const char *name)
{
	size_t n = 0;
	for (; name[n]; n++) {
		char c = name[n];
		bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			  (n > 0 && (c == '-' || c == '_' || c == '.'));
		if (!ok)
			return false;
	}
	return n > 0 && n <= VOLUME_NAME_MAX;
}

static void read_row(sqlite3_stmt *st, struct volume *v)
{
	*v = (struct volume){0};
	snprintf(v->name, sizeof v->name, "%s", (const char *)sqlite3_column_text(st, 0));
	snprintf(v->id, sizeof v->id, "%s", (const char *)sqlite3_column_text(st, 1));
	snprintf(v->state, sizeof v->state, "%s", (const char *)sqlite3_column_text(st, 2));
	v->size_bytes = sqlite3_column_int64(st, 3);
	v->created_ms = sqlite3_column_int64(st, 4);
	snprintf(v->host, sizeof v->host, "%s", (const char *)sqlite3_column_text(st, 5));
}

#define COLUMNS "name, id, state, size_bytes, created_ms, host"



bool store_volume_get(struct store *s, const char *tenant, const char *name, struct volume *out,
		      struct fault *f)
{
	if (store_redis(s))
		return redis_volume_get(store_redis(s), tenant, name, out, f);
	autostmt st = store_prepare(s, "SELECT " COLUMNS " FROM volumes WHERE tenant = ?1 AND name = ?2");
	if (!st)
		return store_failed(s, "volume get", f);
	sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		read_row(st, out);
		return true;
	}
	if (rc == SQLITE_DONE)
		return fail(f, E_VOLUME_NOT_FOUND, "no volume %.64s", name);
	return store_failed(s, "volume get", f);
}

bool store_volume_add(struct store *s, const char *tenant, const char *name, int64_t size_bytes,
		      int64_t max_count, int64_t max_bytes, int64_t now_ms, struct volume *out,
		      struct fault *f)
{
	if (store_redis(s))
		return redis_volume_add(store_redis(s), tenant, name, size_bytes, max_count, max_bytes,
					now_ms, out, f);
	struct volume old;
	if (!store_begin(s, true, f))
		return false;
	autostmt sum = store_prepare(s, "SELECT count(*), COALESCE(SUM(size_bytes), 0) FROM volumes WHERE tenant = ?1");
	autostmt add = store_prepare(s, "INSERT INTO volumes (tenant, name, id, state, size_bytes, created_ms,"
				     " host) VALUES (?1, ?2, ?3, 'creating', ?4, ?5, ?6)");
	if (!sum || !add)
		goto failed;
	if (store_volume_get(s, tenant, name, &old, f)) {
		fail(f, E_VOLUME_EXISTS, "volume %s exists (%s): delete it first, or pick another name",
		     name, old.state);
		goto refused;
	}
	if (f->code != E_VOLUME_NOT_FOUND)
		goto refused;
	*f = (struct fault){0};
	sqlite3_bind_text(sum, 1, tenant, -1, SQLITE_STATIC);
	if (sqlite3_step(sum) != SQLITE_ROW)
		goto failed;
	int64_t count = sqlite3_column_int64(sum, 0), bytes = sqlite3_column_int64(sum, 1);
	if (!volume_quota_holds(tenant, count, bytes, size_bytes, max_count, max_bytes, f))
		goto refused;
	volume_new(name, size_bytes, now_ms, store_host(s), out);
	sqlite3_bind_text(add, 1, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_text(add, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(add, 3, out->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(add, 4, size_bytes);
	sqlite3_bind_int64(add, 5, now_ms);
	sqlite3_bind_text(add, 6, out->host, -1, SQLITE_STATIC);
	if (sqlite3_step(add) != SQLITE_DONE)
		goto failed;
	return store_commit(s, f);
failed:
	if (!f->code)
		store_failed(s, "volume add", f);
refused:
	store_rollback(s);
	return false;
}

bool store_volume_set_state(struct store *s, const char *tenant, const char *name, const char *from,
			    const char *to, struct volume *out, struct fault *f)
{
	if (store_redis(s))
		return redis_volume_set_state(store_redis(s), tenant, name, from, to, out, f);
	if (!store_begin(s, true, f))
		return false;
	autostmt st = store_prepare(s, "UPDATE volumes SET state = ?3 WHERE tenant = ?1 AND name = ?2"
				    " AND (?4 IS NULL OR state = ?4)");
	if (!store_volume_get(s, tenant, name, out, f))
		goto refused;
	if (from && strcmp(out->state, from)) {
		fail(f, out->state[0] == 'd' ? E_VOLUME_NOT_FOUND : E_VOLUME_BUSY,
		     "volume %s is %s", name, out->state);
		goto refused;
	}
	if (!st)
		goto failed;
	sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, to, -1, SQLITE_STATIC);
	if (from)
		sqlite3_bind_text(st, 4, from, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto failed;
	snprintf(out->state, sizeof out->state, "%s", to);
	return store_commit(s, f);
failed:
	if (!f->code)
		store_failed(s, "volume state", f);
refused:
	store_rollback(s);
	return false;
}

bool store_volume_list(struct store *s, const char *tenant, struct volume **out, size_t *n,
		       struct fault *f)
{
	if (store_redis(s))
		return redis_volume_list(store_redis(s), tenant, out, n, f);
	*out = NULL;
	*n = 0;
	autostmt st = store_prepare(s, "SELECT " COLUMNS " FROM volumes WHERE tenant = ?1 ORDER BY name");
	if (!st)
		return store_failed(s, "volume list", f);
	sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*out = xrealloc(*out, (*n + 1) * sizeof **out);
		read_row(st, &(*out)[(*n)++]);
	}
	if (rc == SQLITE_DONE)
		return true;
	free(*out);
	*out = NULL;
	*n = 0;
	return store_failed(s, "volume list", f);
}

bool store_volume_drop(struct store *s, const char *tenant, const char *name, struct fault *f)
{
	if (store_redis(s))
		return redis_volume_drop(store_redis(s), tenant, name, f);
	autostmt st = store_prepare(s, "DELETE FROM volumes WHERE tenant = ?1 AND name = ?2");
	if (!st)
		return store_failed(s, "volume drop", f);
	sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	return sqlite3_step(st) == SQLITE_DONE || store_failed(s, "volume drop", f);
}
