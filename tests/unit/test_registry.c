/* The language registry and the image lock. */
#include "tap.h"
#include "fixtures.h"

#include <stdlib.h>

static bool reg_from(const char *text, const char *lock, struct registry *r, char *err, size_t n)
{
	return registry_parse(text, strlen(text), lock, lock ? strlen(lock) : 0, r, err, n);
}

#define LANG(extra) \
	"languages:\n  - name: python\n    version: \"3.11\"\n    image: python\n" \
	"    file: main.py\n    run: [python3, \"{file}\"]\n" \
	"    limits: {memoryBytes: 1000000, cpus: 1, pids: 10, outputBytes: 100, wallTimeMs: 1000}\n" extra

void test_registry(void)
{
	struct conf c;
	struct registry r;
	struct fault f = {0};
	char err[512];

	fixture_load(&c, &r);
	ok(r.n == 2, "registry: two languages");
	const struct language *l = registry_find(&r, "python", NULL, &f);
	ok(l && !strcmp(l->name, "python"), "registry: find by name");
	ok(registry_find(&r, "PY3", NULL, &f) == l, "registry: find by alias, any case");
	is_str(l->image_id, TEST_ID_PY, "registry: image ID joined from the lock");
	is_str(l->full_version, "3.11.2", "registry: full version from the lock");
	ok(registry_find(&r, "python", "3.11", &f) == l, "registry: version pin 3.11 matches 3.11.2");
	ok(registry_find(&r, "python", "3", &f) == l, "registry: version pin 3 matches");
	ok(!registry_find(&r, "python", "3.1", &f) && f.code == E_UNKNOWN_VERSION,
	   "registry: pin 3.1 does not match 3.11.2");
	ok(!registry_find(&r, "cobol", NULL, &f) && f.code == E_UNKNOWN_LANGUAGE,
	   "registry: unknown language");
	const struct language *slim = registry_find(&r, "python-slim", NULL, &f);
	ok(slim && slim->image_id == NULL, "registry: image not in the lock has no ID (cannot run)");
	is_str(slim ? slim->full_version : NULL, "3.11", "registry: unbuilt image reports the pinned version");
	registry_free(&r);
	conf_free(&c);

	ok(registry_load("registry/registry.yaml", "/nonexistent.lock", &r, err, sizeof err),
	   "registry: the shipped registry.yaml loads without a lock (%s)", err);
	ok(registry_find(&r, "py", NULL, &f) && registry_find(&r, "python-slim", NULL, &f),
	   "registry: shipped registry has python and python-slim");
	const struct language *ts = registry_find(&r, "ts", NULL, &f);
	ok(ts && ts->note && strstr(ts->note, "not checked") && !registry_find(&r, "python", NULL, &f)->note,
	   "registry: typescript carries a note (types are not checked); python none");
	registry_free(&r);
	ok(!reg_from(LANG("    note: \"\"\n"), NULL, &r, err, sizeof err) && strstr(err, "note"),
	   "registry: an empty note is refused (%s)", err);
	registry_free(&r);

	ok(reg_from(LANG(""), NULL, &r, err, sizeof err), "registry: minimal entry loads (%s)", err);
	registry_free(&r);
	ok(!reg_from(LANG("    shell: yes\n"), NULL, &r, err, sizeof err) && strstr(err, "shell"),
	   "registry: unknown key refused (%s)", err);
	ok(!reg_from(LANG("  - name: PYTHON\n    version: \"1\"\n    image: x\n    file: a\n    run: [a]\n"
			  "    limits: {memoryBytes: 1, cpus: 1, pids: 1, outputBytes: 1, wallTimeMs: 1}\n"),
		     NULL, &r, err, sizeof err),
	   "registry: upper-case or duplicate name refused (%s)", err);
	ok(!reg_from("languages:\n  - name: a\n    aliases: [a]\n    version: \"1\"\n    image: x\n"
		     "    file: a\n    run: [a]\n"
		     "    limits: {memoryBytes: 1, cpus: 1, pids: 1, outputBytes: 1, wallTimeMs: 1}\n",
		     NULL, &r, err, sizeof err) && strstr(err, "alias"),
	   "registry: alias equal to a name refused (%s)", err);
	ok(!reg_from("languages:\n  - name: a\n    version: \"1\"\n    image: x\n    file: ../a\n"
		     "    run: [a]\n"
		     "    limits: {memoryBytes: 1, cpus: 1, pids: 1, outputBytes: 1, wallTimeMs: 1}\n",
		     NULL, &r, err, sizeof err),
	   "registry: file with a slash refused");
	ok(!reg_from("languages:\n  - name: a\n    version: \"1\"\n    image: x\n    file: a\n"
		     "    run: []\n"
		     "    limits: {memoryBytes: 1, cpus: 1, pids: 1, outputBytes: 1, wallTimeMs: 1}\n",
		     NULL, &r, err, sizeof err),
	   "registry: empty run refused");
	ok(!reg_from("languages:\n  - name: a\n    version: \"1\"\n    image: x\n    file: a\n"
		     "    run: [a]\n    limits: {memoryBytes: 1}\n", NULL, &r, err, sizeof err),
	   "registry: partial default limits refused");
	ok(!reg_from(LANG(""), "images:\n  python: {id: \"latest\", version: \"3\"}\n", &r, err, sizeof err)
	   && strstr(err, "sha256"),
	   "registry: lock with a tag instead of an ID refused (%s)", err);
	ok(!reg_from(LANG(""), "images: [\n", &r, err, sizeof err), "registry: broken lock refused");
	ok(!reg_from("languages: []\n", NULL, &r, err, sizeof err), "registry: no languages refused");
	ok(!reg_from(LANG("    compileTimeMs: 5000\n"), NULL, &r, err, sizeof err) && strstr(err, "compile"),
	   "registry: compileTimeMs without compile refused (%s)", err);
	ok(reg_from(LANG("    compile: [cc, \"{file}\"]\n    compileTimeMs: 5000\n"), NULL, &r, err, sizeof err) &&
	   r.langs[0].defaults.compile_time_ms == 5000 && r.langs[0].compile.n == 2,
	   "registry: compile step with its time (%s)", err);
	registry_free(&r);
	ok(version_matches("3.11", "3.11.2") && version_matches("3.11.2", "3.11.2") &&
	   !version_matches("3.1", "3.11.2") && !version_matches("", "3.11.2") &&
	   !version_matches("3.11.2.1", "3.11.2"), "registry: version prefix matching by parts");
}
