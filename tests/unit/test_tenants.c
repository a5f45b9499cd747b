#define _GNU_SOURCE
/* Tenants: keys, shares, CORS origins, from files in a temporary
 * directory (the store's tests are in test_store.c). */
#include "tap.h"
#include "fixtures.h"
#include "../../conf/lib/json.h"
#include "../../conf/tenants.h"
#include "../../conf/lib/yaml_tree.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static bool parse(const char *dir, const char *auth_yaml, const char *defaults_yaml, struct tenants *t,
		  struct fault *f)
{
	char err[300];
	cJSON *auth = auth_yaml ? yaml_load_string(auth_yaml, strlen(auth_yaml), err, sizeof err) : NULL;
	cJSON *defaults = defaults_yaml ? yaml_load_string(defaults_yaml, strlen(defaults_yaml), err, sizeof err) : NULL;
	*f = (struct fault){0};
	bool ok = tenants_parse(auth, defaults, dir, t, f);
	cJSON_Delete(auth);
	cJSON_Delete(defaults);
	if (!ok)
		tenants_free(t);
	return ok;
}

static void keys(const char *dir)
{
	struct tenants t;
	struct fault f;
	ok(parse(dir, NULL, NULL, &t, &f) && t.n_keys == 0 && !t.has_secret, "tenants: no files, no keys");
	ok(cidr_list_allows(&t.anonymous, "127.0.0.1") && cidr_list_allows(&t.anonymous, "::1") &&
	   !cidr_list_allows(&t.anonymous, "127.0.0.2") && !cidr_list_allows(&t.anonymous, "10.0.0.1"),
	   "tenants: anonymous by default is 127.0.0.1 and ::1 only");
	ok(tenants_limits(&t, "local")->requests_per_minute == 0 && tenants_limits(&t, "local")->network &&
	   tenants_limits(&t, "team")->requests_per_minute == 600 && tenants_limits(&t, "team")->sessions == 4,
	   "tenants: local has no share of its own, others the defaults");
	tenants_free(&t);

	autofree char *secret = xasprintf("%s/keys.secret", dir);
	unlink(secret);
	ok(tenants_make_secret(secret, &f), "secret: made");
	ok(!tenants_make_secret(secret, &f), "secret: never overwritten");
	struct stat st;
	ok(stat(secret, &st) == 0 && (st.st_mode & 0777) == 0640, "secret: 0640");
	ok(parse(dir, NULL, NULL, &t, &f) && t.has_secret, "secret: loaded");

	char key[KEY_TEXT_LEN + 1], key2[KEY_TEXT_LEN + 1], line[256], line2[256];
	tenants_new_key(&t, "team-a", key, line, sizeof line);
	tenants_new_key(&t, "team-b", key2, line2, sizeof line2);
	ok(strlen(key) == KEY_TEXT_LEN && !strncmp(key, "ibx_", 4), "new key: ibx_<id>_<secret>");
	ok(!strstr(line, key + 5 + KEY_ID_LEN) && !strncmp(line, key + 4, KEY_ID_LEN),
	   "new key: its line names the id, never the secret");
	tenants_free(&t);

	autofree char *both = xasprintf("# keys\n%s\n%s", line, line2);
	fixture_write(dir, "keys", both, 0640);
	ok(parse(dir, NULL, NULL, &t, &f) && t.n_keys == 2, "keys: two lines, a comment and a blank");
	is_str(tenants_check_key(&t, key), "team-a", "key: proves its tenant");
	is_str(tenants_check_key(&t, key2), "team-b", "key: the other one, its own");
	char wrong[KEY_TEXT_LEN + 1];
	snprintf(wrong, sizeof wrong, "%s", key);
	wrong[KEY_TEXT_LEN - 1] = wrong[KEY_TEXT_LEN - 1] == '0' ? '1' : '0';
	ok(!tenants_check_key(&t, wrong), "key: one digit off is refused");
	memcpy(wrong, key2, 4 + KEY_ID_LEN); /* b's id, a's secret */
	ok(!tenants_check_key(&t, wrong), "key: an id with another key's secret is refused");
	ok(!tenants_check_key(&t, "") && !tenants_check_key(&t, "ibx_") && !tenants_check_key(&t, "Bearer x"),
	   "key: malformed keys are refused");
	tenants_free(&t);

	fixture_write(dir, "keys", line2, 0640); /* a's line taken out: revoked */
	ok(parse(dir, NULL, NULL, &t, &f) && !tenants_check_key(&t, key) && tenants_check_key(&t, key2),
	   "key: revoked once its line is gone from the file");
	tenants_free(&t);

	fixture_write(dir, "keys", "12345678 team-a nothex 2026\n", 0640);
	ok(!parse(dir, NULL, NULL, &t, &f) && strstr(f.message, "keys:1"), "keys: a bad line is an error");
	autofree char *twice = xasprintf("%s%s", line, line);
	fixture_write(dir, "keys", twice, 0640);
	ok(!parse(dir, NULL, NULL, &t, &f) && strstr(f.message, "twice"), "keys: an id twice is an error");
	fixture_write(dir, "keys", line, 0640);
	chmod(secret, 0644);
	ok(!parse(dir, NULL, NULL, &t, &f) && strstr(f.message, "readable by anyone"),
	   "secret: refused when anyone may read it");
	unlink(secret);
	ok(!parse(dir, NULL, NULL, &t, &f) && strstr(f.message, "missing"), "keys without the secret: an error");
	autofree char *keys_path = xasprintf("%s/keys", dir);
	unlink(keys_path);
}

static void shares(const char *dir)
{
	struct tenants t;
	struct fault f;
	fixture_write(dir, "tenants.yaml", "tenants:\n  team-a:\n    requestsPerMinute: 5\n    network: false\n"
		   "  local:\n    concurrentExecutions: 2\n  quiet:\n", 0644);
	ok(parse(dir, "anonymous: [\"10.1.0.0/16\"]\n", "sessions: 9\nmemoryKeys: 7\n", &t, &f),
	   "tenants.yaml: parsed (%s)", f.message);
	const struct tenant_limits *a = tenants_limits(&t, "team-a");
	ok(a->requests_per_minute == 5 && !a->network && a->sessions == 9 && a->memory_keys == 7,
	   "tenants.yaml: a tenant's share over the defaults of isobox.yaml");
	ok(tenants_limits(&t, "local")->concurrent_executions == 2 &&
	   tenants_limits(&t, "local")->requests_per_minute == 0, "tenants.yaml: local named, from no limits");
	ok(tenants_limits(&t, "quiet")->sessions == 9, "tenants.yaml: an empty entry takes the defaults");
	ok(cidr_list_allows(&t.anonymous, "10.1.2.3") && !cidr_list_allows(&t.anonymous, "127.0.0.1"),
	   "auth.anonymous: the operator's list replaces the default");
	tenants_free(&t);
	fixture_write(dir, "tenants.yaml", "tenants:\n  Team:\n    sessions: 1\n", 0644);
	ok(!parse(dir, NULL, NULL, &t, &f) && strstr(f.message, "tenant names"), "tenants.yaml: bad name refused");
	fixture_write(dir, "tenants.yaml", "tenants:\n  a:\n    sesions: 1\n", 0644);
	ok(!parse(dir, NULL, NULL, &t, &f) && strstr(f.message, "sesions"), "tenants.yaml: unknown field refused");
	ok(!parse(dir, "anonymous: [\"nonsense\"]\n", NULL, &t, &f), "auth.anonymous: a bad range refused");
	ok(!parse(dir, "keyFile: x\n", NULL, &t, &f), "auth: unknown field refused");
	autofree char *path = xasprintf("%s/tenants.yaml", dir);
	unlink(path);
	ok(tenant_name_valid("a") && tenant_name_valid("team-a_1") && !tenant_name_valid("-a") &&
	   !tenant_name_valid("A") && !tenant_name_valid("") && !tenant_name_valid("a b"),
	   "tenant names: [a-z0-9][a-z0-9_-]*");
}

static void origins(void)
{
	struct access a;
	struct fault f = {0};
	char err[200];
	const char *yaml = "corsOrigins: [\"https://app.example.com\", \"http://localhost:3000\"]\n";
	cJSON *o = yaml_load_string(yaml, strlen(yaml), err, sizeof err);
	ok(access_parse(o, &a, &f), "corsOrigins: parsed");
	ok(access_origin_allowed(&a, "https://app.example.com") && access_origin_allowed(&a, "http://localhost:3000") &&
	   !access_origin_allowed(&a, "https://evil.example.com") && !access_origin_allowed(&a, "") &&
	   !access_origin_allowed(&a, "https://app.example.com.evil.org"), "corsOrigins: exact origins only");
	access_free(&a);
	cJSON_Delete(o);
	struct access none;
	ok(access_parse(NULL, &none, &f) && !access_origin_allowed(&none, "http://localhost"), "corsOrigins: none by default");
	access_free(&none);
	yaml = "corsOrigins: [\"https://app.example.com/path\"]\n";
	o = yaml_load_string(yaml, strlen(yaml), err, sizeof err);
	ok(!access_parse(o, &a, &f), "corsOrigins: an origin with a path refused");
	access_free(&a);
	cJSON_Delete(o);
}

UNIT_TEST(test_tenants)
{
	char dir[] = "/tmp/isobox-unit-XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp");
	keys(dir);
	shares(dir);
	origins();
	static const char *const made[] = {"keys", "keys.secret", "tenants.yaml", NULL};
	for (size_t i = 0; made[i]; i++) {
		autofree char *path = xasprintf("%s/%s", dir, made[i]);
		unlink(path);
	}
	if (rmdir(dir) != 0)
		printf("# could not remove %s\n", dir);
}
