/*
 * volumes.c: /v1/volumes (volumes.h). A volume's record is written before
 * its image is made and removed after its image is gone, so that a crash
 * in between leaves a record that says so ("creating", "deleting") and
 * that DELETE clears, never an image that no record names.
 */
#define _GNU_SOURCE
#include "volumes.h"
#include "encode.h"
#include "files.h"
#include "request.h"
#include "respond.h"
#include "../conf/lib/json.h"
#include "../conf/store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longer than any creation takes (isobox-volumed's own bound, sandbox/volume.c). */
#define CREATING_MS (5 * 60 * 1000)

/* Are the volume's bytes on this host? With one host (an SQLite store)
 * they are; with several, the record says which (old records: here). */
static bool volume_here(const struct worker *w, const struct volume *v)
{
	return w->conf.store.backend != STORE_REDIS || !v->host[0] || !strcmp(v->host, w->conf.instance);
}

/* A volume's bytes are pinned to the host that made it: a request that
 * needs them must reach that host. */
static bool volume_elsewhere(const struct volume *v, struct fault *f)
{
	return fail(f, E_VOLUME_ELSEWHERE, "volume %s lives on host %s (its bytes are on that host's disk): "
		    "send this request there (through the balancer: header X-Isobox-Host: %s)",
		    v->name, v->host, v->host);
}

static cJSON *volume_to_json(const struct worker *w, const struct volume *v, bool usage)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", v->name);
	cJSON_AddNumberToObject(o, "sizeBytes", (double)v->size_bytes);
	cJSON_AddStringToObject(o, "state", v->state);
	json_add_time(o, "createdAt", v->created_ms);
	cJSON_AddStringToObject(o, "host", v->host[0] ? v->host : w->conf.instance);
	int64_t used, size;
	struct fault ignored;
	if (usage && !strcmp(v->state, "ready") && volume_here(w, v) &&
	    volume_usage(&w->conf, v->id, &used, &size, &ignored))
		cJSON_AddNumberToObject(o, "usedBytes", (double)used);
	else if (usage)
		cJSON_AddNullToObject(o, "usedBytes");
	return o;
}

/* The store, with volumes on: NULL (and rq->fault) if not. */
static struct store *volume_store(struct worker *w, struct request *rq)
{
	if (!w->conf.volumes.dir) {
		fail(&rq->fault, E_VOLUMES_OFF, "volumes are turned off on this server");
		return NULL;
	}
	return worker_store(w, &rq->fault);
}

void volumes_create(struct worker *w, struct request *rq)
{
	static const char *const known[] = {"name", "sizeBytes", NULL};
	const struct conf *c = &w->conf;
	struct store *s = volume_store(w, rq);
	struct fault *f = &rq->fault;
	const char *name;
	int64_t size;
	struct volume v;
	bool ok = s && http_read_json_body(&rq->io, 64 << 10, &rq->body, f) &&
		  request_parse_object(rq, 100, known, "a volume");
	for (size_t i = 0; ok && known[i]; i++)
		if (!json_field(rq->json, known[i]))
			ok = fail(f, E_MISSING_FIELD, "a volume needs \"%s\"", known[i]);
	ok = ok && json_string(json_field(rq->json, "name"), "name", &name, f) &&
		  json_int(json_field(rq->json, "sizeBytes"), "sizeBytes",
			   c->volumes.min_bytes, c->volumes.max_bytes, &size, f);
	if (ok && !volume_name_valid(name))
		ok = fail(f, E_INVALID_VALUE, "volume names are [a-z0-9][a-z0-9_.-]*, at most %d", VOLUME_NAME_MAX);
	ok = ok && store_volume_add(s, rq->tenant, name, size, rq->share->volumes, rq->share->volume_bytes,
				    wall_ms(), &v, f);
	if (ok && !volume_make(c, v.id, size, f)) {
		/* isobox-volumed serves one request at a time: a remove asked
		 * now comes after the create, even one we stopped waiting for. */
		struct fault ignored;
		volume_unmake(c, v.id, &ignored);
		store_volume_drop(s, rq->tenant, name, &ignored);
		ok = false;
	}
	if (ok)
		ok = store_volume_set_state(s, rq->tenant, name, "creating", "ready", &v, f);
	if (!ok) {
		respond_fault(rq, "");
		return;
	}
	log_msg("volume %s made: %lld bytes", v.id, (long long)size);
	respond_json(rq, 201, volume_to_json(w, &v, true));
}

void volumes_list(struct worker *w, struct request *rq)
{
	struct store *s = volume_store(w, rq);
	struct volume *all;
	size_t n;
	if (!s || !store_volume_list(s, rq->tenant, &all, &n, &rq->fault)) {
		respond_fault(rq, "");
		return;
	}
	cJSON *o = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(o, "volumes");
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(list, volume_to_json(w, &all[i], false));
	free(all);
	respond_json(rq, 200, o);
}

void volumes_get(struct worker *w, struct request *rq)
{
	struct store *s = volume_store(w, rq);
	struct volume v;
	if (!s || !store_volume_get(s, rq->tenant, rq->params[0], &v, &rq->fault)) {
		respond_fault(rq, "");
		return;
	}
	respond_json(rq, 200, volume_to_json(w, &v, true));
}

void volumes_delete(struct worker *w, struct request *rq)
{
	struct store *s = volume_store(w, rq);
	struct volume v;
	const char *name = rq->params[0];
	struct fault ignored;
	/* One being made is left to its maker, unless its maker is long gone
	 * (a worker that died half-way). */
	bool found = s && store_volume_get(s, rq->tenant, name, &v, &rq->fault);
	if (found && !volume_here(w, &v))
		volume_elsewhere(&v, &rq->fault);
	else if (found && !strcmp(v.state, "creating") && wall_ms() - v.created_ms < CREATING_MS)
		fail(&rq->fault, E_VOLUME_BUSY, "volume %s is being made; retry in a moment", name);
	/* "deleting" first, in one step with the check that no run, session
	 * or files call has it marked in use (volumes_take): none mounts it
	 * from here on. This request marks it in use itself until its end,
	 * so that a second DELETE does not run beside it (one that finds it
	 * busy sets it ready again while the other goes on removing it). */
	if (!s || rq->fault.code ||
	    !store_volume_delete_begin(s, rq->tenant, name, process_id(), wall_ms(), &v, &rq->fault)) {
		respond_fault(rq, "");
		return;
	}
	snprintf(rq->volume_owner, sizeof rq->volume_owner, "%s", process_id());
	/* dockerd is asked too (volume_unmake): a sandbox whose mark is gone
	 * may still run (its worker was killed, and the reaper has not removed
	 * its container yet). */
	if (!volume_unmake(&w->conf, v.id, &rq->fault)) {
		if (rq->fault.code == E_VOLUME_BUSY)
			store_volume_set_state(s, rq->tenant, name, "deleting", "ready", &v, &ignored);
		respond_fault(rq, "");
		return;
	}
	if (!store_volume_drop(s, rq->tenant, name, &rq->fault)) {
		respond_fault(rq, "");
		return;
	}
	log_msg("volume %s deleted", v.id);
	http_send_empty(&rq->io, 204, "");
}

bool volumes_take(struct worker *w, struct request *rq, const char *session)
{
	struct volume v;
	if (!rq->volume_name[0])
		return true;
	struct store *s = volume_store(w, rq);
	if (!s || !store_volume_get(s, rq->tenant, rq->volume_name, &v, &rq->fault))
		return false;
	if (!volume_here(w, &v))
		return volume_elsewhere(&v, &rq->fault);
	/* In use from here on, before any sandbox mounts it, in one step with
	 * the check that it is ready: a DELETE that came first has made it
	 * "deleting" (404 here), one that comes after is refused (409). */
	const char *owner = session ? session : process_id();
	if (!store_volume_use(s, rq->tenant, rq->volume_name, session ? VOLUME_BY_SESSION : VOLUME_BY_WORKER,
			      owner, wall_ms(), &v, &rq->fault))
		return false;
	snprintf(rq->volume_owner, sizeof rq->volume_owner, "%s", owner);
	if (!volume_mountable(&w->conf, v.id, &rq->fault))
		return false; /* the mark goes at the request's end */
	snprintf(rq->volume_id, sizeof rq->volume_id, "%s", v.id);
	rq->job.volume = rq->volume_id;
	return true;
}

void volumes_hand_over(struct request *rq)
{
	rq->volume_owner[0] = '\0';
}

void volumes_release(struct worker *w, struct request *rq)
{
	if (!rq->volume_owner[0])
		return;
	/* A release that fails is logged; the master's upkeep forgets the mark
	 * when its owner is gone, or once older than any request. */
	struct fault ignored;
	struct store *s = worker_store(w, &ignored);
	if (s)
		store_volume_release(s, rq->volume_owner);
	rq->volume_owner[0] = '\0';
}

/*
 * The files of the tenant's ready volume named in the route, reached by
 * the agent in a sandbox of its own (python's image, or any built one).
 */
static bool volume_place(struct worker *w, struct request *rq, struct files_place *p)
{
	if (!volume_name_valid(rq->params[0]))
		return fail(&rq->fault, E_VOLUME_NOT_FOUND, "no volume %.64s", rq->params[0]);
	snprintf(rq->volume_name, sizeof rq->volume_name, "%s", rq->params[0]);
	if (!volumes_take(w, rq, NULL))
		return false;
	struct fault ignored;
	const struct language *l = registry_find(&w->reg, "python", NULL, &ignored);
	for (size_t i = 0; (!l || !l->image_id) && i < w->reg.n; i++)
		l = &w->reg.langs[i];
	*p = (struct files_place){.tenant = rq->tenant, .volume = rq->volume_id, .lang = l};
	return true;
}

void volumes_files_list(struct worker *w, struct request *rq)
{
	struct files_place p;
	if (volume_place(w, rq, &p))
		files_answer_list(w, rq, &p);
	else
		respond_fault(rq, "");
}

void volumes_file_get(struct worker *w, struct request *rq)
{
	struct files_place p;
	if (volume_place(w, rq, &p))
		files_answer_get(w, rq, &p, rq->params[1]);
	else
		respond_fault(rq, "");
}

void volumes_file_put(struct worker *w, struct request *rq)
{
	struct files_place p;
	if (volume_place(w, rq, &p))
		files_answer_put(w, rq, &p, rq->params[1]);
	else
		respond_fault(rq, "");
}

void volumes_file_delete(struct worker *w, struct request *rq)
{
	struct files_place p;
	if (volume_place(w, rq, &p))
		files_answer_delete(w, rq, &p, rq->params[1]);
	else
		respond_fault(rq, "");
}
