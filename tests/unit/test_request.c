/* POST /execute parsing, validation and clamping. */
#include "tap.h"
#include "fixtures.h"
#include "../../fcgi/errors.h"
#include "../../fcgi/request.h"

#include <stdlib.h>

static struct conf conf;
static struct registry reg;

/* Parse body into a fresh request; the caller frees it. */
static bool parse(struct request *rq, const char *body)
{
	*rq = (struct request){0};
	buf_append(&rq->body, body, strlen(body));
	return request_parse_execute(rq, &conf, &reg);
}

/* Expect a failure with this status and code. */
static void refused(const char *body, int status, const char *code, const char *what)
{
	struct request rq;
	bool parsed = parse(&rq, body);
	const struct error_info *e = error_info(rq.fault.code);
	ok(!parsed && rq.fault.code && e->status == status && !strcmp(e->name, code),
	   "request: %s -> %d %s (got %d %s: %s)", what, status, code, e->status, e->name,
	   rq.fault.message);
	request_free(&rq);
}

static void route_is(const char *path_info, const char *uri, const char *want, const char *what)
{
	char *got = request_route(path_info, uri);
	is_str(got, want, "%s", what);
	free(got);
}

UNIT_TEST(test_request)
{
	struct request rq;
	fixture_load(&conf, &reg);

	ok(parse(&rq, "{\"language\":\"python\",\"code\":\"print(1)\"}"), "request: minimal is accepted");
	ok(rq.job.n_files == 1 && !strcmp(rq.job.files[0].name, "main.py") &&
	   rq.job.files[0].len == 8, "request: code becomes main.py");
	ok(rq.job.limits.memory_bytes == 268435456 && rq.job.limits.wall_time_ms == 10000,
	   "request: language default limits apply");
	ok(rq.job.stdin_len == 0 && rq.job.n_args == 0, "request: no stdin, no args");
	request_free(&rq);

	ok(parse(&rq, "{\"language\":\"py3\",\"version\":\"3.11\",\"files\":["
		      "{\"name\":\"app.py\",\"content\":\"import lib\"},"
		      "{\"name\":\"pkg/lib.py\",\"content\":\"x=1\"}],"
		      "\"stdin\":\"in\\n\",\"args\":[\"a b\",\"$(id);\"],\"network\":false}"),
	   "request: files, stdin, args, version pin (%s)", rq.fault.message);
	ok(rq.job.n_files == 2 && !strcmp(rq.job.files[0].name, "app.py") &&
	   !strcmp(rq.job.files[1].name, "pkg/lib.py"), "request: first file is the entry point");
	ok(rq.job.stdin_len == 3 && rq.job.n_args == 2 && !strcmp(rq.job.args[1], "$(id);"),
	   "request: stdin and args verbatim");
	request_free(&rq);

	ok(parse(&rq, "{\"language\":\"python\",\"files\":[{\"content\":\"print(1)\"},"
		      "{\"name\":\"d.bin\",\"content\":\"AAEC/w==\",\"encoding\":\"base64\"}]}") &&
	   rq.job.files[1].len == 4 && !memcmp(rq.job.files[1].data, "\0\1\2\377", 4),
	   "request: a base64 file is decoded, NUL and all (%s)", rq.fault.message);
	request_free(&rq);
	refused("{\"language\":\"python\",\"files\":[{\"content\":\"!!\",\"encoding\":\"base64\"}]}",
		400, "invalid_value", "content that is not base64");
	refused("{\"language\":\"python\",\"files\":[{\"content\":\"x\",\"encoding\":\"hex\"}]}",
		400, "invalid_value", "an unknown encoding");
	refused("{\"language\":\"python\",\"files\":[{\"content\":\"\",\"encoding\":\"base64\"}]}",
		400, "empty_code", "an empty base64 entry file");

	ok(parse(&rq, "{\"language\":\"python\",\"files\":[{\"content\":\"1\"}]}") &&
	   !strcmp(rq.job.files[0].name, "main.py"), "request: unnamed entry file gets the default name");
	request_free(&rq);

	ok(parse(&rq, "{\"language\":\"python\",\"code\":\"1\",\"limits\":{\"memoryBytes\":99999999999,"
		      "\"cpus\":64,\"pids\":100000,\"outputBytes\":1e12,\"wallTimeMs\":3600000}}"),
	   "request: huge limits accepted");
	ok(rq.job.limits.memory_bytes == 512 << 20 && rq.job.limits.cpus == 2.0 &&
	   rq.job.limits.pids == 256 && rq.job.limits.output_bytes == 256 << 10 &&
	   rq.job.limits.wall_time_ms == 20000, "request: ...and clamped to every ceiling");
	request_free(&rq);
	ok(parse(&rq, "{\"language\":\"python\",\"code\":\"1\",\"limits\":{\"memoryBytes\":1e300,"
		      "\"cpus\":2000,\"pids\":9007199254740993,\"outputBytes\":1e308,\"wallTimeMs\":1e20}}") &&
	   rq.job.limits.memory_bytes == 512 << 20 && rq.job.limits.cpus == 2.0 && rq.job.limits.pids == 256 &&
	   rq.job.limits.output_bytes == 256 << 10 && rq.job.limits.wall_time_ms == 20000,
	   "request: absurd limits (cpus 2000, 1e300, past 2^53) are clamped too, never refused (%s)",
	   rq.fault.message);
	request_free(&rq);
	ok(parse(&rq, "{\"language\":\"python\",\"version\":null,\"code\":null,\"files\":[{\"name\":null,"
		      "\"content\":\"print(1)\",\"encoding\":null}],\"stdin\":null,\"args\":null,\"limits\":"
		      "{\"cpus\":null,\"wallTimeMs\":5000},\"network\":null,\"outputs\":null,\"volume\":null,"
		      "\"volumeReadOnly\":null}") &&
	   !strcmp(rq.job.files[0].name, "main.py") && rq.job.limits.wall_time_ms == 5000 &&
	   rq.job.limits.cpus == 1 && !rq.job.network,
	   "request: null is absent for every optional field, nested too (%s)", rq.fault.message);
	request_free(&rq);
	refused("{\"language\":null,\"code\":\"1\"}", 400, "missing_field", "a null language is a missing one");
	refused("{\"language\":\"python\",\"code\":null,\"files\":null}", 400, "missing_field",
		"null code and null files: neither is sent");
	refused("{\"language\":\"python\",\"code\":\"1\",\"limits\":{\"cpus\":0}}", 400, "invalid_value",
		"cpus 0: a limit must be above 0");
	refused("{\"language\":\"python\",\"code\":\"1\",\"limits\":{\"memoryBytes\":-5}}", 400,
		"invalid_value", "a negative limit");
	refused("{\"language\":\"python\",\"code\":\"1\",\"limits\":{\"pids\":1.5}}", 400, "invalid_value",
		"a fraction of a whole-number limit");
	ok(parse(&rq, "{\"language\":\"python\",\"code\":\"1\",\"limits\":{\"memoryBytes\":1,"
		      "\"cpus\":0.001,\"pids\":1,\"wallTimeMs\":1}}"), "request: tiny limits accepted");
	ok(rq.job.limits.memory_bytes == 32 << 20 && rq.job.limits.cpus == 0.05 &&
	   rq.job.limits.pids == 8 && rq.job.limits.wall_time_ms == 100,
	   "request: ...and raised to the floors");
	ok(rq.job.limits.output_bytes == 65536, "request: unset limit keeps the default");
	request_free(&rq);
	ok(parse(&rq, "{\"language\":\"python\",\"code\":\"1\",\"limits\":{\"compileTimeMs\":5000}}") &&
	   rq.job.limits.compile_time_ms == 0, "request: compileTimeMs means nothing without a compile step");
	request_free(&rq);

	struct limits def = {.memory_bytes = 1, .cpus = 1, .pids = 1, .output_bytes = 1,
			     .wall_time_ms = 1000, .compile_time_ms = 15000};
	struct limits ask = {.compile_time_ms = 99999};
	ok(limits_apply(&def, &ask, LIMIT_COMPILE, &conf.floors, &conf.ceilings).compile_time_ms == 15000,
	   "limits: compile time can not exceed the language's own");
	ask.compile_time_ms = 3000;
	ok(limits_apply(&def, &ask, LIMIT_COMPILE, &conf.floors, &conf.ceilings).compile_time_ms == 3000,
	   "limits: compile time can be shortened");

	refused("{\"language\":\"python\",\"code\":\"1\"", 400, "bad_json", "truncated JSON");
	refused("", 400, "bad_json", "empty body");
	refused("{\"language\":\"python\",\"code\":\"1\"} x", 400, "bad_json", "trailing garbage");
	refused("[1]", 400, "invalid_type", "array body");
	refused("{\"language\":1,\"code\":\"1\"}", 400, "invalid_type", "language not a string");
	refused("{\"code\":\"1\"}", 400, "missing_field", "no language");
	refused("{\"language\":\"python\"}", 400, "missing_field", "no code");
	refused("{\"language\":\"python\",\"code\":\"\"}", 400, "empty_code", "empty code");
	refused("{\"language\":\"python\",\"code\":\"1\",\"files\":[]}", 400, "invalid_request",
		"code and files");
	refused("{\"language\":\"python\",\"files\":[]}", 400, "empty_code", "empty files");
	refused("{\"language\":\"python\",\"code\":\"1\",\"extra\":1}", 400, "unknown_field", "unknown field");
	refused("{\"language\":\"python\",\"code\":\"1\",\"limits\":{\"memory\":1}}", 400, "unknown_field",
		"unknown limit");
	refused("{\"language\":\"python\",\"code\":\"1\",\"limits\":{\"cpus\":\"2\"}}", 400, "invalid_type",
		"string limit");
	refused("{\"language\":\"python\",\"code\":\"1\",\"limits\":{\"pids\":-1}}", 400, "invalid_value",
		"negative limit");
	refused("{\"language\":\"python\",\"code\":\"1\",\"limits\":{\"pids\":0}}", 400, "invalid_value",
		"zero limit");
	refused("{\"language\":\"python\",\"code\":\"1\",\"limits\":{\"pids\":1.5}}", 400, "invalid_value",
		"fractional pids");
	refused("{\"language\":\"python\",\"code\":\"1\",\"limits\":{\"cpus\":0}}", 400, "invalid_value",
		"zero cpus");
	refused("{\"language\":\"python\",\"code\":\"1\",\"limits\":[]}", 400, "invalid_type", "limits array");
	refused("{\"language\":\"python\",\"code\":\"1\",\"args\":\"x\"}", 400, "invalid_type", "args string");
	refused("{\"language\":\"python\",\"code\":\"1\",\"args\":[1]}", 400, "invalid_type", "args number");
	refused("{\"language\":\"python\",\"code\":\"1\",\"stdin\":5}", 400, "invalid_type", "stdin number");
	refused("{\"language\":\"python\",\"code\":\"1\",\"network\":\"yes\"}", 400, "invalid_type",
		"network string");
	ok(parse(&rq, "{\"language\":\"python\",\"code\":\"1\",\"network\":true}") && rq.job.network,
	   "request: network true reaches the job when the conf allows egress");
	request_free(&rq);
	ok(parse(&rq, "{\"language\":\"python\",\"code\":\"1\"}") && !rq.job.network,
	   "request: no network unless asked");
	request_free(&rq);
	conf.network.enabled = false;
	refused("{\"language\":\"python\",\"code\":\"1\",\"network\":true}", 403, "network_disabled",
		"network true with network.enabled false");
	conf.network.enabled = true;
	refused("{\"language\":\"python\",\"network\":true,\"network\":false,\"code\":\"1\"}", 400,
		"duplicate_key", "a key twice: parsers disagree on which one wins");
	refused("{\"language\":\"python\",\"files\":[{\"name\":\"a.py\",\"content\":\"1\",\"content\":\"2\"}]}",
		400, "duplicate_key", "a key twice in a nested object");
	refused("{\"language\":\"python\",\"code\":\"1\"} {}", 400, "bad_json", "data after the value");
	{
		struct request nul = {0};
		static const char body[] = "{\"language\":\"python\",\"code\":\"1\"}\n\0";
		buf_append(&nul.body, body, sizeof body - 1);
		ok(!request_parse_execute(&nul, &conf, &reg) && nul.fault.code == E_BAD_JSON,
		   "request: a NUL byte after the value is data, not whitespace");
		request_free(&nul);
	}
	{
		struct buf big = {0};
		buf_printf(&big, "{\"language\":\"python\",\"code\":\"1\",\"args\":[");
		for (int i = 0; i < 60000; i++)
			buf_printf(&big, "%s0", i ? "," : "");
		buf_printf(&big, "]}");
		refused(big.data, 400, "too_many", "60000 values: refused before parsing");
		buf_free(&big);
	}
	refused("{\"language\":\"intercal\",\"code\":\"1\"}", 404, "unknown_language", "unknown language");
	refused("{\"language\":\"python\",\"version\":\"2.7\",\"code\":\"1\"}", 404, "unknown_version",
		"unknown version");
	refused("{\"language\":\"python\",\"code\":\"a\\u0000b\"}", 400, "invalid_value", "NUL in code");
	refused("{\"language\":\"python\",\"files\":[{\"name\":\"/etc/passwd\",\"content\":\"1\"}]}",
		400, "bad_file_name", "absolute file name");
	refused("{\"language\":\"python\",\"files\":[{\"name\":\"../x.py\",\"content\":\"1\"}]}",
		400, "bad_file_name", "dot-dot file name");
	refused("{\"language\":\"python\",\"files\":[{\"name\":\"a/../../x\",\"content\":\"1\"}]}",
		400, "bad_file_name", "inner dot-dot");
	refused("{\"language\":\"python\",\"files\":[{\"name\":\"a\\u0000b\",\"content\":\"1\"}]}",
		400, "invalid_value", "NUL in file name");
	refused("{\"language\":\"python\",\"files\":[{\"name\":\"a\\nb\",\"content\":\"1\"}]}",
		400, "bad_file_name", "newline in file name");
	refused("{\"language\":\"python\",\"files\":[{\"name\":\"-c\",\"content\":\"1\"}]}",
		400, "bad_file_name", "option-like file name");
	refused("{\"language\":\"python\",\"files\":[{\"name\":\"main.c\",\"content\":\"1\"},"
		"{\"name\":\"@opts.c\",\"content\":\"1\"}]}", 400, "bad_file_name",
		"an @file name (more options for gcc, rustc, javac)");
	refused("{\"language\":\"python\",\"files\":[{\"name\":\"a.py\",\"content\":\"1\"},"
		"{\"name\":\"d/@x\",\"content\":\"1\"}]}", 400, "bad_file_name", "an @ part inside a path");
	refused("{\"language\":\"python\",\"files\":[{\"name\":\"+v\",\"content\":\"1\"}]}",
		400, "bad_file_name", "a +name (bash reads +v, +x, +O as options)");
	refused("{\"language\":\"python\",\"files\":[{\"name\":\"a//b\",\"content\":\"1\"}]}",
		400, "bad_file_name", "empty path part");
	refused("{\"language\":\"python\",\"files\":[{\"name\":\"dir/\",\"content\":\"1\"}]}",
		400, "bad_file_name", "trailing slash");
	refused("{\"language\":\"python\",\"files\":[{\"name\":\"\",\"content\":\"1\"}]}",
		400, "bad_file_name", "empty file name");
	refused("{\"language\":\"python\",\"files\":[{\"name\":\"a.py\",\"content\":\"1\"},"
		"{\"name\":\"a.py\",\"content\":\"2\"}]}", 400, "bad_file_name", "duplicate file names");
	refused("{\"language\":\"python\",\"files\":[{\"name\":\"a\",\"content\":\"1\"},"
		"{\"name\":\"a/b\",\"content\":\"2\"}]}", 400, "bad_file_name", "file and directory clash");
	refused("{\"language\":\"python\",\"files\":[{\"name\":\"a.py\",\"content\":\"1\"},"
		"{\"content\":\"2\"}]}", 400, "invalid_type", "second file without a name");
	refused("{\"language\":\"python\",\"files\":[{\"name\":\"a.py\",\"content\":\"1\",\"mode\":7}]}",
		400, "unknown_field", "unknown file field");
	refused("{\"language\":\"python\",\"files\":[\"x\"]}", 400, "invalid_type", "file not an object");

	struct buf big = {0};
	buf_printf(&big, "{\"language\":\"python\",\"files\":[{\"name\":\"");
	for (int i = 0; i < 300; i++)
		buf_append(&big, "a", 1);
	buf_printf(&big, "\",\"content\":\"1\"}]}");
	refused(big.data, 400, "bad_file_name", "300-byte file name");
	buf_free(&big);

	buf_printf(&big, "{\"language\":\"python\",\"files\":[");
	for (int i = 0; i < 101; i++)
		buf_printf(&big, "%s{\"name\":\"f%d\",\"content\":\"1\"}", i ? "," : "", i);
	buf_printf(&big, "]}");
	refused(big.data, 400, "too_many_files", "101 files");
	buf_free(&big);

	buf_printf(&big, "{\"language\":\"python\",\"code\":\"");
	for (int i = 0; i < (1 << 20) + 1; i++)
		buf_append(&big, "x", 1);
	buf_printf(&big, "\"}");
	refused(big.data, 413, "file_too_large", "code over maxFileBytes");
	buf_free(&big);

	buf_printf(&big, "{\"language\":\"python\",\"code\":\"1\",\"args\":[");
	for (int i = 0; i < 65; i++)
		buf_printf(&big, "%s\"a\"", i ? "," : "");
	buf_printf(&big, "]}");
	refused(big.data, 400, "too_many", "65 args");
	buf_free(&big);

	buf_printf(&big, "{\"language\":\"python\",\"code\":\"1\",\"limits\":");
	for (int i = 0; i < 2000; i++)
		buf_append(&big, "[", 1);
	refused(big.data, 400, "bad_json", "2000-deep nesting");
	buf_free(&big);

	route_is("", "/execute?x=1", "/execute", "route: query string dropped");
	route_is("/execute", "/cgi-bin/isobox/execute", "/execute", "route: PATH_INFO wins (CGI)");
	route_is("", "", "/", "route: nothing is /");
	registry_free(&reg);
	conf_free(&conf);
}

/* A session step's wall time is clamped to sessions.maxStepMs, not to the
 * run's ceiling; its other limits are the session's. */
static int64_t step_wall(const char *body)
{
	struct fault f = {0};
	struct request rq = {0};
	struct limits held = {.memory_bytes = 1 << 28, .cpus = 1, .pids = 64};
	rq.lang = registry_find(&reg, "python", NULL, &f);
	buf_append(&rq.body, body, strlen(body));
	int64_t wall = rq.lang && request_parse_step(&rq, &conf, &held) ? rq.job.limits.wall_time_ms : -1;
	request_free(&rq);
	return wall;
}

UNIT_TEST(test_request_step_ceiling)
{
	struct request rq;
	fixture_load(&conf, &reg);
	ok(conf.sessions.max_step_ms == 300000 && conf.ceilings.wall_time_ms == 20000,
	   "step: the shipped ceilings (a step 5 min, a run 20 s)");
	ok(parse(&rq, "{\"language\":\"python\",\"code\":\"1\",\"limits\":{\"wallTimeMs\":60000}}") &&
	   rq.job.limits.wall_time_ms == 20000, "step: a run asking 60 s gets the run's ceiling, 20 s");
	request_free(&rq);
	ok(step_wall("{\"code\":\"1\",\"limits\":{\"wallTimeMs\":60000}}") == 60000,
	   "step: a step asking 60 s gets it");
	ok(step_wall("{\"code\":\"1\",\"limits\":{\"wallTimeMs\":99999999}}") == 300000,
	   "step: a step asking more gets sessions.maxStepMs");
	ok(step_wall("{\"code\":\"1\"}") == 10000, "step: a step asking nothing gets the language's default");
	conf.sessions.max_step_ms = 5000;
	ok(step_wall("{\"code\":\"1\",\"limits\":{\"wallTimeMs\":60000}}") == 5000,
	   "step: a lower maxStepMs holds too");
}
