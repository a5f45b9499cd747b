/*
 * piston.c: Piston's API on ours (piston.h): its request translated into a
 * POST /execute body, its names for our languages, its runtimes list, and
 * what its package and WebSocket routes get instead. What becomes of each
 * of its fields, and why where we differ from real Piston, is the table in
 * docs/API.md (Piston-compatible API); the result is piston_result.c's.
 */
#define _GNU_SOURCE
#include "piston.h"
#include "encode.h"
#include "request.h"
#include "respond.h"
#include "semver.h"
#include "../conf/lib/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Piston's names where they are not ours are the registry's (piston:
 * in registry/registry.yaml); a language without them is named as ours. */
const char *piston_language_name(const struct language *l)
{
	return l->piston_name ? l->piston_name : l->name;
}

/* Is name Piston's name or one of its aliases for l? */
static bool piston_calls(const struct language *l, const char *name)
{
	if (l->piston_name && !strcasecmp(l->piston_name, name))
		return true;
	for (size_t j = 0; j < l->piston_aliases.n; j++)
		if (!strcasecmp(l->piston_aliases.v[j], name))
			return true;
	return false;
}

/* A language by Piston's name or alias, else by ours, at the highest of
 * its versions that the semver range admits (as Piston picks); NULL if
 * none. *known: whether the language is there at all. */
static const struct language *find_language(const struct registry *reg, const char *name,
					    const char *range, bool *known)
{
	size_t n;
	const struct language *first = NULL;
	for (size_t i = 0; i < reg->n && !first; i++)
		if (piston_calls(&reg->langs[i], name))
			first = registry_family(reg, reg->langs[i].name, &n);
	if (!first)
		first = registry_family(reg, name, &n);
	*known = first != NULL;
	return first ? registry_highest(first, n, semver_satisfies, range) : NULL;
}

/* A utf8 file: Piston's code files are these, and its entry the first. */
static bool is_utf8(const cJSON *file)
{
	const cJSON *enc = json_field(file, "encoding");
	return !enc || (cJSON_IsString(enc) && !strcmp(enc->valuestring, "utf8"));
}

/* files[i] (first: the entry) into ours: named, content decoded as ours
 * reads it (utf8 as text, base64 as base64, hex as base64). */
static bool add_file(cJSON *ofiles, const cJSON *file, int i, bool entry, struct fault *f)
{
	static const char *const known[] = {"name", "content", "encoding", NULL};
	char what[32];
	snprintf(what, sizeof what, "files[%d]", i);
	if (!json_known_keys(file, known, what, f))
		return false;
	const cJSON *name = json_field(file, "name");
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(file, "content");
	const cJSON *enc = cJSON_GetObjectItemCaseSensitive(file, "encoding");
	cJSON *of = cJSON_CreateObject();
	cJSON_AddItemToArray(ofiles, of);
	/* Piston names a nameless file file${i}.code. The entry keeps our name
	 * for it (main.py): our compile and run steps find files by extension. */
	bool nameless = !name || (cJSON_IsString(name) && !name->valuestring[0]);
	if (!nameless) {
		cJSON_AddItemToObject(of, "name", cJSON_Duplicate(name, true));
	} else if (!entry) {
		char piston_name[32];
		snprintf(piston_name, sizeof piston_name, "file%d.code", i);
		cJSON_AddStringToObject(of, "name", piston_name);
	}
	if (is_utf8(file)) {
		cJSON_AddItemToObject(of, "content", cJSON_Duplicate(content, true));
		return true;
	}
	const char *encoding = cJSON_IsString(enc) ? enc->valuestring : "";
	if (!strcmp(encoding, "base64")) { /* decoded, strictly, where ours are */
		cJSON_AddItemToObject(of, "content", cJSON_Duplicate(content, true));
		cJSON_AddStringToObject(of, "encoding", "base64");
		return true;
	}
	if (strcmp(encoding, "hex"))
		return fail(f, cJSON_IsString(enc) ? E_INVALID_VALUE : E_INVALID_TYPE,
			    "%s.encoding must be \"utf8\", \"base64\" or \"hex\"", what);
	struct buf raw = {0};
	bool decoded = hex_decode(content->valuestring, &raw);
	if (decoded) {
		char *b64 = base64_encode(raw.data, raw.len);
		cJSON_AddStringToObject(of, "content", b64);
		cJSON_AddStringToObject(of, "encoding", "base64");
		free(b64);
	}
	buf_free(&raw);
	return decoded || fail(f, E_INVALID_VALUE, "%s.content is not hex (pairs of hex digits)", what);
}

/* Piston's checks on files, in its order: an array, each with a string
 * content; then (after the runtime) not empty. */
static bool check_files(const cJSON *files, struct fault *f)
{
	const cJSON *file;
	int i = 0;
	if (!cJSON_IsArray(files))
		return fail(f, files ? E_INVALID_TYPE : E_MISSING_FIELD,
			    "files is required as an array");
	cJSON_ArrayForEach(file, files) {
		if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(file, "content")))
			return fail(f, E_INVALID_TYPE, "files[%d].content is required as a string", i);
		i++;
	}
	return true;
}

/* The entry first (Piston's: the first utf8 file; none: the first file),
 * then the others in their order. One pass each: a body may hold
 * thousands of files until ours refuses more than request.maxFiles. */
static bool translate_files(const cJSON *files, cJSON *o, struct fault *f)
{
	const cJSON *file, *entry = NULL;
	int i = 0, entry_at = 0;
	cJSON_ArrayForEach(file, files) {
		if (!entry && is_utf8(file)) {
			entry = file;
			entry_at = i;
		}
		i++;
	}
	if (i == 0)
		return fail(f, E_EMPTY_CODE, "files must include at least one utf8 encoded file");
	if (!entry)
		entry = files->child;
	cJSON *ofiles = cJSON_AddArrayToObject(o, "files");
	if (!add_file(ofiles, entry, entry_at, true, f))
		return false;
	i = 0;
	cJSON_ArrayForEach(file, files) {
		if (file != entry && !add_file(ofiles, file, i, false, f))
			return false;
		i++;
	}
	return true;
}

/*
 * A Piston limit into ours (to: NULL for one we take and ignore). Piston
 * reads 0 as no limit and -1 as none; ours never lifts a limit, so both
 * (and null) mean the language's default. Others are clamped later, as
 * every limit is (a fraction is rounded up to a whole ms or byte).
 */
static bool translate_limit(const cJSON *in, const char *from, cJSON *limits, const char *to,
			    struct fault *f)
{
	const cJSON *v = json_field(in, from);
	if (!v)
		return true;
	if (!cJSON_IsNumber(v))
		return fail(f, E_INVALID_TYPE, "If specified, %s must be a number", from);
	double d = v->valuedouble;
	if (d == 0 || d == -1)
		return true;
	if (d < 0)
		return fail(f, E_INVALID_VALUE, "%s must be non-negative", from);
	if (to)
		cJSON_AddNumberToObject(limits, to, d > 1e15 ? 1e15 : ceil(d));
	return true;
}

/* stdin as Piston gives it: with a newline at the end ("" included). */
static bool translate_stdin(const cJSON *in, cJSON *o, struct fault *f)
{
	const cJSON *v = json_field(in, "stdin");
	if (v && !cJSON_IsString(v))
		return fail(f, E_INVALID_TYPE, "stdin must be a string");
	const char *s = cJSON_IsString(v) ? v->valuestring : "";
	size_t n = strlen(s);
	char *text = n && s[n - 1] == '\n' ? xstrdup(s) : xasprintf("%s\n", s);
	cJSON_AddStringToObject(o, "stdin", text);
	free(text);
	return true;
}

/* Piston's request (in) into ours (o), with Piston's checks in its order
 * and its messages where its checks are ours too. */
static bool translate(const cJSON *in, const struct registry *reg, cJSON *o, struct fault *f)
{
	/* null is absent, as in every request body (json_field). */
	const cJSON *language = json_field(in, "language");
	const cJSON *version = json_field(in, "version");
	const cJSON *files = json_field(in, "files");
	const cJSON *args = json_field(in, "args");
	if (!cJSON_IsString(language) || !language->valuestring[0]) {
		bool absent = !language || cJSON_IsString(language);
		return fail(f, absent ? E_MISSING_FIELD : E_INVALID_TYPE, "language is required as a string");
	}
	if (version && !cJSON_IsString(version))
		return fail(f, E_INVALID_TYPE, "version is required as a string");
	if (!check_files(files, f))
		return false;
	/* Piston requires a version; absent, we take any (as "*"). */
	const char *range = cJSON_IsString(version) ? version->valuestring : "*";
	bool known;
	const struct language *l = find_language(reg, language->valuestring, range, &known);
	if (!l)
		return fail(f, known ? E_UNKNOWN_VERSION : E_UNKNOWN_LANGUAGE, "%.150s-%.150s runtime is unknown",
			    language->valuestring, range);
	/* The full version: it picks this one entry again (registry_find). */
	cJSON_AddStringToObject(o, "language", l->name);
	cJSON_AddStringToObject(o, "version", l->full_version);
	if (!translate_files(files, o, f) || !translate_stdin(in, o, f))
		return false;
	if (args)
		cJSON_AddItemToObject(o, "args", cJSON_Duplicate(args, true));
	cJSON *limits = cJSON_AddObjectToObject(o, "limits");
	return translate_limit(in, "compile_memory_limit", limits, NULL, f) && /* one sandbox for both */
	       translate_limit(in, "run_memory_limit", limits, "memoryBytes", f) &&
	       translate_limit(in, "compile_timeout", limits, "compileTimeMs", f) &&
	       translate_limit(in, "run_timeout", limits, "wallTimeMs", f) &&
	       translate_limit(in, "compile_cpu_time", limits, NULL, f) && /* we bound wall time */
	       translate_limit(in, "run_cpu_time", limits, NULL, f);
}

bool piston_translate(const struct buf *body, const struct registry *reg, size_t max_values,
		      struct buf *out, struct fault *f)
{
	static const char *const known[] = {"language", "version", "files", "stdin", "args",
		"compile_timeout", "run_timeout", "compile_memory_limit", "run_memory_limit",
		"compile_cpu_time", "run_cpu_time", NULL};
	cJSON *in;
	if (!json_parse_strict(body->data, body->len, max_values, &in, f))
		return false;
	cJSON *o = cJSON_CreateObject();
	bool ok = json_object(in, "the request body", f) && json_known_keys(in, known, "the request", f) &&
		  translate(in, reg, o, f);
	if (ok) {
		char *text = cJSON_PrintUnformatted(o);
		buf_append(out, text, strlen(text));
		free(text);
	}
	cJSON_Delete(o);
	cJSON_Delete(in);
	return ok;
}

static void add_alias(cJSON *aliases, const char *alias, const char *name)
{
	const cJSON *a;
	if (!strcmp(alias, name))
		return;
	cJSON_ArrayForEach(a, aliases)
		if (!strcmp(a->valuestring, alias))
			return;
	cJSON_AddItemToArray(aliases, cJSON_CreateString(alias));
}

void piston_runtimes(struct worker *w, struct request *rq)
{
	cJSON *list = cJSON_CreateArray();
	for (size_t i = 0; i < w->reg.n; i++) {
		const struct language *l = &w->reg.langs[i];
		const char *name = piston_language_name(l);
		if (!l->image_id)
			continue; /* Piston lists what is installed */
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "language", name);
		cJSON_AddStringToObject(r, "version", l->full_version);
		cJSON *aliases = cJSON_AddArrayToObject(r, "aliases");
		add_alias(aliases, l->name, name);
		for (size_t j = 0; j < l->aliases.n; j++)
			add_alias(aliases, l->aliases.v[j], name);
		for (size_t j = 0; j < l->piston_aliases.n; j++)
			add_alias(aliases, l->piston_aliases.v[j], name);
		if (l->piston_runtime)
			cJSON_AddStringToObject(r, "runtime", l->piston_runtime);
		cJSON_AddItemToArray(list, r);
	}
	http_send_json(&rq->io, 200, "", list);
	cJSON_Delete(list);
}

void piston_packages(struct worker *w, struct request *rq)
{
	(void)w;
	fail(&rq->fault, E_NOT_SUPPORTED, "isobox has no package manager: each language comes with its "
	     "packages built into its image (GET /api/v2/runtimes lists the languages). To install more "
	     "while you work, use a session: POST /v1/sessions (with \"network\": true), then pip or npm "
	     "install into its /workspace, which is kept from step to step");
	respond_fault(rq, "");
}

void piston_connect(struct worker *w, struct request *rq)
{
	(void)w;
	fail(&rq->fault, E_NOT_SUPPORTED, "no WebSocket here: a FastCGI worker cannot upgrade a "
	     "connection. For output as it is written, POST /execute with Accept: text/event-stream; for "
	     "interactive, stateful use (input step by step, files and state kept), a session: "
	     "POST /v1/sessions, then POST /v1/sessions/{id}/exec");
	respond_fault(rq, "");
}
