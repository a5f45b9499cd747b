/*
 * sqlite_memory.c: the tenants' memory (store.h) in the store's
 * SQLite file: one row per key, (tenant, key) its primary key, so that a
 * tenant's keys are one range of the index and a prefix is a range in it.
 *
 * A write checks its condition and the tenant's quota and writes in one
 * transaction, synced before it is acknowledged.
 */
#define _GNU_SOURCE
#include "sqlite_memory.h"
#include "backend.h"
#include "rules.h"
#include "sqlite.h"
#include "store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

static void bind_key(sqlite3_stmt *st, int i, const char *key)
{
	sqlite3_bind_blob(st, i, key, (int)strlen(key), SQLITE_STATIC);
}

static const char live[] = "(expires_ms = 0 OR expires_ms > ?9)";

/* What is there now for (tenant, key), alive: found, its etag and size. */
static bool current(struct store *s, const char *tenant, const char *key, int64_t now,
		    bool *found, char etag[17], int64_t *size)
{
	autofree char *sql = xasprintf("SELECT etag, size FROM memory WHERE tenant = ?1 AND key = ?2"
				       " AND %s", live);
	autostmt st = sql_prepare(s, sql);
	if (!st)
		return false;
	sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
	bind_key(st, 2, key);
	sqlite3_bind_int64(st, 9, now);
	int rc = sqlite3_step(st);
	*found = rc == SQLITE_ROW;
	if (*found) {
		snprintf(etag, 17, "%s", (const char *)sqlite3_column_text(st, 0));
		*size = sqlite3_column_int64(st, 1);
	}
	return rc == SQLITE_ROW || rc == SQLITE_DONE;
}

bool sqlite_memory_usage(struct store *s, const char *tenant, int64_t now_ms, int64_t *bytes,
			 int64_t *keys, struct fault *f)
{
	autofree char *sql = xasprintf("SELECT COALESCE(SUM(size + length(key)), 0), count(*) FROM memory"
				       " WHERE tenant = ?1 AND %s", live);
	autostmt st = sql_prepare(s, sql);
	if (!st)
		return sql_failed(s, "memory usage", f);
	sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 9, now_ms);
	if (sqlite3_step(st) != SQLITE_ROW)
		return sql_failed(s, "memory usage", f);
	*bytes = sqlite3_column_int64(st, 0);
	*keys = sqlite3_column_int64(st, 1);
	return true;
}

bool sqlite_memory_get(struct store *s, const char *tenant, const char *key, int64_t now_ms,
		       struct memory_item *out, struct fault *f)
{
	autofree char *sql = xasprintf("SELECT value, content_type, etag, size, updated_ms, expires_ms"
				       " FROM memory WHERE tenant = ?1 AND key = ?2 AND %s", live);
	autostmt st = sql_prepare(s, sql);
	if (!st)
		return sql_failed(s, "memory get", f);
	sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
	bind_key(st, 2, key);
	sqlite3_bind_int64(st, 9, now_ms);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return fail(f, E_KEY_NOT_FOUND, "no key %.100s", key);
	if (rc != SQLITE_ROW)
		return sql_failed(s, "memory get", f);
	out->key = xstrdup(key);
	if (sqlite3_column_bytes(st, 0) > 0)
		buf_append(&out->value, sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0));
	snprintf(out->content_type, sizeof out->content_type, "%s", (const char *)sqlite3_column_text(st, 1));
	snprintf(out->etag, sizeof out->etag, "%s", (const char *)sqlite3_column_text(st, 2));
	out->size = sqlite3_column_int64(st, 3);
	out->updated_ms = sqlite3_column_int64(st, 4);
	out->expires_ms = sqlite3_column_int64(st, 5);
	return true;
}

bool sqlite_memory_put(struct store *s, const char *tenant, const char *key, const void *value,
		       size_t len, const char *content_type, int64_t ttl_ms, enum memory_cond cond,
		       const char *etag, const struct memory_quota *q, int64_t now_ms, bool *created,
		       char etag_out[17], struct fault *f)
{
	bool found;
	char was[17] = "";
	int64_t old_size = 0, bytes, keys;
	autostmt st = NULL;
	if (!sql_begin(s, true, f))
		return false;
	if (!current(s, tenant, key, now_ms, &found, was, &old_size) ||
	    !sqlite_memory_usage(s, tenant, now_ms, &bytes, &keys, f))
		goto failed;
	if (!memory_condition_holds(key, found, was, cond, etag, f))
		goto refused;
	/* What the tenant would hold with this value in place of the old. */
	int64_t key_len = (int64_t)strlen(key);
	bytes += (int64_t)len + (found ? -old_size : key_len);
	keys += !found;
	if (!memory_quota_holds(q, bytes, keys, f))
		goto refused;
	memory_new_etag(etag_out);
	st = sql_prepare(s, "INSERT OR REPLACE INTO memory (tenant, key, value, content_type,"
				    " etag, size, updated_ms, expires_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
	if (!st)
		goto failed;
	sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
	bind_key(st, 2, key);
	sqlite3_bind_blob64(st, 3, len ? value : "", len, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, content_type, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, etag_out, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 6, (int64_t)len);
	sqlite3_bind_int64(st, 7, now_ms);
	sqlite3_bind_int64(st, 8, ttl_ms > 0 ? now_ms + ttl_ms : 0);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto failed;
	*created = !found;
	return sql_commit(s, f);
failed:
	if (!f->code)
		sql_failed(s, "memory put", f);
refused:
	sql_rollback(s);
	return false;
}

bool sqlite_memory_delete(struct store *s, const char *tenant, const char *key,
			  enum memory_cond cond, const char *etag, int64_t now_ms, struct fault *f)
{
	bool found;
	char was[17] = "";
	int64_t size;
	autostmt st = NULL;
	if (!sql_begin(s, true, f))
		return false;
	if (!current(s, tenant, key, now_ms, &found, was, &size))
		goto failed;
	if (!found) {
		fail(f, E_KEY_NOT_FOUND, "no key %.100s", key);
		goto refused;
	}
	if (!memory_condition_holds(key, found, was, cond, etag, f))
		goto refused;
	st = sql_prepare(s, "DELETE FROM memory WHERE tenant = ?1 AND key = ?2");
	if (!st)
		goto failed;
	sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
	bind_key(st, 2, key);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto failed;
	return sql_commit(s, f);
failed:
	if (!f->code)
		sql_failed(s, "memory delete", f);
refused:
	sql_rollback(s);
	return false;
}

bool sqlite_memory_list(struct store *s, const char *tenant, const char *prefix, const char *after,
			int64_t limit, int64_t now_ms, struct memory_item **out, size_t *n, bool *more,
			struct fault *f)
{
	autofree char *sql = xasprintf("SELECT key, content_type, etag, size, updated_ms, expires_ms"
				       " FROM memory WHERE tenant = ?1 AND key >= ?2 AND key > ?3"
				       " AND (?4 IS NULL OR key < ?4) AND %s ORDER BY key LIMIT ?5", live);
	autostmt st = sql_prepare(s, sql);
	if (!st)
		return sql_failed(s, "memory list", f);
	autofree char *end = xmalloc(strlen(prefix) + 1);
	size_t end_len;
	sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
	bind_key(st, 2, prefix);
	bind_key(st, 3, after);
	if (memory_prefix_end(prefix, end, &end_len))
		sqlite3_bind_blob(st, 4, end, (int)end_len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, limit + 1);
	sqlite3_bind_int64(st, 9, now_ms);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if ((int64_t)*n == limit) {
			*more = true;
			break;
		}
		*out = xrealloc(*out, (*n + 1) * sizeof **out);
		struct memory_item *it = &(*out)[(*n)++];
		*it = (struct memory_item){0};
		it->key = xstrndup(sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0));
		snprintf(it->content_type, sizeof it->content_type, "%s", (const char *)sqlite3_column_text(st, 1));
		snprintf(it->etag, sizeof it->etag, "%s", (const char *)sqlite3_column_text(st, 2));
		it->size = sqlite3_column_int64(st, 3);
		it->updated_ms = sqlite3_column_int64(st, 4);
		it->expires_ms = sqlite3_column_int64(st, 5);
	}
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return true;
	for (size_t i = 0; i < *n; i++)
		memory_item_free(&(*out)[i]);
	free(*out);
	*out = NULL;
	*n = 0;
	return sql_failed(s, "memory list", f);
}

int64_t sqlite_memory_expire(struct store *s, int64_t now_ms)
{
	autostmt st = sql_prepare(s, "DELETE FROM memory WHERE expires_ms > 0 AND expires_ms <= ?1");
	if (!st)
		return 0;
	sqlite3_bind_int64(st, 1, now_ms);
	if (sqlite3_step(st) != SQLITE_DONE) {
		struct fault ignored;
		sql_failed(s, "memory expiry", &ignored);
		return 0;
	}
	return sqlite3_changes(sql_db(s));
}
