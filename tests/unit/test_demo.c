#define _GNU_SOURCE
/* The public demo: its settings (conf/demo.h) and what siteverify's
 * answers mean (fcgi/turnstile.h, turnstile_judge: no network here). */
#include "tap.h"
#include "fixtures.h"
#include "../../conf/demo.h"
#include "../../conf/lib/yaml_tree.h"
#include "../../fcgi/turnstile.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct limits server = {.memory_bytes = 512 << 20, .cpus = 2, .pids = 256,
				     .output_bytes = 262144, .wall_time_ms = 20000};

static bool parse(const char *dir, const char *yaml, struct demo *d, struct fault *f)
{
	char err[300];
	cJSON *o = yaml ? yaml_load_string(yaml, strlen(yaml), err, sizeof err) : NULL;
	*f = (struct fault){0};
	bool ok = demo_parse(o, dir, &server, d, f);
	cJSON_Delete(o);
	if (!ok)
		demo_free(d);
	return ok;
}

static void secret_file(const char *dir, const char *text, mode_t mode)
{
	fixture_write(dir, "turnstile.secret", text, mode);
}

#define ON "enabled: true\nturnstile: {siteKey: 1x00000000000000000000AA, secretFile: turnstile.secret, " \
	   "hostname: demo.example.org"

static void settings(const char *dir)
{
	struct demo d;
	struct fault f;
	ok(parse(dir, NULL, &d, &f) && !d.enabled, "demo: off when absent");
	demo_free(&d);
	ok(parse(dir, "enabled: false\n", &d, &f) && !d.enabled && !d.secret, "demo: off, nothing read");
	demo_free(&d);
	ok(!parse(dir, "enabled: true\n", &d, &f) && strstr(f.message, "demo.turnstile"),
	   "demo: on without turnstile is an error");
	ok(!parse(dir, ON "}\n", &d, &f) && strstr(f.message, "turnstile.secret"),
	   "demo: on without its secret file is an error");
	secret_file(dir, "0x4AAAAAAAsecret\n", 0644);
	ok(!parse(dir, ON "}\n", &d, &f) && strstr(f.message, "readable by anyone"),
	   "demo: a secret readable by anyone is refused");
	secret_file(dir, "\n", 0640);
	ok(!parse(dir, ON "}\n", &d, &f) && strstr(f.message, "empty"), "demo: an empty secret is refused");
	secret_file(dir, "0x4AAAAAAAsecret\n", 0640);
	ok(parse(dir, ON "}\n", &d, &f) && d.enabled && !strcmp(d.secret, "0x4AAAAAAAsecret") &&
	   !strcmp(d.verify_url, "https://challenges.cloudflare.com/turnstile/v0/siteverify") &&
	   d.timeout_ms == 5000 && d.runs_per_minute_per_address == 6 &&
	   d.share.concurrent_executions == 2 && !d.share.network && !d.share.requests_per_minute,
	   "demo: on, with Cloudflare's siteverify and small defaults, never network");
	ok(d.ceilings.wall_time_ms == 5000 && d.ceilings.cpus == 0.5 &&
	   d.ceilings.memory_bytes == server.memory_bytes && d.ceilings.pids == server.pids,
	   "demo: ceilings default to the server's, with 5 s and half a CPU");
	demo_free(&d);
	ok(parse(dir, ON "}\nceilings: {memoryBytes: 1073741824, wallTimeMs: 2000, pids: 32}\n", &d, &f) &&
	   d.ceilings.memory_bytes == server.memory_bytes && d.ceilings.wall_time_ms == 2000 && d.ceilings.pids == 32,
	   "demo: ceilings only ever narrow the server's");
	demo_free(&d);
	ok(!parse(dir, ON "}\nceilings: {compileTimeMs: 1000}\n", &d, &f), "demo: compileTimeMs is no ceiling");
	ok(!parse(dir, ON ", verifyUrl: \"http://siteverify.example.org/v0\"}\n", &d, &f) &&
	   strstr(f.message, "https://"), "demo: siteverify over http to another host is refused");
	ok(parse(dir, ON ", verifyUrl: \"http://127.0.0.1:8999/siteverify\", timeoutMs: 300}\n", &d, &f) &&
	   d.timeout_ms == 300, "demo: siteverify over http to this machine (a test's stand-in)");
	demo_free(&d);
	ok(!parse(dir, "enabled: true\nturnstile: {siteKey: k, secretFile: turnstile.secret, "
		  "hostname: \"a\\\"b\"}\n", &d, &f) && strstr(f.message, "hostname"),
	   "demo: a hostname with a quote is refused");
	ok(!parse(dir, ON "}\nrunsPerMinute: 5\n", &d, &f) && f.code == E_UNKNOWN_FIELD, "demo: unknown keys refused");
	autofree char *path = xasprintf("%s/turnstile.secret", dir);
	unlink(path);
}

static void urls(void)
{
	ok(demo_url_safe("https://challenges.cloudflare.com/turnstile/v0/siteverify"), "url: https");
	ok(demo_url_safe("http://127.0.0.1:9000/x") && demo_url_safe("http://127.1.2.3/x") &&
	   demo_url_safe("http://[::1]:80/x") && demo_url_safe("http://localhost:80/x") &&
	   demo_url_safe("http://localhost"), "url: http to loopback");
	ok(!demo_url_safe("http://localhost.evil.example/x") && !demo_url_safe("http://127.0.0.1.evil.example/") &&
	   !demo_url_safe("http://10.0.0.1/x") && !demo_url_safe("ftp://127.0.0.1/") &&
	   !demo_url_safe("https://") && !demo_url_safe("file:///etc/passwd") &&
	   !demo_url_safe("http://[::1].evil/"), "url: http elsewhere, other schemes, names that only start so");
}

static bool judge(long status, const char *body, enum fault_code *code)
{
	static const struct demo d = {.hostname = "demo.example.org"};
	struct fault f = {0};
	bool ok = turnstile_judge(&d, status, body, strlen(body), &f);
	*code = f.code;
	return ok;
}

static void answers(void)
{
	enum fault_code c;
	ok(judge(200, "{\"success\": true, \"hostname\": \"demo.example.org\", \"error-codes\": []}", &c),
	   "siteverify: success on our site passes");
	ok(judge(200, "{\"success\": true, \"hostname\": \"DEMO.example.org\", \"error-codes\": []}", &c),
	   "siteverify: the site's name in any case");
	ok(!judge(200, "{\"success\": true, \"hostname\": \"other.example.org\", \"error-codes\": []}", &c) &&
	   c == E_TURNSTILE_FAILED, "siteverify: a token solved on another site is refused");
	ok(!judge(200, "{\"success\": true, \"error-codes\": []}", &c) && c == E_TURNSTILE_FAILED,
	   "siteverify: success without a hostname is refused");
	ok(!judge(200, "{\"success\": false, \"error-codes\": [\"timeout-or-duplicate\"]}", &c) &&
	   c == E_TURNSTILE_FAILED, "siteverify: a reused token is refused");
	ok(!judge(200, "{\"success\": \"true\", \"hostname\": \"demo.example.org\"}", &c) &&
	   c == E_TURNSTILE_UNAVAILABLE, "siteverify: success as a string is not an answer");
	ok(!judge(502, "<html>bad gateway</html>", &c) && c == E_TURNSTILE_UNAVAILABLE,
	   "siteverify: a 502 page is no answer (and no pass)");
	ok(!judge(200, "{\"success\": true, \"hostname\": \"demo.example.org\"", &c) && c == E_TURNSTILE_UNAVAILABLE,
	   "siteverify: cut JSON is no answer");
	ok(!judge(200, "[true]", &c) && c == E_TURNSTILE_UNAVAILABLE, "siteverify: not an object");
	ok(!judge(500, "{\"success\": true, \"hostname\": \"demo.example.org\"}", &c) && c == E_TURNSTILE_UNAVAILABLE,
	   "siteverify: success under a 500 is not trusted");
}

UNIT_TEST(test_demo)
{
	char dir[] = "/tmp/isobox-unit-XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp");
	settings(dir);
	urls();
	answers();
	if (rmdir(dir) != 0)
		printf("# could not remove %s\n", dir);
}
