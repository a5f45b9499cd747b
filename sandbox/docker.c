/*
 * docker.c: the docker commands around a run (kill, inspect, the OOM
 * event, remove), each bounded by a deadline its caller gives, so that the
 * whole of a run's teardown fits the budget deadline.c sums. Each goes to
 * dockerd's API on its unix socket when it can be reached, and runs the
 * docker CLI when it cannot.
 */
#define _GNU_SOURCE
#include "docker.h"
#include "subproc.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int64_t left_ms(int64_t deadline)
{
	int64_t left = deadline - now_ms();
	return left > 0 ? left : 0;
}

/*
 * A request about one container, by its name, sent to dockerd's API
 * ("DELETE", "?force=1"; "POST", "/kill"): the connection's fd, its answer
 * read later (answer_status); -1 when the name is not one of ours or the
 * socket cannot be reached (errno).
 */
static int container_request(const struct conf *c, const char *method, const char *name, const char *rest)
{
	char req[256];
	if (!docker_plain_name(name))
		return -1;
	snprintf(req, sizeof req, "%s /containers/%s%s HTTP/1.0\r\nHost: docker\r\nContent-Length: 0\r\n\r\n",
		 method, name, rest);
	return unix_request(c->docker_socket, req);
}

/* The status of the answer on fd, read by deadline (-1: none); fd closed. */
static int answer_status(int fd, int64_t deadline)
{
	char reply[128];
	ssize_t got = read_line_by(fd, deadline, reply, sizeof reply);
	close(fd);
	return got < 0 ? -1 : docker_http_status(reply, (size_t)got);
}

struct docker_kill docker_kill_start(const struct conf *c, const char *name)
{
	struct docker_kill k = DOCKER_KILL_NONE;
	if ((k.fd = container_request(c, "POST", name, "/kill")) >= 0)
		return k;
	char *argv[] = {c->docker, "kill", (char *)name, NULL};
	int *none[3] = {NULL, NULL, NULL};
	k.pid = subproc_spawn(argv, none);
	if (k.pid < 0)
		log_msg("cannot start docker kill for %s: %s", name, strerror(errno));
	return k;
}

bool docker_kill_started(const struct docker_kill *k)
{
	return k->fd >= 0 || k->pid >= 0;
}

void docker_kill_wait(struct docker_kill *k, int64_t deadline)
{
	if (k->fd >= 0) {
		int status = answer_status(k->fd, deadline);
		/* 204 killed; 404 gone, 409 not running: it ended first */
		if (status != 204 && status != 404 && status != 409)
			log_msg("dockerd's answer to a kill: %d", status);
	}
	if (k->pid >= 0)
		subproc_wait(k->pid, deadline - now_ms());
	*k = DOCKER_KILL_NONE;
}

pid_t docker_remove_start(const struct conf *c, const char *name)
{
	char *argv[] = {c->docker, "rm", "--force", (char *)name, NULL};
	int *none[3] = {NULL, NULL, NULL};
	pid_t pid = subproc_spawn(argv, none);
	if (pid < 0)
		log_msg("cannot start docker rm for %s: %s", name, strerror(errno));
	return pid;
}

/*
 * The removal that ends every cold run goes to dockerd's API on its unix
 * socket: a docker CLI process costs about 50 ms of CPU (`docker rm`:
 * 0.03 s user, 0.03 s sys), a tenth of a python hello's whole run, which
 * under load is a tenth fewer runs. HTTP/1.0, one request a connection.
 */
bool docker_plain_name(const char *name)
{
	return *name && strlen(name) < 100 && !name[strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-")];
}

int docker_remove_send(const struct conf *c, const char *name)
{
	if (!docker_plain_name(name))
		return -1;
	int fd = container_request(c, "DELETE", name, "?force=1");
	if (fd < 0)
		log_msg("cannot ask dockerd (%s) to remove %s: %s", c->docker_socket, name, strerror(errno));
	return fd;
}

int docker_http_status(const char *reply, size_t len)
{
	/* "HTTP/1.1 204 No Content\r\n" */
	if (len < 13 || memcmp(reply, "HTTP/1.", 7) || reply[8] != ' ' || reply[12] != ' ')
		return -1;
	int status = 0;
	for (int i = 9; i < 12; i++) {
		if (reply[i] < '0' || reply[i] > '9')
			return -1;
		status = status * 10 + reply[i] - '0';
	}
	return status;
}

bool docker_remove_done(int fd, int64_t deadline)
{
	int status = answer_status(fd, deadline);
	return status == 204 || status == 404; /* removed, or gone already */
}

const char *docker_http_body(const char *reply, size_t len)
{
	const char *end = memmem(reply, len, "\r\n\r\n", 4);
	return end ? end + 4 : NULL;
}

int docker_api(const struct conf *c, const char *request, int64_t deadline, struct buf *reply)
{
	autoclose int fd = unix_request(c->docker_socket, request);
	if (fd < 0)
		return -1;
	bool whole = false;
	for (;;) {
		char chunk[8192];
		ssize_t r = read_by(fd, deadline, chunk, sizeof chunk);
		whole = r == 0;
		if (r <= 0 || reply->len + (size_t)r > API_REPLY_MAX)
			break;
		buf_append(reply, chunk, (size_t)r);
	}
	int status = whole && reply->len ? docker_http_status(reply->data, reply->len) : -1;
	return status > 0 && docker_http_body(reply->data, reply->len) ? status : 0;
}

cJSON *docker_reply_json(const struct buf *reply, int status)
{
	const char *body = reply->len ? docker_http_body(reply->data, reply->len) : NULL;
	if (!body || docker_http_status(reply->data, reply->len) != status)
		return NULL;
	return cJSON_ParseWithLength(body, reply->len - (size_t)(body - reply->data));
}

/*
 * A container's record from dockerd's API (GET /containers/NAME/json, the
 * same JSON `docker inspect` prints). -1 when the socket cannot be reached
 * (the caller falls back to the CLI), 0 when there is no record in time
 * (no such container, a late or broken answer), 1 with *out the caller's
 * to cJSON_Delete.
 */
static int api_container(const struct conf *c, const char *name, int64_t deadline, cJSON **out)
{
	*out = NULL;
	char req[256];
	if (!docker_plain_name(name))
		return 0;
	snprintf(req, sizeof req, "GET /containers/%s/json HTTP/1.0\r\nHost: docker\r\n\r\n", name);
	struct buf reply = {0};
	int status = docker_api(c, req, deadline, &reply);
	*out = docker_reply_json(&reply, 200);
	buf_free(&reply);
	return status < 0 ? -1 : *out != NULL;
}

bool docker_state_of(const cJSON *record, int *code, bool *oom)
{
	const cJSON *state = cJSON_GetObjectItemCaseSensitive(record, "State");
	const cJSON *exit_code = cJSON_GetObjectItemCaseSensitive(state, "ExitCode");
	const cJSON *killed = cJSON_GetObjectItemCaseSensitive(state, "OOMKilled");
	if (!cJSON_IsNumber(exit_code) || !cJSON_IsBool(killed) || exit_code->valuedouble < 0 ||
	    exit_code->valuedouble > 255)
		return false;
	*code = exit_code->valueint;
	*oom = cJSON_IsTrue(killed);
	return true;
}

bool docker_inspect(const struct conf *c, const char *name, int64_t deadline, int *code, bool *oom)
{
	cJSON *record;
	int got = api_container(c, name, deadline, &record);
	if (got >= 0) {
		bool ok = got && docker_state_of(record, code, oom);
		cJSON_Delete(record);
		return ok;
	}
	struct buf out = {0};
	char *argv[] = {c->docker, "inspect", "--type=container",
		"--format={{.State.ExitCode}} {{.State.OOMKilled}}", (char *)name, NULL};
	char flag[8] = "";
	int rc = subproc_capture(argv, left_ms(deadline), &out, NULL);
	bool ok = rc == 0 && sscanf(out.data ? out.data : "", "%d %7s", code, flag) == 2;
	*oom = ok && !strcmp(flag, "true");
	buf_free(&out);
	return ok;
}

/*
 * Did dockerd see an OOM kill of this container? Its event log says so even
 * when the container's state does not: dockerd 20.10 drops OOMKilled when
 * the `oom` event arrives after the `die` event (70-160 ms later, under load).
 */
bool docker_oom_seen(const struct conf *c, const char *name, time_t since, int64_t deadline)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now); /* a whole second ahead would wait for it */
	if (docker_plain_name(name)) {
		/* filters={"container":[NAME],"event":["oom"]}, URL-encoded; the
		 * events up to until, then dockerd ends the answer. */
		autofree char *req = xasprintf(
			"GET /events?since=%lld&until=%lld.%09ld&filters=%%7B%%22container%%22%%3A%%5B%%22%s%%22%%5D"
			"%%2C%%22event%%22%%3A%%5B%%22oom%%22%%5D%%7D HTTP/1.0\r\nHost: docker\r\n\r\n",
			(long long)since - 1, (long long)now.tv_sec, now.tv_nsec, name);
		struct buf reply = {0};
		int status = docker_api(c, req, deadline, &reply);
		const char *body = status == 200 ? docker_http_body(reply.data, reply.len) : NULL;
		static const char oom[] = "\"Action\":\"oom\"";
		bool seen = body && memmem(body, reply.len - (size_t)(body - reply.data), oom, sizeof oom - 1);
		buf_free(&reply);
		if (status >= 0)
			return seen;
	}
	struct buf out = {0};
	autofree char *from = xasprintf("--since=%lld", (long long)since - 1);
	autofree char *until = xasprintf("--until=%lld.%09ld", (long long)now.tv_sec, now.tv_nsec);
	autofree char *filter = xasprintf("--filter=container=%s", name);
	char *argv[] = {c->docker, "events", from, until, filter, "--filter=event=oom",
		"--format={{.Action}}", NULL};
	int rc = subproc_capture(argv, left_ms(deadline), &out, NULL);
	bool seen = rc == 0 && out.data && strstr(out.data, "oom");
	buf_free(&out);
	return seen;
}

bool docker_start_failed(const struct conf *c, const char *lang, const char *why, bool timed_out,
			 struct fault *f)
{
	if (strstr(why, "No such image"))
		return fail(f, E_IMAGE_MISSING,
			    "the pinned image for %s is not in docker: rebuild images (%.200s)", lang, why);
	if (strstr(why, "Cannot connect to the Docker daemon") || strstr(why, "docker.sock"))
		return fail(f, E_DOCKER_UNAVAILABLE, "docker is not reachable: %.200s", why);
	if (timed_out)
		return fail(f, E_SANDBOX_START_TIMEOUT, "the sandbox did not start within %lld ms",
			    (long long)c->sandbox.start_timeout_ms);
	return fail(f, E_SANDBOX_FAILED, "the sandbox did not start: %.300s", why);
}

bool docker_container_id(const struct conf *c, const char *name, int64_t deadline, char *out, size_t n)
{
	cJSON *record;
	int api = api_container(c, name, deadline, &record);
	if (api >= 0) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(record, "Id");
		bool ok = api && cJSON_IsString(id) && strlen(id->valuestring) == 64 &&
			  strspn(id->valuestring, "0123456789abcdef") == 64 && n > 64;
		if (ok)
			snprintf(out, n, "%s", id->valuestring);
		cJSON_Delete(record);
		return ok;
	}
	struct buf got = {0};
	char *argv[] = {c->docker, "inspect", "--type=container", "--format={{.Id}}", (char *)name, NULL};
	int rc = subproc_capture(argv, left_ms(deadline), &got, NULL);
	size_t len = got.data ? strspn(got.data, "0123456789abcdef") : 0;
	bool ok = rc == 0 && len == 64 && len < n;
	if (ok)
		snprintf(out, n, "%.64s", got.data);
	buf_free(&got);
	return ok;
}
