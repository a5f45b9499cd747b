/*
 * job.c: run a request's parsed job, where it belongs (a session's
 * sandbox, or a warm or cold one), and its result as JSON in the route's
 * shape. Shared by the plain answer (execute.c) and the stream (stream.c).
 */
#define _GNU_SOURCE
#include "job.h"
#include "../conf/lib/json.h"
#include "piston_result.h"
#include "request.h"
#include "result.h"
#include "volumes.h"

#include <string.h>

bool job_run(struct worker *w, struct request *rq, const struct sandbox_sink *sink)
{
	rq->job.request_id = rq->id;
	bool ok = rq->in_session ?
		session_step(&w->conf, &rq->session, &rq->job, sink, &rq->result, &rq->fault) :
		sandbox_run(&w->conf, w->warm, &rq->job, sink, &rq->result, &rq->fault);
	/* The run's sandbox has ended: its volume's mark goes before the answer,
	 * so that a client that deletes the volume on hearing the result is not
	 * refused. (One that a deadline left running is still seen by dockerd:
	 * volumes_delete asks it.) */
	volumes_release(w, rq);
	rq->result.backend = conf_backend_name(&w->conf);
	return ok;
}

/* A MIME type as a bundle's key: "type/subtype" of [a-z0-9.+-]. */
static bool mime_name(const char *s)
{
	size_t n = strlen(s), slash = strcspn(s, "/");
	if (n == 0 || n > 100 || slash == 0 || slash >= n - 1 || strchr(s + slash + 1, '/'))
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789.+-/") == n;
}

/* A cell's outputs (nbformat 4: stream, display_data, execute_result),
 * each field checked; what does not fit is left out. */
static cJSON *outputs_to_json_checked(const cJSON *in)
{
	cJSON *list = cJSON_CreateArray();
	const cJSON *x;
	int n = 0;
	if (!cJSON_IsArray(in))
		return list;
	cJSON_ArrayForEach(x, in) {
		const char *type = json_text(x, "output_type");
		if (++n > 256)
			break;
		if (!strcmp(type, "stream")) {
			const char *name = json_text(x, "name"), *text = json_text(x, "text");
			if (strcmp(name, "stdout") && strcmp(name, "stderr"))
				continue;
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "output_type", "stream");
			cJSON_AddStringToObject(o, "name", name);
			json_add_bytes(o, "text", text, strlen(text));
			cJSON_AddItemToArray(list, o);
		} else if (!strcmp(type, "display_data") || !strcmp(type, "execute_result")) {
			const cJSON *data = cJSON_GetObjectItemCaseSensitive(x, "data"), *v;
			cJSON *o = cJSON_CreateObject(), *d = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "output_type", type);
			if (!cJSON_IsObject(data))
				data = NULL;
			cJSON_ArrayForEach(v, data) {
				size_t k = strlen(v->string);
				bool json = !strcmp(v->string, "application/json") ||
					    (k > 5 && !strcmp(v->string + k - 5, "+json"));
				if (!mime_name(v->string))
					continue;
				if (cJSON_IsString(v))
					json_add_bytes(d, v->string, v->valuestring, strlen(v->valuestring));
				else if (json)
					cJSON_AddItemToObject(d, v->string, cJSON_Duplicate(v, true));
			}
			cJSON_AddItemToObject(o, "data", d);
			cJSON_AddItemToObject(o, "metadata", cJSON_CreateObject());
			cJSON_AddItemToArray(list, o);
		}
	}
	return list;
}

cJSON *job_display_json(const char *json, size_t len)
{
	cJSON *in = cJSON_ParseWithLength(json, len);
	cJSON *one = cJSON_CreateArray(), *item = NULL;
	const char *type = json_text(in, "output_type");
	if (!strcmp(type, "display_data") || !strcmp(type, "execute_result")) {
		cJSON_AddItemToArray(one, in);
		in = NULL;
		cJSON *list = outputs_to_json_checked(one);
		item = cJSON_DetachItemFromArray(list, 0);
		cJSON_Delete(list);
	}
	cJSON_Delete(one);
	cJSON_Delete(in);
	return item;
}

cJSON *job_kernel_json(const struct buf *raw)
{
	cJSON *in = raw->len ? cJSON_ParseWithLength(raw->data, raw->len) : NULL;
	cJSON *o = cJSON_CreateObject();
	const cJSON *value = cJSON_GetObjectItemCaseSensitive(in, "value");
	const cJSON *error = cJSON_GetObjectItemCaseSensitive(in, "error");
	const cJSON *images = cJSON_GetObjectItemCaseSensitive(in, "images"), *img;
	if (cJSON_IsString(value))
		json_add_bytes(o, "value", value->valuestring, strlen(value->valuestring));
	else
		cJSON_AddNullToObject(o, "value");
	if (cJSON_IsObject(error)) {
		cJSON *e = cJSON_AddObjectToObject(o, "error");
		static const char *const keys[] = {"name", "value", "traceback"};
		for (size_t i = 0; i < 3; i++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(error, keys[i]);
			const char *text = cJSON_IsString(v) ? v->valuestring : "";
			json_add_bytes(e, keys[i], text, strlen(text));
		}
	} else {
		cJSON_AddNullToObject(o, "error");
	}
	cJSON *list = cJSON_AddArrayToObject(o, "images");
	int n = 0;
	if (!cJSON_IsArray(images))
		images = NULL;
	cJSON_ArrayForEach(img, images) {
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(img, "type");
		const cJSON *data = cJSON_GetObjectItemCaseSensitive(img, "data");
		struct buf bytes = {0};
		if (n < 8 && cJSON_IsString(type) && !strcmp(type->valuestring, "image/png") &&
		    cJSON_IsString(data) && base64_decode(data->valuestring, &bytes)) {
			cJSON *i = cJSON_CreateObject();
			cJSON_AddStringToObject(i, "type", "image/png");
			cJSON_AddStringToObject(i, "data", data->valuestring);
			cJSON_AddItemToArray(list, i);
			n++;
		}
		buf_free(&bytes);
	}
	cJSON_AddItemToObject(o, "outputs", outputs_to_json_checked(cJSON_GetObjectItemCaseSensitive(in, "outputs")));
	cJSON_AddBoolToObject(o, "restarted", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(in, "restarted")));
	cJSON_Delete(in);
	return o;
}

/* What a step adds: "session" {id, type, ended}, and a cell's "kernel". */
static void add_session(cJSON *o, const struct session *s, const struct sandbox_result *res)
{
	cJSON *about = cJSON_AddObjectToObject(o, "session");
	cJSON_AddStringToObject(about, "id", s->id);
	cJSON_AddStringToObject(about, "type", s->type == SESSION_KERNEL ? "kernel" : "shell");
	if (res->session_ended)
		cJSON_AddStringToObject(about, "ended", res->session_ended);
	if (s->type == SESSION_KERNEL && res->has_run)
		cJSON_AddItemToObject(o, "kernel", job_kernel_json(&res->kernel));
}

cJSON *job_result_json(const struct request *rq)
{
	if (request_is_piston(rq))
		return piston_result(rq);
	cJSON *o = result_to_json(rq->lang, &rq->result, &rq->job.limits);
	if (rq->job.n_outputs)
		outputs_to_json(o, &rq->result);
	if (rq->in_session)
		add_session(o, &rq->session, &rq->result);
	return o;
}
