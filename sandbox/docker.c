/*
 * docker.c: the docker commands around a run (kill, inspect, the OOM
 * event, remove) and the lists the reaper and the others read, each
 * bounded by a deadline its caller gives, so that the whole of a run's
 * teardown fits the budget deadline.c sums. All go to dockerd's API on its
 * unix socket. Those around a run fall back to the docker CLI when the
 * socket cannot be reached, as a cold run's start does (exec_cold.c); a
 * list has no fallback: /healthz says dockerd is down without the socket.
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

pid_t docker_remove_start(const struct conf *c, const char *name)
{
	char *argv[] = {c->docker, "rm", "--force", (char *)name, NULL};
	int *none[3] = {NULL, NULL, NULL};
	pid_t pid = subproc_spawn(argv, none);
	if (pid < 0)
		log_msg("cannot start docker rm for %s: %s", name, strerror(errno));
	return pid;
}

bool docker_plain_name(const char *name)
{
	return *name && strlen(name) < 100 && !name[strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-")];
}

/*
 * The removal that ends every cold run, and the kill that stops one, go to
 * dockerd's API on its unix socket: a docker CLI process costs about 50 ms
 * of CPU (`docker rm`: 0.03 s user, 0.03 s sys), a tenth of a python
 * hello's whole run, which under load is a tenth fewer runs. HTTP/1.0, one
 * request a connection. This one's answer is read later (answer_status),
 * verb names it for the log: the connection's fd, -1 if none.
 */
static int api_send(const struct conf *c, const char *verb, const char *method, const char *name,
		    const char *what)
{
	char req[256];
	if (!docker_plain_name(name))
		return -1;
	snprintf(req, sizeof req, "%s /containers/%s%s HTTP/1.0\r\nHost: docker\r\nContent-Length: 0\r\n\r\n",
		 method, name, what);
	int fd = unix_request(c->docker_socket, req);
	if (fd < 0)
		log_msg("cannot ask dockerd (%s) to %s %s: %s", c->docker_socket, verb, name, strerror(errno));
	return fd;
}

int docker_remove_send(const struct conf *c, const char *name)
{
	return api_send(c, "remove", "DELETE", name, "?force=1");
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

/* The status of an answer to api_send, read by deadline; fd is closed. */
static int answer_status(int fd, int64_t deadline)
{
	char reply[128];
	ssize_t got = read_line_by(fd, deadline, reply, sizeof reply);
	close(fd);
	return got < 0 ? -1 : docker_http_status(reply, (size_t)got);
}

bool docker_remove_done(int fd, int64_t deadline)
{
	int status = answer_status(fd, deadline);
	return status == 204 || status == 404; /* removed, or gone already */
}

void docker_kill_ask(const struct conf *c, const char *name, struct docker_kill *k)
{
	k->fd = api_send(c, "kill", "POST", name, "/kill");
	k->pid = -1;
	if (k->fd < 0) {
		char *argv[] = {c->docker, "kill", (char *)name, NULL};
		int *none[3] = {NULL, NULL, NULL};
		k->pid = subproc_spawn(argv, none);
		if (k->pid < 0)
			log_msg("cannot start docker kill for %s: %s", name, strerror(errno));
	}
	k->asked = k->fd >= 0 || k->pid >= 0;
}

/* 204 killed, 409 not running, 404 gone: whichever, it no longer runs,
 * or the removal that follows every run sees to it. */
void docker_kill_wait(struct docker_kill *k, int64_t deadline)
{
	if (k->asked && k->fd >= 0)
		answer_status(k->fd, deadline);
	else if (k->asked && k->pid >= 0)
		subproc_wait(k->pid, left_ms(deadline));
	*k = (struct docker_kill){0};
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

bool docker_events_saw(const char *body, size_t len, const char *action)
{
	bool saw = false;
	for (const char *p = body, *end = body + len; p < end && !saw;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		cJSON *event = cJSON_ParseWithLength(p, n);
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(event, "Action");
		saw = cJSON_IsString(a) && !strcmp(a->valuestring, action);
		cJSON_Delete(event);
		p += n + 1;
	}
	return saw;
}

/*
 * The events between two times from dockerd's API: with an until already
 * past, dockerd sends those it logged and ends its answer (HTTP/1.0: no
 * chunks, the connection closed). Has one of them action? -1 when the
 * socket cannot be reached, 0 for no (or no whole answer in time).
 */
static int api_events_saw(const struct conf *c, const char *filters, const char *since, const char *until,
			  const char *action, int64_t deadline)
{
	autofree char *req = xasprintf("GET /events?since=%s&until=%s&filters=%s HTTP/1.0\r\nHost: docker\r\n\r\n",
				       since, until, filters);
	struct buf reply = {0};
	int status = docker_api(c, req, deadline, &reply);
	const char *body = status == 200 ? docker_http_body(reply.data, reply.len) : NULL;
	bool saw = body && docker_events_saw(body, reply.len - (size_t)(body - reply.data), action);
	buf_free(&reply);
	return status < 0 ? -1 : saw;
}

/*
 * Did dockerd see an OOM kill of this container? Its event log says so even
 * when the container's state does not: dockerd 20.10 drops OOMKilled when
 * the `oom` event arrives after the `die` event (70-160 ms later, under load).
 * The CLI when the socket cannot be reached, as docker_inspect, its partner.
 */
bool docker_oom_seen(const struct conf *c, const char *name, time_t since, int64_t deadline)
{
	char from[32], until[48];
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now); /* a whole second ahead would wait for it */
	snprintf(from, sizeof from, "%lld", (long long)since - 1);
	snprintf(until, sizeof until, "%lld.%09ld", (long long)now.tv_sec, now.tv_nsec);
	const char *pairs[] = {"container", name, "event", "oom", NULL};
	autofree char *filters = docker_filters(pairs);
	int api = api_events_saw(c, filters, from, until, "oom", deadline);
	if (api >= 0)
		return api;
	struct buf out = {0};
	autofree char *since_arg = xasprintf("--since=%s", from);
	autofree char *until_arg = xasprintf("--until=%s", until);
	autofree char *filter = xasprintf("--filter=container=%s", name);
	char *argv[] = {c->docker, "events", since_arg, until_arg, filter, "--filter=event=oom",
		"--format={{.Action}}", NULL};
	int rc = subproc_capture(argv, left_ms(deadline), &out, NULL);
	bool seen = rc == 0 && out.data && strstr(out.data, "oom");
	buf_free(&out);
	return seen;
}

char *docker_url_encode(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	struct buf b = {0};
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~", *p)) {
			buf_append(&b, p, 1);
		} else {
			char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
			buf_append(&b, esc, 3);
		}
	}
	return b.data ? b.data : xstrdup("");
}

char *docker_filters(const char *const pairs[])
{
	cJSON *o = cJSON_CreateObject();
	for (size_t i = 0; pairs[i] && pairs[i + 1]; i += 2) {
		cJSON *values = cJSON_GetObjectItemCaseSensitive(o, pairs[i]);
		if (!values)
			values = cJSON_AddArrayToObject(o, pairs[i]);
		cJSON_AddItemToArray(values, cJSON_CreateString(pairs[i + 1]));
	}
	autofree char *json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!json)
		die("out of memory");
	return docker_url_encode(json);
}

/*
 * The list is one answer, so it is bounded by API_REPLY_MAX: some 500
 * containers' records (the CLI's list was read up to 64 KiB, some 1000
 * ids). A longer one is logged and that pass done without it.
 */
cJSON *docker_list(const struct conf *c, const char *const filters[], bool all, int64_t deadline)
{
	autofree char *query = filters ? docker_filters(filters) : NULL;
	autofree char *req = xasprintf("GET /containers/json?all=%d%s%s HTTP/1.0\r\nHost: docker\r\n\r\n", all,
				       query ? "&filters=" : "", query ? query : "");
	struct buf reply = {0};
	int status = docker_api(c, req, deadline, &reply);
	int err = errno;
	cJSON *list = docker_reply_json(&reply, 200);
	buf_free(&reply);
	if (!cJSON_IsArray(list)) {
		if (status < 0)
			log_msg("cannot list containers: dockerd's socket %s: %s", c->docker_socket, strerror(err));
		else
			log_msg("cannot list containers: dockerd answered %d%s", status,
				status ? "" : " (no whole answer in time, or a longer one than we read)");
		cJSON_Delete(list);
		return NULL;
	}
	return list;
}

static const char *string_of(const cJSON *entry, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(entry, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *docker_listed_id(const cJSON *entry)
{
	const char *id = string_of(entry, "Id");
	return id && strlen(id) == 64 && strspn(id, "0123456789abcdef") == 64 ? id : NULL;
}

const char *docker_listed_name(const cJSON *entry)
{
	const cJSON *name;
	cJSON_ArrayForEach(name, cJSON_GetObjectItemCaseSensitive(entry, "Names"))
		if (cJSON_IsString(name) && name->valuestring[0] == '/' && name->valuestring[1] &&
		    !strchr(name->valuestring + 1, '/'))
			return name->valuestring + 1;
	return NULL;
}

const char *docker_listed_state(const cJSON *entry)
{
	const char *state = string_of(entry, "State");
	return state ? state : "";
}

const char *docker_listed_label(const cJSON *entry, const char *key)
{
	const char *value = string_of(cJSON_GetObjectItemCaseSensitive(entry, "Labels"), key);
	return value ? value : "";
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
