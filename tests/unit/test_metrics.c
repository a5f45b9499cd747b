/* The pool's shared metrics: counting, aggregation and the text format. */
#include "tap.h"
#include "fixtures.h"
#include "../../fcgi/admin.h"
#include "../../fcgi/errors.h"
#include "../../fcgi/metrics.h"
#include "../../fcgi/scoreboard.h"
#include "../../fcgi/worker.h"

#include <sys/wait.h>

static bool has_line(const struct buf *b, const char *line)
{
	char *want = xasprintf("\n%s\n", line);
	bool found = b->data && strstr(b->data, want) != NULL;
	free(want);
	return found;
}

static int count_lines_with(const struct buf *b, const char *needle)
{
	int n = 0;
	for (const char *p = b->data; p && (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void test_outcomes(void)
{
	struct sandbox_result r = {.has_run = true};
	is_str(metrics_outcome(&r), "ok", "outcome: exit 0 is ok");
	r.run.exit_code = 3;
	is_str(metrics_outcome(&r), "error", "outcome: nonzero exit is error");
	r.run.truncated = true;
	is_str(metrics_outcome(&r), "truncated", "outcome: truncated beats error");
	r.run.oom_killed = true;
	is_str(metrics_outcome(&r), "oom", "outcome: oom beats truncated");
	r.run.timed_out = true;
	is_str(metrics_outcome(&r), "timeout", "outcome: timeout beats oom");
	r.client_gone = true;
	is_str(metrics_outcome(&r), "cancelled", "outcome: a client that left beats everything");
	struct sandbox_result c = {.has_compile = true, .compile.exit_code = 1};
	is_str(metrics_outcome(&c), "error", "outcome: failed compile (no run) is error");
	c.compile.timed_out = true;
	is_str(metrics_outcome(&c), "timeout", "outcome: compile timeout is timeout");
	struct sandbox_result cr = {.has_compile = true, .has_run = true};
	is_str(metrics_outcome(&cr), "ok", "outcome: compiled and ran with exit 0 is ok");
}

static void test_counting(void)
{
	struct metrics *m = metrics_create();
	struct scoreboard *sb = scoreboard_create(3);
	ok(m != NULL && sb != NULL, "metrics: regions mapped");
	if (!m || !sb)
		return;
	scoreboard_spawned(sb, 0, 101);
	scoreboard_spawned(sb, 1, 102);
	metrics_count(m, M_EXECUTIONS, "python", "ok");
	metrics_count(m, M_EXECUTIONS, "python", "ok");
	metrics_count(m, M_EXECUTIONS, "python", "timeout");
	metrics_count(m, M_EXECUTIONS, "python@3.14", "ok");
	metrics_observe_ms(m, "python@3.14", 20);
	metrics_count(m, M_REJECTED, "bad_json", "400");
	metrics_count(m, M_WORKER_EXITS, "recycled", NULL);
	metrics_count(m, M_HTTP_REQUESTS, "a\"b\\c\nd", "200");
	metrics_observe_ms(m, "python", 50);    /* le 0.1 */
	metrics_observe_ms(m, "python", 100);   /* le 0.1: bounds are inclusive */
	metrics_observe_ms(m, "python", 1500);  /* le 2 */
	metrics_observe_ms(m, "python", 99999); /* +Inf only */

	/* A worker process that counts and dies: its counts stay. */
	pid_t pid = fork();
	if (pid == 0) {
		metrics_count(m, M_EXECUTIONS, "python", "ok");
		metrics_count(m, M_EXECUTIONS, "ruby", "oom");
		metrics_observe_ms(m, "ruby", 300);
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);

	ok(scoreboard_claim_execution(sb, 0, 2), "claim: first of 2 admitted");
	ok(scoreboard_claim_execution(sb, 1, 2), "claim: second of 2 admitted");
	ok(!scoreboard_claim_execution(sb, 2, 2), "claim: third refused at max 2");
	ok(scoreboard_claim_execution(sb, 2, 0), "claim: max 0 never refuses");
	scoreboard_release_execution(sb, 2);
	scoreboard_gone(sb, 1); /* a dead worker runs nothing */
	ok(scoreboard_pid(sb, 1) == 0 && scoreboard_pid(sb, 0) == 101, "slot: the master's pids");
	ok(scoreboard_claim_execution(sb, 2, 2), "claim: a gone worker's place is free again");
	scoreboard_release_execution(sb, 2);
	scoreboard_busy(sb, 0, 12345);
	ok(scoreboard_deadline(sb, 0) == 12345, "slot: deadline published");
	ok(scoreboard_deadline(sb, 7) == 0, "slot: out of range reads as idle");
	struct scoreboard_counts n = scoreboard_count(sb);
	ok(n.alive == 1 && n.executing == 1, "slot: counts (alive, executing)");

	/* A worker writes its slot; the master's pid for it stays its own. */
	pid = fork();
	if (pid == 0) {
		scoreboard_spawned(sb, 0, 999); /* as a misbehaving worker could */
		_exit(0);
	}
	waitpid(pid, &status, 0);
	ok(scoreboard_pid(sb, 0) == 101, "slot: the master never takes a pid from shared memory");

	struct buf b = {0};
	buf_append(&b, "\n", 1); /* so that has_line can match the first line */
	metrics_render(m, sb, 2, NULL, -1, &b);
	ok(has_line(&b, "isobox_workers 1"), "render: live workers counted");
	ok(has_line(&b, "isobox_workers_busy 1"), "render: busy workers counted");
	ok(has_line(&b, "isobox_execution_slots 2"), "render: execution slots");
	ok(has_line(&b, "# TYPE isobox_executions_total counter"), "render: TYPE line");
	ok(has_line(&b, "isobox_executions_total{language=\"python\",outcome=\"ok\"} 3"),
	   "render: python ok = 2 here + 1 from a dead process");
	ok(has_line(&b, "isobox_executions_total{language=\"python\",outcome=\"timeout\"} 1"),
	   "render: python timeout");
	ok(has_line(&b, "isobox_executions_total{language=\"python\",version=\"3.14\",outcome=\"ok\"} 1"),
	   "metrics: a language id is two labels, language and version");
	ok(has_line(&b, "isobox_execution_duration_seconds_count{language=\"python\",version=\"3.14\"} 1"),
	   "metrics: the histogram's too");
	ok(has_line(&b, "isobox_executions_total{language=\"ruby\",outcome=\"oom\"} 1"),
	   "render: a label set first seen in another process");
	ok(has_line(&b, "isobox_rejected_requests_total{code=\"bad_json\",status=\"400\"} 1"),
	   "render: rejected by code and status");
	ok(has_line(&b, "isobox_worker_exits_total{reason=\"recycled\"} 1"), "render: one-label family");
	ok(has_line(&b, "isobox_http_requests_total{route=\"a\\\"b\\\\c\\nd\",status=\"200\"} 1"),
	   "render: label values escaped");
	ok(has_line(&b, "isobox_execution_duration_seconds_bucket{language=\"python\",le=\"0.001\"} 0"),
	   "render: histogram first bucket, 1 ms");
	ok(has_line(&b, "isobox_execution_duration_seconds_bucket{language=\"python\",le=\"0.05\"} 1"),
	   "render: 50 ms in le 0.05 (bounds are inclusive)");
	ok(has_line(&b, "isobox_execution_duration_seconds_bucket{language=\"python\",le=\"0.1\"} 2"),
	   "render: histogram buckets below a second");
	ok(has_line(&b, "isobox_execution_duration_seconds_bucket{language=\"python\",version=\"3.14\",le=\"0.02\"} 1"),
	   "render: a warm run's 20 ms in le 0.02");
	ok(has_line(&b, "isobox_execution_duration_seconds_bucket{language=\"python\",le=\"1\"} 2"),
	   "render: histogram buckets are cumulative");
	ok(has_line(&b, "isobox_execution_duration_seconds_bucket{language=\"python\",le=\"2\"} 3"),
	   "render: histogram 1.5 s in le 2");
	ok(has_line(&b, "isobox_execution_duration_seconds_bucket{language=\"python\",le=\"+Inf\"} 4"),
	   "render: +Inf holds everything");
	ok(has_line(&b, "isobox_execution_duration_seconds_count{language=\"python\"} 4"),
	   "render: count equals +Inf");
	ok(has_line(&b, "isobox_execution_duration_seconds_sum{language=\"python\"} 101.649"),
	   "render: sum in seconds");
	ok(has_line(&b, "isobox_execution_duration_seconds_count{language=\"ruby\"} 1"),
	   "render: histogram from a dead process");
	ok(has_line(&b, "isobox_metrics_dropped_total 0"), "render: nothing dropped");
	buf_free(&b);

	/* Fill the counter table: the rest is dropped and counted, never a crash. */
	for (int i = 0; i < 600; i++) {
		char name[32];
		snprintf(name, sizeof name, "lang%d", i);
		metrics_count(m, M_EXECUTIONS, name, "ok");
	}
	buf_append(&b, "\n", 1);
	metrics_render(m, sb, 2, NULL, -1, &b);
	/* 7 label sets were there: 505 of the 600 fit in 512 entries. */
	ok(has_line(&b, "isobox_metrics_dropped_total 95"), "render: a full table drops and counts");
	ok(count_lines_with(&b, "{language=\"python\",outcome=\"ok\"}") == 1, "render: each label set once");
	buf_free(&b);
	metrics_destroy(m);
	scoreboard_destroy(sb);

	metrics_count(NULL, M_EXECUTIONS, "python", "ok");
	ok(scoreboard_claim_execution(NULL, 0, 1), "no pool (CGI): calls are no-ops");
}

/* Every fault code has its row: a name, a status, a side. */
static void test_error_table(void)
{
	bool all = true, unique = true;
	for (int c = E_NONE + 1; c < E_COUNT; c++) {
		const struct error_info *e = error_info((enum fault_code)c);
		if (c != E_INTERNAL && e == error_info(E_INTERNAL))
			all = false, printf("#   code %d has no row\n", c);
		if (e->status < 400 || e->status > 599 || e->piston_status < 400)
			all = false;
		if (e->server_side != (e->status >= 500 && c != E_BUSY))
			all = false, printf("#   %s: side does not follow its status\n", e->name);
		for (int d = E_NONE + 1; d < c; d++)
			if (!strcmp(error_info((enum fault_code)d)->name, e->name))
				unique = false;
	}
	ok(all, "errors: every code has a row with a 4xx/5xx status and its side");
	ok(unique, "errors: every name is used once");
	ok(error_info(E_BUSY)->retry_after == 1 && error_info(E_TOO_MANY_EXECUTIONS)->retry_after == 1 &&
	   error_info(E_SESSION_ELSEWHERE)->retry_after == 1 && error_info(E_IMAGE_NOT_BUILT)->retry_after == 60 &&
	   error_info(E_BAD_JSON)->retry_after == 0 && error_info(E_RATE_LIMITED)->retry_after == 0,
	   "errors: a refusal that a retry ends says when (Retry-After); a rate limit computes its own");
	ok(error_info(E_COUNT) == error_info(E_INTERNAL) && error_info(E_NONE) == error_info(E_INTERNAL),
	   "errors: out of range reads as internal");
	ok(error_info(E_UNKNOWN_LANGUAGE)->status == 404 && error_info(E_UNKNOWN_LANGUAGE)->piston_status == 400,
	   "errors: unknown language is 404 here, 400 on the Piston route (as Piston answers)");
}

/* The hang backstop's bound: the longest thing the settings allow + margin. */
static void test_hang_bound(void)
{
	struct worker w = {.slot = -1};
	fixture_load(&w.conf, &w.reg);
	/* sandbox_bound_ms (pinned in test_deadline.c) adds 47 s of docker
	 * teardown, outputs and start allowance to start + compile + wall;
	 * sandbox_call_bound_ms is 130 s (a volume's creation + remove). */
	ok(admin_hang_bound_ms(&w) == 30000 + 300000 + 47000 + 15000,
	   "hang bound: a session step's ceiling (sessions.maxStepMs) bounds it, + margin: %lld",
	   (long long)admin_hang_bound_ms(&w));
	char *sessions_dir = w.conf.sessions.dir;
	w.conf.sessions.dir = NULL; /* sessions off: a step's ceiling no longer counts */
	ok(admin_hang_bound_ms(&w) == 130000 + 15000,
	   "hang bound: small ceilings: a volume's creation bounds it, + margin: %lld",
	   (long long)admin_hang_bound_ms(&w));
	w.conf.ceilings.wall_time_ms = 100000;
	ok(admin_hang_bound_ms(&w) == 30000 + 100000 + 47000 + 15000,
	   "hang bound: the sandbox's bound for the ceilings + margin (no compiled language)");
	w.reg.langs[1].defaults.compile_time_ms = 15000;
	ok(admin_hang_bound_ms(&w) == 30000 + 15000 + 100000 + 47000 + 15000,
	   "hang bound: plus the longest compile time in the registry");
	w.conf.sessions.dir = sessions_dir;
	worker_free(&w);
}

static void store_part(void)
{
	struct metrics_store ms = {.backend = "redis", .up = true, .queue = true, .jobs = 3, .pending = 1};
	strv_push(&ms.hosts, "h1");
	strv_push(&ms.hosts, "r\"2");
	struct buf out = {0};
	metrics_render_store(&ms, &out);
	buf_append(&out, "", 1);
	ok(strstr(out.data, "isobox_store_up{backend=\"redis\"} 1\n") &&
	   strstr(out.data, "isobox_cluster_host_up{host=\"h1\"} 1\n") &&
	   strstr(out.data, "isobox_cluster_host_up{host=\"r\\\"2\"} 1\n") &&
	   strstr(out.data, "isobox_queue_jobs 3\n") && strstr(out.data, "isobox_queue_pending 1\n"),
	   "metrics: the store's part: up, hosts (labels escaped), the queue");
	buf_free(&out);
	ms.up = false;
	metrics_render_store(&ms, &out);
	buf_append(&out, "", 1);
	ok(strstr(out.data, "isobox_store_up{backend=\"redis\"} 0\n") && !strstr(out.data, "isobox_queue_jobs"),
	   "metrics: a store that does not answer: up 0, nothing it would have said");
	buf_free(&out);
	strv_free(&ms.hosts);

	metrics_render_build_info("20261204-abc1234", "gvisor", "runsc", "release-\"2024\"", &out);
	buf_append(&out, "", 1);
	is_str(out.data, "# HELP isobox_build_info isobox's version, its sandbox backend and that backend's "
	       "runtime (always 1)\n# TYPE isobox_build_info gauge\nisobox_build_info{version=\"20261204-abc1234\","
	       "backend=\"gvisor\",runtime=\"runsc\",runtime_version=\"release-\\\"2024\\\"\"} 1\n",
	       "metrics: build info, a gauge of 1 with the version, backend and runtime (labels escaped)");
	buf_free(&out);
}

/* Tenants' series stay bounded: the first max tenants by name, then "other". */
static void tenant_labels(void)
{
	struct metrics *m = metrics_create();
	char label[64];
	metrics_tenant_label(m, "acme", 2, label);
	is_str(label, "acme", "metrics: a first tenant gets its own label");
	metrics_count(m, M_TENANT_REQUESTS, label, "200");
	metrics_count(m, M_TENANT_REQUESTS, label, "429"); /* a second status: still one tenant */
	metrics_tenant_label(m, "globex", 2, label);
	is_str(label, "globex", "metrics: ...and a second, up to the bound (2)");
	metrics_count(m, M_TENANT_REQUESTS, label, "200");
	metrics_tenant_label(m, "initech", 2, label);
	is_str(label, "other", "metrics: a third shares \"other\"");
	metrics_count(m, M_TENANT_REQUESTS, label, "200");
	metrics_tenant_label(m, "umbrella", 2, label);
	is_str(label, "other", "metrics: ...and so does a fourth (\"other\" is not a tenant)");
	metrics_tenant_label(m, "acme", 2, label);
	is_str(label, "acme", "metrics: a tenant named before keeps its label");
	metrics_tenant_label(m, "hooli", 0, label);
	is_str(label, "other", "metrics: metricsTenants 0: every tenant is \"other\"");
	struct buf out = {0};
	metrics_add(m, M_TENANT_RUN_MS, "acme", NULL, 1500);
	metrics_render(m, NULL, 4, NULL, -1, &out);
	buf_append(&out, "", 1);
	ok(strstr(out.data, "isobox_tenant_requests_total{tenant=\"acme\",status=\"429\"} 1\n") &&
	   strstr(out.data, "isobox_tenant_requests_total{tenant=\"other\",status=\"200\"} 1\n") &&
	   strstr(out.data, "isobox_tenant_run_seconds_total{tenant=\"acme\"} 1.500\n"),
	   "metrics: tenants' requests by status, and their runs' time in seconds");
	buf_free(&out);
	metrics_destroy(m);
}

UNIT_TEST(test_metrics)
{
	tenant_labels();
	store_part();
	test_outcomes();
	test_counting();
	test_hang_bound();
	test_error_table();
}
