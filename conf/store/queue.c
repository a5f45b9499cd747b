/*
 * queue.c: queue mode's streams in Redis (queue.h). Reads that
 * wait (XREADGROUP, XREAD with BLOCK) cannot be scripts: they are plain
 * commands, each one round trip.
 */
#define _GNU_SOURCE
#include "queue.h"
#include "backend.h"
#include "redis.h"

#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUP "runners"
#define EVENTS_TTL_S 600

static struct redis_store *redis_of(struct store *s, struct fault *f)
{
	struct redis_store *r = s->redis;
	if (!r)
		fail(f, E_STORE_UNAVAILABLE, "queue mode needs store.backend redis");
	return r;
}

/* P + name, or P + "job:" + id + suffix. */
static char *key(struct redis_store *r, const char *name)
{
	return xasprintf("%s%s", redis_prefix(r), name);
}

static char *job_key(struct redis_store *r, const char *job_id, const char *suffix)
{
	return xasprintf("%sjob:%s%s", redis_prefix(r), job_id, suffix);
}

/* The runners' group, made once a process (it answers an error, logged
 * once, when another made it first). */
/* The runners' group, made once a connection: a server that restarted
 * without its data (or another one) has none, and every read would fail
 * NOGROUP until the worker restarted. */
static void make_group(struct redis_store *r)
{
	static unsigned made_on; /* redis_connection() when it was made; 0: not yet */
	if (made_on && made_on == redis_connection(r))
		return;
	autofree char *q = key(r, "jobs");
	struct fault ignored = {0};
	redisReply *rep = redis_cmd(r, "queue group", &ignored, 6, "XGROUP", "CREATE", q, GROUP, "0", "MKSTREAM");
	if (rep)
		freeReplyObject(rep);
	if (rep || strstr(ignored.message, "BUSYGROUP"))
		made_on = redis_connection(r);
}

/* ARGV: P job tenant body max shape. 1: queued; 0: full. */
static const char push_script[] =
	"local q = ARGV[1] .. 'jobs'\n"
	"if redis.call('XLEN', q) >= tonumber(ARGV[5]) then return 0 end\n"
	"redis.call('XADD', q, '*', 'job', ARGV[2], 'tenant', ARGV[3], 'shape', ARGV[6], 'body', ARGV[4])\n"
	"return 1\n";

bool queue_push(struct store *s, const char *job_id, const char *tenant, bool piston, const void *body,
		size_t len, int64_t max_length, struct fault *f)
{
	struct redis_store *r = redis_of(s, f);
	if (!r)
		return false;
	make_group(r);
	struct redis_args a = {0};
	redis_arg_str(&a, job_id);
	redis_arg_str(&a, tenant);
	redis_arg(&a, len ? body : "", len);
	redis_arg_int(&a, max_length);
	redis_arg_str(&a, piston ? "piston" : "isobox");
	redisReply *rep = redis_eval(r, "queue push", push_script, &a, f);
	if (!rep)
		return false;
	bool queued = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
	freeReplyObject(rep);
	return queued || fail(f, E_BUSY, "the queue holds %lld jobs, its most (queue.maxLength): retry "
			      "shortly", (long long)max_length);
}

/* ARGV: P job. Deletes the job's entry if no runner has taken it. */
static const char withdraw_script[] =
	"local q = ARGV[1] .. 'jobs'\n"
	"for _, e in ipairs(redis.call('XREVRANGE', q, '+', '-', 'COUNT', 1000)) do\n"
	"  local f = e[2]\n"
	"  if f[2] == ARGV[2] then\n"
	"    local p = redis.call('XPENDING', q, '" GROUP "', e[1], e[1], 1)\n"
	"    if #p > 0 then return 0 end\n"
	"    redis.call('XDEL', q, e[1])\n"
	"    return 1\n"
	"  end\n"
	"end\n"
	"return 0\n";

bool queue_withdraw(struct store *s, const char *job_id)
{
	struct fault ignored = {0};
	struct redis_store *r = redis_of(s, &ignored);
	struct redis_args a = {0};
	redis_arg_str(&a, job_id);
	redisReply *rep = r ? redis_eval(r, "queue withdraw", withdraw_script, &a, &ignored) : NULL;
	bool done = rep && rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
	if (rep)
		freeReplyObject(rep);
	return done;
}

void queue_cancel(struct store *s, const char *job_id)
{
	struct fault ignored = {0};
	struct redis_store *r = redis_of(s, &ignored);
	if (!r)
		return;
	autofree char *k = job_key(r, job_id, ":cancel");
	redisReply *rep = redis_cmd(r, "queue cancel", &ignored, 5, "SET", k, "1", "EX", "600");
	if (rep)
		freeReplyObject(rep);
}

bool queue_cancelled(struct store *s, const char *job_id)
{
	struct fault ignored = {0};
	struct redis_store *r = redis_of(s, &ignored);
	if (!r)
		return false;
	autofree char *k = job_key(r, job_id, ":cancel");
	redisReply *rep = redis_cmd(r, "queue cancelled", &ignored, 2, "EXISTS", k);
	bool yes = rep && rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
	if (rep)
		freeReplyObject(rep);
	return yes;
}

void queue_job_free(struct queue_job *j)
{
	buf_free(&j->body);
	*j = (struct queue_job){0};
}

/* An entry [id, [field, value, ...]] into out; false if it has no job. */
static bool read_entry(const redisReply *e, struct queue_job *out)
{
	if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 || e->element[0]->type != REDIS_REPLY_STRING)
		return false;
	*out = (struct queue_job){0};
	snprintf(out->entry, sizeof out->entry, "%s", e->element[0]->str);
	const redisReply *fields = e->element[1];
	bool has_job = false;
	for (size_t i = 0; fields->type == REDIS_REPLY_ARRAY && i + 1 < fields->elements; i += 2) {
		const redisReply *k = fields->element[i], *v = fields->element[i + 1];
		if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
			continue;
		if (!strcmp(k->str, "job")) {
			snprintf(out->job_id, sizeof out->job_id, "%s", v->str);
			has_job = true;
		} else if (!strcmp(k->str, "tenant")) {
			snprintf(out->tenant, sizeof out->tenant, "%s", v->str);
		} else if (!strcmp(k->str, "shape")) {
			out->piston = !strcmp(v->str, "piston");
		} else if (!strcmp(k->str, "body")) {
			buf_append(&out->body, v->str, v->len);
		}
	}
	return has_job;
}

bool queue_take(struct store *s, const char *consumer, int64_t claim_after_ms, int64_t block_ms,
		char cursor[48], struct queue_job *out, bool *got, struct fault *f)
{
	*got = false;
	struct redis_store *r = redis_of(s, f);
	if (!r)
		return false;
	autofree char *q = key(r, "jobs");
	make_group(r);
	/* A job a runner let go first: it has waited longest. XAUTOCLAIM
	 * looks at a few pending entries a call, from the cursor on, so the
	 * cursor goes round them all over calls. */
	char idle[24], block[24];
	snprintf(idle, sizeof idle, "%lld", (long long)claim_after_ms);
	snprintf(block, sizeof block, "%lld", (long long)block_ms);
	if (!cursor[0])
		snprintf(cursor, 48, "0-0");
	redisReply *rep = redis_cmd(r, "queue claim", f, 8, "XAUTOCLAIM", q, GROUP, consumer, idle, cursor, "COUNT", "1");
	if (!rep)
		return false;
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements >= 2 && rep->element[0]->type == REDIS_REPLY_STRING)
		snprintf(cursor, 48, "%s", rep->element[0]->str);
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements >= 2 && rep->element[1]->type == REDIS_REPLY_ARRAY &&
	    rep->element[1]->elements > 0 && read_entry(rep->element[1]->element[0], out)) {
		out->again = true;
		*got = true;
	}
	freeReplyObject(rep);
	if (*got)
		return true;
	rep = redis_cmd(r, "queue read", f, 11, "XREADGROUP", "GROUP", GROUP, consumer, "COUNT", "1", "BLOCK", block,
		  "STREAMS", q, ">");
	if (!rep)
		return false;
	/* [[stream, [[id, fields]]]], or nil when none came */
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 1 && rep->element[0]->type == REDIS_REPLY_ARRAY &&
	    rep->element[0]->elements == 2 && rep->element[0]->element[1]->type == REDIS_REPLY_ARRAY &&
	    rep->element[0]->element[1]->elements > 0)
		*got = read_entry(rep->element[0]->element[1]->element[0], out);
	freeReplyObject(rep);
	return true;
}

/* ARGV: P entry consumer. 1: still ours (claimed again: its idle time
 * starts over); 0: another runner has taken it, or it is gone. */
static const char touch_script[] =
	"local q = ARGV[1] .. 'jobs'\n"
	"local p = redis.call('XPENDING', q, '" GROUP "', ARGV[2], ARGV[2], 1)\n"
	"if #p == 0 or p[1][2] ~= ARGV[3] then return 0 end\n"
	"redis.call('XCLAIM', q, '" GROUP "', ARGV[3], 0, ARGV[2], 'JUSTID')\n"
	"return 1\n";

bool queue_touch(struct store *s, const char *entry, const char *consumer)
{
	struct fault ignored = {0};
	struct redis_store *r = redis_of(s, &ignored);
	struct redis_args a = {0};
	redis_arg_str(&a, entry);
	redis_arg_str(&a, consumer);
	redisReply *rep = r ? redis_eval(r, "queue touch", touch_script, &a, &ignored) : NULL;
	/* Redis away: keep running; it is not known to be lost. */
	bool ours = !rep || rep->type != REDIS_REPLY_INTEGER || rep->integer == 1;
	if (rep)
		freeReplyObject(rep);
	return ours;
}

/* ARGV: P entry consumer job attempt type data ttl. The run's end (type
 * "" for none) and the job's removal, only while the job is still this
 * runner's: a runner that lost it, if only slow, must neither answer for
 * the run that replaced its own nor remove the job from under it.
 * 1: done; 0: another runner has it, or it is gone. */
static const char finish_script[] =
	"local q = ARGV[1] .. 'jobs'\n"
	"local p = redis.call('XPENDING', q, '" GROUP "', ARGV[2], ARGV[2], 1)\n"
	"if #p == 0 or p[1][2] ~= ARGV[3] then return 0 end\n"
	"if ARGV[6] ~= '' then\n"
	"  local k = ARGV[1] .. 'job:' .. ARGV[4]\n"
	"  redis.call('XADD', k, 'MAXLEN', '~', 10000, '*', 't', ARGV[6], 'a', ARGV[5], 'd', ARGV[7])\n"
	"  redis.call('EXPIRE', k, ARGV[8])\n"
	"end\n"
	"redis.call('XACK', q, '" GROUP "', ARGV[2])\n"
	"redis.call('XDEL', q, ARGV[2])\n"
	"return 1\n";

bool queue_finish(struct store *s, const struct queue_job *job, const char *consumer, const char *attempt,
		  const char *type, const void *data, size_t len)
{
	struct fault ignored = {0};
	struct redis_store *r = redis_of(s, &ignored);
	struct redis_args a = {0};
	redis_arg_str(&a, job->entry);
	redis_arg_str(&a, consumer);
	redis_arg_str(&a, job->job_id);
	redis_arg_str(&a, attempt);
	redis_arg_str(&a, type ? type : "");
	redis_arg(&a, len ? data : "", len);
	redis_arg_int(&a, EVENTS_TTL_S);
	redisReply *rep = r ? redis_eval(r, "queue finish", finish_script, &a, &ignored) : NULL;
	bool ours = rep && rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
	if (rep)
		freeReplyObject(rep);
	return ours;
}

/* ARGV: P job attempt type data ttl */
static const char emit_script[] =
	"local k = ARGV[1] .. 'job:' .. ARGV[2]\n"
	"redis.call('XADD', k, 'MAXLEN', '~', 10000, '*', 't', ARGV[4], 'a', ARGV[3], 'd', ARGV[5])\n"
	"redis.call('EXPIRE', k, ARGV[6])\n"
	"return 0\n";

bool queue_emit(struct store *s, const char *job_id, const char *attempt, const char *type,
		const void *data, size_t len)
{
	struct fault ignored = {0};
	struct redis_store *r = redis_of(s, &ignored);
	if (!r)
		return false;
	struct redis_args a = {0};
	redis_arg_str(&a, job_id);
	redis_arg_str(&a, attempt);
	redis_arg_str(&a, type);
	redis_arg(&a, len ? data : "", len);
	redis_arg_int(&a, EVENTS_TTL_S);
	return redis_run(r, "queue emit", emit_script, &a, &ignored);
}

void queue_events_free(struct queue_event *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf_free(&e[i].data);
	free(e);
}

bool queue_events(struct store *s, const char *job_id, char last[48], int64_t block_ms,
		  struct queue_event **out, size_t *n, struct fault *f)
{
	*out = NULL;
	*n = 0;
	struct redis_store *r = redis_of(s, f);
	if (!r)
		return false;
	autofree char *k = job_key(r, job_id, "");
	char block[24];
	snprintf(block, sizeof block, "%lld", (long long)block_ms);
	redisReply *rep = redis_cmd(r, "queue events", f, 8, "XREAD", "COUNT", "256", "BLOCK", block, "STREAMS", k, last);
	if (!rep)
		return false;
	const redisReply *entries = NULL;
	if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 1 && rep->element[0]->type == REDIS_REPLY_ARRAY &&
	    rep->element[0]->elements == 2 && rep->element[0]->element[1]->type == REDIS_REPLY_ARRAY)
		entries = rep->element[0]->element[1];
	for (size_t i = 0; entries && i < entries->elements; i++) {
		const redisReply *e = entries->element[i];
		if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 || e->element[0]->type != REDIS_REPLY_STRING)
			continue;
		snprintf(last, 48, "%s", e->element[0]->str);
		*out = xrealloc(*out, (*n + 1) * sizeof **out);
		struct queue_event *ev = &(*out)[(*n)++];
		*ev = (struct queue_event){0};
		const redisReply *fl = e->element[1];
		for (size_t j = 0; fl->type == REDIS_REPLY_ARRAY && j + 1 < fl->elements; j += 2) {
			const redisReply *fk = fl->element[j], *fv = fl->element[j + 1];
			if (fk->type != REDIS_REPLY_STRING || fv->type != REDIS_REPLY_STRING)
				continue;
			if (!strcmp(fk->str, "t"))
				snprintf(ev->type, sizeof ev->type, "%s", fv->str);
			else if (!strcmp(fk->str, "a"))
				snprintf(ev->attempt, sizeof ev->attempt, "%s", fv->str);
			else if (!strcmp(fk->str, "d"))
				buf_append(&ev->data, fv->str, fv->len);
		}
	}
	freeReplyObject(rep);
	return true;
}

bool queue_stats(struct store *s, int64_t *length, int64_t *pending, struct fault *f)
{
	*length = *pending = 0;
	struct redis_store *r = redis_of(s, f);
	if (!r)
		return false;
	autofree char *q = key(r, "jobs");
	redisReply *rep = redis_cmd(r, "queue length", f, 2, "XLEN", q);
	if (!rep)
		return false;
	if (rep->type == REDIS_REPLY_INTEGER)
		*length = rep->integer;
	freeReplyObject(rep);
	struct fault ignored = {0}; /* no group yet: none pending */
	rep = redis_cmd(r, "queue pending", &ignored, 3, "XPENDING", q, GROUP);
	if (rep && rep->type == REDIS_REPLY_ARRAY && rep->elements >= 1 &&
	    rep->element[0]->type == REDIS_REPLY_INTEGER)
		*pending = rep->element[0]->integer;
	if (rep)
		freeReplyObject(rep);
	return true;
}
