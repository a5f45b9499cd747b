/* registry.c: load registry.yaml and the image lock. */
#include "registry.h"
#include "../conf/lib/json.h"
#include "../conf/lib/yaml_tree.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MAX_VERSIONS 8 /* of one language, besides its default */
#define VERSION_RULE "version must be 1-24 of [A-Za-z0-9.+~_-]"

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

/* A version as the registry declares it: it becomes part of an id and of
 * metric labels. */
static bool valid_version(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 24)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr(".+~_-", *s)))
			return false;
	return true;
}

int version_compare(const char *a, const char *b)
{
	while (*a || *b) {
		size_t na = strcspn(a, "."), nb = strcspn(b, ".");
		bool num_a = na && strspn(a, "0123456789") == na, num_b = nb && strspn(b, "0123456789") == nb;
		int c;
		if (num_a && num_b) {
			/* Without leading zeros, the longer number is the larger. */
			while (na > 1 && *a == '0')
				a++, na--;
			while (nb > 1 && *b == '0')
				b++, nb--;
			c = na != nb ? (na < nb ? -1 : 1) : strncmp(a, b, na);
		} else {
			c = strncmp(a, b, na < nb ? na : nb);
			if (!c && na != nb)
				c = na < nb ? -1 : 1;
		}
		if (c)
			return c;
		a += na, b += nb;
		a += *a == '.', b += *b == '.';
	}
	return 0;
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

static void strv_copy(struct strv *to, const struct strv *from)
{
	for (size_t i = 0; i < from->n; i++)
		strv_push(to, from->v[i]);
}

/* Is s a Piston name or alias of one of the first `count` languages? */
static bool piston_name_taken(const struct registry *r, size_t count, const char *s)
{
	for (size_t i = 0; i < count; i++) {
		if (r->langs[i].piston_name && !strcasecmp(r->langs[i].piston_name, s))
			return true;
		for (size_t j = 0; j < r->langs[i].piston_aliases.n; j++)
			if (!strcasecmp(r->langs[i].piston_aliases.v[j], s))
				return true;
	}
	return false;
}

/* piston: {name, runtime, aliases}: Piston's words for language l (the
 * last of r), each a name, none another language's Piston word. */
static bool parse_piston(const cJSON *o, const char *what, struct registry *r, struct fault *f)
{
	static const char *const known[] = {"name", "runtime", "aliases", NULL};
	struct language *l = &r->langs[r->n - 1];
	const char *s;
	if (!o)
		return true;
	if (!json_object(o, "piston", f) || !json_known_keys(o, known, "piston", f))
		return false;
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
	if (name && (!json_string(name, "piston.name", &s, f) || !valid_name(s)))
		return f->code ? false : fail(f, E_INVALID_VALUE, "%s: piston.name must be a name", what);
	l->piston_name = name ? xstrdup(s) : NULL;
	const cJSON *runtime = cJSON_GetObjectItemCaseSensitive(o, "runtime");
	if (runtime && (!json_string(runtime, "piston.runtime", &s, f) || !valid_name(s)))
		return f->code ? false : fail(f, E_INVALID_VALUE, "%s: piston.runtime must be a name", what);
	l->piston_runtime = runtime ? xstrdup(s) : NULL;
	const cJSON *aliases = cJSON_GetObjectItemCaseSensitive(o, "aliases");
	if (aliases && !json_strings(aliases, "piston.aliases", 32, &l->piston_aliases, f))
		return false;
	if (l->piston_name && piston_name_taken(r, r->n - 1, l->piston_name))
		return fail(f, E_INVALID_VALUE, "%s: piston name \"%s\" is already used", what, l->piston_name);
	for (size_t i = 0; i < l->piston_aliases.n; i++) {
		const char *a = l->piston_aliases.v[i];
		bool taken = !valid_name(a) || piston_name_taken(r, r->n - 1, a) ||
			     (l->piston_name && !strcasecmp(a, l->piston_name));
		for (size_t j = 0; j < i; j++)
			taken = taken || !strcasecmp(a, l->piston_aliases.v[j]);
		if (taken)
			return fail(f, E_INVALID_VALUE, "%s: piston alias \"%.40s\" is bad or already used", what, a);
	}
	return true;
}

/* An optional text field (note, sample): absent, or 1-most characters,
 * copied into *out (NULL when absent). */
static bool optional_text(const cJSON *o, const char *key, size_t most, const char *what, char **out,
			  struct fault *f)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	const char *s;
	*out = NULL;
	if (!v)
		return true;
	if (!json_string(v, key, &s, f) || !s[0] || strlen(s) > most)
		return f->code ? false : fail(f, E_INVALID_VALUE, "%s: %s must be 1-%zu characters", what, key, most);
	*out = xstrdup(s);
	return true;
}

/* Another version of the language r->langs[at]: a copy of it with its own
 * version, image and note. */
static bool parse_version(const cJSON *o, const char *what, struct registry *r, size_t at,
			  struct fault *f)
{
	static const char *const known[] = {"version", "image", "note", NULL};
	const struct language *base = &r->langs[at];
	const char *version, *image;
	char *note;
	if (!json_object(o, what, f) || !json_known_keys(o, known, what, f))
		return false;
	if (!json_string(cJSON_GetObjectItemCaseSensitive(o, "version"), "version", &version, f) ||
	    !valid_version(version))
		return fail(f, E_INVALID_VALUE, "%s: " VERSION_RULE, what);
	for (size_t i = at; i < r->n; i++)
		if (!strcmp(r->langs[i].version, version))
			return fail(f, E_INVALID_VALUE, "%s: version \"%s\" is already listed", what, version);
	if (!json_string(cJSON_GetObjectItemCaseSensitive(o, "image"), "image", &image, f) ||
	    !valid_name(image))
		return fail(f, E_INVALID_VALUE, "%s: image must be a recipe name", what);
	if (!optional_text(o, "note", 400, what, &note, f))
		return false;

	struct language *l = &r->langs[r->n++];
	l->name = xstrdup(base->name);
	l->id = xasprintf("%s@%s", base->name, version);
	strv_copy(&l->aliases, &base->aliases);
	l->version = xstrdup(version);
	l->image = xstrdup(image);
	l->file = xstrdup(base->file);
	l->note = note;
	l->sample = base->sample ? xstrdup(base->sample) : NULL;
	strv_copy(&l->compile, &base->compile);
	strv_copy(&l->run, &base->run);
	strv_copy(&l->env, &base->env);
	strv_copy(&l->agent, &base->agent);
	strv_copy(&l->preload, &base->preload);
	strv_copy(&l->kernel, &base->kernel);
	l->defaults = base->defaults;
	l->min_memory_bytes = base->min_memory_bytes;
	l->piston_name = base->piston_name ? xstrdup(base->piston_name) : NULL;
	l->piston_runtime = base->piston_runtime ? xstrdup(base->piston_runtime) : NULL;
	strv_copy(&l->piston_aliases, &base->piston_aliases);
	return true;
}

/* The language's other versions (`versions`), after the one it declares,
 * which stays the default. */
static bool parse_versions(const cJSON *list, const char *what, struct registry *r, size_t at,
			   struct fault *f)
{
	const cJSON *o;
	int i = 0;
	if (!list)
		return true;
	if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0 ||
	    cJSON_GetArraySize(list) > MAX_VERSIONS)
		return fail(f, E_INVALID_VALUE, "%s: versions must be a list of 1-%d", what, MAX_VERSIONS);
	cJSON_ArrayForEach(o, list) {
		char where[160];
		snprintf(where, sizeof where, "%s.versions[%d]", what, i++);
		if (!parse_version(o, where, r, at, f))
			return false;
	}
	return true;
}

static bool parse_language(const cJSON *o, const char *what, struct registry *r, struct fault *f)
{
	static const char *const known[] = {"name", "aliases", "version", "image", "file", "compile",
		"compileTimeMs", "run", "env", "limits", "minMemoryBytes", "agent", "preload", "kernel",
		"note", "versions", "piston", "sample", "later", NULL};
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
	if (!parse_piston(cJSON_GetObjectItemCaseSensitive(o, "piston"), name, r, f))
		return false;

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
	    !valid_version(s))
		return fail(f, E_INVALID_VALUE, "%s: " VERSION_RULE, name);
	l->version = xstrdup(s);
	l->id = xasprintf("%s@%s", l->name, l->version);
	l->is_default = true;
	if (!json_string(cJSON_GetObjectItemCaseSensitive(o, "image"), "image", &s, f) ||
	    !valid_name(s))
		return fail(f, E_INVALID_VALUE, "%s: image must be a recipe name", name);
	l->image = xstrdup(s);
	if (!json_string(cJSON_GetObjectItemCaseSensitive(o, "file"), "file", &s, f) ||
	    !s[0] || strchr(s, '/') || !strcmp(s, ".") || !strcmp(s, ".."))
		return fail(f, E_INVALID_VALUE, "%s: file must be a plain file name", name);
	l->file = xstrdup(s);
	if (!optional_text(o, "note", 400, name, &l->note, f) ||
	    !optional_text(o, "sample", 4000, name, &l->sample, f))
		return false;
	/* later: its image is built after the pool starts (the Makefile's
	 * IMAGES_LATER reads it); nothing here acts on it. */
	const cJSON *later = cJSON_GetObjectItemCaseSensitive(o, "later");
	if (later && !cJSON_IsBool(later))
		return fail(f, E_INVALID_VALUE, "%s: later must be true or false", name);
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
	char field[200];
	snprintf(field, sizeof field, "%s.limits", what);
	if (!limits_parse(cJSON_GetObjectItemCaseSensitive(o, "limits"), field, &l->defaults, &set, f))
		return false;
	if ((set & LIMIT_ALL) != LIMIT_ALL || (set & LIMIT_COMPILE))
		return fail(f, E_MISSING_FIELD,
			    "%s must set every limit (and the compile time as compileTimeMs)", field);
	l->defaults.compile_time_ms = compile_time_ms;
	const cJSON *least = cJSON_GetObjectItemCaseSensitive(o, "minMemoryBytes");
	snprintf(field, sizeof field, "%s.minMemoryBytes (at most limits.memoryBytes)", what);
	if (least && !json_int(least, field, 0, l->defaults.memory_bytes,
			       &l->min_memory_bytes, f))
		return false;
	return parse_versions(cJSON_GetObjectItemCaseSensitive(o, "versions"), name, r,
			      (size_t)(l - r->langs), f);
}

/* Join the image lock ("images: {NAME: {id: ..., version: ..., suite: ...,
 * packages: ...}}") in; the suite and the pinned packages are build.sh's. */
static bool apply_lock(const cJSON *lock, struct registry *r, struct fault *f)
{
	static const char *const top[] = {"images", NULL};
	static const char *const entry_keys[] = {"id", "version", "suite", "packages", NULL};
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
	/* Every entry and its versions: the array never moves once made. */
	size_t entries = 0;
	cJSON_ArrayForEach(o, langs) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "versions");
		int nv = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
		entries += 1 + (size_t)(nv <= MAX_VERSIONS ? nv : 0);
	}
	r->langs = xcalloc(entries, sizeof *r->langs);
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
		free(l->id);
		strv_free(&l->aliases);
		free(l->version);
		free(l->image);
		free(l->image_id);
		free(l->full_version);
		free(l->file);
		free(l->note);
		free(l->sample);
		strv_free(&l->compile);
		strv_free(&l->run);
		strv_free(&l->env);
		strv_free(&l->agent);
		strv_free(&l->preload);
		strv_free(&l->kernel);
		free(l->piston_name);
		free(l->piston_runtime);
		strv_free(&l->piston_aliases);
	}
	free(r->langs);
	*r = (struct registry){0};
}

const struct language *registry_family(const struct registry *r, const char *name, size_t *n)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct language *l = &r->langs[i];
		bool match = !strcasecmp(l->name, name);
		for (size_t j = 0; j < l->aliases.n && !match; j++)
			match = !strcasecmp(l->aliases.v[j], name);
		if (!match)
			continue;
		for (*n = 1; i + *n < r->n && !strcmp(r->langs[i + *n].name, l->name); (*n)++)
			;
		return l;
	}
	*n = 0;
	return NULL;
}

const struct language *registry_highest(const struct language *first, size_t n,
					bool (*admits)(const char *full, const char *pattern),
					const char *pattern)
{
	const struct language *best = NULL;
	for (size_t i = 0; i < n; i++)
		if (admits(first[i].full_version, pattern) &&
		    (!best || version_compare(first[i].full_version, best->full_version) > 0))
			best = &first[i];
	return best;
}

static bool pin_admits(const char *full, const char *pin)
{
	return version_matches(pin, full);
}

const struct language *registry_by_id(const struct registry *r, const char *id)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->langs[i].id, id))
			return &r->langs[i];
	return NULL;
}

const struct language *registry_find(const struct registry *r, const char *name,
				     const char *version, struct fault *f)
{
	size_t n;
	const struct language *first = registry_family(r, name, &n), *best;
	if (!first) {
		fail(f, E_UNKNOWN_LANGUAGE, "unknown language \"%.64s\"; GET /runtimes lists them",
		     name);
		return NULL;
	}
	if (!version)
		return first;
	if (!(best = registry_highest(first, n, pin_admits, version))) {
		char have[200] = "";
		size_t len = 0;
		for (size_t i = 0; i < n && len < sizeof have; i++)
			len += (size_t)snprintf(have + len, sizeof have - len, "%s%s", i ? ", " : "",
						first[i].full_version);
		fail(f, E_UNKNOWN_VERSION, "%s has version%s %s, not \"%.32s\"", first->name,
		     n > 1 ? "s" : "", have, version);
	}
	return best;
}

struct limits language_limits(const struct language *l, const struct limits *asked, unsigned set,
			      const struct conf *c, const struct limits *ceiling)
{
	struct limits floor = c->floors;
	if (l->min_memory_bytes > floor.memory_bytes)
		floor.memory_bytes = l->min_memory_bytes < ceiling->memory_bytes ?
			l->min_memory_bytes : ceiling->memory_bytes;
	return limits_apply(&l->defaults, asked, set, &floor, ceiling);
}

bool registry_fits(const struct registry *r, const struct conf *c, char *err, size_t errlen)
{
	int64_t room = c->ceilings.memory_bytes < c->sessions.memory_bytes ?
		c->ceilings.memory_bytes : c->sessions.memory_bytes;
	for (size_t i = 0; i < r->n; i++)
		if (r->langs[i].min_memory_bytes > room) {
			snprintf(err, errlen, "%s needs minMemoryBytes %lld, above the conf's ceilings.memoryBytes "
				 "or sessions.memoryBytes (%lld)", r->langs[i].id,
				 (long long)r->langs[i].min_memory_bytes, (long long)room);
			return false;
		}
	return true;
}

bool registry_image_built(const struct language *l, struct fault *f)
{
	if (l->image_id)
		return true;
	return fail(f, E_IMAGE_NOT_BUILT, "no image is built for %s %s yet (recipe %s): it may be "
		    "building in the background (GET /runtimes says when it is available); else run "
		    "deploy/images/build.sh %s", l->name, l->version, l->image, l->image);
}
