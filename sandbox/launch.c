/*
 * launch.c: a cold run's container through dockerd's API instead of a
 * `docker run` client: create (the body rendered from the spec), attach, ask
 * for the exit, start; an HTTP/1.0 client of dockerd's unix socket. And
 * the create of the sandboxes whose stdio a client holds (attach.c).
 *
 * Why: the docker CLI is a process of its own on every run, about 0.1-0.15
 * CPU-s on this 2-core host (docs/PERFORMANCE.md), which under load is that
 * many fewer runs. dockerd does the same work either way.
 */
#define _GNU_SOURCE
#include "launch.h"
#include "docker.h"
#include "spec_render.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* docker's own words from an API answer ({"message": ...}), else what happened. */
static void api_failed(struct buf *why, const char *step, int status, const struct buf *reply)
{
	cJSON *j = status > 0 ? docker_reply_json(reply, status) : NULL;
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "message");
	if (cJSON_IsString(m))
		buf_printf(why, "%s: %.300s", step, m->valuestring);
	else if (status < 0)
		buf_printf(why, "%s: cannot reach dockerd: %s", step, strerror(errno));
	else if (status == 0)
		buf_printf(why, "%s: no answer from dockerd in time", step);
	else
		buf_printf(why, "%s: dockerd answered %d", step, status);
	cJSON_Delete(j);
}

/*
 * An answer's status line and headers, read byte by byte by deadline into
 * head: on the attach's connection the stream follows them, and none of it
 * may be taken. Its HTTP status; -1 if none came whole in time.
 */
static int read_head(int fd, int64_t deadline, struct buf *head)
{
	char c;
	while (head->len < 4 || memcmp(head->data + head->len - 4, "\r\n\r\n", 4)) {
		if (head->len >= 4096 || read_by(fd, deadline, &c, 1) != 1)
			return -1;
		buf_append(head, &c, 1);
	}
	return docker_http_status(head->data, head->len);
}

/* The created container's id ({"Id": 64 hex}), its cgroups' name under
 * the parent (cgroup.h); "" when the answer names none. */
static void container_id_of(const struct buf *reply, char id[65])
{
	cJSON *j = docker_reply_json(reply, 201);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "Id");
	if (cJSON_IsString(v) && strlen(v->valuestring) == 64 && strspn(v->valuestring, "0123456789abcdef") == 64)
		memcpy(id, v->valuestring, 65);
	cJSON_Delete(j);
}

/* The API version of the CLI whose create body tests/unit/test_launch.c
 * holds: dockerd applies that version's rules to what it is sent. */
#define API "/v1.41"

bool launch_create(const struct conf *c, const struct container_spec *spec, int64_t deadline, struct buf *why,
		   bool *unreachable, char id[65])
{
	*unreachable = false;
	id[0] = '\0';
	cJSON *body;
	const char *name = spec->name;
	if (!docker_plain_name(name)) {
		buf_printf(why, "not a name of ours: %.100s", name);
		return false;
	}
	if (!spec_create_body(spec, &body, why))
		return false;
	autofree char *json = cJSON_PrintUnformatted(body);
	cJSON_Delete(body);
	autofree char *req = xasprintf("POST " API "/containers/create?name=%s HTTP/1.0\r\nHost: docker\r\n"
				       "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
				       name, strlen(json), json);
	struct buf reply = {0};
	int status = docker_api(c, req, deadline, &reply);
	if (status < 0) {
		*unreachable = true;
		buf_printf(why, "Cannot connect to the Docker daemon at unix://%s: %s", c->docker_socket,
			   strerror(errno));
	} else if (status != 201) {
		api_failed(why, "create", status, &reply);
	} else {
		container_id_of(&reply, id);
	}
	buf_free(&reply);
	return status == 201;
}

/* Attached, and the exit asked for, before the start, as the CLI does, so
 * that no output and no exit is missed: dockerd answers the wait's headers
 * once it has registered the waiter. */
int launch_attach_start(const struct conf *c, const char *name, int64_t deadline, struct buf *why, int *wait_fd,
			struct buf *wait_head)
{
	*wait_fd = -1;
	char req_attach[256], req_wait[256], req_start[256];
	snprintf(req_attach, sizeof req_attach,
		 "POST " API "/containers/%s/attach?stream=1&stdin=1&stdout=1&stderr=1 HTTP/1.1\r\n"
		 "Host: docker\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: 0\r\n\r\n", name);
	snprintf(req_wait, sizeof req_wait, "POST " API "/containers/%s/wait?condition=next-exit HTTP/1.0\r\n"
		 "Host: docker\r\nContent-Length: 0\r\n\r\n", name);
	snprintf(req_start, sizeof req_start, "POST " API "/containers/%s/start HTTP/1.0\r\n"
		 "Host: docker\r\nContent-Length: 0\r\n\r\n", name);
	struct buf head = {0}, reply = {0};
	int fd = unix_request(c->docker_socket, req_attach);
	int status = fd < 0 ? -1 : read_head(fd, deadline, &head);
	buf_free(&head);
	if (status != 101 && status != 200) {
		buf_printf(why, "attach: %s", fd < 0 ? strerror(errno) : "no stream from dockerd in time");
		goto fail;
	}
	*wait_fd = unix_request(c->docker_socket, req_wait);
	status = *wait_fd < 0 ? -1 : read_head(*wait_fd, deadline, wait_head);
	if (status != 200) {
		buf_printf(why, "wait: %s", *wait_fd < 0 ? strerror(errno) : "no answer from dockerd in time");
		goto fail;
	}
	status = docker_api(c, req_start, deadline, &reply);
	if (status != 204) {
		api_failed(why, "start", status, &reply);
		buf_free(&reply);
		goto fail;
	}
	buf_free(&reply);
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	if (*wait_fd >= 0)
		close(*wait_fd);
	*wait_fd = -1;
	return -1;
}

int launch_start(const struct conf *c, const struct container_spec *spec, int64_t deadline, struct buf *why,
		 bool *unreachable, int *wait_fd, struct buf *wait_head, char id[65])
{
	*wait_fd = -1;
	if (!launch_create(c, spec, deadline, why, unreachable, id))
		return -1;
	return launch_attach_start(c, spec->name, deadline, why, wait_fd, wait_head);
}

int launch_exit_code(const struct buf *reply)
{
	cJSON *j = docker_reply_json(reply, 200);
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "StatusCode");
	int code = cJSON_IsNumber(s) && s->valuedouble >= 0 && s->valuedouble <= 255 ? s->valueint : -1;
	cJSON_Delete(j);
	return code;
}

bool launch_client_argv(const struct conf *c, const struct container_spec *spec, int64_t deadline,
			struct strv *argv, struct buf *why, char id[65])
{
	bool unreachable;
	if (launch_create(c, spec, deadline, why, &unreachable, id)) {
		char by[24];
		snprintf(by, sizeof by, "%lld", (long long)deadline);
		strv_push(argv, LAUNCH_SELF);
		strv_push(argv, "--attach");
		strv_push(argv, c->docker_socket);
		strv_push(argv, spec->name);
		strv_push(argv, by);
		return true;
	}
	if (!unreachable)
		return false;
	id[0] = '\0';
	spec_argv(spec, c->docker, argv); /* why says why: the caller may log it */
	return true;
}
