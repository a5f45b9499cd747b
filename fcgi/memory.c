/*
 * memory.c: /v1/memory (memory.h). Each handler checks what it was sent,
 * asks the store for the request's tenant and answers; a tenant never
 * names another's keys: the store is asked for (tenant, key) only.
 */
#define _GNU_SOURCE
#include "memory.h"
#include "encode.h"
#include "request.h"
#include "respond.h"
#include "../conf/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The key of a /v1/memory/{key} route: 1 to memory.maxKeyBytes bytes of UTF-8. */
static bool key_ok(const struct worker *w, struct request *rq)
{
	const char *key = rq->params[0];
	size_t n = key ? strlen(key) : 0;
	if (n == 0 || (int64_t)n > w->conf.memory.max_key_bytes || !utf8_valid(key, n))
		return fail(&rq->fault, E_INVALID_VALUE, "a key is 1 to %lld bytes of UTF-8 "
			    "(memory.maxKeyBytes)", (long long)w->conf.memory.max_key_bytes);
	return true;
}

/* If-Match / If-None-Match, as a condition on what is there. */
static bool condition(struct request *rq, enum memory_cond *cond, char etag[17])
{
	const char *match = http_param(&rq->io, "HTTP_IF_MATCH");
	const char *none = http_param(&rq->io, "HTTP_IF_NONE_MATCH");
	*cond = MEMORY_ANY;
	etag[0] = '\0';
	if (match[0] && none[0])
		return fail(&rq->fault, E_INVALID_REQUEST, "send If-Match or If-None-Match, not both");
	if (none[0]) {
		if (strcmp(none, "*"))
			return fail(&rq->fault, E_INVALID_VALUE, "If-None-Match takes only \"*\" here "
				    "(write only if the key is not there)");
		*cond = MEMORY_IF_ABSENT;
		return true;
	}
	if (!match[0])
		return true;
	if (!strcmp(match, "*")) {
		*cond = MEMORY_IF_EXISTS;
		return true;
	}
	/* One strong etag, quoted: "0123456789abcdef". */
	size_t n = strlen(match);
	if (n != 18 || match[0] != '"' || match[17] != '"')
		return fail(&rq->fault, E_INVALID_VALUE, "If-Match takes one etag as the ETag header "
			    "gave it (\"...\", with the quotes) or \"*\"");
	memcpy(etag, match + 1, 16);
	etag[16] = '\0';
	*cond = MEMORY_IF_MATCH;
	return true;
}

static cJSON *item_to_json(const struct memory_item *it)
{
	cJSON *o = cJSON_CreateObject();
	json_add_bytes(o, "key", it->key, strlen(it->key));
	cJSON_AddNumberToObject(o, "size", (double)it->size);
	cJSON_AddStringToObject(o, "contentType", it->content_type);
	cJSON_AddStringToObject(o, "etag", it->etag);
	json_add_time(o, "updatedAt", it->updated_ms);
	if (it->expires_ms)
		json_add_time(o, "expiresAt", it->expires_ms);
	else
		cJSON_AddNullToObject(o, "expiresAt");
	return o;
}

static void etag_header(char *out, size_t n, const char *etag)
{
	snprintf(out, n, "ETag: \"%s\"\r\n", etag);
}

void memory_put(struct worker *w, struct request *rq)
{
	struct store *s = worker_store(w, &rq->fault);
	enum memory_cond cond;
	char want[17], etag[17];
	int64_t ttl_s = 0;
	autofree char *ttl = request_query_param(http_param(&rq->io, "QUERY_STRING"), "ttlSeconds");
	if (ttl) {
		char *end;
		ttl_s = strtoll(ttl, &end, 10);
		if (!ttl[0] || *end || ttl_s < 1 || ttl_s > 10LL * 365 * 86400)
			fail(&rq->fault, E_INVALID_VALUE, "ttlSeconds is a whole number of seconds, "
			     "1 to 315360000");
	}
	const char *type = http_param(&rq->io, "CONTENT_TYPE");
	if (!type[0])
		type = "application/octet-stream";
	if (rq->fault.code || !s || !key_ok(w, rq) || !condition(rq, &cond, want)) {
		respond_fault(rq, "");
		return;
	}
	if (strlen(type) >= sizeof ((struct memory_item *)0)->content_type)
		fail(&rq->fault, E_INVALID_VALUE, "the Content-Type is too long");
	if (rq->fault.code) {
		respond_fault(rq, "");
		return;
	}
	if (!http_read_body(&rq->io, (size_t)w->conf.memory.max_value_bytes, &rq->body, &rq->fault)) {
		if (rq->fault.code == E_BODY_TOO_LARGE)
			fail(&rq->fault, E_BODY_TOO_LARGE, "a value may be at most %lld bytes "
			     "(memory.maxValueBytes)", (long long)w->conf.memory.max_value_bytes);
		respond_fault(rq, "");
		return;
	}
	struct memory_quota q = {rq->share->memory_bytes, rq->share->memory_keys};
	bool created;
	int64_t now = wall_ms();
	if (!store_memory_put(s, rq->tenant, rq->params[0], rq->body.data, rq->body.len, type,
			      ttl_s * 1000, cond, want, &q, now, &created, etag, &rq->fault)) {
		respond_fault(rq, "");
		return;
	}
	struct memory_item it = {.key = rq->params[0], .size = (int64_t)rq->body.len, .updated_ms = now,
				 .expires_ms = ttl_s ? now + ttl_s * 1000 : 0};
	snprintf(it.content_type, sizeof it.content_type, "%s", type);
	snprintf(it.etag, sizeof it.etag, "%s", etag);
	char headers[64];
	etag_header(headers, sizeof headers, etag);
	cJSON *o = item_to_json(&it);
	http_send_json(&rq->io, created ? 201 : 200, headers, o);
	cJSON_Delete(o);
}

void memory_get(struct worker *w, struct request *rq)
{
	struct store *s = worker_store(w, &rq->fault);
	struct memory_item it;
	if (!s || !key_ok(w, rq) || !store_memory_get(s, rq->tenant, rq->params[0], wall_ms(), &it, &rq->fault)) {
		respond_fault(rq, "");
		return;
	}
	/* The value's type is the caller's: a browser must never run it as a
	 * page of this origin (text/html, say). */
	char headers[160];
	etag_header(headers, sizeof headers, it.etag);
	strcat(headers, "X-Content-Type-Options: nosniff\r\n"
			"Content-Security-Policy: default-src 'none'; sandbox\r\n");
	http_send_bytes(&rq->io, 200, it.content_type, headers, it.value.data, it.value.len,
			!strcmp(rq->method, "HEAD"));
	memory_item_free(&it);
}

void memory_delete(struct worker *w, struct request *rq)
{
	struct store *s = worker_store(w, &rq->fault);
	enum memory_cond cond;
	char want[17];
	if (!s || !key_ok(w, rq) || !condition(rq, &cond, want)) {
		respond_fault(rq, "");
		return;
	}
	if (cond == MEMORY_IF_ABSENT)
		fail(&rq->fault, E_INVALID_REQUEST, "If-None-Match makes no sense on DELETE");
	if (rq->fault.code) {
		respond_fault(rq, "");
		return;
	}
	if (!store_memory_delete(s, rq->tenant, rq->params[0], cond, want, wall_ms(), &rq->fault)) {
		respond_fault(rq, "");
		return;
	}
	http_send_empty(&rq->io, 204, "");
}

void memory_list(struct worker *w, struct request *rq)
{
	struct store *s = worker_store(w, &rq->fault);
	const char *query = http_param(&rq->io, "QUERY_STRING");
	autofree char *prefix = request_query_param(query, "prefix");
	autofree char *cursor = request_query_param(query, "cursor");
	autofree char *limit_text = request_query_param(query, "limit");
	int64_t limit = 100 < w->conf.memory.max_list_keys ? 100 : w->conf.memory.max_list_keys;
	if (limit_text) {
		char *end;
		limit = strtoll(limit_text, &end, 10);
		if (!limit_text[0] || *end || limit < 1 || limit > w->conf.memory.max_list_keys)
			fail(&rq->fault, E_INVALID_VALUE, "limit is 1 to %lld (memory.maxListKeys)",
			     (long long)w->conf.memory.max_list_keys);
	}
	if (!rq->fault.code && ((prefix && !utf8_valid(prefix, strlen(prefix))) ||
				(cursor && !utf8_valid(cursor, strlen(cursor)))))
		fail(&rq->fault, E_INVALID_VALUE, "prefix and cursor are UTF-8 (percent-encoded)");
	struct memory_item *items;
	size_t n;
	bool more;
	if (rq->fault.code || !s ||
	    !store_memory_list(s, rq->tenant, prefix ? prefix : "", cursor ? cursor : "", limit, wall_ms(),
			       &items, &n, &more, &rq->fault)) {
		respond_fault(rq, "");
		return;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON *keys = cJSON_AddArrayToObject(o, "keys");
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(keys, item_to_json(&items[i]));
	if (more)
		json_add_bytes(o, "cursor", items[n - 1].key, strlen(items[n - 1].key));
	else
		cJSON_AddNullToObject(o, "cursor");
	for (size_t i = 0; i < n; i++)
		memory_item_free(&items[i]);
	free(items);
	http_send_json(&rq->io, 200, "", o);
	cJSON_Delete(o);
}
