/*
 * files.c: the files routes of sessions and volumes (files.h): the same
 * four answers wherever the files are. Paths are checked here like a
 * request's file names; the agent opens them, never the host.
 */
#define _GNU_SOURCE
#include "files.h"
#include "encode.h"
#include "request.h"
#include "respond.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file path of a files route, checked like a request's file names. */
static bool file_path(const struct worker *w, struct request *rq, const char *path)
{
	return sandbox_valid_path(path, (size_t)w->conf.request.max_path_bytes, &rq->fault);
}

static bool file_too_large(const struct worker *w, struct request *rq)
{
	return fail(&rq->fault, E_FILE_TOO_LARGE, "a file may be at most %lld bytes (sessions.maxFileBytes)",
		    (long long)w->conf.sessions.max_file_bytes);
}

cJSON *files_listing(struct worker *w, struct request *rq, const struct files_place *p, const char *dir)
{
	struct session_entry *e = NULL;
	size_t n = 0;
	if (!dir || !strcmp(dir, "."))
		dir = "";
	if ((dir[0] && !file_path(w, rq, dir)) || !files_list(&w->conf, p, dir, &e, &n, &rq->fault))
		return NULL;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "path", dir[0] ? dir : ".");
	/* Listings stop at sessions.maxListEntries. */
	cJSON_AddBoolToObject(o, "truncated", (int64_t)n >= w->conf.sessions.max_list_entries);
	cJSON *list = cJSON_AddArrayToObject(o, "entries");
	for (size_t i = 0; i < n; i++) {
		static const char *const types[] = {['f'] = "file", ['d'] = "directory", ['l'] = "link",
			['o'] = "other"};
		cJSON *x = cJSON_CreateObject();
		json_add_bytes(x, "name", e[i].name, strlen(e[i].name));
		cJSON_AddStringToObject(x, "type", types[(unsigned char)e[i].type]);
		cJSON_AddNumberToObject(x, "size", (double)e[i].size);
		json_add_time(x, "mtime", e[i].mtime * 1000);
		cJSON_AddItemToArray(list, x);
	}
	session_entries_free(e, n);
	return o;
}

void files_answer_list(struct worker *w, struct request *rq, const struct files_place *p)
{
	autofree char *path = request_query_param(http_param(&rq->io, "QUERY_STRING"), "path");
	cJSON *o = files_listing(w, rq, p, path);
	if (!o) {
		respond_fault(rq, "");
		return;
	}
	http_send_json(&rq->io, 200, "", o);
	cJSON_Delete(o);
}

bool files_read(struct worker *w, struct request *rq, const struct files_place *p, const char *path,
		struct buf *data)
{
	return file_path(w, rq, path) && files_get(&w->conf, p, path, data, &rq->fault);
}

bool files_write(struct worker *w, struct request *rq, const struct files_place *p, const char *path,
		 const char *data, size_t len)
{
	if ((int64_t)len > w->conf.sessions.max_file_bytes)
		return file_too_large(w, rq);
	return file_path(w, rq, path) && files_put(&w->conf, p, path, data, len, &rq->fault);
}

void files_answer_get(struct worker *w, struct request *rq, const struct files_place *p, const char *path)
{
	struct buf data = {0};
	if (!files_read(w, rq, p, path, &data)) {
		respond_fault(rq, "");
		return;
	}
	http_send_bytes(&rq->io, 200, "application/octet-stream", "", data.data, data.len,
			!strcmp(rq->method, "HEAD"));
	buf_free(&data);
}

void files_answer_put(struct worker *w, struct request *rq, const struct files_place *p, const char *path)
{
	if (!file_path(w, rq, path) ||
	    !http_read_body(&rq->io, (size_t)w->conf.sessions.max_file_bytes, &rq->body, &rq->fault) ||
	    !files_write(w, rq, p, path, rq->body.data, rq->body.len)) {
		if (rq->fault.code == E_BODY_TOO_LARGE)
			file_too_large(w, rq);
		respond_fault(rq, "");
		return;
	}
	cJSON *o = cJSON_CreateObject();
	json_add_bytes(o, "path", path, strlen(path));
	cJSON_AddNumberToObject(o, "size", (double)rq->body.len);
	http_send_json(&rq->io, 201, "", o);
	cJSON_Delete(o);
}

void files_answer_delete(struct worker *w, struct request *rq, const struct files_place *p, const char *path)
{
	if (!file_path(w, rq, path) || !files_delete(&w->conf, p, path, &rq->fault)) {
		respond_fault(rq, "");
		return;
	}
	http_send_empty(&rq->io, 204, "");
}
