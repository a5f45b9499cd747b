/*
 * sqlite_sessions.c: the claims of open sessions (store.h) in the
 * store's SQLite file: one row per session. One host uses the file, so a
 * row needs no lease: the master's upkeep drops what it no longer has.
 *
 * The upkeep lists the host's sessions, then tells the store: a claim made
 * or released in between must not be undone by it. So a claim it does not
 * see is dropped only once older than STORE_SESSION_GRACE_MS (a session
 * being made is listed by then), and a released claim stays, marked, for as
 * long, so that a list taken before the release does not bring it back.
 */
#define _GNU_SOURCE
#include "sqlite_sessions.h"
#include "backend.h"
#include "rules.h"
#include "sqlite.h"
#include "store.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

bool sqlite_session_claim(struct store *s, const char *tenant, const char *id, int64_t memory_bytes,
			  int64_t max_sessions, int64_t max_memory, int64_t now_ms, struct fault *f)
{
	if (!sql_begin(s, false, f))
		return false;
	autostmt sum = sql_prepare(s, "SELECT count(*), COALESCE(SUM(memory_bytes), 0) FROM sessions"
				     " WHERE tenant = ?1 AND released_ms = 0");
	autostmt add = sql_prepare(s, "INSERT INTO sessions (id, tenant, host, memory_bytes, since_ms)"
				     " VALUES (?1, ?2, ?3, ?4, ?5)");
	if (!sum || !add)
		goto failed;
	sqlite3_bind_text(sum, 1, tenant, -1, SQLITE_STATIC);
	if (sqlite3_step(sum) != SQLITE_ROW)
		goto failed;
	if (!session_quota_holds(tenant, sqlite3_column_int64(sum, 0), sqlite3_column_int64(sum, 1),
				 memory_bytes, max_sessions, max_memory, f))
		goto refused;
	sqlite3_bind_text(add, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(add, 2, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_text(add, 3, store_host(s), -1, SQLITE_STATIC);
	sqlite3_bind_int64(add, 4, memory_bytes);
	sqlite3_bind_int64(add, 5, now_ms);
	if (sqlite3_step(add) != SQLITE_DONE)
		goto failed;
	return sql_commit(s, f);
failed:
	sql_failed(s, "session claim", f);
refused:
	sql_rollback(s);
	return false;
}

void sqlite_session_release(struct store *s, const char *id, int64_t now_ms)
{
	autostmt st = sql_prepare(s, "UPDATE sessions SET released_ms = ?2 WHERE id = ?1");
	struct fault ignored;
	if (st) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, now_ms);
	}
	if (!st || sqlite3_step(st) != SQLITE_DONE)
		sql_failed(s, "session release", &ignored);
}

static bool listed(const char *id, const struct session_claim *alive, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(id, alive[i].id))
			return true;
	return false;
}

void sqlite_sessions_keep(struct store *s, const struct session_claim *alive, size_t n, int64_t now_ms)
{
	struct fault ignored;
	autostmt add = sql_prepare(s, "INSERT OR IGNORE INTO sessions (id, tenant, host, memory_bytes,"
				     " since_ms) VALUES (?1, ?2, ?3, ?4, ?5)");
	for (size_t i = 0; add && i < n; i++) {
		sqlite3_reset(add);
		sqlite3_bind_text(add, 1, alive[i].id, -1, SQLITE_STATIC);
		sqlite3_bind_text(add, 2, alive[i].tenant, -1, SQLITE_STATIC);
		sqlite3_bind_text(add, 3, store_host(s), -1, SQLITE_STATIC);
		sqlite3_bind_int64(add, 4, alive[i].memory_bytes);
		sqlite3_bind_int64(add, 5, now_ms);
		if (sqlite3_step(add) != SQLITE_DONE)
			sql_failed(s, "sessions keep", &ignored);
	}
	/* Forget what is not here and old enough, and releases past the grace. */
	autostmt st = sql_prepare(s, "SELECT id, since_ms, released_ms FROM sessions WHERE host = ?1");
	char **gone = NULL;
	size_t n_gone = 0;
	if (st)
		sqlite3_bind_text(st, 1, store_host(s), -1, SQLITE_STATIC);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(st, 0);
		int64_t since = sqlite3_column_int64(st, 1), released = sqlite3_column_int64(st, 2);
		bool old = now_ms - (released ? released : since) > STORE_SESSION_GRACE_MS;
		if (old && (released || !listed(id, alive, n))) {
			gone = xrealloc(gone, (n_gone + 1) * sizeof *gone);
			gone[n_gone++] = xstrdup(id);
		}
	}
	autostmt drop = sql_prepare(s, "DELETE FROM sessions WHERE id = ?1");
	for (size_t i = 0; i < n_gone; i++) {
		if (drop) {
			sqlite3_reset(drop);
			sqlite3_bind_text(drop, 1, gone[i], -1, SQLITE_STATIC);
			if (sqlite3_step(drop) != SQLITE_DONE)
				sql_failed(s, "sessions keep", &ignored);
		}
		free(gone[i]);
	}
	free(gone);
}
