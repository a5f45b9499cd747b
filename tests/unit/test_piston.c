/*
 * The Piston shim (fcgi/piston.c, fcgi/piston_result.c): requests shaped
 * as Piston's documentation and clients send them, translated and parsed
 * as the worker does, against the shipped registry; and results shaped
 * back, stage by stage.
 */
#include "tap.h"
#include "fixtures.h"
#include "../../fcgi/encode.h"
#include "../../fcgi/errors.h"
#include "../../fcgi/piston.h"
#include "../../fcgi/piston_result.h"
#include "../../fcgi/request.h"

#include <stdlib.h>

#define ID(c) "sha256:" c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c \
	c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c
static const char lock_yaml[] =
	"images:\n"
	"  python: {id: \"" ID("1") "\", version: \"3.13.5\"}\n"
	"  python-3.14: {id: \"" ID("7") "\", version: \"3.14.7\"}\n"
	"  python-3.11: {id: \"" ID("8") "\", version: \"3.11.2\"}\n"
	"  node: {id: \"" ID("2") "\", version: \"18.20.4\"}\n"
	"  typescript: {id: \"" ID("3") "\", version: \"0.17.0\"}\n"
	"  gcc: {id: \"" ID("4") "\", version: \"12.2.0\"}\n"
	"  ruby: {id: \"" ID("5") "\", version: \"3.1.2\"}\n"
	"  go: {id: \"" ID("6") "\", version: \"1.19.8\"}\n";

static struct conf conf;
static struct registry reg;

/* The translated body of a Piston request, parsed; NULL (and *f) if refused. */
static cJSON *translated(const char *body, struct fault *f)
{
	struct buf in = {0}, out = {0};
	*f = (struct fault){0};
	buf_append(&in, body, strlen(body));
	cJSON *o = piston_translate(&in, &reg, 50000, &out, f) ? cJSON_ParseWithLength(out.data, out.len) : NULL;
	buf_free(&in);
	buf_free(&out);
	return o;
}

static const char *str_at(const cJSON *o, const char *path)
{
	/* "files.1.name": keys and array indexes */
	char key[64];
	while (o && *path) {
		size_t n = strcspn(path, ".");
		snprintf(key, sizeof key, "%.*s", (int)n, path);
		o = cJSON_IsArray(o) ? cJSON_GetArrayItem(o, atoi(key)) : cJSON_GetObjectItemCaseSensitive(o, key);
		path += n + (path[n] == '.');
	}
	return cJSON_IsString(o) ? o->valuestring : o ? "(not a string)" : "(absent)";
}

/* s for a test's name: a newline as \n, so that TAP stays one line. */
static const char *shown(const char *s)
{
	static char out[128];
	size_t n = 0;
	for (; *s && n < sizeof out - 3; s++) {
		if (*s == '\n') {
			out[n++] = '\\';
			out[n++] = 'n';
		} else {
			out[n++] = *s;
		}
	}
	out[n] = '\0';
	return out;
}

static void accepted(const char *body, const char *path, const char *want, const char *what)
{
	struct fault f;
	cJSON *o = translated(body, &f);
	is_str(o ? str_at(o, path) : f.message, want, "piston: %s (%s: %s)", what, path,
	       shown(o ? str_at(o, path) : f.message));
	cJSON_Delete(o);
}

static void refused(const char *body, enum fault_code code, const char *message, const char *what)
{
	struct fault f;
	cJSON *o = translated(body, &f);
	ok(!o && f.code == code && !strcmp(f.message, message) && error_status(code, true) == 400,
	   "piston: %s -> 400 %s \"%s\" (got %s \"%s\")", what, error_info(code)->name, message,
	   error_info(f.code)->name, f.message);
	cJSON_Delete(o);
}

static void versions(void)
{
	/* Python 3.11.2, 3.13.5 (the default) and 3.14.7: the highest that a
	 * range admits wins, and its full version goes on to /execute. */
	static const struct {
		const char *range, *want;
	} match[] = {{"*", "3.14.7"}, {"x", "3.14.7"}, {"X", "3.14.7"}, {" * ", "3.14.7"}, {"3.14.7+build", "3.14.7"},
		{"3", "3.14.7"}, {"3.x", "3.14.7"}, {"3.*", "3.14.7"},
		{"^3.10", "3.14.7"}, {"~3.11", "3.11.2"}, {">=3", "3.14.7"}, {"3.11.2", "3.11.2"},
		{"=3.11.2", "3.11.2"}, {"v3.11.2", "3.11.2"}, {" 3.11.2 ", "3.11.2"}, {"3 - 3.11", "3.11.2"},
		{"2 || 3.11", "3.11.2"}, {">=3.11 <3.12", "3.11.2"}, {"3.11.x", "3.11.2"}, {"~3.13", "3.13.5"},
		{">=3.12 <3.14", "3.13.5"}, {"^3.12", "3.14.7"}, {"3.11 || 3.13", "3.13.5"}};
	char body[160];
	for (size_t i = 0; i < sizeof match / sizeof match[0]; i++) {
		snprintf(body, sizeof body, "{\"language\":\"python\",\"version\":\"%s\",\"files\":[{\"content\":\"1\"}]}",
			 match[i].range);
		accepted(body, "language", "python", match[i].range);
		accepted(body, "version", match[i].want, match[i].range);
	}
	accepted("{\"language\":\"python\",\"files\":[{\"content\":\"1\"}]}", "version", "3.14.7",
		 "no version: any, the highest (Piston requires one)");
	accepted("{\"language\":\"python\",\"version\":null,\"files\":[{\"content\":\"1\"}]}", "version", "3.14.7",
		 "version null: any");
	accepted("{\"language\":\"py3\",\"version\":\"3.13\",\"files\":[{\"content\":\"1\"}]}", "version", "3.13.5",
		 "an alias and a version");
	refused("{\"language\":\"python\",\"version\":\"2.7\",\"files\":[{\"content\":\"1\"}]}",
		E_UNKNOWN_VERSION, "python-2.7 runtime is unknown", "a version we lack");
	refused("{\"language\":\"python\",\"version\":\"latest\",\"files\":[{\"content\":\"1\"}]}",
		E_UNKNOWN_VERSION, "python-latest runtime is unknown", "\"latest\" (not semver)");
	refused("{\"language\":\"python\",\"version\":\"^3.15\",\"files\":[{\"content\":\"1\"}]}",
		E_UNKNOWN_VERSION, "python-^3.15 runtime is unknown", "a range past ours");
	refused("{\"language\":\"python\",\"version\":\"3.12\",\"files\":[{\"content\":\"1\"}]}",
		E_UNKNOWN_VERSION, "python-3.12 runtime is unknown", "a version between ours");
	refused("{\"language\":\"intercal\",\"version\":\"3\",\"files\":[{\"content\":\"1\"}]}",
		E_UNKNOWN_LANGUAGE, "intercal-3 runtime is unknown", "an unknown language");
	refused("{\"language\":\"intercal\",\"files\":[{\"content\":\"1\"}]}",
		E_UNKNOWN_LANGUAGE, "intercal-* runtime is unknown", "an unknown language, no version");
}

static void names(void)
{
	static const struct {
		const char *sent, *ours;
	} aliases[] = {
		{"node-js", "javascript"}, {"node-javascript", "javascript"}, {"js", "javascript"},
		{"node", "javascript"}, {"tsc", "typescript"}, {"node-ts", "typescript"}, {"ts", "typescript"},
		{"python3", "python"}, {"py", "python"}, {"rb", "ruby"}, {"ruby3", "ruby"}, {"gcc", "c"},
		{"c++", "cpp"}, {"g++", "cpp"}, {"cpp", "cpp"}, {"golang", "go"}, {"Python", "python"},
	};
	char body[160];
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
		snprintf(body, sizeof body, "{\"language\":\"%s\",\"version\":\"*\",\"files\":[{\"content\":\"1\"}]}",
			 aliases[i].sent);
		accepted(body, "language", aliases[i].ours, aliases[i].sent);
	}
	/* And every alias the shipped registry has, ours and Piston's: the
	 * integration suite runs one of each kind only. */
	size_t every = 0, right = 0;
	for (size_t i = 0; i < reg.n; i++) {
		const struct language *l = &reg.langs[i];
		for (size_t k = 0; l->is_default && k < l->aliases.n + l->piston_aliases.n; k++) {
			const char *alias = k < l->aliases.n ? l->aliases.v[k] : l->piston_aliases.v[k - l->aliases.n];
			snprintf(body, sizeof body, "{\"language\":\"%s\",\"version\":\"*\",\"files\":[{\"content\":\"1\"}]}",
				 alias);
			struct fault f;
			cJSON *o = translated(body, &f);
			every++;
			right += o && !strcmp(str_at(o, "language"), l->name);
			if (!o || strcmp(str_at(o, "language"), l->name))
				printf("#   alias %s: not %s\n", alias, l->name);
			cJSON_Delete(o);
		}
	}
	ok(every > 0 && right == every, "piston: each of the registry's %zu aliases names its language (%zu do)",
	   every, right);
	struct fault f;
	const struct language *cpp = registry_find(&reg, "cpp", NULL, &f), *py = registry_find(&reg, "py", NULL, &f);
	is_str(cpp ? piston_language_name(cpp) : NULL, "c++", "piston: cpp is c++ to Piston");
	is_str(py ? piston_language_name(py) : NULL, "python", "piston: python is python");
}

static void files(void)
{
	const char *four = "{\"language\":\"python\",\"version\":\"3\",\"files\":[{\"content\":\"import x\"},"
			   "{\"content\":\"b\"},{\"name\":\"x.py\",\"content\":\"c\"},{\"name\":\"\",\"content\":\"d\"}]}";
	accepted(four, "files.0.name", "(absent)", "a nameless entry keeps our entry name");
	accepted(four, "files.1.name", "file1.code", "a nameless file is file1.code, as Piston names it");
	accepted(four, "files.2.name", "x.py", "a named file keeps its name");
	accepted(four, "files.3.name", "file3.code", "an empty name is no name");
	const char *b64_first = "{\"language\":\"python\",\"version\":\"3\",\"files\":["
				"{\"name\":\"d.bin\",\"content\":\"AAE=\",\"encoding\":\"base64\"},"
				"{\"content\":\"print(1)\",\"encoding\":\"utf8\"}]}";
	accepted(b64_first, "files.0.content", "print(1)", "the entry is the first utf8 file, as in Piston");
	accepted(b64_first, "files.1.name", "d.bin", "then the others");
	accepted(b64_first, "files.1.encoding", "base64", "base64 stays base64 (decoded as ours are)");
	accepted("{\"language\":\"python\",\"files\":[{\"content\":\"cHJpbnQoMSk=\",\"encoding\":\"base64\"}]}",
		 "files.0.encoding", "base64", "no utf8 file: the first is the entry (Piston refuses)");
	accepted("{\"language\":\"python\",\"files\":[{\"content\":\"7072696E74283129\",\"encoding\":\"hex\"}]}",
		 "files.0.content", "cHJpbnQoMSk=", "hex becomes base64");
	refused("{\"language\":\"python\",\"files\":[{\"content\":\"70a\",\"encoding\":\"hex\"}]}", E_INVALID_VALUE,
		"files[0].content is not hex (pairs of hex digits)", "odd hex");
	refused("{\"language\":\"python\",\"files\":[{\"content\":\"7g\",\"encoding\":\"hex\"}]}", E_INVALID_VALUE,
		"files[0].content is not hex (pairs of hex digits)", "a non-hex pair");
	refused("{\"language\":\"python\",\"files\":[{\"content\":\"x\",\"encoding\":\"latin1\"}]}",
		E_INVALID_VALUE, "files[0].encoding must be \"utf8\", \"base64\" or \"hex\"", "an unknown encoding");
	refused("{\"language\":\"python\",\"files\":[{\"content\":\"x\",\"encoding\":7}]}",
		E_INVALID_TYPE, "files[0].encoding must be \"utf8\", \"base64\" or \"hex\"", "a number as encoding");
	refused("{\"language\":\"python\",\"files\":[{\"content\":\"x\",\"mode\":\"0755\"}]}",
		E_UNKNOWN_FIELD, "unknown field \"mode\" in files[0]", "an unknown file field");
}

/* Piston's own checks, its order and its messages. */
static void checks(void)
{
	refused("{}", E_MISSING_FIELD, "language is required as a string", "no language");
	refused("{\"language\":\"\",\"files\":[]}", E_MISSING_FIELD, "language is required as a string", "\"\"");
	refused("{\"language\":5,\"files\":[]}", E_INVALID_TYPE, "language is required as a string", "a number");
	refused("{\"language\":\"python\",\"version\":3,\"files\":[]}", E_INVALID_TYPE,
		"version is required as a string", "a number as version");
	refused("{\"language\":\"python\",\"version\":\"3\"}", E_MISSING_FIELD, "files is required as an array",
		"no files");
	refused("{\"language\":\"python\",\"files\":\"x\"}", E_INVALID_TYPE, "files is required as an array",
		"files not an array");
	refused("{\"language\":\"python\",\"files\":[{\"content\":\"1\"},null]}", E_INVALID_TYPE,
		"files[1].content is required as a string", "a null file");
	refused("{\"language\":\"python\",\"files\":[{\"content\":1}]}", E_INVALID_TYPE,
		"files[0].content is required as a string", "a number as content");
	refused("{\"language\":\"intercal\",\"files\":[{\"content\":1}]}", E_INVALID_TYPE,
		"files[0].content is required as a string", "content checked before the runtime (Piston's order)");
	refused("{\"language\":\"python\",\"version\":\"*\",\"files\":[]}", E_EMPTY_CODE,
		"files must include at least one utf8 encoded file", "files []");
	refused("{\"language\":\"python\",\"files\":[{\"content\":\"1\"}],\"stdin\":5}", E_INVALID_TYPE,
		"stdin must be a string", "a number as stdin");
	refused("{\"language\":\"python\",\"files\":[{\"content\":\"1\"}],\"run_timeout\":\"3s\"}", E_INVALID_TYPE,
		"If specified, run_timeout must be a number", "a string as run_timeout");
	refused("{\"language\":\"python\",\"files\":[{\"content\":\"1\"}],\"compile_cpu_time\":-5}",
		E_INVALID_VALUE, "compile_cpu_time must be non-negative", "a negative limit");
	refused("{\"language\":\"python\",\"files\":[{\"content\":\"1\"}],\"run_timeuot\":1}", E_UNKNOWN_FIELD,
		"unknown field \"run_timeuot\" in the request", "a misspelt field");
}

static void stdin_and_limits(void)
{
	const char *base = "{\"language\":\"python\",\"files\":[{\"content\":\"1\"}]";
	char body[256];
#define WITH(extra) (snprintf(body, sizeof body, "%s,%s}", base, extra), body)
	accepted(WITH("\"stdin\":\"hi\""), "stdin", "hi\n", "stdin gets Piston's newline");
	accepted(WITH("\"stdin\":\"hi\\n\""), "stdin", "hi\n", "stdin ending in one keeps it");
	accepted(WITH("\"stdin\":\"\""), "stdin", "\n", "empty stdin is a newline, as in Piston");
	accepted(WITH("\"stdin\":null"), "stdin", "\n", "null stdin too");
	accepted(WITH("\"args\":[\"1\",\"2\",\"3\"]"), "args.2", "3", "args as they are");
	struct fault f;
	cJSON *o = translated(WITH("\"run_timeout\":0,\"compile_timeout\":-1,\"run_memory_limit\":-1,"
				   "\"compile_memory_limit\":1000,\"run_cpu_time\":3000"), &f);
	const cJSON *limits = cJSON_GetObjectItemCaseSensitive(o, "limits");
	ok(limits && cJSON_GetArraySize(limits) == 0, "piston: 0 and -1 are the defaults; cpu time and "
	   "compile memory are taken and ignored (%s)", f.message);
	cJSON_Delete(o);
	o = translated(WITH("\"run_timeout\":2500.2,\"compile_timeout\":4000,\"run_memory_limit\":1e300"), &f);
	limits = cJSON_GetObjectItemCaseSensitive(o, "limits");
	ok(limits && cJSON_GetObjectItem(limits, "wallTimeMs")->valuedouble == 2501 &&
	   cJSON_GetObjectItem(limits, "compileTimeMs")->valuedouble == 4000 &&
	   cJSON_GetObjectItem(limits, "memoryBytes")->valuedouble == 1e15,
	   "piston: run_timeout, compile_timeout and run_memory_limit become ours (%s)", f.message);
	cJSON_Delete(o);
#undef WITH
}

/* Translated, then parsed by the worker's own parser: what would run. */
static void end_to_end(void)
{
	struct request rq = {0};
	struct fault f = {0};
	const char *body = "{\"language\":\"c++\",\"version\":\"12\",\"files\":["
			   "{\"name\":\"data.txt\",\"content\":\"6869\",\"encoding\":\"hex\"},"
			   "{\"content\":\"int main(){}\"},{\"content\":\"//\"}],"
			   "\"stdin\":\"in\",\"args\":[\"a\"],\"run_timeout\":0,\"compile_timeout\":999999,"
			   "\"run_memory_limit\":99999999999}";
	buf_append(&rq.body, body, strlen(body));
	struct buf out = {0};
	bool translated_ok = piston_translate(&rq.body, &reg, 50000, &out, &f);
	buf_free(&rq.body);
	rq.body = out;
	ok(translated_ok && request_parse_execute(&rq, &conf, &reg), "piston: a c++ request parses as ours (%s%s)",
	   f.message, rq.fault.message);
	ok(rq.lang && !strcmp(rq.lang->name, "cpp") && rq.job.n_files == 3, "piston: c++ runs as cpp, 3 files");
	ok(rq.job.n_files == 3 && !strcmp(rq.job.files[0].name, "main.cpp") &&
	   !strcmp(rq.job.files[1].name, "data.txt") && rq.job.files[1].len == 2 &&
	   !memcmp(rq.job.files[1].data, "hi", 2) && !strcmp(rq.job.files[2].name, "file2.code"),
	   "piston: entry main.cpp, the hex file decoded, the nameless one file2.code");
	ok(rq.job.stdin_len == 3 && !memcmp(rq.job.stdin_data, "in\n", 3) && rq.job.n_args == 1,
	   "piston: stdin with its newline, args");
	ok(rq.job.limits.wall_time_ms == rq.lang->defaults.wall_time_ms &&
	   rq.job.limits.compile_time_ms == rq.lang->defaults.compile_time_ms &&
	   rq.job.limits.memory_bytes == conf.ceilings.memory_bytes,
	   "piston: run_timeout 0 is the default; more than the ceilings is clamped, never unlimited");
	request_free(&rq);
}

static struct sandbox_phase phase(int code, const char *out, const char *err)
{
	struct sandbox_phase p = {.exit_code = code, .duration_ms = 42, .cpu_ns = -1, .peak_bytes = -1};
	buf_append(&p.out, out, strlen(out));
	buf_append(&p.err, err, strlen(err));
	return p;
}

/* Killed by signal sig, as the wait status says it. */
static struct sandbox_phase signalled(int sig)
{
	struct sandbox_phase p = phase(128 + sig, "", "");
	p.signal = sig;
	return p;
}

/* A stage in Piston's shape, as one line of JSON (keys in Piston's order). */
static void stage_is(struct sandbox_phase p, bool run, const char *want, const char *what)
{
	struct limits l = {.memory_bytes = 268435456, .output_bytes = 65536};
	cJSON *o = piston_stage(&p, run, &l);
	char *got = cJSON_PrintUnformatted(o);
	is_str(got, want, "piston: %s (%s)", what, got);
	free(got);
	cJSON_Delete(o);
	buf_free(&p.out);
	buf_free(&p.err);
}

#define STAGE(signal, out, err, code, output, message, status) \
	"{\"signal\":" signal ",\"stdout\":\"" out "\",\"stderr\":\"" err "\",\"code\":" code \
	",\"output\":\"" output "\",\"memory\":null,\"message\":" message ",\"status\":" status \
	",\"cpu_time\":null,\"wall_time\":42}"

static void stages(void)
{
	stage_is(phase(0, "a\n", "b\n"), true, STAGE("null", "a\\n", "b\\n", "0", "a\\nb\\n", "null", "null"),
		 "exit 0: no status, stdout then stderr in output");
	stage_is(phase(2, "", "e"), true,
		 STAGE("null", "", "e", "2", "e", "\"Exited with error status 2\"", "\"RE\""), "exit 2: RE");
	stage_is(signalled(11), true,
		 STAGE("\"SIGSEGV\"", "", "", "null", "", "\"Caught fatal signal 11\"", "\"SG\""), "signal 11: SIGSEGV");
	stage_is(signalled(6), true,
		 STAGE("\"SIGABRT\"", "", "", "null", "", "\"Caught fatal signal 6\"", "\"SG\""), "signal 6: SIGABRT");
	stage_is(signalled(15), true,
		 STAGE("\"SIGTERM\"", "", "", "null", "", "\"Caught fatal signal 15\"", "\"SG\""), "signal 15: SIGTERM");
	stage_is(signalled(9), true,
		 STAGE("\"SIGKILL\"", "", "", "null", "", "\"Caught fatal signal 9\"", "\"SG\""),
		 "signal 9 without a flag: SIGKILL");
	stage_is(phase(139, "", ""), true,
		 STAGE("null", "", "", "139", "", "\"Exited with error status 139\"", "\"RE\""),
		 "exit(139) is an exit, as Piston says it: the signal comes from the wait status");
	stage_is(phase(137, "", ""), true,
		 STAGE("null", "", "", "137", "", "\"Exited with error status 137\"", "\"RE\""), "exit(137): RE");
	stage_is(phase(145, "", ""), true,
		 STAGE("null", "", "", "145", "", "\"Exited with error status 145\"", "\"RE\""),
		 "145 (SIGCHLD never kills): a plain exit");
	stage_is(phase(255, "", ""), true,
		 STAGE("null", "", "", "255", "", "\"Exited with error status 255\"", "\"RE\""), "255: RE");
	stage_is(phase(-1, "", ""), true,
		 STAGE("null", "", "", "null", "", "\"the sandbox gave no exit status\"", "\"XX\""), "no status: XX");
	struct sandbox_phase p = phase(137, "x", "");
	p.timed_out = true;
	stage_is(p, true, STAGE("\"SIGKILL\"", "x", "", "null", "x", "\"Time limit exceeded (wall clock)\"", "\"TO\""),
		 "timed out: TO");
	p = phase(137, "", "");
	p.oom_killed = true;
	stage_is(p, true, STAGE("\"SIGKILL\"", "", "", "null", "",
				"\"Memory limit exceeded (268435456 bytes): caught fatal signal 9\"", "\"SG\""),
		 "OOM: SG, and a message that says memory");
	p = phase(137, "yyy", "");
	p.truncated = true;
	stage_is(p, true, STAGE("\"SIGKILL\"", "yyy", "", "null", "yyy",
				"\"stdout length exceeded (65536 bytes of stdout and stderr together)\"", "\"OL\""),
		 "stdout over the cap: OL");
	p = phase(137, "", "zzz");
	p.truncated = true;
	stage_is(p, true, STAGE("\"SIGKILL\"", "", "zzz", "null", "zzz",
				"\"stderr length exceeded (65536 bytes of stdout and stderr together)\"", "\"EL\""),
		 "stderr over the cap: EL");
	p = phase(137, "y", "z");
	p.truncated = true;
	stage_is(p, true, STAGE("\"SIGKILL\"", "y", "z", "null", "yz",
				"\"output length exceeded (65536 bytes of stdout and stderr together)\"", "\"OL\""),
		 "both over the cap: OL, output");
	p = phase(0, "m", "");
	p.cpu_ns = 1500000;
	p.peak_bytes = 52428800;
	stage_is(p, true, "{\"signal\":null,\"stdout\":\"m\",\"stderr\":\"\",\"code\":0,\"output\":\"m\","
		 "\"memory\":52428800,\"message\":null,\"status\":null,\"cpu_time\":2,\"wall_time\":42}",
		 "measured: memory is the peak in bytes, cpu_time whole ms (rounded)");
	p = phase(0, "w", "");
	p.truncated = true;
	stage_is(p, false, STAGE("null", "w", "", "0", "w", "null", "null"),
		 "a compile's output cut at the cap: the compile went on, its exit stands");
}

static void results(void)
{
	struct fault f;
	struct request rq = {0};
	rq.lang = registry_find(&reg, "cpp", NULL, &f);
	rq.job.limits = rq.lang->defaults;
	rq.result.has_compile = true;
	rq.result.compile = phase(1, "", "main.cpp:1: error\n");
	cJSON *o = piston_result(&rq);
	const cJSON *compile = cJSON_GetObjectItemCaseSensitive(o, "compile");
	const cJSON *run = cJSON_GetObjectItemCaseSensitive(o, "run");
	ok(compile && run && cJSON_Compare(compile, run, true), "piston: a failed compile: run is the compile's result");
	is_str(str_at(o, "language"), "c++", "piston: the result says c++, Piston's name");
	is_str(str_at(o, "version"), "12.2.0", "piston: and the full version");
	ok(o && o->child && !strcmp(o->child->string, "compile") && !strcmp(o->child->next->string, "run"),
	   "piston: keys in Piston's order: compile, run, language, version");
	cJSON_Delete(o);
	sandbox_result_free(&rq.result);
}

static void hex(void)
{
	struct buf b = {0};
	ok(hex_decode("00fFaB", &b) && b.len == 3 && !memcmp(b.data, "\0\xff\xab", 3), "hex: either case, NUL too");
	buf_free(&b);
	ok(hex_decode("", &b) && b.len == 0, "hex: empty is nothing");
	buf_free(&b);
	ok(!hex_decode("0", &b) && !hex_decode("0x00", &b) && !hex_decode("00 ", &b), "hex: odd or junk refused");
	buf_free(&b);
}

UNIT_TEST(test_piston)
{
	struct buf text = {0};
	char err[256];
	struct registry unused;
	fixture_load(&conf, &unused);
	registry_free(&unused);
	if (!read_file("registry/registry.yaml", 1 << 20, &text, err, sizeof err) ||
	    !registry_parse(text.data, text.len, lock_yaml, sizeof lock_yaml - 1, &reg, err, sizeof err)) {
		ok(false, "piston: the shipped registry loads (%s)", err);
		return;
	}
	buf_free(&text);
	versions();
	names();
	files();
	checks();
	stdin_and_limits();
	end_to_end();
	stages();
	results();
	hex();
	registry_free(&reg);
	conf_free(&conf);
}
