/*
 * store.c: the store (store.h) in SQLite: the file, its schema, the
 * tenants' rates and running executions.
 *
 * WAL mode lets every worker read while one writes; writers take turns
 * (BEGIN IMMEDIATE, with a busy timeout), so a read-modify-write such as
 * "count, then claim" is atomic across processes. A process killed in the
 * middle of a transaction leaves nothing half-done: SQLite rolls it back
 * at the next open.
 */
#define _GNU_SOURCE
#include "store.h"
#include "store_redis.h"

#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct store {
	sqlite3 *db;
	bool durable;              /* synchronous=FULL now */
	struct redis_store *redis; /* instead of db, when the store is Redis */
	char *host;                /* this host's name (conf's instance) */
};

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS rate (tenant TEXT PRIMARY KEY, tat_us INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS running (id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" tenant TEXT NOT NULL, pid INTEGER NOT NULL, since_ms INTEGER NOT NULL);"
	"CREATE INDEX IF NOT EXISTS running_tenant ON running (tenant);"
	/* value last: a usage sum reads size without walking the value's pages. */
	"CREATE TABLE IF NOT EXISTS memory (tenant TEXT NOT NULL, key BLOB NOT NULL,"
	" size INTEGER NOT NULL, content_type TEXT NOT NULL, etag TEXT NOT NULL,"
	" updated_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL, value BLOB NOT NULL,"
	" PRIMARY KEY (tenant, key)) WITHOUT ROWID;"
	"CREATE INDEX IF NOT EXISTS memory_expiry ON memory (expires_ms) WHERE expires_ms > 0;"
	"CREATE TABLE IF NOT EXISTS volumes (tenant TEXT NOT NULL, name TEXT NOT NULL,"
	" id TEXT NOT NULL UNIQUE, state TEXT NOT NULL, size_bytes INTEGER NOT NULL,"
	" created_ms INTEGER NOT NULL, host TEXT NOT NULL DEFAULT '', PRIMARY KEY (tenant, name));"
	/* Who uses a volume (store_volumes.h): volume is its id; kind, enum
	 * volume_user's letter. One host uses the file: no leases. */
	"CREATE TABLE IF NOT EXISTS volume_uses (volume TEXT NOT NULL, owner TEXT NOT NULL, kind TEXT NOT NULL,"
	" host TEXT NOT NULL, since_ms INTEGER NOT NULL, PRIMARY KEY (volume, owner)) WITHOUT ROWID;"
	"CREATE INDEX IF NOT EXISTS volume_uses_owner ON volume_uses (owner);"
	"CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, host TEXT NOT NULL,"
	" memory_bytes INTEGER NOT NULL, since_ms INTEGER NOT NULL, released_ms INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX IF NOT EXISTS sessions_tenant ON sessions (tenant);";

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

bool store_failed(struct store *s, const char *what, struct fault *f)
{
	const char *why = s && s->db ? sqlite3_errmsg(s->db) : "no store";
	log_msg("store: %s: %s", what, why);
	return fail(f, E_STORE_UNAVAILABLE, "the store failed (%s): %.200s", what, why);
}

static bool exec(struct store *s, const char *sql, struct fault *f)
{
	return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK || store_failed(s, sql, f);
}

/* A column added to a table after stores were made with it (ALTER TABLE
 * has no IF NOT EXISTS): added when it is missing. */
static void add_column(sqlite3 *db, const char *table, const char *column, const char *decl)
{
	sqlite3_stmt *st = NULL;
	autofree char *probe = xasprintf("SELECT %s FROM %s LIMIT 0", column, table);
	if (sqlite3_prepare_v2(db, probe, -1, &st, NULL) != SQLITE_OK) {
		autofree char *alter = xasprintf("ALTER TABLE %s ADD COLUMN %s %s", table, column, decl);
		sqlite3_exec(db, alter, NULL, NULL, NULL);
	}
	sqlite3_finalize(st);
}

struct store *store_open(const struct store_conf *sc, const char *host, struct fault *f)
{
	if (sc->backend == STORE_NONE) {
		fail(f, E_STORE_UNAVAILABLE, "this server has no store (store: in isobox.yaml)");
		return NULL;
	}
	struct store *s = xcalloc(1, sizeof *s);
	s->host = xstrdup(host);
	if (sc->backend == STORE_REDIS) {
		s->redis = redis_open(sc, host, f);
		if (!s->redis) {
			store_close(s);
			return NULL;
		}
		return s;
	}
	const char *path = sc->path;
	/* NOMUTEX: one connection per process, used by one thread. */
	int rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				 SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc != SQLITE_OK ||
	    sqlite3_busy_timeout(s->db, STORE_BUSY_MS) != SQLITE_OK ||
	    sqlite3_exec(s->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
			 "PRAGMA foreign_keys=OFF;", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(s->db, schema, NULL, NULL, NULL) != SQLITE_OK) {
		store_failed(s, path, f);
		store_close(s);
		return NULL;
	}
	add_column(s->db, "volumes", "host", "TEXT NOT NULL DEFAULT ''");
	add_column(s->db, "sessions", "released_ms", "INTEGER NOT NULL DEFAULT 0");
	return s;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	sqlite3_close(s->db); /* NULL is fine */
	redis_close(s->redis);
	free(s->host);
	free(s);
}

struct redis_store *store_redis(struct store *s)
{
	return s->redis;
}

const char *store_host(struct store *s)
{
	return s->host;
}

bool store_ping(struct store *s, struct fault *f)
{
	if (s->redis)
		return redis_ping(s->redis, f);
	return exec(s, "SELECT 1", f);
}

bool store_hosts_alive(struct store *s, struct strv *out, struct fault *f)
{
	if (s->redis)
		return redis_hosts_alive(s->redis, out, f);
	strv_push(out, s->host);
	return true;
}

bool store_host_alive(struct store *s, const char *host, bool *alive, struct fault *f)
{
	*alive = true;
	return !s->redis || redis_host_alive(s->redis, host, alive, f);
}

sqlite3 *store_sqlite(struct store *s)
{
	return s->db;
}

bool store_begin(struct store *s, bool durable, struct fault *f)
{
	if (durable != s->durable) {
		if (!exec(s, durable ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL", f))
			return false;
		s->durable = durable;
	}
	return exec(s, "BEGIN IMMEDIATE", f);
}

bool store_commit(struct store *s, struct fault *f)
{
	if (exec(s, "COMMIT", f))
		return true;
	store_rollback(s);
	return false;
}

void store_rollback(struct store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

void store_finalize(sqlite3_stmt **st)
{
	sqlite3_finalize(*st);
}

sqlite3_stmt *store_prepare(struct store *s, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return NULL;
	return st;
}

bool store_rate_take(struct store *s, const char *tenant, int64_t per_minute, int64_t now_ms,
		     bool *allowed, int64_t *retry_after_s, struct fault *f)
{
	*allowed = true;
	*retry_after_s = 0;
	if (per_minute <= 0)
		return true;
	if (s->redis)
		return redis_rate_take(s->redis, tenant, per_minute, now_ms, allowed, retry_after_s, f);
	/* GCRA: tat is when the tenant's bucket is empty again; each request
	 * moves it one interval later; a request is refused while tat lies
	 * more than a minute (less one interval) ahead. */
	int64_t interval = 60000000 / per_minute, burst = 60000000 - interval, now = now_ms * 1000;
	if (!store_begin(s, false, f))
		return false;
	autostmt get = store_prepare(s, "SELECT tat_us FROM rate WHERE tenant = ?1");
	autostmt set = store_prepare(s, "INSERT INTO rate (tenant, tat_us) VALUES (?1, ?2)"
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
		store_rollback(s);
		return true;
	}
	sqlite3_bind_text(set, 1, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_int64(set, 2, tat + interval);
	if (sqlite3_step(set) != SQLITE_DONE)
		goto failed;
	return store_commit(s, f);
failed:
	store_failed(s, "rate", f);
	store_rollback(s);
	return false;
}

bool store_running_claim(struct store *s, const char *tenant, int64_t limit, int pid,
			 int64_t *claim, struct fault *f)
{
	*claim = 0;
	if (s->redis)
		return redis_running_claim(s->redis, tenant, limit, pid, wall_ms(), claim, f);
	if (!store_begin(s, false, f))
		return false;
	autostmt count = store_prepare(s, "SELECT count(*) FROM running WHERE tenant = ?1");
	autostmt add = store_prepare(s, "INSERT INTO running (tenant, pid, since_ms) VALUES (?1, ?2, ?3)");
	if (!count || !add)
		goto failed;
	sqlite3_bind_text(count, 1, tenant, -1, SQLITE_STATIC);
	if (sqlite3_step(count) != SQLITE_ROW)
		goto failed;
	if (limit > 0 && sqlite3_column_int64(count, 0) >= limit) {
		store_rollback(s);
		return true;
	}
	sqlite3_bind_text(add, 1, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_int(add, 2, pid);
	sqlite3_bind_int64(add, 3, wall_ms());
	if (sqlite3_step(add) != SQLITE_DONE)
		goto failed;
	*claim = sqlite3_last_insert_rowid(s->db);
	return store_commit(s, f);
failed:
	store_failed(s, "running", f);
	store_rollback(s);
	return false;
}

static void run_int(struct store *s, const char *sql, int64_t v)
{
	autostmt st = store_prepare(s, sql);
	if (st) {
		sqlite3_bind_int64(st, 1, v);
		if (sqlite3_step(st) == SQLITE_DONE)
			return;
	}
	struct fault ignored;
	store_failed(s, sql, &ignored);
}

void store_running_release(struct store *s, int64_t claim)
{
	if (claim > 0 && s->redis)
		redis_running_release(s->redis, claim);
	else if (claim > 0)
		run_int(s, "DELETE FROM running WHERE id = ?1", claim);
}

void store_running_forget(struct store *s, int pid)
{
	if (s->redis) {
		redis_running_upkeep(s->redis, &pid, 1, wall_ms());
		return;
	}
	run_int(s, "DELETE FROM running WHERE pid = ?1", pid);
}

/* Gone, or another user's now (its pid reused): not a worker. */
static bool pid_gone(int pid)
{
	return pid <= 0 || kill(pid, 0) < 0;
}

void store_running_forget_dead(struct store *s)
{
	int pids[256], dead[256];
	size_t n = 0, n_dead = 0;
	if (s->redis) {
		/* This host's claims: pids mean something only where they are. */
		n = redis_running_pids(s->redis, pids, sizeof pids / sizeof pids[0]);
		for (size_t i = 0; i < n; i++)
			if (pid_gone(pids[i]))
				dead[n_dead++] = pids[i];
		redis_running_upkeep(s->redis, dead, n_dead, wall_ms());
		return;
	}
	/* Pids on this host: the store is one file on one host. */
	autostmt st = store_prepare(s, "SELECT DISTINCT pid FROM running");
	while (st && n < sizeof pids / sizeof pids[0] && sqlite3_step(st) == SQLITE_ROW)
		pids[n++] = sqlite3_column_int(st, 0);
	for (size_t i = 0; i < n; i++)
		if (pid_gone(pids[i]))
			store_running_forget(s, pids[i]);
}

int64_t store_running_count(struct store *s, const char *tenant)
{
	if (s->redis)
		return redis_running_count(s->redis, tenant, wall_ms());
	autostmt st = store_prepare(s, "SELECT count(*) FROM running WHERE tenant = ?1");
	if (!st)
		return 0;
	sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
	return sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
}
