/*
 * rules.h: what both backends of the store decide alike, so that a
 * tenant gets the same answer, in the same words, from either.
 */
#ifndef ISOBOX_STORE_RULES_H
#define ISOBOX_STORE_RULES_H

#include "../lib/fault.h"
#include "types.h"

/* Does the condition hold for what is there (found, with etag)? May the
 * tenant hold bytes in keys? Else the fault says why. A new random etag. */
bool memory_condition_holds(const char *key, bool found, const char *etag, enum memory_cond cond,
			    const char *want, struct fault *f);
bool memory_quota_holds(const struct memory_quota *q, int64_t bytes, int64_t keys, struct fault *f);
void memory_new_etag(char out[17]);
/* The first key after every key that starts with prefix, in out (room
 * for strlen(prefix)); false: none (an empty prefix, or only 0xff bytes). */
bool memory_prefix_end(const char *prefix, char *out, size_t *len);

/* May a tenant with count volumes of bytes add one of size_bytes? Else
 * the fault says why. A new record, "creating", with a random id. */
bool volume_quota_holds(const char *tenant, int64_t count, int64_t bytes, int64_t size_bytes,
			int64_t max_count, int64_t max_bytes, struct fault *f);
void volume_new(const char *name, int64_t size_bytes, int64_t now_ms, const char *host, struct volume *out);
/* May a run or a session mount v now (it is ready)? Else 404
 * volume_not_found, with its state. */
bool volume_ready(const struct volume *v, struct fault *f);
/* May v, which users marks hold, be deleted (none)? Else 409 volume_busy,
 * and why (a volume already "deleting" is held by its deleter). */
bool volume_unused(const struct volume *v, int64_t users, struct fault *f);
/* Is a mark in use (store.h) over, as the upkeep sees it at now_ms:
 * a worker's whose process is gone, or that is older than any request
 * (its release was lost); a session's that is not among sessions (NULL:
 * unknown) and older than the grace (a session being made is listed by
 * then)? by: enum volume_user. */
bool volume_use_over(int by, const char *owner, int64_t since_ms, const struct strv *sessions, int64_t now_ms);

/* The store's face declares session_quota_holds, which the sessions'
 * own host checks too. */

/* Gone, or another user's now (its pid reused): not a worker. A running
 * claim of such a pid is forgotten by the upkeep. */
bool pid_gone(int pid);

#endif
