/*
 * sqlite_sessions.h: the claims of open sessions in SQLite, for the
 * backend's table (sqlite_ops.c); store.h says what each does.
 */
#ifndef ISOBOX_STORE_SQLITE_SESSIONS_H
#define ISOBOX_STORE_SQLITE_SESSIONS_H

#include "../lib/fault.h"
#include "types.h"

struct store;

bool sqlite_session_claim(struct store *s, const char *tenant, const char *id, int64_t memory_bytes,
			  int64_t max_sessions, int64_t max_memory, int64_t now_ms, struct fault *f);
void sqlite_session_release(struct store *s, const char *id, int64_t now_ms);
void sqlite_sessions_keep(struct store *s, const struct session_claim *alive, size_t n, int64_t now_ms);

#endif
