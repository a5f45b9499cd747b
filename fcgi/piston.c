/*
 * piston.c: Piston's shapes (piston.h): its request translated into ours,
 * our result into its run/compile objects with stdout, stderr, output, code
 * and signal, and its runtimes list.
 */
#define _GNU_SOURCE
#include "piston.h"
#include "request.h"
#include "encode.h"
#include "result.h"
#include "../conf/lib/json.h"

#include <string.h>

/* Copy a Piston number limit (-1 or absent: the default) into limits. */
static bool copy_limit(const cJSON *piston, const char *from, cJSON *limits, const char *to,
		       struct fault *f)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(piston, from);
	double d;
	if (!v || cJSON_IsNull(v))
		return true;
	if (!json_number(v, from, &d, f))
		return false;
	if (d != -1)
		cJSON_AddNumberToObject(limits, to, d);
	return true;
}

bool piston_translate(const struct buf *body, size_t max_values, struct buf *out, struct fault *f)
{
	static const char *const known[] = {"language", "version", "files", "stdin", "args",
		"compile_timeout", "run_timeout", "compile_memory_limit", "run_memory_limit",
		"compile_cpu_time", "run_cpu_time", NULL};
	cJSON *in;
	if (!json_parse_strict(body->data, body->len, max_values, &in, f))
		return false;
	cJSON *o = cJSON_CreateObject(), *limits = cJSON_CreateObject();
	bool ok = false;
	const cJSON *v, *file;
	if (!json_object(in, "the request body", f) || !json_known_keys(in, known, "the request", f))
		goto done;
	if ((v = cJSON_GetObjectItemCaseSensitive(in, "language")))
		cJSON_AddItemToObject(o, "language", cJSON_Duplicate(v, true));
	v = cJSON_GetObjectItemCaseSensitive(in, "version");
	if (v && !(cJSON_IsString(v) && !strcmp(v->valuestring, "*")))
		cJSON_AddItemToObject(o, "version", cJSON_Duplicate(v, true));
	if ((v = cJSON_GetObjectItemCaseSensitive(in, "stdin")))
		cJSON_AddItemToObject(o, "stdin", cJSON_Duplicate(v, true));
	if ((v = cJSON_GetObjectItemCaseSensitive(in, "args")))
		cJSON_AddItemToObject(o, "args", cJSON_Duplicate(v, true));
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(in, "files");
	if (!cJSON_IsArray(files))
		goto bad_files;
	cJSON *ofiles = cJSON_AddArrayToObject(o, "files");
	cJSON_ArrayForEach(file, files) {
		const cJSON *content = cJSON_GetObjectItemCaseSensitive(file, "content");
		const cJSON *enc = cJSON_GetObjectItemCaseSensitive(file, "encoding");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(file, "name");
		if (!cJSON_IsObject(file) || !cJSON_IsString(content))
			goto bad_files;
		cJSON *of = cJSON_CreateObject();
		cJSON_AddItemToArray(ofiles, of);
		if (name)
			cJSON_AddItemToObject(of, "name", cJSON_Duplicate(name, true));
		if (enc && cJSON_IsString(enc) && !strcmp(enc->valuestring, "base64")) {
			struct buf raw = {0};
			bool decoded = base64_decode(content->valuestring, &raw) &&
				       !memchr(raw.data, 0, raw.len);
			if (decoded)
				cJSON_AddStringToObject(of, "content", raw.data);
			buf_free(&raw);
			if (!decoded) {
				fail(f, E_INVALID_VALUE, "a base64 file is not valid or holds NUL bytes");
				goto done;
			}
		} else if (enc && !(cJSON_IsString(enc) && !strcmp(enc->valuestring, "utf8"))) {
			fail(f, E_INVALID_VALUE, "files[].encoding must be \"utf8\" or \"base64\"");
			goto done;
		} else {
			cJSON_AddItemToObject(of, "content", cJSON_Duplicate(content, true));
		}
	}
	if (!copy_limit(in, "run_timeout", limits, "wallTimeMs", f) ||
	    !copy_limit(in, "compile_timeout", limits, "compileTimeMs", f) ||
	    !copy_limit(in, "run_memory_limit", limits, "memoryBytes", f))
		goto done;
	cJSON_AddItemToObject(o, "limits", limits);
	limits = NULL;
	char *text = cJSON_PrintUnformatted(o);
	buf_append(out, text, strlen(text));
	free(text);
	ok = true;
	goto done;
bad_files:
	fail(f, E_INVALID_TYPE, "files must be an array of {name, content, encoding}");
done:
	cJSON_Delete(limits);
	cJSON_Delete(o);
	cJSON_Delete(in);
	return ok;
}

/* One phase in Piston's shape. */
static cJSON *piston_phase(const struct sandbox_phase *p)
{
	cJSON *o = cJSON_CreateObject();
	struct buf both = {0};
	buf_append(&both, p->out.data, p->out.len);
	buf_append(&both, p->err.data, p->err.len);
	json_add_bytes(o, "stdout", p->out.data, p->out.len);
	json_add_bytes(o, "stderr", p->err.data, p->err.len);
	json_add_bytes(o, "output", both.data, both.len);
	buf_free(&both);
	/* Piston reports a killed program as code null, signal "SIGKILL". */
	bool killed = p->timed_out || p->oom_killed || p->truncated || p->exit_code == 137;
	if (killed) {
		cJSON_AddNullToObject(o, "code");
		cJSON_AddStringToObject(o, "signal", "SIGKILL");
	} else {
		cJSON_AddNumberToObject(o, "code", p->exit_code);
		cJSON_AddNullToObject(o, "signal");
	}
	return o;
}

cJSON *piston_result(const struct request *rq)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "language", rq->lang->name);
	cJSON_AddStringToObject(o, "version", rq->lang->full_version);
	if (rq->result.has_compile)
		cJSON_AddItemToObject(o, "compile", piston_phase(&rq->result.compile));
	if (rq->result.has_run)
		cJSON_AddItemToObject(o, "run", piston_phase(&rq->result.run));
	return o;
}

void piston_runtimes(struct worker *w, struct request *rq)
{
	cJSON *list = cJSON_CreateArray();
	for (size_t i = 0; i < w->reg.n; i++)
		if (w->reg.langs[i].image_id)
			cJSON_AddItemToArray(list, language_to_json(&w->reg.langs[i]));
	http_send_json(&rq->io, 200, "", list);
	cJSON_Delete(list);
}
