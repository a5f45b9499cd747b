/*
 * sqlite.c: the store (store.h) in SQLite: the file, its schema, and the
 * helpers every SQLite module of the store uses (sqlite.h). The backend's
 * operations are in sqlite_ops.c (rates, running claims, and the table),
 * sqlite_memory.c, sqlite_volumes.c and sqlite_sessions.c.
 *
 * WAL mode lets every worker read while one writes; writers take turns
 * (BEGIN IMMEDIATE, with a busy timeout), so a read-modify-write such as
 * "count, then claim" is atomic across processes. A process killed in the
 * middle of a transaction leaves nothing half-done: SQLite rolls it back
 * at the next open.
 */
#define _GNU_SOURCE
#include "sqlite.h"
#include "backend.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

struct sqlite_store {
	sqlite3 *db;
	bool durable; /* synchronous=FULL now */
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
	/* Who uses a volume (store.h): volume is its id; kind, enum
	 * volume_user's letter. One host uses the file: no leases. */
	"CREATE TABLE IF NOT EXISTS volume_uses (volume TEXT NOT NULL, owner TEXT NOT NULL, kind TEXT NOT NULL,"
	" host TEXT NOT NULL, since_ms INTEGER NOT NULL, PRIMARY KEY (volume, owner)) WITHOUT ROWID;"
	"CREATE INDEX IF NOT EXISTS volume_uses_owner ON volume_uses (owner);"
	"CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, host TEXT NOT NULL,"
	" memory_bytes INTEGER NOT NULL, since_ms INTEGER NOT NULL, released_ms INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX IF NOT EXISTS sessions_tenant ON sessions (tenant);";

bool sql_failed(struct store *s, const char *what, struct fault *f)
{
	const char *why = s->sqlite && s->sqlite->db ? sqlite3_errmsg(s->sqlite->db) : "no store";
	log_msg("store: %s: %s", what, why);
	return fail(f, E_STORE_UNAVAILABLE, "the store failed (%s): %.200s", what, why);
}

static bool exec(struct store *s, const char *sql, struct fault *f)
{
	return sqlite3_exec(s->sqlite->db, sql, NULL, NULL, NULL) == SQLITE_OK || sql_failed(s, sql, f);
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

bool sqlite_open(struct store *s, const struct store_conf *sc, struct fault *f)
{
	const char *path = sc->path;
	s->sqlite = xcalloc(1, sizeof *s->sqlite);
	/* NOMUTEX: one connection per process, used by one thread. */
	int rc = sqlite3_open_v2(path, &s->sqlite->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				 SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL);
	sqlite3 *db = s->sqlite->db;
	if (rc != SQLITE_OK ||
	    sqlite3_busy_timeout(db, STORE_BUSY_MS) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
			 "PRAGMA foreign_keys=OFF;", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK)
		return sql_failed(s, path, f);
	add_column(db, "volumes", "host", "TEXT NOT NULL DEFAULT ''");
	add_column(db, "sessions", "released_ms", "INTEGER NOT NULL DEFAULT 0");
	return true;
}

void sqlite_close(struct store *s)
{
	if (s->sqlite)
		sqlite3_close(s->sqlite->db); /* NULL is fine */
	free(s->sqlite);
	s->sqlite = NULL;
}

bool sqlite_ping(struct store *s, struct fault *f)
{
	return exec(s, "SELECT 1", f);
}

sqlite3 *sql_db(struct store *s)
{
	return s->sqlite->db;
}

bool sql_begin(struct store *s, bool durable, struct fault *f)
{
	if (durable != s->sqlite->durable) {
		if (!exec(s, durable ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL", f))
			return false;
		s->sqlite->durable = durable;
	}
	return exec(s, "BEGIN IMMEDIATE", f);
}

bool sql_commit(struct store *s, struct fault *f)
{
	if (exec(s, "COMMIT", f))
		return true;
	sql_rollback(s);
	return false;
}

void sql_rollback(struct store *s)
{
	if (!sqlite3_get_autocommit(s->sqlite->db))
		sqlite3_exec(s->sqlite->db, "ROLLBACK", NULL, NULL, NULL);
}

void sql_finalize(sqlite3_stmt **st)
{
	sqlite3_finalize(*st);
}

sqlite3_stmt *sql_prepare(struct store *s, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(s->sqlite->db, sql, -1, &st, NULL) != SQLITE_OK)
		return NULL;
	return st;
}
