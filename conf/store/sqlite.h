/*
 * sqlite.h: the SQLite backend's connection, for its own modules
 * (sqlite*.c): open, close and ping (operations of its table,
 * sqlite_ops.c), the connection, and a write transaction that processes
 * take in turn (BEGIN IMMEDIATE, waiting up to STORE_BUSY_MS); durable:
 * synced before commit returns.
 */
#ifndef ISOBOX_STORE_SQLITE_H
#define ISOBOX_STORE_SQLITE_H

#include "../lib/fault.h"
#include "types.h"

struct store;

bool sqlite_open(struct store *s, const struct store_conf *sc, struct fault *f);
void sqlite_close(struct store *s);
bool sqlite_ping(struct store *s, struct fault *f);

#define STORE_BUSY_MS 5000
struct sqlite3 *sql_db(struct store *s);
struct sqlite3_stmt *sql_prepare(struct store *s, const char *sql); /* NULL: failed */
void sql_finalize(struct sqlite3_stmt **st);
/* A prepared statement, finalized when it goes out of scope. */
#define autostmt __attribute__((cleanup(sql_finalize))) struct sqlite3_stmt *
bool sql_begin(struct store *s, bool durable, struct fault *f);
bool sql_commit(struct store *s, struct fault *f);
void sql_rollback(struct store *s);
/* An SQLite failure as a fault (E_STORE_UNAVAILABLE), logged. */
bool sql_failed(struct store *s, const char *what, struct fault *f);

#endif
