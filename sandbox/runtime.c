/*
 * runtime.c: which OCI runtime runs the sandboxes, as dockerd has it
 * registered now (sandbox.h, sandbox_runtime_describe). The path and the
 * platform come from dockerd's own record of the runtime (GET /info), the
 * version from that program (`--version`): what /healthz and /runtimes
 * report is what runs, not what a file says should.
 */
#define _GNU_SOURCE
#include "sandbox.h"
#include "docker.h"
#include "subproc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define DESCRIBE_MS 3000 /* for dockerd's answer, then for --version */

/* The value of "--NAME=value" among a runtime's runtimeArgs, or NULL. */
static const char *runtime_arg(const cJSON *args, const char *name)
{
	size_t n = strlen(name);
	const cJSON *a;
	cJSON_ArrayForEach(a, args)
		if (cJSON_IsString(a) && !strncmp(a->valuestring, name, n) && a->valuestring[n] == '=')
			return a->valuestring + n + 1;
	return NULL;
}

/* The first line of `path --version` that starts with want ("runsc
 * version ", "runc version "): the rest of it. */
static bool program_version(const char *path, const char *want, char *out, size_t n)
{
	char *argv[] = {(char *)path, "--version", NULL};
	struct buf text = {0};
	bool ok = subproc_capture(argv, DESCRIBE_MS, &text, NULL) == 0 && text.data;
	const char *at = ok ? strstr(text.data, want) : NULL;
	if (at) {
		at += strlen(want);
		snprintf(out, n, "%.*s", (int)strcspn(at, "\n"), at);
	}
	buf_free(&text);
	return at != NULL;
}

bool sandbox_runtime_describe(const struct conf *c, struct sandbox_runtime *out, char *err, size_t errlen)
{
	*out = (struct sandbox_runtime){0};
	bool runc = c->backend == BACKEND_RUNC;
	const char *name = runc ? c->runc.runtime : c->runtime;
	struct buf reply = {0};
	int status = docker_api(c, "GET /info HTTP/1.0\r\nHost: docker\r\n\r\n", now_ms() + DESCRIBE_MS, &reply);
	cJSON *info = docker_reply_json(&reply, 200);
	buf_free(&reply);
	const cJSON *rt = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(info, "Runtimes"), name);
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(rt, "path");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(rt, "runtimeArgs");
	bool ok = false;
	if (!info)
		snprintf(err, errlen, "dockerd did not describe itself (GET /info: %d)", status);
	else if (!cJSON_IsString(path))
		snprintf(err, errlen, "dockerd has no runtime %s", name);
	else if (runc) {
		/* isobox-runc names the runc it runs (deploy/setup.sh). */
		const char *real = runtime_arg(args, "--isobox-runc");
		snprintf(out->program, sizeof out->program, "runc");
		ok = real && program_version(real, "runc version ", out->version, sizeof out->version);
		if (!ok)
			snprintf(err, errlen, "runtime %s names no runc that says its version", name);
	} else {
		const char *platform = runtime_arg(args, "--platform");
		snprintf(out->program, sizeof out->program, "runsc");
		snprintf(out->platform, sizeof out->platform, "%s", platform ? platform : "default");
		ok = program_version(path->valuestring, "runsc version ", out->version, sizeof out->version);
		if (!ok)
			snprintf(err, errlen, "%s --version did not say", path->valuestring);
	}
	cJSON_Delete(info);
	if (!ok) /* nothing half known: the caller reports what it has, or nothing */
		*out = (struct sandbox_runtime){0};
	return ok;
}

bool sandbox_docker_alive(const struct conf *c, int64_t deadline, struct fault *f)
{
	struct buf reply = {0};
	int status = docker_api(c, "GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n", deadline, &reply);
	int err = errno;
	buf_free(&reply);
	if (status == 200)
		return true;
	if (status < 0)
		return fail(f, E_DOCKER_UNAVAILABLE, "dockerd's socket %s: %s", c->docker_socket, strerror(err));
	return fail(f, E_DOCKER_UNAVAILABLE, "dockerd did not answer its ping (%s)",
		    status ? "an error" : "no whole answer in time");
}
