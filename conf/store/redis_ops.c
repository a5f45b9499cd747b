/*
 * redis_ops.c: the Redis backend's table of operations (backend.h), and
 * the operations of its own: the tenants' rates, running claims and
 * hosts' lives.
 *
 * Running claims are leases: a claim is dropped by its worker when its run
 * ends, by its master when the worker dies, and, when the whole host dies,
 * by Redis's clock: its master renews them every few seconds and a claim
 * not renewed for STORE_LEASE_MS is no longer counted.
 */
#define _GNU_SOURCE
#include "backend.h"
#include "redis.h"
#include "redis_memory.h"
#include "redis_sessions.h"
#include "redis_volumes.h"
#include "rules.h"

#include <hiredis/hiredis.h>
#include <stdlib.h>

static bool redis_ping(struct store *s, struct fault *f)
{
	struct redis_store *r = s->redis;
	redisReply *rep = redis_cmd(r, "ping", f, 1, "PING");
	if (rep)
		freeReplyObject(rep);
	return rep != NULL;
}

/* An integer reply, freed; false if it was not one (f says). */
static bool integer(redisReply *rep, const char *what, int64_t *out, struct fault *f)
{
	if (!rep)
		return false;
	if (rep->type != REDIS_REPLY_INTEGER)
		return redis_bad_reply(rep, what, f);
	*out = rep->integer;
	freeReplyObject(rep);
	return true;
}

/* GCRA, as in sqlite_ops.c, in microseconds. ARGV: P tenant now_ms per_minute.
 * 0: allowed; else the seconds to wait. */
static const char rate_script[] =
	"local k = ARGV[1] .. 'rate:' .. ARGV[2]\n"
	"local now = tonumber(ARGV[3]) * 1000\n"
	"local interval = math.floor(60000000 / tonumber(ARGV[4]))\n"
	"local burst = 60000000 - interval\n"
	"local tat = tonumber(redis.call('GET', k) or now)\n"
	"if tat < now then tat = now end\n"
	"if tat - now > burst then return math.max(1, math.ceil((tat - now - burst) / 1000000)) end\n"
	"redis.call('SET', k, string.format('%.0f', tat + interval), 'PX',\n"
	"           string.format('%.0f', math.floor((tat + interval - now) / 1000) + 1000))\n"
	"return 0\n";

static bool redis_rate_take(struct store *s, const char *tenant, int64_t per_minute, int64_t now_ms,
			    bool *allowed, int64_t *retry_after_s, struct fault *f)
{
	struct redis_store *r = s->redis;
	struct redis_args a = {0};
	redis_arg_str(&a, tenant);
	redis_arg_int(&a, now_ms);
	redis_arg_int(&a, per_minute);
	int64_t wait = 0;
	if (!integer(redis_eval(r, "rate", rate_script, &a, f), "rate", &wait, f))
		return false;
	*allowed = wait == 0;
	*retry_after_s = wait;
	return true;
}

/* ARGV: P tenant now_ms limit host pid lease_ms. The claim's id, or 0. */
static const char claim_script[] =
	"local P, t, now = ARGV[1], ARGV[2], tonumber(ARGV[3])\n"
	"local z = P .. 'run:' .. t\n"
	"redis.call('ZREMRANGEBYSCORE', z, '-inf', now)\n"
	"local limit = tonumber(ARGV[4])\n"
	"if limit > 0 and redis.call('ZCARD', z) >= limit then return 0 end\n"
	"local id = redis.call('INCR', P .. 'run-seq')\n"
	"redis.call('ZADD', z, now + tonumber(ARGV[7]), id)\n"
	"local hc = P .. 'claims:' .. ARGV[5]\n"
	"redis.call('HSET', hc, id, ARGV[6] .. ' ' .. t .. ' ' .. ARGV[3])\n"
	"redis.call('PEXPIRE', hc, ARGV[7])\n"
	"return id\n";

static bool redis_running_claim(struct store *s, const char *tenant, int64_t limit, int pid,
				int64_t now_ms, int64_t *claim, struct fault *f)
{
	struct redis_store *r = s->redis;
	struct redis_args a = {0};
	redis_arg_str(&a, tenant);
	redis_arg_int(&a, now_ms);
	redis_arg_int(&a, limit);
	redis_arg_str(&a, redis_host(r));
	redis_arg_int(&a, pid);
	redis_arg_int(&a, STORE_LEASE_MS);
	return integer(redis_eval(r, "running", claim_script, &a, f), "running", claim, f);
}

/* ARGV: P host id */
static const char release_script[] =
	"local hc = ARGV[1] .. 'claims:' .. ARGV[2]\n"
	"local v = redis.call('HGET', hc, ARGV[3])\n"
	"if v then\n"
	"  redis.call('ZREM', ARGV[1] .. 'run:' .. string.match(v, '^%S+ (%S+)'), ARGV[3])\n"
	"  redis.call('HDEL', hc, ARGV[3])\n"
	"end\n"
	"return 0\n";

static void redis_running_release(struct store *s, int64_t claim)
{
	struct redis_store *r = s->redis;
	struct redis_args a = {0};
	struct fault ignored = {0}; /* logged; the lease ends it anyway */
	redis_arg_str(&a, redis_host(r));
	redis_arg_int(&a, claim);
	redis_run(r, "release", release_script, &a, &ignored);
}

static size_t redis_running_pids(struct redis_store *r, int *pids, size_t max)
{
	autofree char *key = xasprintf("%sclaims:%s", redis_prefix(r), redis_host(r));
	size_t n = 0;
	struct fault ignored = {0};
	redisReply *rep = redis_cmd(r, "claims", &ignored, 2, "HVALS", key);
	if (!rep)
		return 0;
	for (size_t i = 0; rep->type == REDIS_REPLY_ARRAY && i < rep->elements && n < max; i++)
		if (rep->element[i]->type == REDIS_REPLY_STRING)
			pids[n++] = atoi(rep->element[i]->str);
	freeReplyObject(rep);
	return n;
}

/* ARGV: P host now_ms lease_ms max_age_ms dead-pid... A claim older than
 * max_age_ms is dropped too: no run holds one that long, so it is one whose
 * release was lost (Redis away when the run ended, an answer that never
 * came), and its worker, alive, would otherwise renew it forever. */
static const char upkeep_script[] =
	"local P, host, now, lease = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])\n"
	"local hc = P .. 'claims:' .. host\n"
	"local dead = {}\n"
	"for i = 6, #ARGV do dead[ARGV[i]] = true end\n"
	"local all = redis.call('HGETALL', hc)\n"
	"for i = 1, #all, 2 do\n"
	"  local pid, t, since = string.match(all[i + 1], '^(%S+) (%S+) ?(%d*)$')\n"
	"  if dead[pid] or now - (tonumber(since) or 0) > tonumber(ARGV[5]) then\n"
	"    redis.call('ZREM', P .. 'run:' .. t, all[i])\n"
	"    redis.call('HDEL', hc, all[i])\n"
	"  else\n"
	"    redis.call('ZADD', P .. 'run:' .. t, 'XX', now + lease, all[i])\n"
	"  end\n"
	"end\n"
	"if #all > 0 then redis.call('PEXPIRE', hc, lease) end\n"
	"redis.call('SET', P .. 'host:' .. host, ARGV[3], 'PX', lease)\n"
	"redis.call('ZADD', P .. 'hosts', now + lease, host)\n"
	"redis.call('ZREMRANGEBYSCORE', P .. 'hosts', '-inf', now)\n"
	"return 0\n";

static void redis_running_upkeep(struct redis_store *r, const int *dead, size_t n_dead, int64_t now_ms)
{
	struct redis_args a = {0};
	struct fault ignored = {0};
	redis_arg_str(&a, redis_host(r));
	redis_arg_int(&a, now_ms);
	redis_arg_int(&a, STORE_LEASE_MS);
	redis_arg_int(&a, STORE_CLAIM_MAX_MS);
	for (size_t i = 0; i < n_dead && a.n < REDIS_MAX_ARGS; i++)
		redis_arg_int(&a, dead[i]);
	redis_run(r, "upkeep", upkeep_script, &a, &ignored);
}

/* ARGV: P tenant now_ms */
static const char count_script[] =
	"return redis.call('ZCOUNT', ARGV[1] .. 'run:' .. ARGV[2], '(' .. ARGV[3], '+inf')\n";

static int64_t redis_running_count(struct store *s, const char *tenant, int64_t now_ms)
{
	struct redis_store *r = s->redis;
	struct redis_args a = {0};
	struct fault ignored = {0};
	redis_arg_str(&a, tenant);
	redis_arg_int(&a, now_ms);
	int64_t n = 0;
	integer(redis_eval(r, "count", count_script, &a, &ignored), "count", &n, &ignored);
	return n;
}

/* ARGV: P host */
static const char alive_script[] = "return redis.call('EXISTS', ARGV[1] .. 'host:' .. ARGV[2])\n";

static bool redis_host_alive(struct store *s, const char *host, bool *alive, struct fault *f)
{
	struct redis_store *r = s->redis;
	struct redis_args a = {0};
	redis_arg_str(&a, host);
	int64_t n = 0;
	if (!integer(redis_eval(r, "host", alive_script, &a, f), "host", &n, f))
		return false;
	*alive = n > 0;
	return true;
}

/* ARGV: P now_ms. The names of the hosts alive, from the set each one's
 * upkeep renews (a few entries: never a scan of the key space). */
static const char hosts_script[] =
	"return redis.call('ZRANGEBYSCORE', ARGV[1] .. 'hosts', '(' .. ARGV[2], '+inf')\n";

static bool redis_hosts_alive(struct store *s, struct strv *out, struct fault *f)
{
	struct redis_store *r = s->redis;
	struct redis_args a = {0};
	redis_arg_int(&a, wall_ms());
	redisReply *rep = redis_eval(r, "hosts", hosts_script, &a, f);
	if (!rep)
		return false;
	for (size_t i = 0; rep->type == REDIS_REPLY_ARRAY && i < rep->elements; i++)
		if (rep->element[i]->type == REDIS_REPLY_STRING)
			strv_push(out, rep->element[i]->str);
	freeReplyObject(rep);
	return true;
}

static void redis_running_forget(struct store *s, int pid, int64_t now_ms)
{
	redis_running_upkeep(s->redis, &pid, 1, now_ms);
}

static void redis_running_forget_dead(struct store *s, int64_t now_ms)
{
	int pids[256], dead[256];
	size_t n_dead = 0;
	/* This host's claims: pids mean something only where they are. */
	size_t n = redis_running_pids(s->redis, pids, sizeof pids / sizeof pids[0]);
	for (size_t i = 0; i < n; i++)
		if (pid_gone(pids[i]))
			dead[n_dead++] = pids[i];
	redis_running_upkeep(s->redis, dead, n_dead, now_ms);
}

const struct store_ops redis_ops = {
	.open = redis_store_open,
	.close = redis_store_close,
	.ping = redis_ping,
	.hosts_alive = redis_hosts_alive,
	.host_alive = redis_host_alive,
	.rate_take = redis_rate_take,
	.running_claim = redis_running_claim,
	.running_release = redis_running_release,
	.running_forget = redis_running_forget,
	.running_forget_dead = redis_running_forget_dead,
	.running_count = redis_running_count,
	.memory_get = redis_memory_get,
	.memory_put = redis_memory_put,
	.memory_delete = redis_memory_delete,
	.memory_list = redis_memory_list,
	.memory_usage = redis_memory_usage,
	.memory_expire = redis_memory_expire,
	.volume_add = redis_volume_add,
	.volume_set_state = redis_volume_set_state,
	.volume_get = redis_volume_get,
	.volume_list = redis_volume_list,
	.volume_drop = redis_volume_drop,
	.volume_use = redis_volume_use,
	.volume_release = redis_volume_release,
	.volume_delete_begin = redis_volume_delete_begin,
	.volume_uses_keep = redis_volume_uses_keep,
	.session_claim = redis_session_claim,
	.session_release = redis_session_release,
	.sessions_keep = redis_sessions_keep,
};
