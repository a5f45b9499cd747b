/*
 * The cold run's container through dockerd's API (launch.c, spec_render.c):
 * the create body equals what the docker CLI sends for the same spec's argv, and the
 * attached stream's frames come apart right.
 *
 * cli-create-body.json is the body that docker 20.10.24's CLI sent to
 * POST /containers/create for the argv below (captured on its socket),
 * with the CLI's spellings of "not set" left out: members that are false,
 * 0, "", null, [] or {}, MemorySwappiness -1 and ConsoleSize [0,0]. Env
 * and Ulimits are sorted (the CLI's order is a map's), and the seccomp
 * profile's text is "seccomp=PROFILE". The /etc/hosts mount was added
 * by hand when spec.c began to give one (it is the /etc/resolv.conf
 * mount's shape); NetworkDisabled is the one member the CLI cannot send.
 */
#include "tap.h"
#include "fixtures.h"
#include "../../sandbox/spec_render.h"
#include "../../sandbox/demux.h"
#include "../../sandbox/launch.h"

#include <stdlib.h>

/* Drop the members that say "not set", recursively (not array elements). */
static void drop_unset(cJSON *o)
{
	cJSON *next;
	for (cJSON *m = o ? o->child : NULL; m; m = next) {
		next = m->next;
		drop_unset(m);
		bool unset = cJSON_IsFalse(m) || cJSON_IsNull(m) || (cJSON_IsNumber(m) && m->valuedouble == 0) ||
			     (cJSON_IsString(m) && !m->valuestring[0]) ||
			     ((cJSON_IsArray(m) || cJSON_IsObject(m)) && !m->child);
		if (unset && cJSON_IsObject(o))
			cJSON_DeleteItemFromObjectCaseSensitive(o, m->string);
	}
}

static const char *sort_key(const cJSON *item)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(item, "Name");
	return cJSON_IsString(item) ? item->valuestring : cJSON_IsString(name) ? name->valuestring : "";
}

static int by_key(const void *a, const void *b)
{
	return strcmp(sort_key(*(cJSON *const *)a), sort_key(*(cJSON *const *)b));
}

/* An array's items in order of their string, or their "Name". */
static void sort_array(cJSON *array)
{
	int n = cJSON_GetArraySize(array);
	cJSON **items = calloc((size_t)n + 1, sizeof *items);
	for (int i = 0; i < n; i++)
		items[i] = cJSON_DetachItemFromArray(array, 0);
	qsort(items, (size_t)n, sizeof *items, by_key);
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(array, items[i]);
	free(items);
}

static cJSON *read_json(const char *path)
{
	FILE *fp = fopen(path, "r");
	struct buf b = {0};
	char chunk[4096];
	size_t n;
	while (fp && (n = fread(chunk, 1, sizeof chunk, fp)) > 0)
		buf_append(&b, chunk, n);
	if (fp)
		fclose(fp);
	cJSON *j = b.len ? cJSON_ParseWithLength(b.data, b.len) : NULL;
	buf_free(&b);
	return j;
}

static void test_body(void)
{
	struct conf c;
	struct registry r;
	struct container_spec spec;
	fixture_load(&c, &r);
	struct sandbox_job job = fixture_python_job(&r);
	spec_cold(&c, &job, "isobox-main-0123456789abcdef", "1.2", "/var/lib/isobox/work/x", "ab12", &spec);
	struct strv a = {0};
	spec_argv(&spec, c.docker, &a);
	ok(index_of(&a, "--security-opt=seccomp=/var/lib/isobox/sandbox/seccomp.json") > 0,
	   "launch: the argv names the installed seccomp profile");
	strv_free(&a);
	/* The repository's profile: the installed one is setup's copy of it. */
	spec.seccomp_profile = "deploy/seccomp.json";

	cJSON *body;
	struct buf why = {0};
	ok(spec_create_body(&spec, &body, &why), "launch: the run's spec makes a create body (%s)",
	   why.data ? why.data : "");

	/* The profile goes in whole, as the CLI sends it. */
	cJSON *host = cJSON_GetObjectItemCaseSensitive(body, "HostConfig");
	cJSON *opts = cJSON_GetObjectItemCaseSensitive(host, "SecurityOpt");
	cJSON *profile = read_json("deploy/seccomp.json"), *sent = NULL;
	cJSON *opt;
	cJSON_ArrayForEach(opt, opts) {
		if (cJSON_IsString(opt) && !strncmp(opt->valuestring, "seccomp=", 8)) {
			sent = cJSON_Parse(opt->valuestring + 8);
			cJSON_SetValuestring(opt, "seccomp=PROFILE");
		}
	}
	ok(profile && sent && cJSON_Compare(profile, sent, true), "launch: the seccomp profile's JSON, whole");
	cJSON_Delete(profile);
	cJSON_Delete(sent);

	ok(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(body, "NetworkDisabled")),
	   "launch: no network: dockerd sets up none (NetworkDisabled)");
	cJSON_DeleteItemFromObjectCaseSensitive(body, "NetworkDisabled");
	drop_unset(body);
	sort_array(cJSON_GetObjectItemCaseSensitive(body, "Env"));
	sort_array(cJSON_GetObjectItemCaseSensitive(host, "Ulimits"));
	cJSON *cli = read_json("tests/unit/cli-create-body.json");
	bool same = cli && body && cJSON_Compare(cli, body, true);
	if (!same) {
		char *mine = cJSON_PrintUnformatted(body);
		printf("#   ours: %s\n", mine);
		free(mine);
	}
	ok(same, "launch: the create body is the docker CLI's for the same spec's argv");
	cJSON_Delete(cli);
	cJSON_Delete(body);

	/* runc's and egress's fields; no quota of the container's own. */
	spec.cgroupns_private = true;
	spec.network = "isobox-egress";
	spec.runtime = "isobox-runc";
	spec.cpus = 0;
	ok(spec_create_body(&spec, &body, &why), "launch: runc's and egress's spec");
	host = cJSON_GetObjectItemCaseSensitive(body, "HostConfig");
	is_str(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(host, "CgroupnsMode")), "private",
	       "launch: cgroupns private");
	is_str(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(host, "NetworkMode")), "isobox-egress",
	       "launch: the network");
	is_str(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(host, "Runtime")), "isobox-runc",
	       "launch: the runtime");
	ok(!cJSON_GetObjectItemCaseSensitive(host, "NanoCpus"), "launch: no cpus, no NanoCpus");
	ok(!cJSON_GetObjectItemCaseSensitive(body, "NetworkDisabled"), "launch: egress: docker's network kept");
	cJSON_Delete(body);

	/* A profile that cannot be read stops the create: never a sandbox
	 * without its filter. */
	spec.seccomp_profile = "/nonexistent/seccomp.json";
	ok(!spec_create_body(&spec, &body, &why) && !body && why.data && strstr(why.data, "seccomp"),
	   "launch: a seccomp profile that cannot be read is refused (%s)", why.data ? why.data : "");
	buf_free(&why);
	spec_free(&spec);
	conf_free(&c);
	registry_free(&r);
}

/* Feed the stream in pieces of `step` bytes; collect stdout and stderr. */
static void demux_all(const char *s, size_t n, size_t step, struct buf *out, struct buf *err)
{
	struct demux d = {0};
	for (size_t at = 0; at < n; at += step) {
		const char *p = s + at;
		size_t left = n - at < step ? n - at : step;
		while (left) {
			int fd;
			const char *data;
			size_t len;
			size_t used = demux_feed(&d, p, left, &fd, &data, &len);
			if (len)
				buf_append(fd == 1 ? out : err, data, len);
			if (!used)
				return; /* must not happen: the caller would spin */
			p += used;
			left -= used;
		}
	}
}

static void test_demux(void)
{
	/* stdout "out\n", an empty stderr frame, stderr "err", stdout "x",
	 * docker's own stream (3) "sys", a 300-byte stdout frame. */
	static const char head[] = "\1\0\0\0\0\0\0\4out\n"
				   "\2\0\0\0\0\0\0\0"
				   "\2\0\0\0\0\0\0\3err"
				   "\1\0\0\0\0\0\0\1x"
				   "\3\0\0\0\0\0\0\3sys"
				   "\1\0\0\0\0\0\1\54";
	struct buf s = {0};
	buf_append(&s, head, sizeof head - 1);
	for (int i = 0; i < 300; i++)
		buf_append(&s, "y", 1);
	bool all = true;
	for (size_t step = 1; step <= s.len; step++) {
		struct buf out = {0}, err = {0};
		demux_all(s.data, s.len, step, &out, &err);
		bool right = out.len == 305 && !memcmp(out.data, "out\nx", 5) && out.data[304] == 'y' &&
			     err.len == 6 && !memcmp(err.data, "errsys", 6);
		if (!right)
			printf("#   step %zu: out %zu, err %zu\n", step, out.len, err.len);
		all = all && right;
		buf_free(&out);
		buf_free(&err);
	}
	ok(all, "demux: frames come apart the same, however the stream is cut");
	buf_free(&s);
}

static int exit_code_of(const char *reply)
{
	struct buf b = {0};
	buf_append(&b, reply, strlen(reply));
	int code = launch_exit_code(&b);
	buf_free(&b);
	return code;
}

static void test_exit_code(void)
{
	ok(exit_code_of("HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n"
			"{\"Error\":null,\"StatusCode\":3}\n") == 3, "wait: the container's exit status");
	ok(exit_code_of("HTTP/1.0 200 OK\r\n\r\n{\"StatusCode\":0}") == 0, "wait: exit 0");
	ok(exit_code_of("HTTP/1.0 404 Not Found\r\n\r\n{\"message\":\"No such container\"}") == -1,
	   "wait: no such container: no status");
	ok(exit_code_of("HTTP/1.0 200 OK\r\n\r\n{\"StatusCode\":256}") == -1, "wait: out of range: none");
	ok(exit_code_of("HTTP/1.0 200 OK\r\n\r\n") == -1, "wait: headers only (cut short): none");
	ok(exit_code_of("") == -1 && exit_code_of("garbage") == -1, "wait: no answer: none");
}

/* Where dockerd's socket is not there, the client is `docker run` with
 * every flag (the CLI's way), and why says so; none of it reaches docker. */
static void test_client_argv_without_dockerd(void)
{
	struct conf c;
	struct registry r;
	struct container_spec spec;
	fixture_load(&c, &r);
	free(c.docker_socket);
	c.docker_socket = xstrdup("/nonexistent/docker.sock");
	struct sandbox_job job = fixture_python_job(&r);
	spec_cold(&c, &job, "isobox-main-0123456789abcdef", "1.2", "/var/lib/isobox/work/x", "ab12", &spec);
	struct strv argv = {0}, run = {0};
	struct buf why = {0};
	char id[65] = "x";
	bool made = launch_client_argv(&c, &spec, now_ms() + 1000, &argv, &why, id);
	spec_argv(&spec, c.docker, &run);
	bool same = argv.n == run.n;
	for (size_t i = 0; same && i < argv.n; i++)
		same = !strcmp(argv.v[i], run.v[i]);
	ok(made && same && why.data && strstr(why.data, "/nonexistent/docker.sock"),
	   "launch: no dockerd socket: the client is docker run's whole argv (%s)", why.data ? why.data : "");
	ok(!id[0], "launch: ... and no id: the client makes the container");
	strv_free(&argv);
	strv_free(&run);
	buf_free(&why);
	spec_free(&spec);
	conf_free(&c);
	registry_free(&r);
}

UNIT_TEST(test_launch)
{
	test_body();
	test_client_argv_without_dockerd();
	test_demux();
	test_exit_code();
}
