/* The warm pool's pure parts: its docker argv, the job frame, its settings. */
#include "tap.h"
#include "fixtures.h"
#include "../../sandbox/spec.h"
#include "../../sandbox/sandbox.h"
#include "../../sandbox/warm.h"

/* Every flag of a cold run before its code mount: the hardening. */
static void hardening_is_the_same(const struct conf *c, const struct language *py)
{
	struct sandbox_file files[] = {{.name = "main.py", .data = "1", .len = 1}};
	struct limits lim = {.memory_bytes = 256 << 20, .cpus = 1, .pids = 128,
			     .output_bytes = 1000, .wall_time_ms = 1000};
	struct sandbox_job job = {.lang = py, .files = files, .n_files = 1, .limits = lim};
	struct strv cold = {0}, warm = {0}, plain = {0};
	argv_cold(c, &job, "isobox-main-x", "1.2", "/w/x", &cold);
	argv_warm(c, py, &lim, "isobox-main-x", "1.2", true, &warm);
	argv_warm(c, py, &lim, "isobox-main-x", "1.2", false, &plain);
	ok(index_of(&warm, "--label=isobox.kind=warm") > 0, "warm argv: labelled isobox.kind=warm");
	/* In a cgroup of its own, whose quota is its CPU limit: the same
	 * flags but --cpus, and that cgroup as the parent. Without one,
	 * exactly a cold run's flags but its kind and its code. */
	bool same = true, same_plain = true;
	int n = 0, image = index_of(&cold, "--entrypoint=");
	for (int i = 2; i < image; i++) {
		if (!strcmp(cold.v[i], "--label=isobox.kind=cold") || !strncmp(cold.v[i], "--mount=type=bind,src=/w/x", 26))
			continue;
		n++;
		same_plain = same_plain && index_of(&plain, cold.v[i]) > 0;
		if (!strncmp(cold.v[i], "--cpus=", 7))
			continue;
		const char *want = !strcmp(cold.v[i], "--cgroup-parent=/isobox.slice") ?
			"--cgroup-parent=/isobox.slice/isobox-main-x" : cold.v[i];
		same = same && index_of(&warm, want) > 0;
	}
	same_plain = same_plain && index_of(&plain, "--entrypoint=") == image - 1; /* the agent: both */
	ok(same && n > 20, "warm argv: every hardening flag as a cold run's (%d flags), in a cgroup "
	   "of its own, without --cpus", n);
	ok(index_of(&warm, "--cpus=1.000") < 0 && index_of(&cold, "--cpus=1.000") > 0,
	   "warm argv: no --cpus in a cgroup of its own (its quota holds the CPU)");
	ok(same_plain, "warm argv: without a cgroup of its own, exactly a cold run's flags");
	strv_free(&plain);
	ok(index_of(&warm, "--network=none") > 0, "warm argv: no network");
	int agent = index_of(&warm, "/isobox-agent/python.py");
	ok(agent > 0 && !strcmp(warm.v[agent - 1], "python3") && !strcmp(warm.v[agent - 2], "isobox") &&
	   !strcmp(warm.v[agent - 3], "/bin/true\nexec /isobox-agent/isobox-agent reap - \"$@\"\n") &&
	   !strcmp(warm.v[agent - 4], "-c") &&
	   !strcmp(warm.v[agent - 5], "/bin/sh") && !strcmp(warm.v[agent - 6], TEST_ID_PY),
	   "warm argv: the image by ID, then the registry's agent command through /bin/sh and the reporter");
	ok(agent > 0 && !strcmp(warm.v[agent + 1], "660") && !strcmp(warm.v[agent + 2], "numpy") &&
	   !strcmp(warm.v[agent + 3], "pandas") && agent + 4 == (int)warm.n,
	   "warm argv: idle seconds (maxAgeMs + 60 s), then the preloads, nothing else");
	char mount[300];
	snprintf(mount, sizeof mount, "--mount=type=bind,src=%s,dst=/isobox-agent,readonly", c->warm.agent_dir);
	ok(index_of(&warm, mount) > 0, "warm argv: the agent dir mounted read-only");
	ok(index_of(&warm, "--mount=type=bind,src=/w/x,dst=/src,readonly") < 0, "warm argv: no code mount");
	strv_free(&cold);
	strv_free(&warm);
}

static void job_frame(const struct language *py)
{
	struct sandbox_file files[] = {{.name = "main.py", .data = "print(1)\n", .len = 9},
				       {.name = "d/x.bin", .data = "a\0\n\036b", .len = 5}};
	char *args[] = {"a b", "", "x\ny"};
	struct sandbox_job job = {.lang = py, .files = files, .n_files = 2, .args = args, .n_args = 3,
				  .stdin_data = "in\n", .stdin_len = 3};
	struct buf b = {0};
	warm_job_frame(&job, "n0", &b);
	static const char want[] = "n0\n2\n7 9\nmain.pyprint(1)\n7 5\nd/x.bina\0\n\036b3\n3\na b0\n3\nx\nyin\n";
	ok(b.len == sizeof want - 1 && !memcmp(b.data, want, b.len),
	   "job frame: the nonce, counts and lengths, then the bytes as they are, then stdin");
	buf_free(&b);
	struct sandbox_job empty = {.lang = py, .files = files, .n_files = 1};
	warm_job_frame(&empty, "n0", &b);
	static const char want_empty[] = "n0\n1\n7 9\nmain.pyprint(1)\n0\n";
	ok(b.len == sizeof want_empty - 1 && !memcmp(b.data, want_empty, b.len), "job frame: no args, no stdin");
	buf_free(&b);
}

static void settings(void)
{
	struct conf c;
	char err[400];
	/* The shipped settings, with their warm section replaced by each case. */
	struct buf shipped = {0};
	if (!read_file("conf/isobox.yaml", 1 << 20, &shipped, err, sizeof err))
		ok(false, "warm settings: %s", err);
	char *warm_at = shipped.data ? strstr(shipped.data, "\nwarm:\n") : NULL;
	char *net_at = warm_at ? strstr(warm_at, "\nnetwork:\n") : NULL;
	ok(warm_at && net_at, "warm settings: the shipped file has a warm section before network");
	if (!warm_at || !net_at)
		return;
	struct {
		const char *warm, *why;
		bool good;
	} cases[] = {
		{"", "no warm section: no pool", true},
		{"warm: {sandboxes: {python: 2, javascript: 1}, agentDir: /a}\n", "two languages", true},
		{"warm: {sandboxes: {python: 65}, agentDir: /a}\n", "more than 64 sandboxes", false},
		{"warm: {sandboxes: {python: 40, ruby: 40}, agentDir: /a}\n", "more than 64 in all", false},
		{"warm: {sandboxes: {python: -1}, agentDir: /a}\n", "a negative count", false},
		{"warm: {sandboxes: {python: 1}}\n", "no agentDir", false},
		{"warm: {sandboxes: {python: 1}, agentDir: \"/a,b\"}\n", "an agentDir with a comma", false},
		{"warm: {sandboxes: {python: 1}, agentDir: /a, maxAgeMs: 5}\n", "maxAgeMs under 10 s", false},
		{"warm: {sandboxes: {python: 1}, agentDir: /a, spare: 1}\n", "an unknown key", false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[16384];
		snprintf(text, sizeof text, "%.*s\n%s%s", (int)(warm_at - shipped.data), shipped.data,
			 cases[i].warm, net_at + 1);
		bool got = conf_parse(text, strlen(text), "/", &c, err, sizeof err);
		ok(got == cases[i].good && (got || strstr(err, "warm")), "warm settings: %s %s%s%s", cases[i].why,
		   cases[i].good ? "load" : "refused", got ? "" : ": ", got ? "" : err);
		if (got && i == 1)
			ok(c.warm.n == 2 && c.warm.total == 3 && c.warm.counts[0] == 2 &&
			   !strcmp(c.warm.langs[1], "javascript") && c.warm.max_age_ms == 600000 &&
			   c.warm.memory_budget_bytes == (int64_t)2 << 30 && c.warm.preload_bytes == 256 << 20,
			   "warm settings: counts kept in order, defaults for the rest");
		if (got)
			conf_free(&c);
	}
	buf_free(&shipped);
}

static void registry_agent(void)
{
	struct registry r;
	char err[400];
	const char *bad[][2] = {
		{"agent: []\n", "an empty agent"},
		{"preload: [numpy]\n", "preload without an agent"},
		{"agent: [x]\n    compile: [cc, \"{file}\"]\n", "an agent for a compiled language"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char text[1024];
		snprintf(text, sizeof text,
			 "languages:\n  - name: p\n    version: \"1\"\n    image: p\n    file: m.p\n"
			 "    run: [p, \"{file}\"]\n    %s"
			 "    limits: {memoryBytes: 1, cpus: 1, pids: 1, outputBytes: 1, wallTimeMs: 100}\n",
			 bad[i][0]);
		bool got = registry_parse(text, strlen(text), NULL, 0, &r, err, sizeof err);
		ok(!got, "registry: %s refused (%s)", bad[i][1], got ? "loaded" : err);
		if (got)
			registry_free(&r);
	}
}

UNIT_TEST(test_warm)
{
	struct conf c;
	struct registry r;
	struct fault f;
	fixture_load(&c, &r);
	const struct language *py = registry_find(&r, "python", NULL, &f);
	ok(py && py->agent.n == 2 && py->preload.n == 2, "registry: agent and preload read");
	hardening_is_the_same(&c, py);
	job_frame(py);
	settings();
	registry_agent();
	registry_free(&r);
	conf_free(&c);
}
