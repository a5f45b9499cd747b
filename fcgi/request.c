/* request.c: parse and validate POST /execute. */
#define _GNU_SOURCE
#include "request.h"
#include "encode.h"
#include "../conf/lib/json.h"
#include "../conf/store/store.h"

#include <stdio.h>
#include <string.h>

void request_free(struct request *rq)
{
	free(rq->path);
	free(rq->params[0]);
	free(rq->params[1]);
	buf_free(&rq->body);
	cJSON_Delete(rq->json);
	free(rq->files);
	for (size_t i = 0; i < rq->n_decoded; i++)
		buf_free(&rq->decoded[i]);
	free(rq->decoded);
	strv_free(&rq->args);
	strv_free(&rq->outputs);
	sandbox_result_free(&rq->result);
	*rq = (struct request){0};
}

static int hex_digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* p[0..n) with %XX decoded; NULL if an escape is broken or makes a NUL. */
static char *percent_decode(const char *p, size_t n)
{
	char *out = xmalloc(n + 1), *o = out;
	for (size_t i = 0; i < n; i++) {
		if (p[i] != '%') {
			*o++ = p[i];
			continue;
		}
		int hi = i + 2 < n ? hex_digit(p[i + 1]) : -1, lo = hi >= 0 ? hex_digit(p[i + 2]) : -1;
		if (lo < 0 || (hi | lo) == 0) {
			free(out);
			return NULL;
		}
		*o++ = (char)(hi << 4 | lo);
		i += 2;
	}
	*o = '\0';
	return out;
}

bool request_id_sane(const char *given)
{
	size_t n = strspn(given, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-");
	return n > 0 && n <= REQUEST_ID_MAX && !given[n];
}

char *request_route(const char *path_info, const char *request_uri)
{
	if (path_info && path_info[0])
		return xstrdup(path_info);
	if (!request_uri || !request_uri[0])
		return xstrdup("/");
	/* Decoded, as PATH_INFO is (servers decode it): one path, one meaning.
	 * One that does not decode (a broken escape, a NUL) is "": no route. */
	char *path = percent_decode(request_uri, strcspn(request_uri, "?#"));
	return path ? path : xstrdup("");
}

bool request_match(const char *pattern, const char *path, char *params[2])
{
	size_t k = 0;
	params[0] = params[1] = NULL;
	while (*pattern && *path) {
		if (*pattern != '*') {
			if (*pattern++ != *path++)
				goto no;
			continue;
		}
		bool rest = pattern[1] == '*';
		size_t n = rest ? strlen(path) : strcspn(path, "/");
		if (n == 0 || k == 2)
			goto no;
		params[k++] = xstrndup(path, n);
		pattern += rest ? 2 : 1;
		path += n;
	}
	if (!*pattern && !*path)
		return true;
no:
	free(params[0]);
	free(params[1]);
	params[0] = params[1] = NULL;
	return false;
}

bool request_parse_object(struct request *rq, size_t max_values, const char *const known[], const char *what)
{
	return json_parse_strict(rq->body.data, rq->body.len, max_values, &rq->json, &rq->fault) &&
	       json_object(rq->json, "the request body", &rq->fault) &&
	       json_known_keys(rq->json, known, what, &rq->fault);
}

char *request_query_param(const char *query, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = query ? query : ""; *p;) {
		size_t n = strcspn(p, "&");
		if (n > len && !strncmp(p, name, len) && p[len] == '=') {
			char *raw = xstrndup(p + len + 1, n - len - 1);
			for (char *q = raw; *q; q++)
				if (*q == '+')
					*q = ' ';
			char *value = percent_decode(raw, strlen(raw));
			free(raw);
			return value;
		}
		p += n + (p[n] == '&');
	}
	return NULL;
}

/* A file's name, checked against the others: no duplicates, and no name that
 * is both a file and a directory ("a" and "a/b"). */
static bool check_name_clash(const struct sandbox_file *files, size_t n, const char *name,
			     struct fault *f)
{
	size_t len = strlen(name);
	for (size_t i = 0; i < n; i++) {
		const char *o = files[i].name;
		size_t olen = strlen(o);
		if (!strcmp(o, name))
			return fail(f, E_BAD_FILE_NAME, "file name \"%.64s\" is used twice", name);
		if ((olen < len && !strncmp(o, name, olen) && name[olen] == '/') ||
		    (len < olen && !strncmp(o, name, len) && o[len] == '/'))
			return fail(f, E_BAD_FILE_NAME,
				    "\"%.64s\" is both a file and a directory", olen < len ? o : name);
	}
	return true;
}

static bool parse_files(struct request *rq, const cJSON *arr, const struct conf *c)
{
	static const char *const known[] = {"name", "content", "encoding", NULL};
	struct fault *f = &rq->fault;
	if (!cJSON_IsArray(arr))
		return fail(f, E_INVALID_TYPE, "files must be an array of {name, content}");
	int n = cJSON_GetArraySize(arr);
	if (n == 0)
		return fail(f, E_EMPTY_CODE, "files is empty");
	if (n > c->request.max_files)
		return fail(f, E_TOO_MANY_FILES, "at most %lld files are allowed",
			    (long long)c->request.max_files);
	rq->files = xcalloc((size_t)n, sizeof *rq->files);
	rq->decoded = xcalloc((size_t)n, sizeof *rq->decoded);
	rq->n_decoded = (size_t)n;
	const cJSON *o;
	size_t i = 0;
	cJSON_ArrayForEach(o, arr) {
		char what[48];
		const char *name, *content;
		snprintf(what, sizeof what, "files[%zu]", i);
		if (!json_object(o, what, f) || !json_known_keys(o, known, what, f))
			return false;
		const cJSON *nv = json_field(o, "name");
		snprintf(what, sizeof what, "files[%zu].name", i);
		if (!nv && i == 0)
			name = rq->lang->file; /* the entry point may go unnamed */
		else if (!json_string(nv, what, &name, f))
			return false;
		snprintf(what, sizeof what, "files[%zu].content", i);
		if (!json_string(json_field(o, "content"), what, &content, f))
			return false;
		if (!sandbox_valid_path(name, (size_t)c->request.max_path_bytes, f) ||
		    !check_name_clash(rq->files, i, name, f))
			return false;
		size_t len = strlen(content);
		/* Binary files (NUL included) come base64-encoded. */
		const char *encoding = "utf-8";
		const cJSON *ev = json_field(o, "encoding");
		snprintf(what, sizeof what, "files[%zu].encoding", i);
		if (ev && !json_string(ev, what, &encoding, f))
			return false;
		if (strcmp(encoding, "utf-8") && strcmp(encoding, "base64"))
			return fail(f, E_INVALID_VALUE, "%s must be \"utf-8\" or \"base64\"", what);
		if (!strcmp(encoding, "base64")) {
			if (len > (size_t)c->request.max_file_bytes / 3 * 4 + 4)
				return fail(f, E_FILE_TOO_LARGE, "file \"%.64s\" is over %lld bytes",
					    name, (long long)c->request.max_file_bytes);
			if (!base64_decode(content, &rq->decoded[i]))
				return fail(f, E_INVALID_VALUE, "files[%zu].content is not base64", i);
			content = rq->decoded[i].data ? rq->decoded[i].data : "";
			len = rq->decoded[i].len;
		}
		if (len > (size_t)c->request.max_file_bytes)
			return fail(f, E_FILE_TOO_LARGE, "file \"%.64s\" is over %lld bytes",
				    name, (long long)c->request.max_file_bytes);
		rq->files[i++] = (struct sandbox_file){.name = name, .data = content, .len = len};
	}
	if (rq->files[0].len == 0)
		return fail(f, E_EMPTY_CODE, "the entry file \"%.64s\" is empty", rq->files[0].name);
	rq->job.n_files = i;
	return true;
}

static bool parse_program(struct request *rq, const struct conf *c, const cJSON *root);

bool request_parse_language(struct request *rq, const cJSON *root, const struct registry *reg)
{
	struct fault *f = &rq->fault;
	const char *language, *version = NULL;
	const cJSON *v;
	if (!(v = json_field(root, "language")))
		return fail(f, E_MISSING_FIELD, "language is required");
	if (!json_string(v, "language", &language, f))
		return false;
	if ((v = json_field(root, "version")) &&
	    !json_string(v, "version", &version, f))
		return false;
	return (rq->lang = registry_find(reg, language, version, f)) != NULL;
}

/* "outputs": globs of the files to return, inside the work dir. */
static bool parse_outputs(struct request *rq, const struct conf *c, const cJSON *root)
{
	const cJSON *v = json_field(root, "outputs");
	struct fault *f = &rq->fault;
	if (!v)
		return true;
	if (!json_strings(v, "outputs", 16, &rq->outputs, f))
		return false;
	if (rq->outputs.n && !c->warm.agent_dir)
		return fail(f, E_INVALID_REQUEST, "outputs need the agent (warm.agentDir), which this server lacks");
	for (size_t i = 0; i < rq->outputs.n; i++)
		if (!sandbox_valid_path(rq->outputs.v[i], (size_t)c->request.max_path_bytes, f))
			return false;
	rq->job.outputs = rq->outputs.v;
	rq->job.n_outputs = rq->outputs.n;
	return true;
}

bool request_network_allowed(const struct request *rq, const struct conf *c, struct fault *f)
{
	/* Off unless asked; asking works only where the operator allows it,
	 * for the server and for the tenant (the firewall itself is checked
	 * when the run starts). */
	if (rq->network && !c->network.enabled)
		return fail(f, E_NETWORK_DISABLED,
			    "network access is turned off on this server; omit \"network\" or set it to false");
	if (rq->network && rq->share && !rq->share->network)
		return fail(f, E_NETWORK_DISABLED, "tenant %s may not use the network (network: false in "
			    "tenants.yaml); omit \"network\" or set it to false", rq->tenant);
	return true;
}

bool request_parse_volume(struct request *rq, const cJSON *root)
{
	const cJSON *v = json_field(root, "volume");
	const cJSON *ro = json_field(root, "volumeReadOnly");
	const char *name;
	if (ro && !json_bool(ro, "volumeReadOnly", &rq->job.volume_ro, &rq->fault))
		return false;
	if (!v) {
		if (rq->job.volume_ro)
			return fail(&rq->fault, E_INVALID_REQUEST, "volumeReadOnly without a volume");
		return true;
	}
	if (!json_string(v, "volume", &name, &rq->fault))
		return false;
	if (!volume_name_valid(name))
		return fail(&rq->fault, E_INVALID_VALUE, "volume names are [a-z0-9][a-z0-9_.-]*, at most %d",
			    VOLUME_NAME_MAX);
	snprintf(rq->volume_name, sizeof rq->volume_name, "%s", name);
	return true;
}

bool request_parse_execute(struct request *rq, const struct conf *c, const struct registry *reg)
{
	static const char *const known[] = {"language", "version", "code", "files", "stdin", "args",
		"limits", "network", "outputs", "volume", "volumeReadOnly", NULL};
	struct fault *f = &rq->fault;
	const cJSON *v;

	if (!request_parse_object(rq, (size_t)c->request.max_json_values, known, "the request"))
		return false;
	const cJSON *root = rq->json;

	if (!request_parse_language(rq, root, reg))
		return false;
	rq->job.lang = rq->lang;
	if (!parse_program(rq, c, root))
		return false;

	struct limits asked = {0};
	unsigned set = 0;
	if ((v = json_field(root, "limits")) &&
	    !limits_parse(v, "limits", &asked, &set, f))
		return false;
	rq->job.limits = language_limits(rq->lang, &asked, set, c, rq->demo ? &c->demo.ceilings : &c->ceilings);

	if ((v = json_field(root, "network")) &&
	    !json_bool(v, "network", &rq->network, f))
		return false;
	if (!request_network_allowed(rq, c, f))
		return false;
	rq->job.network = rq->network;
	if (!request_parse_volume(rq, root))
		return false;
	if (rq->demo && rq->volume_name[0])
		return fail(f, E_FORBIDDEN, "the demo runs without volumes: ask for an API key to keep files");
	return parse_outputs(rq, c, root);
}

bool request_parse_step(struct request *rq, const struct conf *c, const struct limits *held)
{
	static const char *const known[] = {"code", "files", "stdin", "args", "limits", NULL};
	struct fault *f = &rq->fault;
	const cJSON *v;
	if (!request_parse_object(rq, (size_t)c->request.max_json_values, known, "a session step"))
		return false;
	rq->job.lang = rq->lang;
	if (!parse_program(rq, c, rq->json))
		return false;
	struct limits asked = {0};
	unsigned set = 0;
	if ((v = json_field(rq->json, "limits")) &&
	    !limits_parse(v, "limits", &asked, &set, f))
		return false;
	if (set & (LIMIT_MEMORY | LIMIT_CPUS | LIMIT_PIDS))
		return fail(f, E_INVALID_REQUEST, "memoryBytes, cpus and pids belong to the session: "
			    "set them when you create it; a step sets wallTimeMs and outputBytes");
	/* A step may run longer than a run: an agent's pip install or model
	 * fit takes minutes (sessions.maxStepMs); the session's life still
	 * bounds it. */
	struct limits ceiling = c->ceilings;
	ceiling.wall_time_ms = c->sessions.max_step_ms;
	rq->job.limits = language_limits(rq->lang, &asked, set, c, &ceiling);
	rq->job.limits.memory_bytes = held->memory_bytes;
	rq->job.limits.cpus = held->cpus;
	rq->job.limits.pids = held->pids;
	rq->job.network = rq->network;
	return true;
}

/* code or files, stdin and args: what runs, for /execute and a session step. */
static bool parse_program(struct request *rq, const struct conf *c, const cJSON *root)
{
	struct fault *f = &rq->fault;
	const char *code = NULL, *stdin_data = "";
	const cJSON *v;
	const cJSON *code_v = json_field(root, "code");
	const cJSON *files_v = json_field(root, "files");
	if (code_v && files_v)
		return fail(f, E_INVALID_REQUEST, "send code or files, not both");
	if (!code_v && !files_v)
		return fail(f, E_MISSING_FIELD, "code or files is required");
	if (code_v) {
		if (!json_string(code_v, "code", &code, f))
			return false;
		if (!code[0])
			return fail(f, E_EMPTY_CODE, "code is empty");
		if (strlen(code) > (size_t)c->request.max_file_bytes)
			return fail(f, E_FILE_TOO_LARGE, "code is over %lld bytes",
				    (long long)c->request.max_file_bytes);
		rq->files = xcalloc(1, sizeof *rq->files);
		rq->files[0] = (struct sandbox_file){.name = rq->lang->file, .data = code,
						      .len = strlen(code)};
		rq->job.n_files = 1;
	} else if (!parse_files(rq, files_v, c)) {
		return false;
	}
	rq->job.files = rq->files;

	if ((v = json_field(root, "stdin")) &&
	    !json_string(v, "stdin", &stdin_data, f))
		return false;
	rq->job.stdin_data = stdin_data;
	rq->job.stdin_len = strlen(stdin_data);
	if (rq->job.stdin_len > (size_t)c->request.max_stdin_bytes)
		return fail(f, E_STDIN_TOO_LARGE, "stdin is over %lld bytes",
			    (long long)c->request.max_stdin_bytes);

	if ((v = json_field(root, "args")) &&
	    !json_strings(v, "args", (size_t)c->request.max_args, &rq->args, f))
		return false;
	for (size_t i = 0; i < rq->args.n; i++)
		if (strlen(rq->args.v[i]) > (size_t)c->request.max_arg_bytes)
			return fail(f, E_INVALID_VALUE, "args[%zu] is over %lld bytes", i,
				    (long long)c->request.max_arg_bytes);
	rq->job.args = rq->args.v;
	rq->job.n_args = rq->args.n;
	return true;
}
