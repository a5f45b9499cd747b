/*
 * sqlite_ops.c: the SQLite backend's table of operations (backend.h),
 * and the operations of its own: the tenants' rates, running claims, and
 * the one host that uses the file.
 *
 * WAL mode lets every worker read while one writes; writers take turns
 * (BEGIN IMMEDIATE, with a busy timeout), so a read-modify-write such as
 * "count, then claim" is atomic across processes.
 */
#define _GNU_SOURCE
#include "backend.h"
#include "rules.h"
#include "sqlite.h"
#include "sqlite_memory.h"
#include "sqlite_sessions.h"
#include "sqlite_volumes.h"

#include <sqlite3.h>

/* The store is one file on one host: this one. */
static bool sqlite_hosts_alive(struct store *s, struct strv *out, struct fault *f)
{
	(void)f;
	strv_push(out, s->host);
	return true;
}

static bool sqlite_host_alive(struct store *s, const char *host, bool *alive, struct fault *f)
{
	(void)s, (void)host, (void)f;
	return *alive = true;
}

static bool sqlite_rate_take(struct store *s, const char *tenant, int64_t per_minute, int64_t now_ms,
			     bool *allowed, int64_t *retry_after_s, struct fault *f)
{
	/* GCRA: tat is when the tenant's bucket is empty again; each request
	 * moves it one interval later; a request is refused while tat lies
	 * more than a minute (less one interval) ahead. */
	int64_t interval = 60000000 / per_minute, burst = 60000000 - interval, now = now_ms * 1000;
	if (!sql_begin(s, false, f))
		return false;
	autostmt get = sql_prepare(s, "SELECT tat_us FROM rate WHERE tenant = ?1");
	autostmt set = sql_prepare(s, "INSERT INTO rate (tenant, tat_us) VALUES (?1, ?2)"
			       " ON CONFLICT (tenant) DO UPDATE SET tat_us = excluded.tat_us");
	if (!get || !set)
		goto failed;
	sqlite3_bind_text(get, 1, tenant, -1, SQLITE_STATIC);
	int rc = sqlite3_step(get);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		goto failed;
	int64_t tat = rc == SQLITE_ROW ? sqlite3_column_int64(get, 0) : now;
	if (tat < now)
		tat = now;
	if (tat - now > burst) {
		*allowed = false;
		*retry_after_s = (tat - now - burst + 999999) / 1000000;
		if (*retry_after_s < 1)
			*retry_after_s = 1;
		sql_rollback(s);
		return true;
	}
	sqlite3_bind_text(set, 1, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_int64(set, 2, tat + interval);
	if (sqlite3_step(set) != SQLITE_DONE)
		goto failed;
	return sql_commit(s, f);
failed:
	sql_failed(s, "rate", f);
	sql_rollback(s);
	return false;
}

static bool sqlite_running_claim(struct store *s, const char *tenant, int64_t limit, int pid, int64_t now_ms,
				 int64_t *claim, struct fault *f)
{
	if (!sql_begin(s, false, f))
		return false;
	autostmt count = sql_prepare(s, "SELECT count(*) FROM running WHERE tenant = ?1");
	autostmt add = sql_prepare(s, "INSERT INTO running (tenant, pid, since_ms) VALUES (?1, ?2, ?3)");
	if (!count || !add)
		goto failed;
	sqlite3_bind_text(count, 1, tenant, -1, SQLITE_STATIC);
	if (sqlite3_step(count) != SQLITE_ROW)
		goto failed;
	if (limit > 0 && sqlite3_column_int64(count, 0) >= limit) {
		sql_rollback(s);
		return true;
	}
	sqlite3_bind_text(add, 1, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_int(add, 2, pid);
	sqlite3_bind_int64(add, 3, now_ms);
	if (sqlite3_step(add) != SQLITE_DONE)
		goto failed;
	*claim = sqlite3_last_insert_rowid(sql_db(s));
	return sql_commit(s, f);
failed:
	sql_failed(s, "running", f);
	sql_rollback(s);
	return false;
}

static void run_int(struct store *s, const char *sql, int64_t v)
{
	autostmt st = sql_prepare(s, sql);
	if (st) {
		sqlite3_bind_int64(st, 1, v);
		if (sqlite3_step(st) == SQLITE_DONE)
			return;
	}
	struct fault ignored;
	sql_failed(s, sql, &ignored);
}

static void sqlite_running_release(struct store *s, int64_t claim)
{
	run_int(s, "DELETE FROM running WHERE id = ?1", claim);
}

static void sqlite_running_forget(struct store *s, int pid, int64_t now_ms)
{
	(void)now_ms;
	run_int(s, "DELETE FROM running WHERE pid = ?1", pid);
}

static void sqlite_running_forget_dead(struct store *s, int64_t now_ms)
{
	int pids[256];
	size_t n = 0;
	/* Pids on this host: the store is one file on one host. */
	autostmt st = sql_prepare(s, "SELECT DISTINCT pid FROM running");
	while (st && n < sizeof pids / sizeof pids[0] && sqlite3_step(st) == SQLITE_ROW)
		pids[n++] = sqlite3_column_int(st, 0);
	for (size_t i = 0; i < n; i++)
		if (pid_gone(pids[i]))
			sqlite_running_forget(s, pids[i], now_ms);
}

static int64_t sqlite_running_count(struct store *s, const char *tenant, int64_t now_ms)
{
	(void)now_ms;
	autostmt st = sql_prepare(s, "SELECT count(*) FROM running WHERE tenant = ?1");
	if (!st)
		return 0;
	sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
	return sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
}

const struct store_ops sqlite_ops = {
	.open = sqlite_open,
	.close = sqlite_close,
	.ping = sqlite_ping,
	.hosts_alive = sqlite_hosts_alive,
	.host_alive = sqlite_host_alive,
	.rate_take = sqlite_rate_take,
	.running_claim = sqlite_running_claim,
	.running_release = sqlite_running_release,
	.running_forget = sqlite_running_forget,
	.running_forget_dead = sqlite_running_forget_dead,
	.running_count = sqlite_running_count,
	.memory_get = sqlite_memory_get,
	.memory_put = sqlite_memory_put,
	.memory_delete = sqlite_memory_delete,
	.memory_list = sqlite_memory_list,
	.memory_usage = sqlite_memory_usage,
	.memory_expire = sqlite_memory_expire,
	.volume_add = sqlite_volume_add,
	.volume_set_state = sqlite_volume_set_state,
	.volume_get = sqlite_volume_get,
	.volume_list = sqlite_volume_list,
	.volume_drop = sqlite_volume_drop,
	.volume_use = sqlite_volume_use,
	.volume_release = sqlite_volume_release,
	.volume_delete_begin = sqlite_volume_delete_begin,
	.volume_uses_keep = sqlite_volume_uses_keep,
	.session_claim = sqlite_session_claim,
	.session_release = sqlite_session_release,
	.sessions_keep = sqlite_sessions_keep,
};
