/* registry.c: load registry.yaml and the image lock. */
#include "registry.h"
#include "../conf/lib/json.h"
#include "../conf/yaml_tree.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Names, aliases and image names: short, lower case, no path characters. */
static bool valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 32 || s[0] == '.' || s[0] == '-')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      strchr("+#._-", *s)))
			return false;
	return true;
}

static bool valid_env_key(const char *s)
{
	if (!s[0] || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static bool valid_image_id(const char *s)
{
	if (strncmp(s, "sha256:", 7) || strlen(s) != 7 + 64)
		return false;
	for (s += 7; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

bool version_matches(const char *pin, const char *full)
{
	size_t n = strlen(pin);
	return n && !strncmp(pin, full, n) && (full[n] == '\0' || full[n] == '.');
}

/* Is s a name or alias of one of the first `count` languages? */
static bool name_taken(const struct registry *r, size_t count, const char *s)
{
	for (size_t i = 0; i < count; i++) {
		if (!strcasecmp(r->langs[i].name, s))
			return true;
		for (size_t j = 0; j < r->langs[i].aliases.n; j++)
			if (!strcasecmp(r->langs[i].aliases.v[j], s))
				return true;
	}
	return false;
}

static bool parse_language(const cJSON *o, const char *what, struct registry *r, struct fault *f)
{
	static const char *const known[] = {"name", "aliases", "version", "image", "file", "compile",
		"compileTimeMs", "run", "env", "limits", "agent", "preload", "kernel", "note", NULL};
	struct language *l = &r->langs[r->n];
	const char *s;
	char name[128];
	unsigned set;

	if (!json_object(o, what, f) || !json_known_keys(o, known, what, f))
		return false;
	snprintf(name, sizeof name, "%s.name", what);
	if (!json_string(cJSON_GetObjectItemCaseSensitive(o, "name"), name, &s, f))
		return false;
	if (!valid_name(s))
		return fail(f, E_INVALID_VALUE, "%s \"%.40s\" must be 1-32 of [a-z0-9+#._-]", name, s);
	if (name_taken(r, r->n, s))
		return fail(f, E_INVALID_VALUE, "%s \"%s\" is already used", name, s);
	l->name = xstrdup(s);
	/* From here on, l is part of r, so registry_free releases it on failure. */
	r->n++;
	snprintf(name, sizeof name, "%s (%s)", what, l->name);

	const cJSON *aliases = cJSON_GetObjectItemCaseSensitive(o, "aliases");
	if (aliases && !json_strings(aliases, "aliases", 32, &l->aliases, f))
		return false;
	for (size_t i = 0; i < l->aliases.n; i++) {
		const char *a = l->aliases.v[i];
		if (!valid_name(a))
			return fail(f, E_INVALID_VALUE, "%s: bad alias \"%.40s\"", name, a);
		/* Compare with the languages before this one, and with its own. */
		bool taken = name_taken(r, r->n - 1, a) || !strcasecmp(a, l->name);
		for (size_t j = 0; j < i; j++)
			taken = taken || !strcasecmp(a, l->aliases.v[j]);
		if (taken)
			return fail(f, E_INVALID_VALUE, "%s: alias \"%s\" is already used", name, a);
	}
	if (!json_string(cJSON_GetObjectItemCaseSensitive(o, "version"), "version", &s, f) ||
	    !s[0])
		return fail(f, E_INVALID_VALUE, "%s: version must be a non-empty string", name);
	l->version = xstrdup(s);
	if (!json_string(cJSON_GetObjectItemCaseSensitive(o, "image"), "image", &s, f) ||
	    !valid_name(s))
		return fail(f, E_INVALID_VALUE, "%s: image must be a recipe name", name);
	l->image = xstrdup(s);
	if (!json_string(cJSON_GetObjectItemCaseSensitive(o, "file"), "file", &s, f) ||
	    !s[0] || strchr(s, '/') || !strcmp(s, ".") || !strcmp(s, ".."))
		return fail(f, E_INVALID_VALUE, "%s: file must be a plain file name", name);
	l->file = xstrdup(s);
	const cJSON *note = cJSON_GetObjectItemCaseSensitive(o, "note");
	if (note && (!json_string(note, "note", &s, f) || !s[0] || strlen(s) > 400))
		return f->code ? false : fail(f, E_INVALID_VALUE, "%s: note must be 1-400 characters", name);
	l->note = note ? xstrdup(s) : NULL;
	if (!json_strings(cJSON_GetObjectItemCaseSensitive(o, "run"), "run", 64, &l->run, f))
		return false;
	if (l->run.n == 0)
		return fail(f, E_INVALID_VALUE, "%s: run must not be empty", name);
	const cJSON *compile = cJSON_GetObjectItemCaseSensitive(o, "compile");
	if (compile && !json_strings(compile, "compile", 64, &l->compile, f))
		return false;
	if (compile && l->compile.n == 0)
		return fail(f, E_INVALID_VALUE, "%s: compile must not be empty", name);
	const cJSON *ctime = cJSON_GetObjectItemCaseSensitive(o, "compileTimeMs");
	if (ctime && !compile)
		return fail(f, E_INVALID_VALUE, "%s: compileTimeMs without compile", name);
	int64_t compile_time_ms = compile ? 10000 : 0;
	if (ctime && !json_int(ctime, "compileTimeMs", 100, 600000, &compile_time_ms, f))
		return false;

	/* The warm pool's agent (sandbox/agent/) and what it imports ahead. */
	const cJSON *agent = cJSON_GetObjectItemCaseSensitive(o, "agent");
	if (agent && !json_strings(agent, "agent", 8, &l->agent, f))
		return false;
	if (agent && (l->agent.n == 0 || compile))
		return fail(f, E_INVALID_VALUE, "%s: agent must be a command, for a language without compile", name);
	const cJSON *preload = cJSON_GetObjectItemCaseSensitive(o, "preload");
	if (preload && (!agent || !json_strings(preload, "preload", 64, &l->preload, f)))
		return f->code ? false : fail(f, E_INVALID_VALUE, "%s: preload needs an agent", name);
	/* Kernel sessions: the interpreter that sandbox/agent/agent.c starts. */
	const cJSON *kernel = cJSON_GetObjectItemCaseSensitive(o, "kernel");
	if (kernel && (!json_strings(kernel, "kernel", 8, &l->kernel, f) || l->kernel.n == 0))
		return f->code ? false : fail(f, E_INVALID_VALUE, "%s: kernel must be a command", name);

	const cJSON *env = cJSON_GetObjectItemCaseSensitive(o, "env"), *e;
	if (env && !json_object(env, "env", f))
		return false;
	cJSON_ArrayForEach(e, env) {
		if (!valid_env_key(e->string) || !cJSON_IsString(e))
			return fail(f, E_INVALID_VALUE, "%s: env %.40s must be KEY: \"text\"",
				    name, e->string);
		strv_pushf(&l->env, "%s=%s", e->string, e->valuestring);
	}
	snprintf(name, sizeof name, "%s.limits", what);
	if (!limits_parse(cJSON_GetObjectItemCaseSensitive(o, "limits"), name, &l->defaults, &set, f))
		return false;
	if ((set & LIMIT_ALL) != LIMIT_ALL || (set & LIMIT_COMPILE))
		return fail(f, E_MISSING_FIELD,
			    "%s must set every limit (and the compile time as compileTimeMs)", name);
	l->defaults.compile_time_ms = compile_time_ms;
	return true;
}

/* Join the image lock ("images: {NAME: {id: ..., version: ...}}") in. */
static bool apply_lock(const cJSON *lock, struct registry *r, struct fault *f)
{
	static const char *const top[] = {"images", NULL};
	static const char *const entry_keys[] = {"id", "version", NULL};
	if (!json_object(lock, "the image lock", f) || !json_known_keys(lock, top, "image lock", f))
		return false;
	const cJSON *images = cJSON_GetObjectItemCaseSensitive(lock, "images"), *img;
	if (cJSON_IsNull(images))
		return true;
	if (!json_object(images, "images", f))
		return false;
	cJSON_ArrayForEach(img, images) {
		const char *id, *version;
		if (!json_object(img, img->string, f) ||
		    !json_known_keys(img, entry_keys, img->string, f) ||
		    !json_string(cJSON_GetObjectItemCaseSensitive(img, "id"), "id", &id, f) ||
		    !json_string(cJSON_GetObjectItemCaseSensitive(img, "version"), "version", &version, f))
			return false;
		if (!valid_image_id(id))
			return fail(f, E_INVALID_VALUE, "image %.40s: id must be sha256:<64 hex>",
				    img->string);
		for (size_t i = 0; i < r->n; i++) {
			struct language *l = &r->langs[i];
			if (strcmp(l->image, img->string))
				continue;
			free(l->image_id);
			free(l->full_version);
			l->image_id = xstrdup(id);
			l->full_version = xstrdup(version);
		}
	}
	return true;
}

static bool parse(const cJSON *root, const cJSON *lock, struct registry *r, struct fault *f)
{
	static const char *const top[] = {"languages", NULL};
	if (!json_object(root, "the registry", f) || !json_known_keys(root, top, "registry", f))
		return false;
	const cJSON *langs = cJSON_GetObjectItemCaseSensitive(root, "languages"), *o;
	if (!cJSON_IsArray(langs) || cJSON_GetArraySize(langs) == 0)
		return fail(f, E_INVALID_VALUE, "languages must be a non-empty list");
	r->langs = xcalloc((size_t)cJSON_GetArraySize(langs), sizeof *r->langs);
	int i = 0;
	cJSON_ArrayForEach(o, langs) {
		char what[32];
		snprintf(what, sizeof what, "languages[%d]", i++);
		if (!parse_language(o, what, r, f))
			return false;
	}
	if (lock && !apply_lock(lock, r, f))
		return false;
	for (size_t j = 0; j < r->n; j++)
		if (!r->langs[j].full_version)
			r->langs[j].full_version = xstrdup(r->langs[j].version);
	return true;
}

bool registry_parse(const char *text, size_t len, const char *lock_text, size_t lock_len,
		    struct registry *out, char *err, size_t errlen)
{
	char yerr[300];
	struct fault f = {0};
	cJSON *lock = NULL;
	*out = (struct registry){0};
	cJSON *root = yaml_load_string(text, len, yerr, sizeof yerr);
	if (!root) {
		snprintf(err, errlen, "registry: %s", yerr);
		return false;
	}
	if (lock_text && !(lock = yaml_load_string(lock_text, lock_len, yerr, sizeof yerr))) {
		snprintf(err, errlen, "image lock: %s", yerr);
		cJSON_Delete(root);
		return false;
	}
	bool ok = parse(root, lock, out, &f);
	cJSON_Delete(root);
	cJSON_Delete(lock);
	if (!ok) {
		snprintf(err, errlen, "%s", f.message);
		registry_free(out);
	}
	return ok;
}

bool registry_load(const char *path, const char *lock_path, struct registry *out,
		   char *err, size_t errlen)
{
	struct buf text = {0}, lock = {0};
	char inner[400];
	bool have_lock = true, ok = false;
	*out = (struct registry){0};
	if (!read_file(path, 1 << 20, &text, err, errlen))
		goto done;
	if (access(lock_path, F_OK) != 0 && errno == ENOENT)
		have_lock = false; /* no image built yet */
	else if (!read_file(lock_path, 1 << 20, &lock, err, errlen))
		goto done;
	ok = registry_parse(text.data, text.len, have_lock ? lock.data : NULL, lock.len, out,
			    inner, sizeof inner);
	if (!ok)
		snprintf(err, errlen, "%s: %s", path, inner);
done:
	buf_free(&text);
	buf_free(&lock);
	return ok;
}

void registry_free(struct registry *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct language *l = &r->langs[i];
		free(l->name);
		strv_free(&l->aliases);
		free(l->version);
		free(l->image);
		free(l->image_id);
		free(l->full_version);
		free(l->file);
		free(l->note);
		strv_free(&l->compile);
		strv_free(&l->run);
		strv_free(&l->env);
		strv_free(&l->agent);
		strv_free(&l->preload);
		strv_free(&l->kernel);
	}
	free(r->langs);
	*r = (struct registry){0};
}

const struct language *registry_find(const struct registry *r, const char *name,
				     const char *version, struct fault *f)
{
	const struct language *found = NULL;
	for (size_t i = 0; i < r->n && !found; i++) {
		const struct language *l = &r->langs[i];
		if (!strcasecmp(l->name, name))
			found = l;
		for (size_t j = 0; j < l->aliases.n && !found; j++)
			if (!strcasecmp(l->aliases.v[j], name))
				found = l;
	}
	if (!found) {
		fail(f, E_UNKNOWN_LANGUAGE, "unknown language \"%.64s\"; GET /runtimes lists them",
		     name);
		return NULL;
	}
	if (version && !version_matches(version, found->full_version)) {
		fail(f, E_UNKNOWN_VERSION, "%s has version %s, not \"%.32s\"", found->name,
		     found->full_version, version);
		return NULL;
	}
	return found;
}
