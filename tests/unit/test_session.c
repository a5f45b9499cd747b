#define _GNU_SOURCE
/* Sessions' pure parts: the agent's frames, its listings, the request
 * frames, the docker argv, the route patterns, the settings. */
#include "tap.h"
#include "fixtures.h"
#include "../../fcgi/request.h"
#include "../../sandbox/frame.h"
#include "../../sandbox/outputs.h"
#include "../../sandbox/spec.h"
#include "../../sandbox/sandbox.h"
#include "../../sandbox/session.h"
#include "../../sandbox/session_commands.h"
#include "../../sandbox/session_files.h"
#include "../../sandbox/session_store.h"

#define TAG "0123456789abcdef"

/* Everything a byte stream says, fed in pieces of `step` bytes. */
static void feed_all(const char *p, size_t n, size_t step, struct buf *log)
{
	struct frame_decoder d;
	int last_fd = 0; /* output in pieces logs as one piece */
	frame_init(&d, 1000);
	for (size_t off = 0; off < n;) {
		size_t k = n - off < step ? n - off : step;
		const char *q = p + off;
		struct frame_event ev;
		do {
			size_t used = frame_feed(&d, q, k, &ev);
			q += used;
			k -= used;
			switch (ev.kind) {
			case FRAME_MORE: break;
			case FRAME_READY: buf_printf(log, "ready;"); break;
			case FRAME_OUT:
				if (ev.fd != last_fd)
					buf_printf(log, "%d:", ev.fd);
				last_fd = ev.fd;
				buf_append(log, ev.data, ev.len);
				break;
			case FRAME_DATA: last_fd = 0; buf_append(log, ev.data, ev.len); break;
			case FRAME_END:
				last_fd = 0;
				buf_append(log, ev.data, ev.len);
				if (!ev.more)
					buf_printf(log, "|end %s %lld;", ev.tag, ev.code);
				break;
			case FRAME_DISPLAY:
				last_fd = 0;
				buf_append(log, ev.data, ev.len);
				if (!ev.more)
					buf_printf(log, "|disp %s;", ev.tag);
				break;
			case FRAME_GARBLED: buf_printf(log, "garbled;"); break;
			}
		} while (k > 0 || ev.kind != FRAME_MORE);
		off += step < n - off ? step : n - off;
	}
	buf_append(log, "", 0);
}

static void frames(void)
{
	static const char stream[] = "ready\nout " TAG " 3\nab\nerr " TAG " 2\n\036x"
				     "disp " TAG " 5\n{\"d\"}disp " TAG " 0\n"
				     "data " TAG " 0\nend " TAG " 1 4\n{\"a\"end " TAG " 137 0\n";
	struct buf whole = {0};
	feed_all(stream, sizeof stream - 1, sizeof stream, &whole);
	is_str(whole.data, "ready;1:ab\n2:\036x{\"d\"}|disp " TAG ";|disp " TAG ";{\"a\"|end " TAG " 1;|end "
	       TAG " 137;", "frames: ready, output by fd, displays, data, end with and without payload");
	bool same = true;
	for (size_t step = 1; step < 12; step++) {
		struct buf part = {0};
		feed_all(stream, sizeof stream - 1, step, &part);
		same = same && !strcmp(part.data, whole.data);
		buf_free(&part);
	}
	ok(same, "frames: any split of the same bytes says the same");
	buf_free(&whole);
	static const char *const bad[] = {
		"out 0123456789ABCDEF 1\nx",       /* upper-case tag */
		"out 0123 1\nx",                   /* short tag */
		"out " TAG " 65537\n",             /* a chunk over the cap */
		"end " TAG " 0 1001\n",            /* an end payload over its cap */
		"disp " TAG " 1001\n",             /* a display over the same cap */
		"disp " TAG " 0 1\n",              /* a display has no code */
		"end " TAG " -1 0\n",              /* a sign */
		"end " TAG " 1 0 extra\n",         /* a word too many */
		"exit " TAG " 1\n",                /* not in the protocol */
		"out " TAG "  1\nx",               /* two spaces */
		"out " TAG " 1x\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct buf log = {0};
		feed_all(bad[i], strlen(bad[i]), 64, &log);
		ok(strstr(log.data, "garbled;") != NULL && !strstr(log.data, "1:"),
		   "frames: garbled, nothing passed on: %.24s", bad[i]);
		buf_free(&log);
	}
	char longer[700];
	memset(longer, 'a', sizeof longer);
	struct buf log = {0};
	feed_all(longer, sizeof longer, 100, &log);
	is_str(log.data, "garbled;", "frames: a header past 512 bytes is garbled, once");
	buf_free(&log);
	char tag[AGENT_TAG_LEN + 1], other[AGENT_TAG_LEN + 1];
	frame_new_tag(tag);
	frame_new_tag(other);
	ok(strlen(tag) == 16 && strspn(tag, "0123456789abcdef") == 16 && strcmp(tag, other),
	   "frames: tags are 16 hex digits, fresh each time");
}

static void listing(void)
{
	static const char text[] = "f 12 1700000000 5\na.txtd 0 1700000001 3\nsubl 7 5 4\nlink";
	struct session_entry *e;
	size_t n;
	struct fault f = {0};
	ok(session_parse_listing(text, sizeof text - 1, 100, &e, &n, &f) && n == 3 &&
	   !strcmp(e[0].name, "a.txt") && e[0].type == 'f' && e[0].size == 12 && e[0].mtime == 1700000000 &&
	   !strcmp(e[1].name, "sub") && e[1].type == 'd' && !strcmp(e[2].name, "link") && e[2].type == 'l',
	   "listing: type, size, mtime and the name's bytes");
	session_entries_free(e, n);
	ok(session_parse_listing(text, sizeof text - 1, 2, &e, &n, &f) && n == 2, "listing: capped at max entries");
	session_entries_free(e, n);
	ok(session_parse_listing("", 0, 10, &e, &n, &f) && n == 0, "listing: an empty directory");
	static const char *const bad[] = {"f 1 1 9\nshort", "x 1 1 1\na", "f -1 1 1\na", "f 1 1 1 a",
		"f 1 1 3\na/b", "f 1 1 0\n", "f 1 1 1\na junk"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		f = (struct fault){0};
		bool good = session_parse_listing(bad[i], strlen(bad[i]), 10, &e, &n, &f);
		ok(!good && f.code == E_SANDBOX_FAILED && !e && n == 0, "listing: refused: %s", bad[i]);
	}
	ok(!session_parse_listing("f 1 1 3\na\0b", 11, 10, &e, &n, &f), "listing: a NUL in a name is refused");
}

static void step_requests(const struct language *py)
{
	struct sandbox_file files[] = {{.name = "main.py", .data = "print(1)\n", .len = 9},
				       {.name = "d/x.bin", .data = "a\0\n", .len = 3}};
	char *args[] = {"a b"};
	struct sandbox_job job = {.lang = py, .files = files, .n_files = 2, .args = args, .n_args = 1,
				  .stdin_data = "in\n", .stdin_len = 3};
	struct buf b = {0};
	session_step_request(&job, false, TAG, &b);
	static const char head[] = "run " TAG " 2 9 3\n7 9\nmain.pyprint(1)\n7 3\nd/x.bina\0\n7\n/bin/sh2\n-c";
	ok(b.len > sizeof head && !memcmp(b.data, head, sizeof head - 1),
	   "step request: run, counts, the files as they are, then the entry script's argv");
	static const char tail[] = "6\nisobox1\n01\n07\npython37\nmain.py3\na bin\n";
	ok(b.len > sizeof tail && !memcmp(b.data + b.len - (sizeof tail - 1), tail, sizeof tail - 1),
	   "step request: no compile (K 0), the run command, the args, then stdin");
	ok(memmem(b.data, b.len, "cp -R", 5) == NULL, "step request: the script copies nothing (the agent wrote the files)");
	buf_free(&b);
	session_step_request(&job, true, TAG, &b);
	static const char cell[] = "cell " TAG " 9 3\nprint(1)\nin\n";
	ok(b.len == sizeof cell - 1 && !memcmp(b.data, cell, b.len), "step request: a cell is the code and stdin");
	buf_free(&b);
}

static void session_argv(const struct conf *c, const struct language *py)
{
	struct sandbox_file files[] = {{.name = "main.py", .data = "1", .len = 1}};
	struct limits lim = {.memory_bytes = 256 << 20, .cpus = 1, .pids = 128};
	struct sandbox_job job = {.lang = py, .files = files, .n_files = 1, .limits = lim};
	struct strv cold = {0}, ses = {0}, kern = {0};
	argv_cold(c, &job, "isobox-main-x", "1.2", "/w/x", &cold);
	struct session s = {.limits = lim, .id = "0123456789abcdef0123456789abcdef", .container = "isobox-main-x"};
	argv_session(c, py, &s, "1.2", &ses);
	s.type = SESSION_KERNEL;
	argv_session(c, py, &s, "1.2", &kern);
	ok(index_of(&ses, "--label=isobox.kind=session") > 0, "session argv: labelled isobox.kind=session");
	/* Every flag of a cold run but its kind, its code, its home. */
	int same = 0, image = index_of(&cold, "--entrypoint=");
	for (int i = 2; i < image; i++) {
		bool own = !strncmp(cold.v[i], "--workdir", 9) || !strncmp(cold.v[i], "--env=HOME", 10) ||
			   !strcmp(cold.v[i], "--label=isobox.kind=cold") ||
			   !strncmp(cold.v[i], "--mount=type=bind,src=/w/x", 26);
		same += own ? 0 : index_of(&ses, cold.v[i]) > 0 ? 1 : -1000;
	}
	ok(same > 20, "session argv: every hardening flag of a cold run (%d)", same);
	ok(index_of(&ses, "--workdir=/workspace") > 0 && index_of(&ses, "--env=HOME=/workspace") > 0,
	   "session argv: /workspace is home and working dir");
	ok(index_of(&ses, "--label=isobox.session=0123456789abcdef0123456789abcdef") > 0,
	   "session argv: the session's id in a label");
	char tmpfs[128];
	snprintf(tmpfs, sizeof tmpfs, "--tmpfs=/workspace:rw,nosuid,nodev,exec,size=%lld,mode=1777",
		 (long long)c->sessions.workspace_bytes);
	ok(index_of(&ses, tmpfs) > 0, "session argv: /workspace is a tmpfs of sessions.workspaceBytes");
	int agent = index_of(&ses, "/isobox-agent/isobox-agent");
	ok(agent > 0 && !strcmp(ses.v[agent - 1], TEST_ID_PY) && !strcmp(ses.v[agent + 1], "shell") &&
	   agent + 2 == (int)ses.n, "session argv: the image by ID, then the agent, in shell mode");
	agent = index_of(&kern, "/isobox-agent/isobox-agent");
	ok(agent > 0 && !strcmp(kern.v[agent + 1], "kernel") && !strcmp(kern.v[agent + 2], "python3") &&
	   !strcmp(kern.v[agent + 3], "/isobox-agent/kernel.py") && agent + 4 == (int)kern.n,
	   "session argv: a kernel session's agent starts the registry's kernel");
	strv_free(&cold);
	strv_free(&ses);
	strv_free(&kern);
}

static void routes(void)
{
	char *p[2];
	ok(request_match("/v1/sessions/*/files/**", "/v1/sessions/abc/files/a/b 100%.txt", p) &&
	   tap_streq(p[0], "abc") && tap_streq(p[1], "a/b 100%.txt"),
	   "routes: * is a segment, ** the rest, as they are (the route is decoded once, before)");
	free(p[0]);
	free(p[1]);
	ok(!request_match("/v1/sessions/*", "/v1/sessions/", p) && !p[0],
	   "routes: * needs a segment");
	ok(!request_match("/v1/sessions/*", "/v1/sessions/a/b", p), "routes: * is one segment only");
	char *r = request_route("", "/v1/sessions/a/files/b%20c%25.txt?x=1");
	is_str(r, "/v1/sessions/a/files/b c%.txt", "routes: REQUEST_URI is decoded once, as PATH_INFO is");
	free(r);
	r = request_route("", "/v1/sessions/a/files/x%00y");
	is_str(r, "", "routes: a path with an escaped NUL is no path (no route)");
	free(r);
	r = request_route("", "/x%4");
	is_str(r, "", "routes: nor is one with a broken escape");
	free(r);
	ok(request_match("/execute", "/execute", p) && !p[0], "routes: a plain path");
	ok(!request_match("/execute", "/execute/", p), "routes: exact");
	char *v = request_query_param("a=1&path=sub%2Fdir+x&b", "path");
	is_str(v, "sub/dir x", "routes: a query parameter, decoded (+ is a space)");
	free(v);
	ok(request_query_param("xpath=1", "path") == NULL && request_query_param(NULL, "path") == NULL,
	   "routes: an absent query parameter");
}

static void ids_and_settings(const struct conf *c)
{
	char id[SESSION_ID_LEN + 1], host[SESSION_HOST_MAX + 1];
	session_new_id("h-2", id);
	ok(session_valid_id(id) && strlen(id) == 4 + 32 && !strncmp(id, "h-2-", 4) && session_id_host(id, host) &&
	   !strcmp(host, "h-2"), "ids: the host, then 32 hex digits (%s)", id);
	ok(session_id_host("0123456789abcdef0123456789abcdef", host) && !host[0],
	   "ids: 32 hex digits alone, from before hosts: this host's");
	static const char *const bad[] = {"../x", "ABCDEF0123456789abcdef0123456789", "", "-0123456789abcdef0123456789abcdef",
		"h_1-0123456789abcdef0123456789abcdef", "h1.0123456789abcdef0123456789abcdef",
		"h1-0123456789abcdef0123456789abcde", "../h-0123456789abcdef0123456789abcdef",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-0123456789abcdef0123456789abcdef", NULL};
	bool none = true;
	for (size_t i = 0; bad[i]; i++)
		none = none && !session_valid_id(bad[i]);
	ok(none, "ids: no other shape (a path, upper case, no host, a host of 33, a short hex part)");
	ok(c->sessions.dir && !strcmp(c->sessions.dir, "/var/lib/isobox/sessions") && c->sessions.max == 16 &&
	   c->sessions.memory_bytes == 512 << 20 && c->sessions.idle_ms == 600000,
	   "settings: the shipped sessions section");
	struct session s = {.created_ms = 1000, .last_used_ms = 5000, .idle_ms = 100, .lifetime_ms = 100000};
	ok(session_expires_ms(&s) == 5100, "expiry: idle ends it first");
	s.last_used_ms = 100950;
	ok(session_expires_ms(&s) == 101000, "expiry: else its lifetime");
}

static void outputs(const struct conf *c, const struct language *py)
{
	char *globs[] = {"*.csv", "plots/*.png", "data?.txt"};
	struct sandbox_file files[] = {{.name = "main.py", .data = "1", .len = 1}};
	struct sandbox_job job = {.lang = py, .files = files, .n_files = 1, .outputs = globs, .n_outputs = 3};
	ok(outputs_match(&job, "a.csv") && outputs_match(&job, "plots/p.png") && outputs_match(&job, "data1.txt"),
	   "outputs: globs match in the work dir");
	ok(!outputs_match(&job, "sub/a.csv") && !outputs_match(&job, "plots/x/p.png") && !outputs_match(&job, ".h.csv") &&
	   !outputs_match(&job, "data12.txt"), "outputs: '*' stops at '/', a leading '.' must be named");
	struct strv a = {0};
	argv_outputs(c, &job, "isobox-main-x", "1.2", &a);
	ok(a.n > 5 && !strcmp(a.v[a.n - 4], "/isobox-agent/isobox-agent") && !strcmp(a.v[a.n - 3], "--workspace") &&
	   !strcmp(a.v[a.n - 2], "/box") && !strcmp(a.v[a.n - 1], "shell") && !strcmp(a.v[a.n - 5], TEST_ID_PY),
	   "outputs argv: the agent in /box, not the entry script");
	ok(index_of(&a, "--label=isobox.kind=cold") > 0 && index_of(&a, "--workdir=/box") > 0 &&
	   index_of(&a, "--network=none") > 0, "outputs argv: a cold run's hardening");
	strv_free(&a);
}

UNIT_TEST(test_session)
{
	struct conf c;
	struct registry r;
	fixture_load(&c, &r);
	frames();
	listing();
	step_requests(&r.langs[0]);
	session_argv(&c, &r.langs[0]);
	routes();
	ids_and_settings(&c);
	outputs(&c, &r.langs[0]);
	registry_free(&r);
	conf_free(&c);
}

/* What the agent says of its background commands (frame.h bglist, bgout). */
#define BYTES(x) {x, sizeof x - 1}
UNIT_TEST(test_session_commands)
{
	struct fault f = {0};
	struct session_command *v;
	size_t n;
	static const char list[] = TAG " 1 -1 10 0 9\nsh\0-c\0ls\0"
				   "fedcba9876543210 0 137 0 5 6\nsleep\0";
	ok(session_parse_commands(list, sizeof list - 1, &v, &n, &f) && n == 2 &&
	   !strcmp(v[0].id, TAG) && v[0].running && v[0].exit_code == -1 && v[0].stdout_bytes == 10 &&
	   v[0].args.n == 3 && !strcmp(v[0].args.v[2], "ls") && !v[1].running && v[1].exit_code == 137 &&
	   v[1].stderr_bytes == 5 && v[1].args.n == 1 && !strcmp(v[1].args.v[0], "sleep"),
	   "commands: a list, read (%s)", f.message);
	session_commands_free(v, n);
	ok(session_parse_commands("", 0, &v, &n, &f) && n == 0, "commands: none");
	static const struct {
		const char *p;
		size_t n;
	} bad[] = {
		BYTES(TAG " 1 0 0 0 3\nsh\0"),              /* running with an exit code */
		BYTES(TAG " 0 -1 0 0 3\nsh\0"),             /* ended without one */
		BYTES(TAG " 0 256 0 0 3\nsh\0"),            /* past 255 */
		BYTES(TAG " 2 -1 0 0 3\nsh\0"),             /* neither running nor ended */
		BYTES("0123456789ABCDEF 1 -1 0 0 3\nsh\0"), /* not a tag */
		BYTES(TAG " 1 -1 0 0 9\nsh\0"),             /* its args run past the end */
		BYTES(TAG " 1 -1 0 0 3\nshx"),              /* the last arg not ended */
		BYTES(TAG " 1 -1 0 0 0\n"),                 /* no program */
		BYTES(TAG " 1 -1 0 0 3 \nsh\0"),            /* a word too many */
		BYTES(TAG " 1 -1 0 0 3"),                   /* no line end */
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		f = (struct fault){0};
		ok(!session_parse_commands(bad[i].p, bad[i].n, &v, &n, &f) && f.code == E_SANDBOX_FAILED && !v &&
		   n == 0, "commands: refused: %s", bad[i].p);
	}
	struct buf many = {0};
	for (int i = 0; i <= AGENT_MAX_COMMANDS; i++) {
		buf_printf(&many, "%016x 1 -1 0 0 2\na", i);
		buf_append(&many, "", 1);
	}
	ok(!session_parse_commands(many.data, many.len, &v, &n, &f), "commands: no more than the agent keeps");
	buf_free(&many);

	struct command_output o;
	static const char out[] = "0 3 5 4 9 0 2 2\nmoreer";
	ok(session_parse_output(out, sizeof out - 1, 10, &o) && !o.running && o.exit_code == 3 &&
	   o.from[0] == 5 && o.written[0] == 9 && o.out[0].len == 4 && !memcmp(o.out[0].data, "more", 4) &&
	   o.from[1] == 0 && o.out[1].len == 2 && !memcmp(o.out[1].data, "er", 2), "output: read");
	command_output_free(&o);
	static const char *const bad_out[] = {
		"0 3 5 4 9 0 2 2\nmoreerX",       /* bytes past the lengths */
		"0 3 5 4 9 0 2 2\nmore",          /* fewer */
		"0 3 7 4 9 0 0 0\nmore",          /* past what was written */
		"0 3 0 11 11 0 0 0\n0123456789a", /* over max */
		"1 3 0 0 0 0 0 0\n",              /* running with a code */
		"0 3 0 0 0 0 0\n",                /* a number short */
	};
	for (size_t i = 0; i < sizeof bad_out / sizeof *bad_out; i++)
		ok(!session_parse_output(bad_out[i], strlen(bad_out[i]), 10, &o), "output: refused: %s", bad_out[i]);
}

