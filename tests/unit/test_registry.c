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

#define VERSIONS(list) LANG("    aliases: [py]\n    note: \"the default\"\n    versions: " list "\n")

/* Several versions of one language side by side (registry.yaml's versions). */
static void test_registry_versions(void)
{
	struct registry r;
	struct fault f = {0};
	char err[512];
	const char *lock = "images:\n"
		"  python: {id: \"" TEST_ID_PY "\", version: \"3.11.2\"}\n"
		"  py313: {id: \"" TEST_ID_PY "\", version: \"3.13.5\"}\n"
		"  py39: {id: \"" TEST_ID_PY "\", version: \"3.9.18\"}\n";
	ok(reg_from(VERSIONS("[{version: \"3.13\", image: py313}, {version: \"3.9\", image: py39, "
			     "note: \"old\"}]"), lock, &r, err, sizeof err) && r.n == 3,
	   "registry: a language with two more versions makes three entries (%s)", err);
	size_t n = 0;
	const struct language *first = registry_family(&r, "PY", &n);
	ok(first == &r.langs[0] && n == 3, "registry: the family by alias: the default first, three");
	is_str(r.langs[1].id, "python@3.13", "registry: a version's id is name@version");
	is_str(r.langs[0].id, "python@3.11", "registry: the default's id too");
	ok(r.langs[0].is_default && !r.langs[1].is_default && !r.langs[2].is_default,
	   "registry: the version declared first is the default");
	ok(r.langs[1].run.n == 2 && !strcmp(r.langs[1].file, "main.py") &&
	   r.langs[1].defaults.wall_time_ms == 1000 && r.langs[1].aliases.n == 1,
	   "registry: a version shares the run command, file, limits and aliases");
	ok(!r.langs[1].note && r.langs[2].note && !strcmp(r.langs[2].note, "old") &&
	   !strcmp(r.langs[0].note, "the default"), "registry: each version has its own note or none");
	is_str(r.langs[2].full_version, "3.9.18", "registry: each version's full version from its image");
	ok(registry_find(&r, "python", NULL, &f) == &r.langs[0], "registry: no pin: the default version");
	ok(registry_find(&r, "python", "3", &f) == &r.langs[1],
	   "registry: pin 3 matches all three: the highest (3.13.5) wins");
	ok(registry_find(&r, "py", "3.9", &f) == &r.langs[2], "registry: pin 3.9 (3.9.18 < 3.11 as numbers)");
	ok(registry_find(&r, "python", "3.13.5", &f) == &r.langs[1], "registry: a full version pin");
	ok(!registry_find(&r, "python", "3.12", &f) && f.code == E_UNKNOWN_VERSION &&
	   strstr(f.message, "3.11.2, 3.13.5, 3.9.18"),
	   "registry: an unknown version names those there are (%s)", f.message);
	ok(registry_by_id(&r, "python@3.9") == &r.langs[2] && !registry_by_id(&r, "python@3"),
	   "registry: found by id, exactly");
	registry_free(&r);

	ok(!reg_from(VERSIONS("[{version: \"3.11\", image: py313}]"), NULL, &r, err, sizeof err) &&
	   strstr(err, "already listed"), "registry: the default's version again is refused (%s)", err);
	registry_free(&r);
	ok(!reg_from(VERSIONS("[{version: \"3.13\", image: a}, {version: \"3.13\", image: b}]"), NULL,
		     &r, err, sizeof err) && strstr(err, "already listed"),
	   "registry: a version listed twice is refused (%s)", err);
	registry_free(&r);
	ok(!reg_from(VERSIONS("[{version: \"3.13\", image: a, run: [x]}]"), NULL, &r, err, sizeof err) &&
	   strstr(err, "run"), "registry: a version may set only version, image and note (%s)", err);
	registry_free(&r);
	ok(!reg_from(VERSIONS("[{version: \"3 13\", image: a}]"), NULL, &r, err, sizeof err) &&
	   strstr(err, "version"), "registry: a version with a space is refused (%s)", err);
	registry_free(&r);
	ok(!reg_from(VERSIONS("[]"), NULL, &r, err, sizeof err) && strstr(err, "versions"),
	   "registry: an empty versions list is refused (%s)", err);
	registry_free(&r);
	ok(!reg_from(VERSIONS("[{version: \"3.13\", image: \"../x\"}]"), NULL, &r, err, sizeof err) &&
	   strstr(err, "image"), "registry: a version's image must be a recipe name (%s)", err);
	registry_free(&r);
	ok(!reg_from(VERSIONS("[{version: \"1\", image: a}, {version: \"2\", image: a}, {version: \"3\", image: a}, "
			      "{version: \"4\", image: a}, {version: \"5\", image: a}, {version: \"6\", image: a}, "
			      "{version: \"7\", image: a}, {version: \"8\", image: a}, {version: \"9\", image: a}]"),
		     NULL, &r, err, sizeof err) && strstr(err, "versions"),
	   "registry: at most 8 more versions (%s)", err);
	registry_free(&r);
}

/* A language's least memory (minMemoryBytes): raised to, never past a
 * ceiling, and checked against the conf's ceilings when both load. */
static void test_registry_least_memory(void)
{
	struct conf c;
	struct registry r, fx;
	char err[512];
	fixture_load(&c, &fx);
	registry_free(&fx);
	ok(reg_from(LANG("    minMemoryBytes: 600000\n    versions: [{version: \"3.13\", image: b}]\n"), NULL,
		    &r, err, sizeof err) && r.langs[0].min_memory_bytes == 600000 &&
	   r.langs[1].min_memory_bytes == 600000,
	   "registry: minMemoryBytes is kept, and a version shares it (%s)", err);
	struct limits asked = {.memory_bytes = 100000}, ceiling = c.ceilings;
	struct limits got = language_limits(&r.langs[0], &asked, 0, &c, &ceiling);
	ok(got.memory_bytes == c.floors.memory_bytes,
	   "registry: the conf's floor (32 MiB) still raises, where it is the higher");
	c.floors.memory_bytes = 1000;
	got = language_limits(&r.langs[0], &asked, LIMIT_MEMORY, &c, &ceiling);
	ok(got.memory_bytes == 600000, "registry: a request for less memory is raised to the least (%lld)",
	   (long long)got.memory_bytes);
	asked.memory_bytes = 700000;
	got = language_limits(&r.langs[0], &asked, LIMIT_MEMORY, &c, &ceiling);
	ok(got.memory_bytes == 700000, "registry: a request above the least is kept");
	got = language_limits(&r.langs[0], &asked, 0, &c, &ceiling);
	ok(got.memory_bytes == 1000000, "registry: no memory asked: the language's default");
	ceiling.memory_bytes = 500000;
	asked.memory_bytes = 100000;
	got = language_limits(&r.langs[0], &asked, LIMIT_MEMORY, &c, &ceiling);
	ok(got.memory_bytes == 500000, "registry: a ceiling below the least still wins (%lld)",
	   (long long)got.memory_bytes);
	ok(registry_fits(&r, &c, err, sizeof err), "registry: 600 kB fits under the shipped conf (%s)", err);
	c.sessions.memory_bytes = 500000;
	ok(!registry_fits(&r, &c, err, sizeof err) && strstr(err, "python@3.11") && strstr(err, "600000"),
	   "registry: a conf whose session ceiling is below a least memory does not load (%s)", err);
	registry_free(&r);
	ok(!reg_from(LANG("    minMemoryBytes: 2000000\n"), NULL, &r, err, sizeof err) &&
	   strstr(err, "minMemoryBytes"), "registry: a least memory above the default is refused (%s)", err);
	registry_free(&r);
	ok(!reg_from(LANG("    minMemoryBytes: -1\n"), NULL, &r, err, sizeof err),
	   "registry: a negative least memory is refused");
	registry_free(&r);
	conf_free(&c);
}

/* Piston's words for a language (piston:), for the Piston routes. */
static void test_registry_piston(void)
{
	struct registry r;
	char err[512];
	const char *two = "  - name: cpp\n    version: \"14\"\n    image: gcc\n    file: main.cpp\n"
		"    run: [a]\n    limits: {memoryBytes: 1000000, cpus: 1, pids: 10, outputBytes: 100, wallTimeMs: 1000}\n";
	char text[2048];
	snprintf(text, sizeof text, "%s%s", LANG("    piston: {name: py3k, runtime: cpython, aliases: [python-3]}\n"
		 "    versions: [{version: \"3.13\", image: b}]\n"), two);
	ok(reg_from(text, NULL, &r, err, sizeof err) && r.n == 3 && !strcmp(r.langs[1].piston_name, "py3k") &&
	   !strcmp(r.langs[1].piston_runtime, "cpython") && r.langs[1].piston_aliases.n == 1 &&
	   !r.langs[2].piston_name && !r.langs[2].piston_runtime,
	   "registry: piston's words are kept, and a version shares them (%s)", err);
	registry_free(&r);
	snprintf(text, sizeof text, "%s%s    piston: {aliases: [py3k]}\n",
		 LANG("    piston: {name: py3k}\n"), two);
	ok(!reg_from(text, NULL, &r, err, sizeof err) && strstr(err, "piston alias"),
	   "registry: a piston alias that is another language's piston name is refused (%s)", err);
	registry_free(&r);
	ok(!reg_from(LANG("    piston: {name: \"a/b\"}\n"), NULL, &r, err, sizeof err) && strstr(err, "piston.name"),
	   "registry: a piston name that is not a name is refused (%s)", err);
	registry_free(&r);
	ok(!reg_from(LANG("    piston: {version: \"1\"}\n"), NULL, &r, err, sizeof err) && strstr(err, "version"),
	   "registry: an unknown piston key is refused (%s)", err);
	registry_free(&r);
}

UNIT_TEST(test_registry)
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
	ok(!registry_find(&r, "intercal", NULL, &f) && f.code == E_UNKNOWN_LANGUAGE,
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
	registry_free(&r);
	ok(reg_from(LANG("    note: \"Types are not checked.\"\n"), NULL, &r, err, sizeof err) &&
	   r.n == 1 && r.langs[0].note && !strcmp(r.langs[0].note, "Types are not checked."),
	   "registry: a note is kept as written (%s)", err);
	registry_free(&r);
	ok(!reg_from(LANG("    note: \"\"\n"), NULL, &r, err, sizeof err) && strstr(err, "note"),
	   "registry: an empty note is refused (%s)", err);
	registry_free(&r);
	ok(reg_from(LANG("    sample: |\n      print(\"hello\")\n      print(2)\n    later: true\n"
			 "    versions: [{version: \"3.14\", image: p}]\n"), NULL, &r, err, sizeof err) &&
	   r.n == 2 && !strcmp(r.langs[0].sample, "print(\"hello\")\nprint(2)\n") &&
	   !strcmp(r.langs[1].sample, r.langs[0].sample),
	   "registry: a sample is kept as written, for every version; later is read (%s)", err);
	registry_free(&r);
	ok(!reg_from(LANG("    sample: \"\"\n"), NULL, &r, err, sizeof err) && strstr(err, "sample"),
	   "registry: an empty sample is refused (%s)", err);
	registry_free(&r);
	ok(!reg_from(LANG("    later: yes please\n"), NULL, &r, err, sizeof err) && strstr(err, "later"),
	   "registry: later is true or false (%s)", err);
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
	ok(version_compare("3.9", "3.13") < 0 && version_compare("3.13.5", "3.13") > 0 &&
	   version_compare("24.2", "24.02") == 0 && version_compare("21.0.13", "25.0.5") < 0 &&
	   version_compare("1.0rc1", "1.0rc2") < 0 && version_compare("2", "10") < 0,
	   "registry: versions ordered by their numbers");
	test_registry_versions();
	test_registry_least_memory();
	test_registry_piston();
}
