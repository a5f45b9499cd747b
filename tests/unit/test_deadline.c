/*
 * How long a run may take (sandbox/deadline.c): the bound the pool's hang
 * backstop relies on, pinned; and no record a sandbox writes can move a
 * deadline past the sandbox's whole life.
 */
#include "tap.h"
#include "fixtures.h"
#include "../../sandbox/deadline.h"
#include "../../sandbox/docker.h"

#include <stdlib.h>

/* Feed the decoder as supervise.c does, keeping the clock the way it does. */
static void say(struct decoder *d, struct exec_clock *t, int64_t now, const char *bytes, size_t n)
{
	struct dec_event ev;
	do {
		size_t used = decoder_feed(d, 2, bytes, n, &ev);
		if (ev.kind == DEC_COMPILE_STARTED || ev.kind == DEC_PROGRAM_STARTED) {
			if (!t->up_ms)
				t->up_ms = now;
			t->phase_ms = now;
		} else if (ev.kind == DEC_COMPILE_DONE) {
			t->phase_ms = now;
		}
		bytes += used;
		n -= used;
	} while (n > 0 || ev.kind != DEC_MORE);
}

UNIT_TEST(test_deadline)
{
	struct conf c;
	struct registry r;
	fixture_load(&c, &r);
	struct limits l = {.memory_bytes = 64 << 20, .cpus = 1, .pids = 16, .output_bytes = 1000,
			   .wall_time_ms = 1000, .compile_time_ms = 1000};

	ok(c.sandbox.start_timeout_ms == 30000, "deadline: the fixture's start timeout is 30 s");
	ok(sandbox_bound_ms(&c, &l) == 30000 + 1000 + 1000 + 2000 + 5000 + 15000 + 15000 + 10000,
	   "deadline: bound = start + compile + wall + start allowance + drain + collect + outputs + remove (%lld)",
	   (long long)sandbox_bound_ms(&c, &l));
	l.compile_time_ms = 0;
	ok(sandbox_bound_ms(&c, &l) == 78000, "deadline: no compile step, no compile time");
	l.compile_time_ms = 1000;
	ok(file_request_ms(0) == 10000 && file_request_ms((size_t)8 << 20) == 12000,
	   "deadline: a file request: 10 s, plus 1 s per 4 MiB it moves");
	int64_t files = c.sessions.max_file_bytes;
	ok(sandbox_call_bound_ms(&c) == 120000 + 10000,
	   "deadline: other calls: volumed's 120 s (more than any file request here) + remove");
	c.sessions.max_file_bytes = (int64_t)1 << 30;
	ok(sandbox_call_bound_ms(&c) == 10000 + 256 * 1000 + 10000,
	   "deadline: other calls: a 1 GiB file request outlasts volumed");
	c.sessions.max_file_bytes = files;

	struct decoder d;
	struct exec_clock t = {.spawned_ms = 1000};
	decoder_init(&d, true);
	ok(exec_deadline(&c, &l, &d, &t) == 31000, "deadline: before the sandbox is up, the start timeout");
	say(&d, &t, 2000, "\036", 1);
	ok(exec_deadline(&c, &l, &d, &t) == 3000, "deadline: compiling, the compile time from its start");
	/* Code that runs during the compile forges the compile result... */
	say(&d, &t, 2100, "\0360 0 0\n", 7);
	ok(exec_deadline(&c, &l, &d, &t) == 2100 + 2000,
	   "deadline: a forged compile result waits the start allowance, not the start timeout");
	/* ... and the program's start, then the real compile goes on. */
	say(&d, &t, 2200, "\036", 1);
	ok(exec_deadline(&c, &l, &d, &t) == 3200, "deadline: a forged start gives the wall time from then");
	say(&d, &t, 2900, "\0360 0 0\n\036", 8); /* the real records: now program output */
	ok(exec_deadline(&c, &l, &d, &t) == 3200, "deadline: later records are output, they move nothing");

	/* Any sequence of records at any times: never past up + compile + wall + allowance. */
	srand(7);
	bool bounded = true;
	for (int trial = 0; trial < 2000 && bounded; trial++) {
		decoder_init(&d, true);
		t = (struct exec_clock){.spawned_ms = 0};
		int64_t now = 0, life = -1;
		static const char *const says[] = {"\036", "\0360 0 0\n", "\0361 0 0\n", "x", "\n"};
		for (int step = 0; step < 12; step++) {
			now += rand() % 3000;
			const char *s = says[rand() % 5];
			say(&d, &t, now, s, strlen(s));
			if (t.up_ms && life < 0)
				life = t.up_ms + l.compile_time_ms + l.wall_time_ms + START_ALLOWANCE_MS;
			if (life >= 0 && exec_deadline(&c, &l, &d, &t) > life)
				bounded = false;
		}
	}
	ok(bounded, "deadline: no record moves the deadline past the sandbox's life");

	/* A session's end, set from outside, cuts every phase. */
	decoder_init(&d, true);
	t = (struct exec_clock){.spawned_ms = 1000, .up_ms = 1000, .phase_ms = 1000, .end_by_ms = 1500};
	ok(exec_deadline(&c, &l, &d, &t) == 1500, "deadline: a session's end comes before the step's own");
	say(&d, &t, 1200, "\0360 0 0\n\036", 8);
	ok(exec_deadline(&c, &l, &d, &t) == 1500, "deadline: no record moves it past the session's end");
	t.end_by_ms = 99999;
	ok(exec_deadline(&c, &l, &d, &t) == 1200 + 1000, "deadline: a later session end leaves the step's own");
	t = (struct exec_clock){.spawned_ms = 1000, .end_by_ms = 1200};
	ok(exec_deadline(&c, &l, &d, &t) == 1200, "deadline: it cuts the start too");
	conf_free(&c);
	registry_free(&r);
}

/* dockerd's answer to a removal (docker.c): the status of its first line. */
UNIT_TEST(test_docker_http)
{
	static const struct {
		const char *reply;
		int status;
	} cases[] = {
		{"HTTP/1.1 204 No Content\r\nApi-Version: 1.41\r\n\r\n", 204},
		{"HTTP/1.0 404 Not Found\r\n", 404},
		{"HTTP/1.1 409 Conflict\r\n", 409},
		{"HTTP/1.1 500 \r\n", 500},
		{"HTTP/1.1 20", -1},
		{"HTTP/2 204 No Content\r\n", -1},
		{"HTTP/1.1 2x4 No Content\r\n", -1},
		{"HTTP/1.1 2044 No Content\r\n", -1},
		{"", -1},
		{"204 No Content\r\n", -1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		ok(docker_http_status(cases[i].reply, strlen(cases[i].reply)) == cases[i].status,
		   "docker API: %d from \"%.20s\"", cases[i].status, cases[i].reply);

	/* A container's record (docker inspect's JSON), from its answer. */
	static const char answer[] = "HTTP/1.0 200 OK\r\nApi-Version: 1.41\r\nContent-Type: application/json\r\n\r\n"
				     "{\"Id\":\"abc\",\"State\":{\"Status\":\"exited\",\"Running\":false,"
				     "\"OOMKilled\":true,\"Dead\":false,\"Pid\":0,\"ExitCode\":137}}\n";
	const char *body = docker_http_body(answer, sizeof answer - 1);
	ok(body && *body == '{', "docker API: the body starts after the blank line");
	ok(!docker_http_body("HTTP/1.0 200 OK\r\nApi-Version: 1.41\r\n", 36),
	   "docker API: no body when the headers have not ended");
	static const struct {
		const char *json;
		bool ok;
		int code;
		bool oom;
	} states[] = {
		{"{\"State\":{\"OOMKilled\":true,\"ExitCode\":137}}", true, 137, true},
		{"{\"State\":{\"OOMKilled\":false,\"ExitCode\":3}}", true, 3, false},
		{"{\"State\":{\"OOMKilled\":false,\"ExitCode\":0}}", true, 0, false},
		{"{\"State\":{\"OOMKilled\":false}}", false, 0, false},
		{"{\"State\":{\"OOMKilled\":\"false\",\"ExitCode\":1}}", false, 0, false},
		{"{\"State\":{\"OOMKilled\":false,\"ExitCode\":\"1\"}}", false, 0, false},
		{"{\"State\":{\"OOMKilled\":false,\"ExitCode\":-1}}", false, 0, false},
		{"{\"ExitCode\":1,\"OOMKilled\":false}", false, 0, false},
		{"[]", false, 0, false},
	};
	for (size_t i = 0; i < sizeof states / sizeof states[0]; i++) {
		cJSON *record = cJSON_Parse(states[i].json);
		int code = -7;
		bool oom = !states[i].oom;
		bool got = docker_state_of(record, &code, &oom);
		ok(got == states[i].ok && (!got || (code == states[i].code && oom == states[i].oom)),
		   "docker API: state of %s", states[i].json);
		cJSON_Delete(record);
	}
	cJSON *whole = cJSON_Parse(body);
	int code = 0;
	bool oom = false;
	ok(docker_state_of(whole, &code, &oom) && code == 137 && oom, "docker API: the state of a whole answer");
	cJSON_Delete(whole);
}
