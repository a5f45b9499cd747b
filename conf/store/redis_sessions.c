/*
 * redis_sessions.c: the claims of open sessions in Redis
 * (redis_sessions.h). Like running claims, they are leases: the
 * sessions' host renews them (store_sessions_keep) and a dead host's
 * claims stop counting when their lease runs out.
 */
#define _GNU_SOURCE
#include "redis_sessions.h"
#include "backend.h"
#include "store.h"
#include "rules.h"

#include <hiredis/hiredis.h>
#include <string.h>

/* ARGV: P tenant now_ms id memory max_sessions max_memory host lease_ms.
 * {1 or 0 (claimed or not), count, held} before this one. */
static const char claim_script[] =
	"local P, t, now = ARGV[1], ARGV[2], tonumber(ARGV[3])\n"
	"local z, m = P .. 'sess:' .. t, P .. 'sessm:' .. t\n"
	"for _, id in ipairs(redis.call('ZRANGEBYSCORE', z, '-inf', now)) do redis.call('HDEL', m, id) end\n"
	"redis.call('ZREMRANGEBYSCORE', z, '-inf', now)\n"
	"local n, held = redis.call('ZCARD', z), 0\n"
	"for _, v in ipairs(redis.call('HVALS', m)) do held = held + tonumber(v) end\n"
	"local mem, ms, mm = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])\n"
	"if (ms > 0 and n >= ms) or (mm > 0 and held + mem > mm) then return {0, n, held} end\n"
	"redis.call('ZADD', z, now + tonumber(ARGV[9]), ARGV[4])\n"
	"redis.call('HSET', m, ARGV[4], ARGV[5])\n"
	"local hs = P .. 'hsess:' .. ARGV[8]\n"
	"redis.call('HSET', hs, ARGV[4], t .. ' ' .. ARGV[3])\n"
	"redis.call('PEXPIRE', hs, ARGV[9])\n"
	"return {1, n, held}\n";

bool redis_session_claim(struct store *s, const char *tenant, const char *id, int64_t memory_bytes,
			 int64_t max_sessions, int64_t max_memory, int64_t now_ms, struct fault *f)
{
	struct redis_store *r = s->redis;
	struct redis_args a = {0};
	redis_arg_str(&a, tenant);
	redis_arg_int(&a, now_ms);
	redis_arg_str(&a, id);
	redis_arg_int(&a, memory_bytes);
	redis_arg_int(&a, max_sessions);
	redis_arg_int(&a, max_memory);
	redis_arg_str(&a, redis_host(r));
	redis_arg_int(&a, STORE_LEASE_MS);
	redisReply *rep = redis_eval(r, "session claim", claim_script, &a, f);
	if (!rep)
		return false;
	bool shaped = rep->type == REDIS_REPLY_ARRAY && rep->elements == 3;
	for (size_t i = 0; shaped && i < 3; i++)
		shaped = rep->element[i]->type == REDIS_REPLY_INTEGER;
	if (!shaped)
		return redis_bad_reply(rep, "session claim", f);
	bool claimed = rep->element[0]->integer == 1;
	if (!claimed)
		session_quota_holds(tenant, rep->element[1]->integer, rep->element[2]->integer, memory_bytes,
				    max_sessions, max_memory, f);
	freeReplyObject(rep);
	return claimed;
}

/* ARGV: P host id grace_ms. It stops counting at once; a mark stays for
 * the grace, so that an upkeep that listed it before does not bring it
 * back (sqlite_sessions.c). */
static const char release_script[] =
	"local hs = ARGV[1] .. 'hsess:' .. ARGV[2]\n"
	"local v = redis.call('HGET', hs, ARGV[3])\n"
	"if v then\n"
	"  local t = string.match(v, '^(%S+)')\n"
	"  redis.call('ZREM', ARGV[1] .. 'sess:' .. t, ARGV[3])\n"
	"  redis.call('HDEL', ARGV[1] .. 'sessm:' .. t, ARGV[3])\n"
	"  redis.call('HDEL', hs, ARGV[3])\n"
	"end\n"
	"redis.call('SET', ARGV[1] .. 'sessgone:' .. ARGV[3], '1', 'PX', ARGV[4])\n"
	"return 0\n";

void redis_session_release(struct store *s, const char *id, int64_t now_ms)
{
	(void)now_ms; /* a release is marked by the server's clock, which its expiry counts in */
	struct redis_store *r = s->redis;
	struct redis_args a = {0};
	struct fault ignored = {0}; /* logged; the upkeep drops it anyway */
	redis_arg_str(&a, redis_host(r));
	redis_arg_str(&a, id);
	redis_arg_int(&a, STORE_SESSION_GRACE_MS);
	redis_run(r, "session release", release_script, &a, &ignored);
}

/* ARGV: P host now_ms lease_ms grace_ms, then "id tenant memory" lines.
 * As in sqlite_sessions.c: a released one is not brought back, and one not
 * listed goes only when older than the grace. */
static const char keep_script[] =
	"local P, now, lease, grace = ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])\n"
	"local hs = P .. 'hsess:' .. ARGV[2]\n"
	"local alive = {}\n"
	"for id, t, mem in string.gmatch(ARGV[6], '(%S+) (%S+) (%S+)\\n') do\n"
	"  if redis.call('EXISTS', P .. 'sessgone:' .. id) == 0 then\n"
	"    alive[id] = true\n"
	"    redis.call('ZADD', P .. 'sess:' .. t, now + lease, id)\n"
	"    redis.call('HSET', P .. 'sessm:' .. t, id, mem)\n"
	"    if redis.call('HEXISTS', hs, id) == 0 then redis.call('HSET', hs, id, t .. ' ' .. ARGV[3]) end\n"
	"  end\n"
	"end\n"
	"local all = redis.call('HGETALL', hs)\n"
	"for i = 1, #all, 2 do\n"
	"  local id = all[i]\n"
	"  local t, since = string.match(all[i + 1], '^(%S+) ?(%d*)$')\n"
	"  if not alive[id] then\n"
	"    if now - (tonumber(since) or 0) > grace then\n"
	"      redis.call('ZREM', P .. 'sess:' .. t, id)\n"
	"      redis.call('HDEL', P .. 'sessm:' .. t, id)\n"
	"      redis.call('HDEL', hs, id)\n"
	"    else\n"
	"      redis.call('ZADD', P .. 'sess:' .. t, 'XX', now + lease, id)\n"
	"    end\n"
	"  end\n"
	"end\n"
	"if #all > 0 then redis.call('PEXPIRE', hs, lease) end\n"
	"return 0\n";

void redis_sessions_keep(struct store *s, const struct session_claim *alive, size_t n, int64_t now_ms)
{
	struct redis_store *r = s->redis;
	struct buf list = {0};
	for (size_t i = 0; i < n; i++)
		buf_printf(&list, "%s %s %lld\n", alive[i].id, alive[i].tenant, (long long)alive[i].memory_bytes);
	struct redis_args a = {0};
	struct fault ignored = {0};
	redis_arg_str(&a, redis_host(r));
	redis_arg_int(&a, now_ms);
	redis_arg_int(&a, STORE_LEASE_MS);
	redis_arg_int(&a, STORE_SESSION_GRACE_MS);
	redis_arg(&a, list.len ? list.data : "", list.len);
	redis_run(r, "sessions keep", keep_script, &a, &ignored);
	buf_free(&list);
}
