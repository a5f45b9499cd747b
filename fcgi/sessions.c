/*
 * sessions.c: /v1/sessions. Each handler parses what it was sent, asks
 * sandbox/ (sandbox.h, Sessions) to do it and answers; a step goes through
 * the same pipeline as /execute (execute.c), so it answers the same
 * result, or the same events when streamed.
 */
#define _GNU_SOURCE
#include "sessions.h"
#include "admin.h"
#include "metrics.h"
#include "execute.h"
#include "files.h"
#include "request.h"
#include "respond.h"
#include "result.h"
#include "volumes.h"
#include "../conf/lib/json.h"
#include "../conf/store/store.h"

#include <stdio.h>
#include <string.h>

static cJSON *session_to_json(const struct worker *w, const struct session *s)
{
	struct fault ignored;
	const struct language *l = registry_find(&w->reg, s->language, s->version, &ignored);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "id", s->id);
	cJSON_AddStringToObject(o, "language", s->language);
	cJSON_AddStringToObject(o, "version", l ? l->full_version : s->version);
	cJSON_AddStringToObject(o, "type", s->type == SESSION_KERNEL ? "kernel" : "shell");
	cJSON *lim = cJSON_AddObjectToObject(o, "limits");
	cJSON_AddNumberToObject(lim, "memoryBytes", (double)s->limits.memory_bytes);
	cJSON_AddNumberToObject(lim, "cpus", s->limits.cpus);
	cJSON_AddNumberToObject(lim, "pids", (double)s->limits.pids);
	cJSON_AddBoolToObject(o, "network", s->network);
	if (s->volume_name[0]) {
		cJSON_AddStringToObject(o, "volume", s->volume_name);
		cJSON_AddBoolToObject(o, "volumeReadOnly", s->volume_ro);
	}
	cJSON_AddStringToObject(o, "state", s->busy ? "busy" : "idle");
	if (s->memory_used >= 0)
		cJSON_AddNumberToObject(o, "memoryUsedBytes", (double)s->memory_used);
	else
		cJSON_AddNullToObject(o, "memoryUsedBytes");
	cJSON_AddNumberToObject(o, "steps", (double)s->steps);
	cJSON_AddNumberToObject(o, "idleTimeoutMs", (double)s->idle_ms);
	cJSON_AddNumberToObject(o, "maxLifetimeMs", (double)s->lifetime_ms);
	json_add_time(o, "createdAt", s->created_ms);
	json_add_time(o, "lastUsedAt", s->last_used_ms);
	json_add_time(o, "expiresAt", session_expires_ms(s));
	return o;
}

static bool read_json(struct worker *w, struct request *rq)
{
	return http_read_json_body(&rq->io, (size_t)w->conf.request.max_body_bytes, &rq->body, &rq->fault);
}

static bool get_timeout(const cJSON *root, const char *key, int64_t dflt, int64_t max, int64_t *out,
			struct fault *f)
{
	const cJSON *v = json_field(root, key);
	*out = dflt;
	return !v || json_int(v, key, 1000, max, out, f);
}

/* The body of POST /v1/sessions, checked. */
static bool parse_create(struct worker *w, struct request *rq, enum session_type *type,
			 struct limits *lim, int64_t *idle, int64_t *life)
{
	static const char *const known[] = {"language", "version", "type", "limits", "network",
		"idleTimeoutMs", "maxLifetimeMs", "volume", "volumeReadOnly", NULL};
	const struct conf *c = &w->conf;
	struct fault *f = &rq->fault;
	const char *kind = "shell";
	const cJSON *v;
	if (!request_parse_object(rq, (size_t)c->request.max_json_values, known, "a session"))
		return false;
	const cJSON *root = rq->json;
	if (!request_parse_language(rq, root, &w->reg))
		return false;
	if ((v = json_field(root, "type")) &&
	    !json_string(v, "type", &kind, f))
		return false;
	if (strcmp(kind, "shell") && strcmp(kind, "kernel"))
		return fail(f, E_INVALID_VALUE, "type must be \"shell\" or \"kernel\"");
	*type = !strcmp(kind, "kernel") ? SESSION_KERNEL : SESSION_SHELL;
	if (*type == SESSION_KERNEL && rq->lang->kernel.n == 0)
		return fail(f, E_INVALID_VALUE, "%s has no kernel sessions; use type \"shell\"", rq->lang->name);
	struct limits asked = {0}, ceiling = c->ceilings;
	unsigned set = 0;
	if ((v = json_field(root, "limits")) &&
	    !limits_parse(v, "limits", &asked, &set, f))
		return false;
	if (set & (LIMIT_OUTPUT | LIMIT_WALL))
		return fail(f, E_INVALID_REQUEST, "wallTimeMs and outputBytes belong to each step "
			    "(POST /v1/sessions/{id}/exec); a session sets memoryBytes, cpus and pids");
	/* Idle sessions hold their memory: a ceiling of their own. */
	if (ceiling.memory_bytes > c->sessions.memory_bytes)
		ceiling.memory_bytes = c->sessions.memory_bytes;
	*lim = language_limits(rq->lang, &asked, set, c, &ceiling);
	rq->job.limits = *lim; /* the bound of this request: a start */
	if ((v = json_field(root, "network")) &&
	    !json_bool(v, "network", &rq->network, f))
		return false;
	if (!request_network_allowed(rq, c, f) || !request_parse_volume(rq, root))
		return false;
	return get_timeout(root, "idleTimeoutMs", c->sessions.idle_ms, c->sessions.max_idle_ms, idle, f) &&
	       get_timeout(root, "maxLifetimeMs", c->sessions.lifetime_ms, c->sessions.max_lifetime_ms, life, f);
}

bool sessions_at_home(struct worker *w, struct request *rq, const char *id)
{
	char host[SESSION_HOST_MAX + 1];
	/* One host (an SQLite store), not an id (404 later), an id from
	 * before hosts, or ours: served here. */
	if (w->conf.store.backend != STORE_REDIS || !session_id_host(id, host) || !host[0] ||
	    !strcmp(host, w->conf.instance))
		return true;
	bool alive;
	struct store *s = worker_store(w, &rq->fault);
	if (!s || !store_host_alive(s, host, &alive, &rq->fault))
		return false;
	if (alive)
		return fail(&rq->fault, E_SESSION_ELSEWHERE, "session %s lives on host %s, which did not get "
			    "this request (the balancer routes a session by the host in its id): retry shortly",
			    id, host);
	return fail(&rq->fault, E_SESSION_EXPIRED, "session %s ended: its host %s is gone (no sign of life "
		    "for %d s)", id, host, STORE_LEASE_MS / 1000);
}

bool sessions_here(struct worker *w, struct request *rq)
{
	if (sessions_at_home(w, rq, rq->params[0]))
		return true;
	respond_fault(rq, "");
	return false;
}

cJSON *sessions_open(struct worker *w, struct request *rq)
{
	enum session_type type = SESSION_SHELL;
	struct limits lim = {0};
	int64_t idle = 0, life = 0;
	struct session s;
	char id[SESSION_ID_LEN + 1];
	/* The id first: its volume is marked in use under it, for its life. */
	session_new_id(w->conf.instance, id);
	if (!parse_create(w, rq, &type, &lim, &idle, &life) || !volumes_take(w, rq, id))
		return NULL;
	admin_job_accepted(w, rq);
	s = (struct session){.type = type, .limits = lim, .network = rq->network, .idle_ms = idle,
			     .lifetime_ms = life, .volume_ro = rq->job.volume_ro};
	snprintf(s.id, sizeof s.id, "%s", id);
	snprintf(s.tenant, sizeof s.tenant, "%s", rq->tenant);
	if (rq->job.volume) {
		snprintf(s.volume, sizeof s.volume, "%s", rq->job.volume);
		snprintf(s.volume_name, sizeof s.volume_name, "%s", rq->volume_name);
	}
	/* With a store, the tenant's share is counted there, across workers
	 * and hosts: a claim first, under the id the session will have. (On
	 * any failure from here, the request's end releases its volume's mark.) */
	struct store *st = NULL;
	if (w->conf.store.backend != STORE_NONE &&
	    (!(st = worker_store(w, &rq->fault)) ||
	     !store_session_claim(st, rq->tenant, s.id, s.limits.memory_bytes, rq->share->sessions,
				  rq->share->session_memory_bytes, wall_ms(), &rq->fault)))
		return NULL;
	if (!session_create(&w->conf, st ? NULL : rq->share, rq->lang, &s, &rq->fault)) {
		if (st)
			store_session_release(st, s.id);
		log_msg("session create failed: %s", rq->fault.message);
		return NULL;
	}
	volumes_hand_over(rq); /* released when the session ends */
	log_msg("session %s created: %s %s", s.id, s.language, type == SESSION_KERNEL ? "kernel" : "shell");
	metrics_count(w->metrics, M_SESSIONS_CREATED, type == SESSION_KERNEL ? "kernel" : "shell", NULL);
	return session_to_json(w, &s);
}

void sessions_create(struct worker *w, struct request *rq)
{
	cJSON *o = read_json(w, rq) ? sessions_open(w, rq) : NULL;
	if (o)
		respond_json(rq, 201, o);
	else
		respond_fault(rq, "");
}

void sessions_list(struct worker *w, struct request *rq)
{
	struct session *all;
	size_t n;
	if (!session_list(&w->conf, rq->tenant, &all, &n, &rq->fault)) {
		respond_fault(rq, "");
		return;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(o, "sessions");
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(list, session_to_json(w, &all[i]));
	free(all);
	respond_json(rq, 200, o);
}

void sessions_get(struct worker *w, struct request *rq)
{
	struct session s;
	if (!session_get(&w->conf, rq->tenant, rq->params[0], &s, &rq->fault))
		respond_fault(rq, "");
	else
		respond_json(rq, 200, session_to_json(w, &s));
}

bool sessions_close(struct worker *w, struct request *rq, const char *id)
{
	if (!session_delete(&w->conf, rq->tenant, id, &rq->fault))
		return false;
	/* Its place in the tenant's share is free at once (not at the next
	 * upkeep): a client that deletes one to make room may create another. */
	struct fault ignored;
	struct store *st = w->conf.store.backend != STORE_NONE ? worker_store(w, &ignored) : NULL;
	if (st)
		store_session_release(st, id);
	metrics_count(w->metrics, M_SESSIONS_ENDED, "deleted", NULL);
	return true;
}

void sessions_delete(struct worker *w, struct request *rq)
{
	if (sessions_close(w, rq, rq->params[0]))
		http_send_empty(&rq->io, 204, "");
	else
		respond_fault(rq, "");
}

bool sessions_step_ready(struct worker *w, struct request *rq, const char *id, bool read_body)
{
	struct fault *f = &rq->fault;
	/* A network session's steps are allowed the network as a run is, each
	 * time: the operator or the tenant's share may have turned it off
	 * since the session began (the firewall: session_step). */
	if (!session_get(&w->conf, rq->tenant, id, &rq->session, f) ||
	    ((rq->network = rq->session.network) && !request_network_allowed(rq, &w->conf, f)) ||
	    !(rq->lang = registry_find(&w->reg, rq->session.language, rq->session.version, f)) ||
	    (read_body && !read_json(w, rq)) || !request_parse_step(rq, &w->conf, &rq->session.limits))
		return false;
	if (rq->session.type == SESSION_KERNEL && (json_field(rq->json, "files") ||
						     rq->job.n_args))
		return fail(f, E_INVALID_REQUEST, "a kernel step is a cell: send code and stdin, no files or "
			    "args (files go in with PUT /v1/sessions/{id}/files/{path})");
	rq->in_session = true;
	return true;
}

void sessions_exec(struct worker *w, struct request *rq)
{
	if (sessions_step_ready(w, rq, rq->params[0], true))
		execute_answer(w, rq);
	else
		respond_fault(rq, "");
}

/* Files of its /workspace (files.c). */
static struct files_place place_of(const struct request *rq)
{
	return (struct files_place){.tenant = rq->tenant, .session = rq->params[0]};
}

void sessions_files_list(struct worker *w, struct request *rq)
{
	struct files_place p = place_of(rq);
	files_answer_list(w, rq, &p);
}

void sessions_file_get(struct worker *w, struct request *rq)
{
	struct files_place p = place_of(rq);
	files_answer_get(w, rq, &p, rq->params[1]);
}

void sessions_file_put(struct worker *w, struct request *rq)
{
	struct files_place p = place_of(rq);
	files_answer_put(w, rq, &p, rq->params[1]);
}

void sessions_file_delete(struct worker *w, struct request *rq)
{
	struct files_place p = place_of(rq);
	files_answer_delete(w, rq, &p, rq->params[1]);
}
