/*
 * sqlite_volumes.c: volume records (store.h) in the store's SQLite
 * file; (tenant, name) is the key, so a tenant never reaches another's.
 */
#define _GNU_SOURCE
#include "sqlite_volumes.h"
#include "backend.h"
#include "rules.h"
#include "sqlite.h"
#include "store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

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



bool sqlite_volume_get(struct store *s, const char *tenant, const char *name, struct volume *out,
		       struct fault *f)
{
	autostmt st = sql_prepare(s, "SELECT " COLUMNS " FROM volumes WHERE tenant = ?1 AND name = ?2");
	if (!st)
		return sql_failed(s, "volume get", f);
	sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		read_row(st, out);
		return true;
	}
	if (rc == SQLITE_DONE)
		return fail(f, E_VOLUME_NOT_FOUND, "no volume %.64s", name);
	return sql_failed(s, "volume get", f);
}

bool sqlite_volume_add(struct store *s, const char *tenant, const char *name, int64_t size_bytes,
		       int64_t max_count, int64_t max_bytes, int64_t now_ms, struct volume *out,
		       struct fault *f)
{
	struct volume old;
	if (!sql_begin(s, true, f))
		return false;
	autostmt sum = sql_prepare(s, "SELECT count(*), COALESCE(SUM(size_bytes), 0) FROM volumes WHERE tenant = ?1");
	autostmt add = sql_prepare(s, "INSERT INTO volumes (tenant, name, id, state, size_bytes, created_ms,"
				     " host) VALUES (?1, ?2, ?3, 'creating', ?4, ?5, ?6)");
	if (!sum || !add)
		goto failed;
	if (sqlite_volume_get(s, tenant, name, &old, f)) {
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
	return sql_commit(s, f);
failed:
	if (!f->code)
		sql_failed(s, "volume add", f);
refused:
	sql_rollback(s);
	return false;
}

bool sqlite_volume_set_state(struct store *s, const char *tenant, const char *name, const char *from,
			     const char *to, struct volume *out, struct fault *f)
{
	if (!sql_begin(s, true, f))
		return false;
	autostmt st = sql_prepare(s, "UPDATE volumes SET state = ?3 WHERE tenant = ?1 AND name = ?2"
				    " AND (?4 IS NULL OR state = ?4)");
	if (!sqlite_volume_get(s, tenant, name, out, f))
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
	return sql_commit(s, f);
failed:
	if (!f->code)
		sql_failed(s, "volume state", f);
refused:
	sql_rollback(s);
	return false;
}

bool sqlite_volume_list(struct store *s, const char *tenant, struct volume **out, size_t *n,
			struct fault *f)
{
	autostmt st = sql_prepare(s, "SELECT " COLUMNS " FROM volumes WHERE tenant = ?1 ORDER BY name");
	if (!st)
		return sql_failed(s, "volume list", f);
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
	return sql_failed(s, "volume list", f);
}

bool sqlite_volume_drop(struct store *s, const char *tenant, const char *name, struct fault *f)
{
	autostmt st = sql_prepare(s, "DELETE FROM volumes WHERE tenant = ?1 AND name = ?2");
	if (!st)
		return sql_failed(s, "volume drop", f);
	sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	return sqlite3_step(st) == SQLITE_DONE || sql_failed(s, "volume drop", f);
}

/* Mark the volume with id in use by owner, of kind by (in a transaction). */
static bool use_add(struct store *s, const char *id, enum volume_user by, const char *owner, int64_t now_ms)
{
	autostmt add = sql_prepare(s, "INSERT OR REPLACE INTO volume_uses (volume, owner, kind, host, since_ms)"
				     " VALUES (?1, ?2, ?3, ?4, ?5)");
	const char kind[2] = {(char)by, '\0'};
	if (!add)
		return false;
	sqlite3_bind_text(add, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(add, 2, owner, -1, SQLITE_STATIC);
	sqlite3_bind_text(add, 3, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(add, 4, store_host(s), -1, SQLITE_STATIC);
	sqlite3_bind_int64(add, 5, now_ms);
	return sqlite3_step(add) == SQLITE_DONE;
}

bool sqlite_volume_use(struct store *s, const char *tenant, const char *name, enum volume_user by,
		       const char *owner, int64_t now_ms, struct volume *out, struct fault *f)
{
	/* One write transaction: no delete begins between the look and the mark. */
	if (!sql_begin(s, false, f))
		return false;
	if (!sqlite_volume_get(s, tenant, name, out, f) || !volume_ready(out, f))
		goto refused;
	if (!use_add(s, out->id, by, owner, now_ms))
		goto failed;
	return sql_commit(s, f);
failed:
	sql_failed(s, "volume use", f);
refused:
	sql_rollback(s);
	return false;
}

bool sqlite_volume_release(struct store *s, const char *owner)
{
	struct fault ignored;
	autostmt st = sql_prepare(s, "DELETE FROM volume_uses WHERE owner = ?1 AND host = ?2");
	if (!st)
		return sql_failed(s, "volume release", &ignored);
	sqlite3_bind_text(st, 1, owner, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, store_host(s), -1, SQLITE_STATIC);
	return sqlite3_step(st) == SQLITE_DONE || sql_failed(s, "volume release", &ignored);
}

bool sqlite_volume_delete_begin(struct store *s, const char *tenant, const char *name, const char *owner,
				int64_t now_ms, struct volume *out, struct fault *f)
{
	/* One host uses the file: a mark counts until it is released or the
	 * upkeep forgets it (no lease). */
	if (!sql_begin(s, true, f))
		return false;
	autostmt count = sql_prepare(s, "SELECT count(*) FROM volume_uses WHERE volume = ?1");
	autostmt set = sql_prepare(s, "UPDATE volumes SET state = 'deleting' WHERE tenant = ?1 AND name = ?2");
	if (!sqlite_volume_get(s, tenant, name, out, f))
		goto refused;
	if (!count || !set)
		goto failed;
	sqlite3_bind_text(count, 1, out->id, -1, SQLITE_STATIC);
	if (sqlite3_step(count) != SQLITE_ROW)
		goto failed;
	if (!volume_unused(out, sqlite3_column_int64(count, 0), f))
		goto refused;
	sqlite3_bind_text(set, 1, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_text(set, 2, name, -1, SQLITE_STATIC);
	if (sqlite3_step(set) != SQLITE_DONE || !use_add(s, out->id, VOLUME_BY_WORKER, owner, now_ms))
		goto failed;
	snprintf(out->state, sizeof out->state, "deleting");
	return sql_commit(s, f);
failed:
	sql_failed(s, "volume delete", f);
refused:
	sql_rollback(s);
	return false;
}

/* A mark the upkeep found over: forgotten only as it was judged (the same
 * since_ms), so that one made again meanwhile is another, and stays. */
struct use_over {
	char volume[VOLUME_ID_LEN + 1];
	char owner[96];
	int64_t since_ms;
};

void sqlite_volume_uses_keep(struct store *s, const struct strv *sessions, int64_t now_ms)
{
	struct fault ignored;
	autostmt st = sql_prepare(s, "SELECT volume, owner, kind, since_ms FROM volume_uses WHERE host = ?1");
	autostmt drop = sql_prepare(s, "DELETE FROM volume_uses WHERE volume = ?1 AND owner = ?2 AND since_ms = ?3");
	if (!st || !drop) {
		sql_failed(s, "volume uses keep", &ignored);
		return;
	}
	sqlite3_bind_text(st, 1, store_host(s), -1, SQLITE_STATIC);
	struct use_over *over = NULL;
	size_t n = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *owner = (const char *)sqlite3_column_text(st, 1);
		const char *kind = (const char *)sqlite3_column_text(st, 2);
		int64_t since = sqlite3_column_int64(st, 3);
		if (!volume_use_over(kind[0], owner, since, sessions, now_ms))
			continue;
		over = xrealloc(over, (n + 1) * sizeof *over);
		snprintf(over[n].volume, sizeof over[n].volume, "%s", (const char *)sqlite3_column_text(st, 0));
		snprintf(over[n].owner, sizeof over[n].owner, "%s", owner);
		over[n++].since_ms = since;
	}
	for (size_t i = 0; i < n; i++) {
		sqlite3_reset(drop);
		sqlite3_bind_text(drop, 1, over[i].volume, -1, SQLITE_STATIC);
		sqlite3_bind_text(drop, 2, over[i].owner, -1, SQLITE_STATIC);
		sqlite3_bind_int64(drop, 3, over[i].since_ms);
		if (sqlite3_step(drop) != SQLITE_DONE)
			sql_failed(s, "volume uses keep", &ignored);
		else if (sqlite3_changes(sql_db(s)))
			log_msg("volume %s: %s's mark forgotten, its user is gone", over[i].volume, over[i].owner);
	}
	free(over);
}
