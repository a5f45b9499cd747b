/*
 * rules.c: what both backends of the store decide alike (see rules.h,
 * and store.h for what the layers above call), so that a tenant gets the same answers, word for word,
 * from SQLite and from Redis.
 */
#define _GNU_SOURCE
#include "rules.h"
#include "store.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

void memory_new_etag(char out[17])
{
	random_hex(out, 8);
}

bool memory_condition_holds(const char *key, bool found, const char *etag, enum memory_cond cond,
			    const char *want, struct fault *f)
{
	switch (cond) {
	case MEMORY_ANY:
		return true;
	case MEMORY_IF_EXISTS:
		return found || fail(f, E_PRECONDITION_FAILED, "If-Match: key %.100s is not there", key);
	case MEMORY_IF_ABSENT:
		return !found || fail(f, E_PRECONDITION_FAILED, "If-None-Match: key %.100s is already "
				      "there (etag \"%s\")", key, etag);
	case MEMORY_IF_MATCH:
		if (!found)
			return fail(f, E_PRECONDITION_FAILED, "If-Match: key %.100s is not there", key);
		return !strcmp(etag, want) ||
		       fail(f, E_PRECONDITION_FAILED, "If-Match: key %.100s was changed; its etag is "
			    "now \"%s\": read it again", key, etag);
	}
	return true;
}

bool memory_quota_holds(const struct memory_quota *q, int64_t bytes, int64_t keys, struct fault *f)
{
	if (q->bytes > 0 && bytes > q->bytes)
		return fail(f, E_QUOTA_EXCEEDED, "this would make the tenant's memory %lld bytes, over its "
			    "quota of %lld (memoryBytes): delete keys or ask for a larger quota",
			    (long long)bytes, (long long)q->bytes);
	if (q->keys > 0 && keys > q->keys)
		return fail(f, E_QUOTA_EXCEEDED, "the tenant holds %lld keys, its quota (memoryKeys): "
			    "delete keys or ask for a larger quota", (long long)q->keys);
	return true;
}

bool memory_prefix_end(const char *prefix, char *out, size_t *len)
{
	size_t n = strlen(prefix);
	memcpy(out, prefix, n);
	while (n > 0 && (unsigned char)out[n - 1] == 0xff)
		n--;
	if (n == 0)
		return false;
	out[n - 1] = (char)((unsigned char)out[n - 1] + 1);
	*len = n;
	return true;
}

bool volume_name_valid(const char *name)
{
	size_t n = 0;
	for (; name[n]; n++) {
		char c = name[n];
		bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			  (n > 0 && (c == '-' || c == '_' || c == '.'));
		if (!ok)
			return false;
	}
	return n > 0 && n <= VOLUME_NAME_MAX;
}

bool volume_quota_holds(const char *tenant, int64_t count, int64_t bytes, int64_t size_bytes,
			int64_t max_count, int64_t max_bytes, struct fault *f)
{
	if (max_count > 0 && count >= max_count)
		return fail(f, E_QUOTA_EXCEEDED, "tenant %s has %lld volumes, its most (volumes): delete one",
			    tenant, (long long)count);
	if (max_bytes > 0 && bytes + size_bytes > max_bytes)
		return fail(f, E_QUOTA_EXCEEDED, "tenant %s's volumes hold %lld bytes; %lld more would pass "
			    "its volumeBytes (%lld): ask for less or delete one", tenant, (long long)bytes,
			    (long long)size_bytes, (long long)max_bytes);
	return true;
}

void volume_new(const char *name, int64_t size_bytes, int64_t now_ms, const char *host, struct volume *out)
{
	*out = (struct volume){.size_bytes = size_bytes, .created_ms = now_ms};
	random_hex(out->id, VOLUME_ID_LEN / 2);
	snprintf(out->name, sizeof out->name, "%s", name);
	snprintf(out->state, sizeof out->state, "creating");
	snprintf(out->host, sizeof out->host, "%s", host);
}

bool volume_ready(const struct volume *v, struct fault *f)
{
	return !strcmp(v->state, "ready") || fail(f, E_VOLUME_NOT_FOUND, "volume %s is %s", v->name, v->state);
}

bool volume_unused(const struct volume *v, int64_t users, struct fault *f)
{
	const char *name = v->name;
	if (users > 0 && !strcmp(v->state, "deleting"))
		return fail(f, E_VOLUME_BUSY, "volume %s is being deleted by another request: retry in a moment", name);
	if (users == 1)
		return fail(f, E_VOLUME_BUSY, "volume %s is in use by a run or a session (mounted, or starting "
			    "with it): delete it when it ends", name);
	return users == 0 ||
	       fail(f, E_VOLUME_BUSY, "volume %s is in use by %lld runs or sessions (mounted, or starting "
		    "with it): delete it when they end", name, (long long)users);
}

static bool listed(const char *id, const struct strv *ids)
{
	for (size_t i = 0; i < ids->n; i++)
		if (!strcmp(id, ids->v[i]))
			return true;
	return false;
}

bool volume_use_over(int by, const char *owner, int64_t since_ms, const struct strv *sessions, int64_t now_ms)
{
	if (by == VOLUME_BY_WORKER)
		return !process_alive(owner) || now_ms - since_ms > STORE_CLAIM_MAX_MS;
	return sessions && !listed(owner, sessions) && now_ms - since_ms > STORE_SESSION_GRACE_MS;
}

bool session_quota_holds(const char *tenant, int64_t count, int64_t held, int64_t memory_bytes,
			 int64_t max_sessions, int64_t max_memory, struct fault *f)
{
	if (max_sessions > 0 && count >= max_sessions)
		return fail(f, E_QUOTA_EXCEEDED, "tenant %s has %lld sessions open, its most (sessions): "
			    "end one (DELETE /v1/sessions/{id})", tenant, (long long)count);
	if (max_memory > 0 && held + memory_bytes > max_memory)
		return fail(f, E_QUOTA_EXCEEDED, "tenant %s's open sessions hold %lld bytes of memory; %lld "
			    "more would pass its sessionMemoryBytes (%lld): ask for less or end one",
			    tenant, (long long)held, (long long)memory_bytes, (long long)max_memory);
	return true;
}

bool pid_gone(int pid)
{
	return pid <= 0 || kill(pid, 0) < 0;
}
