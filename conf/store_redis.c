/*
 * store_redis.c: the connection to Redis, and the tenants' rates, running
 * claims, hosts' lives and volume records in it (store_redis.h). The
 * memory store is in store_redis_memory.c.
 *
 * Running claims are leases: a claim is dropped by its worker when its run
 * ends, by its master when the worker dies, and, when the whole host dies,
 * by Redis's clock: its master renews them every few seconds and a claim
 * not renewed for STORE_LEASE_MS is no longer counted.
 */
#define _GNU_SOURCE
#include "store_redis.h"
#include "store_rules.h"

#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct redis_store {
	redisContext *c;   /* NULL: connect at the next command */
	char *address, *prefix, *host;
	char *password;    /* NULL: no AUTH */
	struct timeval timeout;
};

static bool read_password(const char *path, char **out, struct fault *f)
{
	struct buf text = {0};
	char err[300];
	struct stat st;
	autoclose int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fail(f, E_STORE_UNAVAILABLE, "store.redis.passwordFile %s: %s", path, strerror(errno));
	if (fstat(fd, &st) == 0 && (st.st_mode & 0007))
		return fail(f, E_STORE_UNAVAILABLE, "%s is readable by anyone: chmod 0640 it", path);
	if (!read_file(path, 1024, &text, err, sizeof err))
		return fail(f, E_STORE_UNAVAILABLE, "%s", err);
	while (text.len && (text.data[text.len - 1] == '\n' || text.data[text.len - 1] == '\r'))
		text.len--;
	*out = xstrndup(text.data, text.len);
	explicit_bzero(text.data, text.len);
	buf_free(&text);
	return true;
}

struct redis_store *redis_open(const struct store_conf *sc, const char *host, struct fault *f)
{
	struct redis_store *r = xcalloc(1, sizeof *r);
	r->address = xstrdup(sc->address);
	r->prefix = xstrdup(sc->prefix ? sc->prefix : "");
	r->host = xstrdup(host);
	r->timeout = (struct timeval){sc->timeout_ms / 1000, (sc->timeout_ms % 1000) * 1000};
	if (sc->password_file && !read_password(sc->password_file, &r->password, f)) {
		redis_close(r);
		return NULL;
	}
	/* Not connected yet: the first command connects, and a Redis that is
	 * down now fails that command (503), not the worker. */
	return r;
}

void redis_close(struct redis_store *r)
{
	if (!r)
		return;
	if (r->c)
		redisFree(r->c);
	if (r->password)
		explicit_bzero(r->password, strlen(r->password));
	free(r->password);
	free(r->address);
	free(r->prefix);
	free(r->host);
	free(r);
}

const char *redis_host(struct redis_store *r)
{
	return r->host;
}

const char *redis_prefix(struct redis_store *r)
{
	return r->prefix;
}

static bool unavailable(struct redis_store *r, const char *what, const char *why, struct fault *f)
{
	log_msg("store: redis %s (%s): %s", what, r->address, why);
	return fail(f, E_STORE_UNAVAILABLE, "the store failed (%s): %.200s", what, why);
}

static bool connect_now(struct redis_store *r, struct fault *f)
{
	redisContext *c;
	if (!strncmp(r->address, "unix:", 5)) {
		c = redisConnectUnixWithTimeout(r->address + 5, r->timeout);
	} else {
		/* host:port, or [v6]:port */
		autofree char *name = xstrdup(r->address);
		char *colon = strrchr(name, ':');
		if (!colon)
			return unavailable(r, "address", "store.redis.address is neither unix:PATH nor HOST:PORT", f);
		*colon = '\0';
		char *h = name;
		if (h[0] == '[' && colon > h + 1 && colon[-1] == ']') {
			h++;
			colon[-1] = '\0';
		}
		c = redisConnectWithTimeout(h, atoi(colon + 1), r->timeout);
	}
	if (!c || c->err) {
		bool done = unavailable(r, "connect", c ? c->errstr : "out of memory", f);
		if (c)
			redisFree(c);
		return done;
	}
	/* Children (docker) must not inherit it. */
	fcntl(c->fd, F_SETFD, FD_CLOEXEC);
	redisSetTimeout(c, r->timeout);
	if (r->password) {
		redisReply *rep = redisCommand(c, "AUTH %s", r->password);
		bool ok = rep && rep->type == REDIS_REPLY_STATUS;
		const char *why = !rep ? c->errstr : rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply";
		if (!ok) {
			unavailable(r, "AUTH", why, f);
			if (rep)
				freeReplyObject(rep);
			redisFree(c);
			return false;
		}
		freeReplyObject(rep);
	}
	r->c = c;
	return true;
}

/*
 * One command. A connection that Redis closed since the last command (it
 * restarted) is dropped and the command sent once more on a new one: Redis
 * never read it. Nothing else is sent twice: after a timeout Redis may have
 * run the command and only its answer be late, and a second claim or a
 * second queued job would be wrong. A new connection that fails is not
 * tried again, so a Redis that hangs costs at most one timeout.
 */
redisReply *redis_command(struct redis_store *r, const char *what, int argc, const char **argv,
			  const size_t *lens, struct fault *f)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		bool fresh = !r->c;
		if (!r->c && !connect_now(r, f))
			return NULL;
		redisReply *rep = redisCommandArgv(r->c, argc, argv, lens);
		if (rep && rep->type == REDIS_REPLY_ERROR) {
			unavailable(r, what, rep->str, f);
			freeReplyObject(rep);
			return NULL;
		}
		if (rep)
			return rep;
		int err = errno;
		bool closed = r->c->err == REDIS_ERR_EOF ||
			      (r->c->err == REDIS_ERR_IO && (err == EPIPE || err == ECONNRESET));
		autofree char *why = xstrdup(r->c->errstr);
		redisFree(r->c);
		r->c = NULL;
		if (fresh || attempt == 1 || !closed) {
			unavailable(r, what, why, f);
			return NULL;
		}
	}
	return NULL;
}

void redis_arg(struct redis_args *a, const void *v, size_t len)
{
	if (a->n == REDIS_MAX_ARGS)
		die("redis: too many script arguments");
	a->v[a->n] = v;
	a->len[a->n++] = len;
}

void redis_arg_str(struct redis_args *a, const char *s)
{
	redis_arg(a, s, strlen(s));
}

void redis_arg_int(struct redis_args *a, int64_t v)
{
	if (a->n == REDIS_MAX_ARGS)
		die("redis: too many script arguments");
	snprintf(a->num[a->n], sizeof a->num[a->n], "%lld", (long long)v);
	redis_arg_str(a, a->num[a->n]);
}

redisReply *redis_eval(struct redis_store *r, const char *what, const char *script,
		       const struct redis_args *a, struct fault *f)
{
	const char *argv[REDIS_MAX_ARGS + 4] = {"EVAL", script, "0", r->prefix};
	size_t lens[REDIS_MAX_ARGS + 4] = {4, strlen(script), 1, strlen(r->prefix)};
	for (int i = 0; i < a->n; i++) {
		argv[4 + i] = a->v[i];
		lens[4 + i] = a->len[i];
	}
	return redis_command(r, what, 4 + a->n, argv, lens, f);
}

bool redis_run(struct redis_store *r, const char *what, const char *script, const struct redis_args *a,
	       struct fault *f)
{
	redisReply *rep = redis_eval(r, what, script, a, f);
	if (rep)
		freeReplyObject(rep);
	return rep != NULL;
}

redisReply *redis_cmd(struct redis_store *r, const char *what, struct fault *f, int argc, ...)
{
	const char *argv[16];
	size_t lens[16];
	if (argc > 16)
		die("redis: too many command arguments");
	va_list ap;
	va_start(ap, argc);
	for (int i = 0; i < argc; i++) {
		argv[i] = va_arg(ap, const char *);
		lens[i] = strlen(argv[i]);
	}
	va_end(ap);
	return redis_command(r, what, argc, argv, lens, f);
}

bool redis_bad_reply(redisReply *rep, const char *what, struct fault *f)
{
	if (rep)
		freeReplyObject(rep);
	return fail(f, E_STORE_UNAVAILABLE, "the store failed (%s): unexpected reply", what);
}

bool redis_ping(struct redis_store *r, struct fault *f)
{
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

/* GCRA, as in store.c, in microseconds. ARGV: P tenant now_ms per_minute.
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

bool redis_rate_take(struct redis_store *r, const char *tenant, int64_t per_minute, int64_t now_ms,
		     bool *allowed, int64_t *retry_after_s, struct fault *f)
{
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

bool redis_running_claim(struct redis_store *r, const char *tenant, int64_t limit, int pid,
			 int64_t now_ms, int64_t *claim, struct fault *f)
{
	struct redis_args a = {0};
	redis_arg_str(&a, tenant);
	redis_arg_int(&a, now_ms);
	redis_arg_int(&a, limit);
	redis_arg_str(&a, r->host);
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

void redis_running_release(struct redis_store *r, int64_t claim)
{
	struct redis_args a = {0};
	struct fault ignored = {0}; /* logged; the lease ends it anyway */
	redis_arg_str(&a, r->host);
	redis_arg_int(&a, claim);
	redis_run(r, "release", release_script, &a, &ignored);
}

size_t redis_running_pids(struct redis_store *r, int *pids, size_t max)
{
	autofree char *key = xasprintf("%sclaims:%s", r->prefix, r->host);
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

void redis_running_upkeep(struct redis_store *r, const int *dead, size_t n_dead, int64_t now_ms)
{
	struct redis_args a = {0};
	struct fault ignored = {0};
	redis_arg_str(&a, r->host);
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

int64_t redis_running_count(struct redis_store *r, const char *tenant, int64_t now_ms)
{
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

bool redis_host_alive(struct redis_store *r, const char *host, bool *alive, struct fault *f)
{
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

bool redis_hosts_alive(struct redis_store *r, struct strv *out, struct fault *f)
{
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

bool redis_volume_get(struct redis_store *r, const char *tenant, const char *name, struct volume *out,
		      struct fault *f)
{
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

bool redis_volume_add(struct redis_store *r, const char *tenant, const char *name, int64_t size_bytes,
		      int64_t max_count, int64_t max_bytes, int64_t now_ms, struct volume *out,
		      struct fault *f)
{
	volume_new(name, size_bytes, now_ms, r->host, out);
	struct redis_args a = {0};
	redis_arg_str(&a, tenant);
	redis_arg_str(&a, name);
	redis_arg_int(&a, size_bytes);
	redis_arg_int(&a, max_count);
	redis_arg_int(&a, max_bytes);
	redis_arg_str(&a, out->id);
	redis_arg_int(&a, now_ms);
	redis_arg_str(&a, r->host);
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

bool redis_volume_set_state(struct redis_store *r, const char *tenant, const char *name,
			    const char *from, const char *to, struct volume *out, struct fault *f)
{
	struct redis_args a = {0};
	redis_arg_str(&a, tenant);
	redis_arg_str(&a, name);
	redis_arg_str(&a, from ? from : "");
	redis_arg_str(&a, to);
	redisReply *rep = redis_eval(r, "volume state", volume_state_script, &a, f);
	if (!rep)
		return false;
	if (rep->type == REDIS_REPLY_NIL) {
		freeReplyObject(rep);
		return fail(f, E_VOLUME_NOT_FOUND, "no volume %.64s", name);
	}
	if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 6 || !read_volume(rep->element + 1, name, out))
		return redis_bad_reply(rep, "volume state", f);
	bool changed = rep->element[0]->integer == 1;
	freeReplyObject(rep);
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

bool redis_volume_list(struct redis_store *r, const char *tenant, struct volume **out, size_t *n,
		       struct fault *f)
{
	*out = NULL;
	*n = 0;
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

bool redis_volume_drop(struct redis_store *r, const char *tenant, const char *name, struct fault *f)
{
	struct redis_args a = {0};
	redis_arg_str(&a, tenant);
	redis_arg_str(&a, name);
	return redis_run(r, "volume drop", volume_drop_script, &a, f);
}
