/* conf.c: load conf/isobox.yaml. */
#define _GNU_SOURCE
#include "conf.h"
#include "json.h"
#include "yaml_tree.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>

char *path_join(const char *dir, const char *path)
{
	if (path[0] == '/' || !dir || !dir[0])
		return xstrdup(path);
	return xasprintf("%s/%s", dir, path);
}

static bool valid_instance(const char *s)
{
	if (!s[0] || strlen(s) > 32)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return false;
	return true;
}

/* Read key as a string; a relative path is resolved against base_dir. */
static bool get_path(const cJSON *o, const char *key, const char *base_dir, char **out, struct fault *f)
{
	const char *s;
	if (!json_string(cJSON_GetObjectItemCaseSensitive(o, key), key, &s, f))
		return false;
	if (!s[0])
		return fail(f, 400, "invalid_value", "%s must not be empty", key);
	*out = path_join(base_dir, s);
	return true;
}

static bool get_int(const cJSON *o, const char *section, const char *key, int64_t min, int64_t *out, struct fault *f)
{
	char name[96];
	snprintf(name, sizeof name, "%s.%s", section, key);
	return json_int(cJSON_GetObjectItemCaseSensitive(o, key), name, min, (int64_t)1 << 40, out, f);
}

static bool get_limits(const cJSON *root, const char *key, struct limits *l, struct fault *f)
{
	unsigned set;
	if (!limits_parse(cJSON_GetObjectItemCaseSensitive(root, key), key, l, &set, f))
		return false;
	if (set != LIMIT_ALL)
		return fail(f, 400, "missing_field", "%s must set every limit but compileTimeMs", key);
	return true;
}

/* An optional integer key: absent keeps *out (the default). */
static bool get_optional_int(const cJSON *o, const char *section, const char *key, int64_t min,
			     int64_t *out, struct fault *f)
{
	return !cJSON_GetObjectItemCaseSensitive(o, key) || get_int(o, section, key, min, out, f);
}

/*
 * pool: the master's settings. Only `workers` is required; the rest keep
 * php-fpm-like defaults (never recycle, wait when busy, 60 s hang margin).
 */
static bool parse_pool(const cJSON *o, struct conf_pool *p, struct fault *f)
{
	static const char *const keys[] = {"workers", "maxRequests", "whenBusy", "hangMarginMs", NULL};
	p->max_requests = 0;
	p->reject_when_busy = false;
	p->hang_margin_ms = 60000;
	if (!json_object(o, "pool", f) || !json_known_keys(o, keys, "pool", f) ||
	    !get_int(o, "pool", "workers", 0, &p->workers, f) ||
	    !get_optional_int(o, "pool", "maxRequests", 0, &p->max_requests, f) ||
	    !get_optional_int(o, "pool", "hangMarginMs", 1000, &p->hang_margin_ms, f))
		return false;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "whenBusy");
	const char *s;
	if (v) {
		if (!json_string(v, "pool.whenBusy", &s, f))
			return false;
		if (strcmp(s, "wait") && strcmp(s, "reject"))
			return fail(f, 400, "invalid_value", "pool.whenBusy must be \"wait\" or \"reject\"");
		p->reject_when_busy = !strcmp(s, "reject");
	}
	return true;
}

static bool parse(const cJSON *root, const char *base_dir, struct conf *c, struct fault *f)
{
	static const char *const top[] = {"instance", "registry", "imagesLock", "workDir", "docker",
		"runtime", "cgroupParent", "pool", "ceilings", "floors", "request", "sandbox", "access", NULL};
	static const char *const request_keys[] = {"maxBodyBytes", "maxFiles", "maxFileBytes",
		"maxPathBytes", "maxArgs", "maxArgBytes", "maxStdinBytes", NULL};
	static const char *const sandbox_keys[] = {"tmpBytes", "workBytes", "pidsBackstop",
		"startTimeoutMs", NULL};
	const char *s;
	const cJSON *o;

	if (!json_object(root, "the settings file", f) || !json_known_keys(root, top, "settings", f))
		return false;
	if (!json_string(cJSON_GetObjectItemCaseSensitive(root, "instance"), "instance", &s, f))
		return false;
	if (!valid_instance(s))
		return fail(f, 400, "invalid_value", "instance must be 1-32 of [a-z0-9-]");
	c->instance = xstrdup(s);
	if (!get_path(root, "registry", base_dir, &c->registry, f) ||
	    !get_path(root, "imagesLock", base_dir, &c->images_lock, f) ||
	    !get_path(root, "workDir", base_dir, &c->work_dir, f) ||
	    !get_path(root, "docker", base_dir, &c->docker, f))
		return false;
	if (!json_string(cJSON_GetObjectItemCaseSensitive(root, "runtime"), "runtime", &s, f))
		return false;
	c->runtime = xstrdup(s);
	if (!json_string(cJSON_GetObjectItemCaseSensitive(root, "cgroupParent"), "cgroupParent", &s, f))
		return false;
	c->cgroup_parent = xstrdup(s);

	if (!parse_pool(cJSON_GetObjectItemCaseSensitive(root, "pool"), &c->pool, f) ||
	    !access_parse(cJSON_GetObjectItemCaseSensitive(root, "access"), &c->access, f))
		return false;

	if (!get_limits(root, "ceilings", &c->ceilings, f) || !get_limits(root, "floors", &c->floors, f))
		return false;
	const struct limits *lo = &c->floors, *hi = &c->ceilings;
	if (lo->memory_bytes > hi->memory_bytes || lo->cpus > hi->cpus || lo->pids > hi->pids ||
	    lo->output_bytes > hi->output_bytes || lo->wall_time_ms > hi->wall_time_ms)
		return fail(f, 400, "invalid_value", "every floor must be at most its ceiling");

	o = cJSON_GetObjectItemCaseSensitive(root, "request");
	if (!json_object(o, "request", f) || !json_known_keys(o, request_keys, "request", f) ||
	    !get_int(o, "request", "maxBodyBytes", 1024, &c->request.max_body_bytes, f) ||
	    !get_int(o, "request", "maxFiles", 1, &c->request.max_files, f) ||
	    !get_int(o, "request", "maxFileBytes", 1, &c->request.max_file_bytes, f) ||
	    !get_int(o, "request", "maxPathBytes", 1, &c->request.max_path_bytes, f) ||
	    !get_int(o, "request", "maxArgs", 0, &c->request.max_args, f) ||
	    !get_int(o, "request", "maxArgBytes", 1, &c->request.max_arg_bytes, f) ||
	    !get_int(o, "request", "maxStdinBytes", 0, &c->request.max_stdin_bytes, f))
		return false;

	o = cJSON_GetObjectItemCaseSensitive(root, "sandbox");
	if (!json_object(o, "sandbox", f) || !json_known_keys(o, sandbox_keys, "sandbox", f) ||
	    !get_int(o, "sandbox", "tmpBytes", 1 << 20, &c->sandbox.tmp_bytes, f) ||
	    !get_int(o, "sandbox", "workBytes", 1 << 20, &c->sandbox.work_bytes, f) ||
	    !get_int(o, "sandbox", "pidsBackstop", 64, &c->sandbox.pids_backstop, f) ||
	    !get_int(o, "sandbox", "startTimeoutMs", 1000, &c->sandbox.start_timeout_ms, f))
		return false;
	return true;
}

bool conf_parse(const char *text, size_t len, const char *base_dir, struct conf *out,
		char *err, size_t errlen)
{
	struct fault f = {0};
	char yerr[300];
	*out = (struct conf){0};
	cJSON *root = yaml_load_string(text, len, yerr, sizeof yerr);
	if (!root) {
		snprintf(err, errlen, "%s", yerr);
		return false;
	}
	bool ok = parse(root, base_dir, out, &f);
	cJSON_Delete(root);
	if (!ok) {
		snprintf(err, errlen, "%s", f.message);
		conf_free(out);
	}
	return ok;
}

bool conf_load(const char *path, struct conf *out, char *err, size_t errlen)
{
	struct buf text = {0};
	char inner[400];
	*out = (struct conf){0};
	if (!read_file(path, 1 << 20, &text, err, errlen))
		return false;
	/* Resolve relative paths against the file's real directory, not our cwd. */
	autofree char *real = realpath(path, NULL);
	if (!real) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		buf_free(&text);
		return false;
	}
	bool ok = conf_parse(text.data, text.len, dirname(real), out, inner, sizeof inner);
	buf_free(&text);
	if (!ok) {
		snprintf(err, errlen, "%s: %s", path, inner);
		return false;
	}
	out->path = xstrdup(path);
	return true;
}

void conf_free(struct conf *c)
{
	free(c->path);
	free(c->instance);
	free(c->registry);
	free(c->images_lock);
	free(c->work_dir);
	free(c->docker);
	free(c->runtime);
	free(c->cgroup_parent);
	access_free(&c->access);
	*c = (struct conf){0};
}
