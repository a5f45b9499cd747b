/*
 * health.c: GET /healthz, for load balancers and for people.
 *
 * Served by the status socket's own worker, it answers even while every
 * worker runs a program, which is when a balancer most needs to hear that
 * the node is busy, not dead. The balancer reads the status: 503 ("down")
 * only when no run can succeed here, because dockerd does not answer.
 * People read "checks", a word for each part: dockerd, the images, the
 * egress firewall (network on) and the volumes' disk (volumes on), and
 * "store". A missing image, a firewall not in place, a full disk or a
 * store that does not answer (runs of callers with no share to count need
 * none) fail some requests and not others: 200, "degraded", so that a
 * balancer keeps the host. Each check is bounded (dockerd's ping by
 * HEALTH_DOCKER_MS).
 */
#include "health.h"
#include "../conf/store/store.h"
#include "queue.h"
#include "request.h"
#include "result.h"
#include "scoreboard.h"

#include <stdio.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define HEALTH_DOCKER_MS 2000

/* One check's word: {"ok": true} or {"ok": false, "error": why}. */
static cJSON *check(cJSON *checks, const char *name, bool ok, const char *why)
{
	cJSON *c = cJSON_AddObjectToObject(checks, name);
	cJSON_AddBoolToObject(c, "ok", ok);
	if (!ok)
		cJSON_AddStringToObject(c, "error", why);
	return c;
}

/* The images of every version in the registry: the ids of those not built. */
static bool images_check(const struct worker *w, cJSON *checks)
{
	cJSON *missing = cJSON_CreateArray();
	for (size_t i = 0; i < w->reg.n; i++)
		if (!w->reg.langs[i].image_id)
			cJSON_AddItemToArray(missing, cJSON_CreateString(w->reg.langs[i].id));
	bool ok = cJSON_GetArraySize(missing) == 0;
	cJSON *c = check(checks, "images", ok, "some versions have no image built (yet: see missing)");
	cJSON_AddItemToObject(c, "missing", missing);
	return ok;
}

/* Room on the volumes' disk for one more of the smallest volume. */
static bool volumes_check(const struct worker *w, cJSON *checks)
{
	struct statvfs st;
	char why[160] = "";
	bool known = statvfs(w->conf.volumes.dir, &st) == 0;
	unsigned long long free_bytes = known ? (unsigned long long)st.f_bavail * st.f_frsize : 0;
	bool ok = known && free_bytes >= (unsigned long long)w->conf.volumes.min_bytes;
	if (!known)
		snprintf(why, sizeof why, "cannot read the disk of %.100s", w->conf.volumes.dir);
	else if (!ok)
		snprintf(why, sizeof why, "no room for a volume (%llu bytes free)", free_bytes);
	cJSON *c = check(checks, "volumes", ok, why);
	if (known)
		cJSON_AddNumberToObject(c, "freeBytes", (double)free_bytes);
	return ok;
}

void health_handler(struct worker *w, struct request *rq)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *status = cJSON_AddStringToObject(o, "status", "ok");
	cJSON_AddStringToObject(o, "isoboxVersion", ISOBOX_VERSION);
	cJSON_AddNumberToObject(o, "pid", getpid());
	cJSON_AddNumberToObject(o, "served", (double)w->served);
	cJSON_AddNumberToObject(o, "uptimeMs", (double)(now_ms() - w->started_ms));
	size_t languages = 0; /* each once, however many versions it has */
	for (size_t i = 0; i < w->reg.n; i++)
		languages += w->reg.langs[i].is_default;
	cJSON_AddNumberToObject(o, "languages", (double)languages);
	if (w->board) {
		struct scoreboard_counts n = scoreboard_count(w->board);
		cJSON *pool = cJSON_AddObjectToObject(o, "pool");
		cJSON_AddNumberToObject(pool, "workers", w->exec_slots);
		cJSON_AddNumberToObject(pool, "busy", n.executing);
		int queued = fcgi_queue_length(w->pool_fd);
		if (queued >= 0)
			cJSON_AddNumberToObject(pool, "queued", queued);
		else
			cJSON_AddNullToObject(pool, "queued");
	}
	cJSON_AddStringToObject(o, "host", w->conf.instance);
	backend_to_json(o, &w->conf, &w->runtime);

	bool down = false, degraded = false;
	if (w->conf.store.backend != STORE_NONE) {
		/* Which store, and whether it answers now (one round trip). */
		struct fault f = {0};
		struct store *s = worker_store(w, &f);
		bool reachable = s && store_ping(s, &f);
		cJSON *st = cJSON_AddObjectToObject(o, "store");
		cJSON_AddStringToObject(st, "backend", store_backend_name(&w->conf.store));
		cJSON_AddBoolToObject(st, "reachable", reachable);
		if (!reachable)
			cJSON_AddStringToObject(st, "error", f.message);
		degraded |= !reachable;
	}
	cJSON *checks = cJSON_AddObjectToObject(o, "checks");
	struct fault why = {0};
	bool docker = sandbox_docker_alive(&w->conf, now_ms() + HEALTH_DOCKER_MS, &why);
	check(checks, "dockerd", docker, why.message);
	down |= !docker;
	degraded |= !images_check(w, checks);
	if (w->conf.network.enabled) {
		char mode[16] = "none";
		why = (struct fault){0};
		bool ready = sandbox_egress_ready(&w->conf, mode, sizeof mode, &why);
		cJSON_AddStringToObject(check(checks, "egress", ready, why.message), "mode", mode);
		degraded |= !ready;
	}
	if (w->conf.volumes.dir)
		degraded |= !volumes_check(w, checks);
	if (w->reload_error[0])
		cJSON_AddStringToObject(o, "reloadError", w->reload_error);
	cJSON_SetValuestring(status, down ? "down" : degraded ? "degraded" : "ok");
	http_send_json(&rq->io, down ? 503 : 200, "", o);
	cJSON_Delete(o);
}
