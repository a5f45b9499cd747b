/*
 * create_body.c: the JSON body of POST /containers/create that the docker
 * CLI would send for a `docker run` argv (create_body.h).
 *
 * argv.c stays the one list of a run's flags: this file turns that argv
 * into the JSON the CLI would send, knowing each flag argv.c writes and
 * refusing any other; tests/unit/test_launch.c compares that JSON with
 * the body docker's own CLI sent for the same argv.
 */
#define _GNU_SOURCE
#include "create_body.h"
#include "docker.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "--memory=5" with flag "--memory": true, *value "5". */
static bool flag(const char *arg, const char *name, const char **value)
{
	size_t n = strlen(name);
	if (strncmp(arg, name, n) || arg[n] != '=')
		return false;
	*value = arg + n + 1;
	return true;
}

static bool number(const char *s, double *out)
{
	char *end;
	errno = 0;
	*out = strtod(s, &end);
	return *s && !*end && !errno && isfinite(*out) && *out >= 0;
}

static cJSON *child(cJSON *parent, const char *key, bool array)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key);
	if (!o)
		o = array ? cJSON_AddArrayToObject(parent, key) : cJSON_AddObjectToObject(parent, key);
	return o;
}

static void push_string(cJSON *parent, const char *key, const char *s)
{
	cJSON_AddItemToArray(child(parent, key, true), cJSON_CreateString(s));
}

/* "k=v" into parent[key][k] = v. */
static bool pair(cJSON *parent, const char *key, const char *kv, char sep)
{
	const char *eq = strchr(kv, sep);
	if (!eq || eq == kv)
		return false;
	autofree char *k = xstrndup(kv, (size_t)(eq - kv));
	cJSON_AddStringToObject(child(parent, key, false), k, eq + 1);
	return true;
}

/* "type=bind,src=S,dst=D[,readonly]" */
static bool mount(cJSON *host, const char *spec)
{
	autofree char *copy = xstrndup(spec, strlen(spec));
	const char *type = NULL, *src = NULL, *dst = NULL;
	bool ro = false;
	for (char *save = NULL, *f = strtok_r(copy, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		const char *v;
		if (flag(f, "type", &v))
			type = v;
		else if (flag(f, "src", &v))
			src = v;
		else if (flag(f, "dst", &v))
			dst = v;
		else if (!strcmp(f, "readonly"))
			ro = true;
		else
			return false;
	}
	if (!type || strcmp(type, "bind") || !src || !dst)
		return false;
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "Type", "bind");
	cJSON_AddStringToObject(m, "Source", src);
	cJSON_AddStringToObject(m, "Target", dst);
	cJSON_AddBoolToObject(m, "ReadOnly", ro);
	cJSON_AddItemToArray(child(host, "Mounts", true), m);
	return true;
}

/* "nproc=32:32" */
static bool ulimit(cJSON *host, const char *spec)
{
	const char *eq = strchr(spec, '=');
	long long soft, hard;
	int end = 0;
	if (!eq || eq == spec || sscanf(eq + 1, "%lld:%lld%n", &soft, &hard, &end) != 2 || eq[1 + end])
		return false;
	cJSON *u = cJSON_CreateObject();
	autofree char *name = xstrndup(spec, (size_t)(eq - spec));
	cJSON_AddStringToObject(u, "Name", name);
	cJSON_AddNumberToObject(u, "Soft", (double)soft);
	cJSON_AddNumberToObject(u, "Hard", (double)hard);
	cJSON_AddItemToArray(child(host, "Ulimits", true), u);
	return true;
}

/* As the CLI does: the profile's JSON, compacted, in the option itself.
 * Not through a symbolic link (the profile is ours: setup writes it). */
static bool seccomp(cJSON *host, const char *path, struct buf *why)
{
	autoclose int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct buf text = {0};
	char chunk[8192];
	ssize_t r = 0;
	while (fd >= 0 && text.len < API_REPLY_MAX && (r = read(fd, chunk, sizeof chunk)) > 0)
		buf_append(&text, chunk, (size_t)r);
	cJSON *profile = fd >= 0 && r == 0 ? cJSON_ParseWithLength(text.data, text.len) : NULL;
	cJSON_Delete(profile);
	if (!profile) {
		buf_free(&text);
		buf_printf(why, "cannot read the seccomp profile %s", path);
		return false;
	}
	/* Whitespace out, the text kept: a number is never re-printed. */
	cJSON_Minify(text.data);
	autofree char *opt = xasprintf("seccomp=%s", text.data);
	buf_free(&text);
	push_string(host, "SecurityOpt", opt);
	return true;
}

/* The flags that set one field as they are: a string, a number, or one
 * more item of a list. */
enum kind { TEXT, NUMBER, ITEM };
static const struct field {
	const char *flag;
	bool host; /* in HostConfig, else in the body itself */
	const char *key;
	enum kind kind;
} fields[] = {
	{"--runtime", true, "Runtime", TEXT},
	{"--network", true, "NetworkMode", TEXT},
	{"--cgroupns", true, "CgroupnsMode", TEXT},
	{"--cgroup-parent", true, "CgroupParent", TEXT},
	{"--user", false, "User", TEXT},
	{"--workdir", false, "WorkingDir", TEXT},
	{"--hostname", false, "Hostname", TEXT},
	{"--memory", true, "Memory", NUMBER},
	{"--memory-swap", true, "MemorySwap", NUMBER},
	{"--pids-limit", true, "PidsLimit", NUMBER},
	{"--cap-drop", true, "CapDrop", ITEM},
	{"--env", false, "Env", ITEM},
	{"--entrypoint", false, "Entrypoint", ITEM}, /* [""]: the image's is reset */
};

/* A flag of the table into the body: -1 not one of them, else whether its value was good. */
static int add_field(cJSON *body, cJSON *host, const char *a)
{
	const char *v;
	double d;
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		const struct field *fl = &fields[i];
		cJSON *o = fl->host ? host : body;
		if (!flag(a, fl->flag, &v))
			continue;
		if (fl->kind == TEXT)
			cJSON_AddStringToObject(o, fl->key, v);
		else if (fl->kind == ITEM)
			push_string(o, fl->key, v);
		else if (number(v, &d))
			cJSON_AddNumberToObject(o, fl->key, d);
		else
			return 0;
		return 1;
	}
	return -1;
}

/* One flag of argv.c's into the body; false: not one argv.c writes, or a bad value. */
static bool add_flag(cJSON *body, cJSON *host, const char *a, const char **name, struct buf *why)
{
	const char *v;
	double d;
	int field = add_field(body, host, a);
	if (field >= 0)
		return field;
	if (!strcmp(a, "--interactive")) {
		cJSON_AddBoolToObject(body, "AttachStdin", true);
		cJSON_AddBoolToObject(body, "OpenStdin", true);
		cJSON_AddBoolToObject(body, "StdinOnce", true);
	} else if (!strcmp(a, "--pull=never")) {
		; /* create never pulls */
	} else if (!strcmp(a, "--read-only")) {
		cJSON_AddBoolToObject(host, "ReadonlyRootfs", true);
	} else if (flag(a, "--name", &v)) {
		*name = v;
	} else if (flag(a, "--label", &v)) {
		return pair(body, "Labels", v, '=');
	} else if (flag(a, "--mount", &v)) {
		return mount(host, v);
	} else if (flag(a, "--security-opt", &v)) {
		if (flag(v, "seccomp", &v))
			return seccomp(host, v, why);
		push_string(host, "SecurityOpt", v);
	} else if (flag(a, "--cpus", &v) && number(v, &d)) {
		cJSON_AddNumberToObject(host, "NanoCpus", round(d * 1e9));
	} else if (flag(a, "--ulimit", &v)) {
		return ulimit(host, v);
	} else if (flag(a, "--tmpfs", &v)) {
		return pair(host, "Tmpfs", v, ':');
	} else if (flag(a, "--log-driver", &v)) {
		cJSON *log = cJSON_AddObjectToObject(host, "LogConfig");
		cJSON_AddStringToObject(log, "Type", v);
		cJSON_AddObjectToObject(log, "Config");
	} else {
		return false;
	}
	return true;
}

bool launch_create_body(char *const argv[], cJSON **out, const char **name, struct buf *why)
{
	*out = NULL;
	*name = NULL;
	if (!argv[0] || !argv[1] || strcmp(argv[1], "run")) {
		buf_printf(why, "not a docker run");
		return false;
	}
	cJSON *body = cJSON_CreateObject();
	cJSON *host = cJSON_AddObjectToObject(body, "HostConfig");
	cJSON_AddBoolToObject(body, "AttachStdout", true);
	cJSON_AddBoolToObject(body, "AttachStderr", true);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(host, "RestartPolicy"), "Name", "no");
	size_t i = 2;
	for (; argv[i] && !strncmp(argv[i], "--", 2); i++) {
		if (!add_flag(body, host, argv[i], name, why)) {
			if (!why->len)
				buf_printf(why, "a flag create_body.c does not know: %.100s", argv[i]);
			cJSON_Delete(body);
			return false;
		}
	}
	if (!argv[i] || !*name || !docker_plain_name(*name)) {
		buf_printf(why, argv[i] ? "no name of ours" : "no image");
		cJSON_Delete(body);
		return false;
	}
	cJSON_AddStringToObject(body, "Image", argv[i++]);
	cJSON *cmd = cJSON_AddArrayToObject(body, "Cmd");
	for (; argv[i]; i++)
		cJSON_AddItemToArray(cmd, cJSON_CreateString(argv[i]));
	*out = body;
	return true;
}
