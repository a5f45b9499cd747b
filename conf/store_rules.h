/*
 * store_rules.h: what both backends of the store decide alike, so that a
 * tenant gets the same answer, in the same words, from either.
 */
#ifndef ISOBOX_STORE_RULES_H
#define ISOBOX_STORE_RULES_H

#include "lib/fault.h"
#include "store_types.h"

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

/* May a tenant with count open sessions holding held bytes of memory open
 * one more of memory_bytes (max_*: its share; 0, no limit)? Else the
 * fault says why. */
bool session_quota_holds(const char *tenant, int64_t count, int64_t held, int64_t memory_bytes,
			 int64_t max_sessions, int64_t max_memory, struct fault *f);

#endif
