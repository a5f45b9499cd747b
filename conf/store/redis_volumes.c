/*
 * redis_volumes.c: the tenants' volume records (store.h) in Redis,
 * operations of the backend's table (redis_ops.c).
 */
#define _GNU_SOURCE
#include "redis_volumes.h"
#include "backend.h"
#include "rules.h"

#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Volumes. A record is the array id, state, size, created, host. */

#define VOLUME_FIELDS "'id', 'state', 'size', 'created', 'host'"

/* The 5 fields at el, of the volume called name. */
static bool read_volume(redisReply **el, const char *name, struct volume *v)
{
	for (size_t i = 0; i < 5; i++)
		if (el[i]->type != REDIS_REPLY_STRING)
			return false;
	*v = (struct volume){0};
	snprintf(v->name, sizeof v->name, "%s", name);
	snprintf(v->id, sizeof v->id, "%s", el[0]->str);
	snprintf(v->state, sizeof v->state, "%s", el[1]->str);
	v->size_bytes = strtoll(el[2]->str, NULL, 10);
	v->created_ms = strtoll(el[3]->str, NULL, 10);
	snprintf(v->host, sizeof v->host, "%s", el[4]->str);
	return true;
}

/* ARGV: P tenant name */
static const char volume_get_script[] =
	"local r = redis.call('HMGET', ARGV[1] .. 'v:' .. ARGV[2] .. ':' .. ARGV[3], " VOLUME_FIELDS ")\n"
	"if not r[1] then return false end\n"
	"return r\n";

bool redis_volume_get(struct store *s, const char *tenant, const char *name, struct volume *out,
		      struct fault *f)
{
	struct redis_store *r = s->redis;
	struct redis_args a = {0};
	redis_arg_str(&a, tenant);
	redis_arg_str(&a, name);
	redisReply *rep = redis_eval(r, "volume get", volume_get_script, &a, f);
	if (!rep)
		return false;
	if (rep->type == REDIS_REPLY_NIL) {
		freeReplyObject(rep);
		return fail(f, E_VOLUME_NOT_FOUND, "no volume %.64s", name);
	}
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 5 || !read_volume(rep->element, name, out))
		return redis_bad_reply(rep, "volume get", f);
	freeReplyObject(rep);
	return true;
}

/* ARGV: P tenant name size max_count max_bytes id now_ms host.
 * {"ok"}, {"exists", state} or {"quota", count, bytes}. */
static const char volume_add_script[] =
	"local P, t, name = ARGV[1], ARGV[2], ARGV[3]\n"
	"local h = P .. 'v:' .. t .. ':' .. name\n"
	"local state = redis.call('HGET', h, 'state')\n"
	"if state then return {'exists', state} end\n"
	"local names = redis.call('ZRANGE', P .. 'vi:' .. t, 0, -1)\n"
	"local bytes = 0\n"
	"for _, n in ipairs(names) do\n"
	"  bytes = bytes + tonumber(redis.call('HGET', P .. 'v:' .. t .. ':' .. n, 'size') or 0)\n"
	"end\n"
	"local size, mc, mb = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])\n"
	"if (mc > 0 and #names >= mc) or (mb > 0 and bytes + size > mb) then\n"
	"  return {'quota', #names, string.format('%.0f', bytes)}\n"
	"end\n"
	"redis.call('HSET', h, 'id', ARGV[7], 'state', 'creating', 'size', ARGV[4], 'created', ARGV[8],\n"
	"           'host', ARGV[9])\n"
	"redis.call('ZADD', P .. 'vi:' .. t, 0, name)\n"
	"return {'ok'}\n";

bool redis_volume_add(struct store *s, const char *tenant, const char *name, int64_t size_bytes,
		      int64_t max_count, int64_t max_bytes, int64_t now_ms, struct volume *out,
		      struct fault *f)
{
	struct redis_store *r = s->redis;
	volume_new(name, size_bytes, now_ms, redis_host(r), out);
	struct redis_args a = {0};
	redis_arg_str(&a, tenant);
	redis_arg_str(&a, name);
	redis_arg_int(&a, size_bytes);
	redis_arg_int(&a, max_count);
	redis_arg_int(&a, max_bytes);
	redis_arg_str(&a, out->id);
	redis_arg_int(&a, now_ms);
	redis_arg_str(&a, redis_host(r));
	redisReply *rep = redis_eval(r, "volume add", volume_add_script, &a, f);
	if (!rep)
		return false;
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 1 || rep->element[0]->type != REDIS_REPLY_STRING)
		return redis_bad_reply(rep, "volume add", f);
	const char *what = rep->element[0]->str;
	bool ok = false;
	if (!strcmp(what, "ok"))
		ok = true;
	else if (!strcmp(what, "exists") && rep->elements == 2)
		fail(f, E_VOLUME_EXISTS, "volume %s exists (%s): delete it first, or pick another name",
		     name, rep->element[1]->str);
	else if (!strcmp(what, "quota") && rep->elements == 3)
		volume_quota_holds(tenant, rep->element[1]->integer, strtoll(rep->element[2]->str, NULL, 10),
				   size_bytes, max_count, max_bytes, f);
	else
		return redis_bad_reply(rep, "volume add", f);
	freeReplyObject(rep);
	return ok;
}

/* ARGV: P tenant name from to; from "": any. 1 (changed) or 0 (it was
 * not in state from), then the record as it is now; nil: none. */
static const char volume_state_script[] =
	"local h = ARGV[1] .. 'v:' .. ARGV[2] .. ':' .. ARGV[3]\n"
	"local r = redis.call('HMGET', h, " VOLUME_FIELDS ")\n"
	"if not r[1] then return false end\n"
	"if ARGV[4] ~= '' and r[2] ~= ARGV[4] then return {0, r[1], r[2], r[3], r[4], r[5]} end\n"
	"redis.call('HSET', h, 'state', ARGV[5])\n"
	"return {1, r[1], ARGV[5], r[3], r[4], r[5]}\n";

/* A script's answer {flag, the volume's fields} (nil: no such volume):
 * the flag (0 or 1), or -1 with f set. */
static int flag_and_volume(struct redis_store *r, const char *what, const char *script, struct redis_args *a,
			   const char *name, struct volume *out, struct fault *f)
{
	redisReply *rep = redis_eval(r, what, script, a, f);
	if (!rep)
		return -1;
	if (rep->type == REDIS_REPLY_NIL) {
		freeReplyObject(rep);
		return fail(f, E_VOLUME_NOT_FOUND, "no volume %.64s", name), -1;
	}
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 6 || !read_volume(rep->element + 1, name, out))
		return redis_bad_reply(rep, what, f), -1;
	int flag = rep->element[0]->integer == 1;
	freeReplyObject(rep);
	return flag;
}

bool redis_volume_set_state(struct store *s, const char *tenant, const char *name,
			    const char *from, const char *to, struct volume *out, struct fault *f)
{
	struct redis_store *r = s->redis;
	struct redis_args a = {0};
	redis_arg_str(&a, tenant);
	redis_arg_str(&a, name);
	redis_arg_str(&a, from ? from : "");
	redis_arg_str(&a, to);
	int changed = flag_and_volume(r, "volume state", volume_state_script, &a, name, out, f);
	if (changed < 0)
		return false;
	if (!changed)
		return fail(f, out->state[0] == 'd' ? E_VOLUME_NOT_FOUND : E_VOLUME_BUSY,
			    "volume %s is %s", name, out->state);
	return true;
}

/* ARGV: P tenant. name, then the record's fields, for each, by name. */
static const char volume_list_script[] =
	"local P, t = ARGV[1], ARGV[2]\n"
	"local out = {}\n"
	"for _, n in ipairs(redis.call('ZRANGE', P .. 'vi:' .. t, 0, -1)) do\n"
	"  local r = redis.call('HMGET', P .. 'v:' .. t .. ':' .. n, " VOLUME_FIELDS ")\n"
	"  if r[1] then\n"
	"    table.insert(out, n)\n"
	"    for i = 1, 5 do table.insert(out, r[i] or '') end\n"
	"  end\n"
	"end\n"
	"return out\n";

bool redis_volume_list(struct store *s, const char *tenant, struct volume **out, size_t *n,
		       struct fault *f)
{
	struct redis_store *r = s->redis;
	struct redis_args a = {0};
	redis_arg_str(&a, tenant);
	redisReply *rep = redis_eval(r, "volume list", volume_list_script, &a, f);
	if (!rep)
		return false;
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements % 6)
		return redis_bad_reply(rep, "volume list", f);
	*out = xcalloc(rep->elements / 6 + 1, sizeof **out);
	for (size_t i = 0; i < rep->elements; i += 6) {
		if (rep->element[i]->type == REDIS_REPLY_STRING &&
		    read_volume(rep->element + i + 1, rep->element[i]->str, &(*out)[*n]))
			(*n)++;
	}
	freeReplyObject(rep);
	return true;
}

/* ARGV: P tenant name */
static const char volume_drop_script[] =
	"redis.call('DEL', ARGV[1] .. 'v:' .. ARGV[2] .. ':' .. ARGV[3])\n"
	"redis.call('ZREM', ARGV[1] .. 'vi:' .. ARGV[2], ARGV[3])\n"
	"return 0\n";

bool redis_volume_drop(struct store *s, const char *tenant, const char *name, struct fault *f)
{
	struct redis_store *r = s->redis;
	struct redis_args a = {0};
	redis_arg_str(&a, tenant);
	redis_arg_str(&a, name);
	return redis_run(r, "volume drop", volume_drop_script, &a, f);
}

/*
 * Marks in use (store.h). A mark is a lease: its member in P vu:ID
 * counts until its score, which the host's master renews from the host's
 * own index (P vuh:H); a dead host's marks stop counting by themselves. The
 * index does not expire: a master late for a while renews its marks again
 * from it, rather than lose one that a session still needs.
 */

/* ARGV: P tenant name host owner kind now_ms lease_ms. 1 (marked) or 0
 * (not ready: not marked), then the record as it is; nil: none. */
static const char volume_use_script[] =
	"local P = ARGV[1]\n"
	"local r = redis.call('HMGET', P .. 'v:' .. ARGV[2] .. ':' .. ARGV[3], " VOLUME_FIELDS ")\n"
	"if not r[1] then return false end\n"
	"if r[2] ~= 'ready' then return {0, r[1], r[2], r[3], r[4], r[5]} end\n"
	"redis.call('ZADD', P .. 'vu:' .. r[1], tonumber(ARGV[7]) + tonumber(ARGV[8]), ARGV[4] .. ' ' .. ARGV[5])\n"
	"redis.call('HSET', P .. 'vuh:' .. ARGV[4], ARGV[5] .. ' ' .. r[1], ARGV[6] .. ' ' .. ARGV[7])\n"
	"return {1, r[1], r[2], r[3], r[4], r[5]}\n";

bool redis_volume_use(struct store *s, const char *tenant, const char *name, enum volume_user by,
		      const char *owner, int64_t now_ms, struct volume *out, struct fault *f)
{
	struct redis_store *r = s->redis;
	const char kind[2] = {(char)by, '\0'};
	struct redis_args a = {0};
	redis_arg_str(&a, tenant);
	redis_arg_str(&a, name);
	redis_arg_str(&a, redis_host(r));
	redis_arg_str(&a, owner);
	redis_arg_str(&a, kind);
	redis_arg_int(&a, now_ms);
	redis_arg_int(&a, STORE_LEASE_MS);
	int marked = flag_and_volume(r, "volume use", volume_use_script, &a, name, out, f);
	if (marked == 0)
		volume_ready(out, f); /* it is not: the fault says how */
	return marked == 1;
}

/* ARGV: P host owner. Its marks' fields begin "owner ". */
static const char volume_release_script[] =
	"local P, host, mine = ARGV[1], ARGV[2], ARGV[3] .. ' '\n"
	"local hi = P .. 'vuh:' .. host\n"
	"for _, k in ipairs(redis.call('HKEYS', hi)) do\n"
	"  if string.sub(k, 1, #mine) == mine then\n"
	"    redis.call('ZREM', P .. 'vu:' .. string.sub(k, #mine + 1), host .. ' ' .. ARGV[3])\n"
	"    redis.call('HDEL', hi, k)\n"
	"  end\n"
	"end\n"
	"return 0\n";

bool redis_volume_release(struct store *s, const char *owner)
{
	struct redis_store *r = s->redis;
	struct redis_args a = {0};
	struct fault ignored = {0}; /* logged */
	redis_arg_str(&a, redis_host(r));
	redis_arg_str(&a, owner);
	return redis_run(r, "volume release", volume_release_script, &a, &ignored);
}

/* ARGV: P tenant name now_ms host owner lease_ms. 1 (now deleting, and
 * marked by owner) or 0 (in use), the marks that counted, then the record;
 * nil: none. */
static const char volume_delete_script[] =
	"local P, now = ARGV[1], tonumber(ARGV[4])\n"
	"local h = P .. 'v:' .. ARGV[2] .. ':' .. ARGV[3]\n"
	"local r = redis.call('HMGET', h, " VOLUME_FIELDS ")\n"
	"if not r[1] then return false end\n"
	"local z = P .. 'vu:' .. r[1]\n"
	"redis.call('ZREMRANGEBYSCORE', z, '-inf', now)\n"
	"local n = redis.call('ZCARD', z)\n"
	"if n > 0 then return {0, n, r[1], r[2], r[3], r[4], r[5]} end\n"
	"redis.call('HSET', h, 'state', 'deleting')\n"
	"redis.call('ZADD', z, now + tonumber(ARGV[7]), ARGV[5] .. ' ' .. ARGV[6])\n"
	"redis.call('HSET', P .. 'vuh:' .. ARGV[5], ARGV[6] .. ' ' .. r[1], 'w ' .. ARGV[4])\n"
	"return {1, 0, r[1], 'deleting', r[3], r[4], r[5]}\n";

bool redis_volume_delete_begin(struct store *s, const char *tenant, const char *name, const char *owner,
			       int64_t now_ms, struct volume *out, struct fault *f)
{
	struct redis_store *r = s->redis;
	_Static_assert(VOLUME_BY_WORKER == 'w', "the deleter's mark in the script");
	struct redis_args a = {0};
	redis_arg_str(&a, tenant);
	redis_arg_str(&a, name);
	redis_arg_int(&a, now_ms);
	redis_arg_str(&a, redis_host(r));
	redis_arg_str(&a, owner);
	redis_arg_int(&a, STORE_LEASE_MS);
	redisReply *rep = redis_eval(r, "volume delete", volume_delete_script, &a, f);
	if (!rep)
		return false;
	if (rep->type == REDIS_REPLY_NIL) {
		freeReplyObject(rep);
		return fail(f, E_VOLUME_NOT_FOUND, "no volume %.64s", name);
	}
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 7 || rep->element[1]->type != REDIS_REPLY_INTEGER ||
	    !read_volume(rep->element + 2, name, out))
		return redis_bad_reply(rep, "volume delete", f);
	int64_t users = rep->element[1]->integer;
	freeReplyObject(rep);
	return volume_unused(out, users, f);
}

/* ARGV: P host now_ms lease_ms, then "field\tvalue\n" of each mark over:
 * each is forgotten if it is still as judged; every other mark of the host
 * is renewed (one made since the look too). */
static const char volume_keep_script[] =
	"local P, host, now, lease = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])\n"
	"local hi = P .. 'vuh:' .. host\n"
	"for k, v in string.gmatch(ARGV[5], '([^\\t\\n]+)\\t([^\\n]+)\\n') do\n"
	"  if redis.call('HGET', hi, k) == v then\n"
	"    local owner, id = string.match(k, '^(%S+) (%S+)$')\n"
	"    redis.call('ZREM', P .. 'vu:' .. id, host .. ' ' .. owner)\n"
	"    redis.call('HDEL', hi, k)\n"
	"  end\n"
	"end\n"
	"for _, k in ipairs(redis.call('HKEYS', hi)) do\n"
	"  local owner, id = string.match(k, '^(%S+) (%S+)$')\n"
	"  redis.call('ZADD', P .. 'vu:' .. id, now + lease, host .. ' ' .. owner)\n"
	"end\n"
	"return 0\n";

void redis_volume_uses_keep(struct store *s, const struct strv *sessions, int64_t now_ms)
{
	struct redis_store *r = s->redis;
	struct fault ignored = {0};
	autofree char *index = xasprintf("%svuh:%s", redis_prefix(r), redis_host(r));
	redisReply *rep = redis_cmd(r, "volume uses", &ignored, 2, "HGETALL", index);
	if (!rep)
		return;
	struct buf over = {0};
	for (size_t i = 0; rep->type == REDIS_REPLY_ARRAY && i + 1 < rep->elements; i += 2) {
		const char *field = rep->element[i]->str, *value = rep->element[i + 1]->str;
		char owner[96], kind[2];
		long long since;
		if (!field || !value || sscanf(field, "%95s", owner) != 1 ||
		    sscanf(value, "%1s %lld", kind, &since) != 2)
			continue;
		if (volume_use_over(kind[0], owner, since, sessions, now_ms)) {
			buf_printf(&over, "%s\t%s\n", field, value);
			log_msg("volume mark %s forgotten: its user is gone", field);
		}
	}
	freeReplyObject(rep);
	struct redis_args a = {0};
	redis_arg_str(&a, redis_host(r));
	redis_arg_int(&a, now_ms);
	redis_arg_int(&a, STORE_LEASE_MS);
	redis_arg(&a, over.len ? over.data : "", over.len);
	redis_run(r, "volume uses keep", volume_keep_script, &a, &ignored);
	buf_free(&over);
}
