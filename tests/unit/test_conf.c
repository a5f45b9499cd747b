/* Settings and the YAML reader. */
#include "tap.h"
#include "fixtures.h"
#include "../../conf/lib/yaml_tree.h"

#include <stdlib.h>

static bool conf_from(const char *text, struct conf *c, char *err, size_t n)
{
	return conf_parse(text, strlen(text), "/base", c, err, n);
}

UNIT_TEST(test_conf)
{
	char err[512];
	struct conf c;

	cJSON *y = yaml_load_string("a: 1\nb: \"1\"\nc: true\nd: ~\ne: [x, 2.5]\nf: 1e3\n", 43, err, sizeof err);
	ok(y != NULL, "yaml: a small document loads");
	ok(y && cJSON_IsNumber(cJSON_GetObjectItem(y, "a")), "yaml: plain 1 is a number");
	ok(y && cJSON_IsString(cJSON_GetObjectItem(y, "b")), "yaml: quoted \"1\" stays a string");
	ok(y && cJSON_IsTrue(cJSON_GetObjectItem(y, "c")), "yaml: true is a boolean");
	ok(y && cJSON_IsNull(cJSON_GetObjectItem(y, "d")), "yaml: ~ is null");
	ok(y && cJSON_GetArraySize(cJSON_GetObjectItem(y, "e")) == 2, "yaml: flow sequence");
	ok(y && cJSON_GetObjectItem(y, "f")->valuedouble == 1000, "yaml: 1e3 is 1000");
	cJSON_Delete(y);
	ok(!yaml_load_string("a: &x 1\nb: *x\n", 14, err, sizeof err), "yaml: anchors refused");
	ok(!yaml_load_string("a: 1\na: 2\n", 10, err, sizeof err) && strstr(err, "duplicate"),
	   "yaml: duplicate key refused (%s)", err);
	ok(!yaml_load_string("a: [1\n", 6, err, sizeof err), "yaml: syntax error reported (%s)", err);
	ok(!yaml_load_string("", 0, err, sizeof err), "yaml: empty document refused");
	ok(!yaml_load_string("a: 1\n---\nb: 2\n", 14, err, sizeof err), "yaml: two documents refused");

	ok(conf_load("conf/isobox.yaml", &c, err, sizeof err), "conf: the shipped isobox.yaml loads (%s)", err);
	ok(c.ceilings.memory_bytes == 512 << 20, "conf: memory ceiling 512 MiB");
	ok(c.ceilings.cpus == 2.0, "conf: cpus ceiling 2");
	ok(c.ceilings.pids == 256, "conf: pids ceiling 256");
	ok(c.ceilings.output_bytes == 256 << 10, "conf: output ceiling 256 KiB");
	ok(c.ceilings.wall_time_ms == 20000, "conf: wall time ceiling 20 s");
	ok(c.registry && c.registry[0] == '/' && strstr(c.registry, "registry/registry.yaml"),
	   "conf: registry path resolved against the conf file (%s)", c.registry);
	is_str(c.runtime, "runsc-untrusted", "conf: runtime");
	is_str(c.cgroup_parent, "/isobox.slice", "conf: cgroup parent");
	conf_free(&c);

	char *t = conf_variant("instance: main", "instance: main\nbogus: 1");
	ok(t && !conf_from(t, &c, err, sizeof err) && strstr(err, "bogus"),
	   "conf: unknown key refused (%s)", err);
	free(t);
	t = conf_variant("  wallTimeMs: 100\n", "  wallTimeMs: 999999\n");
	ok(t && !conf_from(t, &c, err, sizeof err) && strstr(err, "floor"),
	   "conf: floor above ceiling refused (%s)", err);
	free(t);
	t = conf_variant("instance: main", "instance: ../etc");
	ok(t && !conf_from(t, &c, err, sizeof err), "conf: instance with path characters refused");
	free(t);
	t = conf_variant("  memoryBytes: 536870912", "  memoryBytes: lots");
	ok(t && !conf_from(t, &c, err, sizeof err) && strstr(err, "memoryBytes"),
	   "conf: non-number limit refused (%s)", err);
	free(t);
	t = conf_variant("registry: ../registry/registry.yaml", "registry: reg.yaml");
	ok(t && conf_from(t, &c, err, sizeof err) && !strcmp(c.registry, "/base/reg.yaml"),
	   "conf: relative path joined to the base dir");
	conf_free(&c);
	free(t);

	ok(conf_load("conf/isobox.yaml", &c, err, sizeof err) && c.store.backend == STORE_SQLITE &&
	   !strcmp(c.store.path, "/var/lib/isobox/store/isobox.db"), "conf: the store is SQLite by default");
	conf_free(&c);
	t = conf_variant("  backend: sqlite\n  path: /var/lib/isobox/store/isobox.db\n",
			 "  backend: redis\n  redis:\n    address: unix:/run/r.sock\n    passwordFile: pw\n");
	ok(t && conf_from(t, &c, err, sizeof err) && c.store.backend == STORE_REDIS &&
	   !strcmp(c.store.address, "unix:/run/r.sock") && !strcmp(c.store.password_file, "/base/pw") &&
	   !strcmp(c.store.prefix, "isobox:") && c.store.timeout_ms == 2000,
	   "conf: store.backend redis, with its defaults (%s)", err);
	conf_free(&c);
	free(t);
	t = conf_variant("  backend: sqlite\n", "  backend: redis\n");
	ok(t && !conf_from(t, &c, err, sizeof err) && strstr(err, "store.redis.address"),
	   "conf: redis without an address refused (%s)", err);
	free(t);
	t = conf_variant("  backend: sqlite\n  path: /var/lib/isobox/store/isobox.db\n",
			 "  backend: redis\n  redis: {address: localhost}\n");
	ok(t && !conf_from(t, &c, err, sizeof err) && strstr(err, "HOST:PORT"),
	   "conf: a redis address without a port refused (%s)", err);
	free(t);
	t = conf_variant("  backend: sqlite\n", "  backend: mysql\n");
	ok(t && !conf_from(t, &c, err, sizeof err) && strstr(err, "sqlite or redis"),
	   "conf: an unknown store backend refused (%s)", err);
	free(t);
	/* piston.acceptTextPlain: off unless the operator says so. */
	ok(conf_load("conf/isobox.yaml", &c, err, sizeof err) && !c.piston.accept_text_plain,
	   "conf: the Piston route refuses text/plain by default");
	conf_free(&c);
	t = conf_variant("  acceptTextPlain: false\n", "  acceptTextPlain: true\n");
	ok(t && conf_from(t, &c, err, sizeof err) && c.piston.accept_text_plain,
	   "conf: piston.acceptTextPlain: true is read (%s)", err);
	conf_free(&c);
	free(t);
	t = conf_variant("piston:\n  acceptTextPlain: false\n", "");
	ok(t && conf_from(t, &c, err, sizeof err) && !c.piston.accept_text_plain,
	   "conf: no piston section: text/plain refused (%s)", err);
	conf_free(&c);
	free(t);
	t = conf_variant("  acceptTextPlain: false\n", "  acceptTextPlain: \"yes\"\n");
	ok(t && !conf_from(t, &c, err, sizeof err) && strstr(err, "piston.acceptTextPlain"),
	   "conf: a piston.acceptTextPlain that is not a boolean refused (%s)", err);
	free(t);
	t = conf_variant("  acceptTextPlain: false\n", "  acceptTextplain: true\n");
	ok(t && !conf_from(t, &c, err, sizeof err) && strstr(err, "acceptTextplain"),
	   "conf: a misspelt piston key refused (%s)", err);
	free(t);
	ok(!conf_load("/nonexistent/isobox.yaml", &c, err, sizeof err) && strstr(err, "No such file"),
	   "conf: missing file reported (%s)", err);
}
