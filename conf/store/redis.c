/*
 * redis.c: the connection to Redis or Valkey (redis.h), which reconnects
 * by itself, and the helpers every Redis module of the store uses. The
 * backend's operations are in redis_ops.c (rates, running claims, hosts,
 * and the table), redis_memory.c, redis_volumes.c and redis_sessions.c.
 */
#define _GNU_SOURCE
#include "redis.h"
#include "backend.h"

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

static void redis_close(struct redis_store *r);

static struct redis_store *redis_open(const struct store_conf *sc, const char *host, struct fault *f)
{
	struct redis_store *r = xcalloc(1, sizeof *r);
	r->address = xstrdup(sc->address);
	r->prefix = xstrdup(sc->prefix ? sc->prefix : "");
	r->host = xstrdup(host);
	r->timeout = (struct timeval){sc->timeout_ms / 1000, (sc->timeout_ms % 1000) * 1000};
	char err[300];
	if (sc->password_file && !read_secret(sc->password_file, 1024, &r->password, err, sizeof err)) {
		fail(f, E_STORE_UNAVAILABLE, "store.redis.passwordFile %s", err);
		redis_close(r);
		return NULL;
	}
	/* Not connected yet: the first command connects, and a Redis that is
	 * down now fails that command (503), not the worker. */
	return r;
}

static void redis_close(struct redis_store *r)
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

bool redis_store_open(struct store *s, const struct store_conf *sc, struct fault *f)
{
	s->redis = redis_open(sc, s->host, f);
	return s->redis != NULL;
}

void redis_store_close(struct store *s)
{
	redis_close(s->redis);
	s->redis = NULL;
}
