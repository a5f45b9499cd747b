/*
 * redis_memory.c: the tenants' memory (store.h) in Redis
 * (key layout in redis.h): a hash per key, a sorted set of each
 * tenant's keys for listings by prefix, a sorted set of its expiring keys,
 * and its usage, kept by the same scripts that write, so that a quota
 * check costs no scan.
 *
 * Expiry is ours, not Redis's (PEXPIRE would drop a value but not its
 * place in the index and the usage): a value past its time is invisible
 * at once, and removed by the next write of its tenant or by the master's
 * upkeep (redis_memory_expire), whichever comes first.
 */
#define _GNU_SOURCE
#include "redis_memory.h"
#include "backend.h"
#include "rules.h"

#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The scripts' common start: ARGV[1] P, ARGV[2] tenant, ARGV[3] now_ms;
 * purge(t) removes t's values past their time. */
#define PRELUDE                                                                              \
	"local P, T, NOW = ARGV[1], ARGV[2], tonumber(ARGV[3])\n"                              \
	"local function item(t, k) return P .. 'm:' .. t .. ':' .. k end\n"                   \
	"local function purge(t)\n"                                                           \
	"  local mx = P .. 'mx:' .. t\n"                                                       \
	"  local gone = redis.call('ZRANGEBYSCORE', mx, '-inf', NOW, 'LIMIT', 0, 1000)\n"     \
	"  local bytes = 0\n"                                                                 \
	"  for _, k in ipairs(gone) do\n"                                                     \
	"    bytes = bytes + tonumber(redis.call('HGET', item(t, k), 'size') or 0) + #k\n"    \
	"    redis.call('DEL', item(t, k))\n"                                                 \
	"    redis.call('ZREM', P .. 'mi:' .. t, k)\n"                                        \
	"    redis.call('ZREM', mx, k)\n"                                                     \
	"  end\n"                                                                             \
	"  if #gone > 0 then\n"                                                               \
	"    redis.call('HINCRBY', P .. 'mu:' .. t, 'bytes', -bytes)\n"                        \
	"    redis.call('HINCRBY', P .. 'mu:' .. t, 'keys', -#gone)\n"                         \
	"  end\n"                                                                             \
	"  if redis.call('ZCARD', mx) == 0 then redis.call('SREM', P .. 'mxt', t) end\n"      \
	"  return #gone\n"                                                                    \
	"end\n"                                                                               \
	"local function live(exp) exp = tonumber(exp or 0); return exp == 0 or exp > NOW end\n"

static void args_start(struct redis_args *a, const char *tenant, int64_t now_ms)
{
	*a = (struct redis_args){0};
	redis_arg_str(a, tenant);
	redis_arg_int(a, now_ms);
}

static bool all_strings(const redisReply *rep, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (rep->element[i]->type != REDIS_REPLY_STRING)
			return false;
	return true;
}

/* Fields ct etag size up exp at el into it. */
static void read_meta(redisReply **el, struct memory_item *it)
{
	snprintf(it->content_type, sizeof it->content_type, "%s", el[0]->str);
	snprintf(it->etag, sizeof it->etag, "%s", el[1]->str);
	it->size = strtoll(el[2]->str, NULL, 10);
	it->updated_ms = strtoll(el[3]->str, NULL, 10);
	it->expires_ms = strtoll(el[4]->str, NULL, 10);
}

/* ARGV 4: key. Its value and metadata, or nil. */
static const char get_script[] = PRELUDE
	"local r = redis.call('HMGET', item(T, ARGV[4]), 'v', 'ct', 'etag', 'size', 'up', 'exp')\n"
	"if not r[1] or not live(r[6]) then return false end\n"
	"return r\n";

bool redis_memory_get(struct store *s, const char *tenant, const char *key, int64_t now_ms,
		      struct memory_item *out, struct fault *f)
{
	struct redis_store *r = s->redis;
	struct redis_args a;
	args_start(&a, tenant, now_ms);
	redis_arg_str(&a, key);
	redisReply *rep = redis_eval(r, "memory get", get_script, &a, f);
	if (!rep)
		return false;
	if (rep->type == REDIS_REPLY_NIL) {
		freeReplyObject(rep);
		return fail(f, E_KEY_NOT_FOUND, "no key %.100s", key);
	}
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 6 || !all_strings(rep, 0, 6))
		return redis_bad_reply(rep, "memory get", f);
	out->key = xstrdup(key);
	buf_append(&out->value, rep->element[0]->str, rep->element[0]->len);
	read_meta(rep->element + 1, out);
	freeReplyObject(rep);
	return true;
}

static const char *cond_name(enum memory_cond cond)
{
	switch (cond) {
	case MEMORY_IF_MATCH:
		return "match";
	case MEMORY_IF_EXISTS:
		return "exists";
	case MEMORY_IF_ABSENT:
		return "absent";
	case MEMORY_ANY:
		break;
	}
	return "any";
}

/* Checks a condition (ARGV 5 cond, 6 etag) on what is at item h, a value
 * past its time being absent (purge takes at most 1000 a call); returns
 * {"cond", found, etag} from the script when it fails. */
#define CURRENT                                                                               \
	"local cur = redis.call('HMGET', h, 'etag', 'size', 'exp')\n"                            \
	"local found = cur[1] and live(cur[3]) and true or false\n"                             \
	"local etag, cond = found and cur[1] or '', ARGV[5]\n"
#define CONDITION                                                                             \
	"if (cond == 'exists' and not found) or (cond == 'absent' and found) or\n"              \
	"   (cond == 'match' and (not found or etag ~= ARGV[6])) then\n"                       \
	"  return {'cond', found and 1 or 0, etag}\n"                                            \
	"end\n"

/* ARGV 4 key, 5 cond, 6 etag, 7 value, 8 content type, 9 expires_ms (0:
 * never), 10 quota bytes, 11 quota keys, 12 new etag. {"ok", created},
 * {"cond", found, etag} or {"quota", bytes, keys}. */
static const char put_script[] = PRELUDE
	"purge(T)\n"
	"local k = ARGV[4]\n"
	"local h = item(T, k)\n"
	CURRENT
	CONDITION
	"local u = redis.call('HMGET', P .. 'mu:' .. T, 'bytes', 'keys')\n"
	"local bytes, keys, len = tonumber(u[1] or 0), tonumber(u[2] or 0), #ARGV[7]\n"
	"-- A value still stored (even expired) is replaced: its bytes go.\n"
	"if cur[1] then bytes = bytes + len - tonumber(cur[2]) else bytes = bytes + len + #k; keys = keys + 1 end\n"
	"local qb, qk = tonumber(ARGV[10]), tonumber(ARGV[11])\n"
	"if (qb > 0 and bytes > qb) or (qk > 0 and keys > qk) then return {'quota', bytes, keys} end\n"
	"redis.call('HSET', h, 'v', ARGV[7], 'ct', ARGV[8], 'etag', ARGV[12], 'size', len, 'up', ARGV[3],\n"
	"           'exp', ARGV[9])\n"
	"redis.call('ZADD', P .. 'mi:' .. T, 0, k)\n"
	"redis.call('HSET', P .. 'mu:' .. T, 'bytes', bytes, 'keys', keys)\n"
	"if tonumber(ARGV[9]) > 0 then\n"
	"  redis.call('ZADD', P .. 'mx:' .. T, ARGV[9], k)\n"
	"  redis.call('SADD', P .. 'mxt', T)\n"
	"else\n"
	"  redis.call('ZREM', P .. 'mx:' .. T, k)\n"
	"end\n"
	"return {'ok', found and 0 or 1}\n";

/* A write's refusal, as sqlite_memory.c words it. */
static bool refused(const redisReply *rep, const char *key, enum memory_cond cond, const char *etag,
		    const struct memory_quota *q, struct fault *f)
{
	const char *what = rep->element[0]->str;
	if (!strcmp(what, "cond") && rep->elements == 3 && rep->element[2]->type == REDIS_REPLY_STRING)
		return memory_condition_holds(key, rep->element[1]->integer, rep->element[2]->str, cond, etag, f);
	if (!strcmp(what, "quota") && rep->elements == 3)
		return memory_quota_holds(q, rep->element[1]->integer, rep->element[2]->integer, f);
	if (!strcmp(what, "absent"))
		return fail(f, E_KEY_NOT_FOUND, "no key %.100s", key);
	return fail(f, E_STORE_UNAVAILABLE, "the store failed (memory): unexpected reply");
}

bool redis_memory_put(struct store *s, const char *tenant, const char *key, const void *value,
		      size_t len, const char *content_type, int64_t ttl_ms, enum memory_cond cond,
		      const char *etag, const struct memory_quota *q, int64_t now_ms, bool *created,
		      char etag_out[17], struct fault *f)
{
	struct redis_store *r = s->redis;
	struct redis_args a;
	args_start(&a, tenant, now_ms);
	memory_new_etag(etag_out);
	redis_arg_str(&a, key);
	redis_arg_str(&a, cond_name(cond));
	redis_arg_str(&a, etag ? etag : "");
	redis_arg(&a, len ? value : "", len);
	redis_arg_str(&a, content_type);
	redis_arg_int(&a, ttl_ms > 0 ? now_ms + ttl_ms : 0);
	redis_arg_int(&a, q->bytes);
	redis_arg_int(&a, q->keys);
	redis_arg_str(&a, etag_out);
	redisReply *rep = redis_eval(r, "memory put", put_script, &a, f);
	if (!rep)
		return false;
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 2 || rep->element[0]->type != REDIS_REPLY_STRING)
		return redis_bad_reply(rep, "memory put", f);
	bool ok = !strcmp(rep->element[0]->str, "ok");
	if (ok)
		*created = rep->element[1]->integer == 1;
	else
		refused(rep, key, cond, etag, q, f);
	freeReplyObject(rep);
	return ok;
}

/* ARGV 4 key, 5 cond, 6 etag. {"ok"}, {"absent"} or {"cond", ...}. */
static const char delete_script[] = PRELUDE
	"purge(T)\n"
	"local k = ARGV[4]\n"
	"local h = item(T, k)\n"
	CURRENT
	"if not found then return {'absent'} end\n"
	CONDITION
	"redis.call('DEL', h)\n"
	"redis.call('ZREM', P .. 'mi:' .. T, k)\n"
	"redis.call('ZREM', P .. 'mx:' .. T, k)\n"
	"redis.call('HINCRBY', P .. 'mu:' .. T, 'bytes', -(tonumber(cur[2]) + #k))\n"
	"redis.call('HINCRBY', P .. 'mu:' .. T, 'keys', -1)\n"
	"return {'ok'}\n";

bool redis_memory_delete(struct store *s, const char *tenant, const char *key,
			 enum memory_cond cond, const char *etag, int64_t now_ms, struct fault *f)
{
	struct redis_store *r = s->redis;
	struct redis_args a;
	args_start(&a, tenant, now_ms);
	redis_arg_str(&a, key);
	redis_arg_str(&a, cond_name(cond));
	redis_arg_str(&a, etag ? etag : "");
	redisReply *rep = redis_eval(r, "memory delete", delete_script, &a, f);
	if (!rep)
		return false;
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 1 || rep->element[0]->type != REDIS_REPLY_STRING)
		return redis_bad_reply(rep, "memory delete", f);
	bool ok = !strcmp(rep->element[0]->str, "ok");
	if (!ok)
		refused(rep, key, cond, etag, NULL, f);
	freeReplyObject(rep);
	return ok;
}

/* ARGV 4 min, 5 max (ZRANGEBYLEX bounds), 6 how many. Key, then ct etag
 * size up exp, for each live key in order. */
static const char list_script[] = PRELUDE
	"local out, n, off, want = {}, 0, 0, tonumber(ARGV[6])\n"
	"while n < want do\n"
	"  local ks = redis.call('ZRANGEBYLEX', P .. 'mi:' .. T, ARGV[4], ARGV[5], 'LIMIT', off, want)\n"
	"  if #ks == 0 then break end\n"
	"  off = off + #ks\n"
	"  for _, k in ipairs(ks) do\n"
	"    local r = redis.call('HMGET', item(T, k), 'ct', 'etag', 'size', 'up', 'exp')\n"
	"    if r[1] and live(r[5]) and n < want then\n"
	"      table.insert(out, k)\n"
	"      for i = 1, 5 do table.insert(out, r[i]) end\n"
	"      n = n + 1\n"
	"    end\n"
	"  end\n"
	"end\n"
	"return out\n";

bool redis_memory_list(struct store *s, const char *tenant, const char *prefix, const char *after,
		       int64_t limit, int64_t now_ms, struct memory_item **out, size_t *n, bool *more,
		       struct fault *f)
{
	struct redis_store *r = s->redis;
	/* key >= prefix and key > after; key < the end of the prefix. */
	size_t plen = strlen(prefix), end_len;
	autofree char *min = xasprintf(strcmp(after, prefix) >= 0 && *after ? "(%s" : "[%s",
				       strcmp(after, prefix) >= 0 && *after ? after : prefix);
	autofree char *max = xmalloc(plen + 2);
	max[0] = '(';
	if (!memory_prefix_end(prefix, max + 1, &end_len)) {
		max[0] = '+';
		end_len = 0;
	}
	struct redis_args a;
	args_start(&a, tenant, now_ms);
	redis_arg_str(&a, min);
	redis_arg(&a, max, end_len + 1);
	redis_arg_int(&a, limit + 1);
	redisReply *rep = redis_eval(r, "memory list", list_script, &a, f);
	if (!rep)
		return false;
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements % 6 || !all_strings(rep, 0, rep->elements))
		return redis_bad_reply(rep, "memory list", f);
	size_t count = rep->elements / 6;
	if ((int64_t)count > limit) {
		*more = true;
		count = (size_t)limit;
	}
	*out = xcalloc(count + 1, sizeof **out);
	for (size_t i = 0; i < count; i++) {
		struct memory_item *it = &(*out)[i];
		it->key = xstrndup(rep->element[6 * i]->str, rep->element[6 * i]->len);
		read_meta(rep->element + 6 * i + 1, it);
	}
	*n = count;
	freeReplyObject(rep);
	return true;
}

static const char usage_script[] = PRELUDE
	"purge(T)\n"
	"local u = redis.call('HMGET', P .. 'mu:' .. T, 'bytes', 'keys')\n"
	"return {tonumber(u[1] or 0), tonumber(u[2] or 0)}\n";

bool redis_memory_usage(struct store *s, const char *tenant, int64_t now_ms, int64_t *bytes,
			int64_t *keys, struct fault *f)
{
	struct redis_store *r = s->redis;
	struct redis_args a;
	args_start(&a, tenant, now_ms);
	redisReply *rep = redis_eval(r, "memory usage", usage_script, &a, f);
	if (!rep)
		return false;
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2)
		return redis_bad_reply(rep, "memory usage", f);
	*bytes = rep->element[0]->integer;
	*keys = rep->element[1]->integer;
	freeReplyObject(rep);
	return true;
}

/* ARGV 2 is unused: every tenant with expiring keys. */
static const char expire_script[] = PRELUDE
	"local n = 0\n"
	"for _, t in ipairs(redis.call('SMEMBERS', P .. 'mxt')) do n = n + purge(t) end\n"
	"return n\n";

int64_t redis_memory_expire(struct store *s, int64_t now_ms)
{
	struct redis_store *r = s->redis;
	struct redis_args a;
	struct fault ignored = {0};
	args_start(&a, "", now_ms);
	redisReply *rep = redis_eval(r, "memory expiry", expire_script, &a, &ignored);
	if (!rep)
		return 0;
	int64_t n = rep->type == REDIS_REPLY_INTEGER ? rep->integer : 0;
	freeReplyObject(rep);
	return n;
}
