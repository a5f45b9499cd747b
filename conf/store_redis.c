/*
 * store_redis.c: the connection to Redis, and the tenants' rates, running
 * claims and hosts' lives in it (store_redis.h). The memory store is in
 * store_redis_memory.c, volume records in store_redis_volumes.c.
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
	unsigned connection; /* redis_connection: which one this process made */
};

static unsigned connections_made; /* by this process, to any server */

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
	if (fcntl(c->fd, F_SETFD, FD_CLOEXEC) < 0) {
		bool done = unavailable(r, "connect", strerror(errno), f);
		redisFree(c);
		return done;
	}
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
	r->connection = ++connections_made;
	return true;
}

unsigned redis_connection(const struct redis_store *r)
{
	return r->connection;
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
