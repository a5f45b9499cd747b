/*
 * agent_io.c: talking to an agent (sandbox/agent/agent.c) over its pipes:
 * wait for it to come up, and one request and its answer (frame.h). Used
 * by sessions (session.c, session_files.c) and by cold runs that return
 * files (outputs.c). A step is supervised by supervise.c (exec_session.c).
 */
#define _GNU_SOURCE
#include "agent_io.h"
#include "docker.h"
#include "launch.h"
#include "subproc.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

/* The agent says it is up ("ready"), or docker says why not (on err). */
bool agent_wait_ready(int out_fd, int err_fd, int64_t deadline, struct buf *docker_msg)
{
	struct frame_decoder d;
	frame_init(&d, 0);
	struct pollfd p[2] = {{.fd = out_fd, .events = POLLIN}, {.fd = err_fd, .events = POLLIN}};
	while (now_ms() < deadline && (p[0].fd >= 0 || p[1].fd >= 0)) {
		if (poll(p, 2, 200) < 0 && errno != EINTR)
			return false;
		for (int i = 0; i < 2; i++) {
			char chunk[4096];
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			ssize_t n = read(p[i].fd, chunk, sizeof chunk);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
				p[i].fd = -1; /* the client exited */
				continue;
			}
			if (n < 0)
				continue;
			if (i == 1) {
				if (docker_msg->len < 4096)
					buf_append(docker_msg, chunk, (size_t)n);
				continue;
			}
			struct frame_event ev;
			size_t used = frame_feed(&d, chunk, (size_t)n, &ev);
			if (ev.kind == FRAME_READY && used == (size_t)n)
				return true;
			return false; /* anything else first: not our agent */
		}
	}
	return false;
}

bool agent_start_failed(const struct conf *c, const char *lang, struct buf *msg, bool timed_out,
			struct fault *f)
{
	const char *why = msg->data ? msg->data : "docker gave no reason";
	for (char *p = msg->data; p && *p; p++)
		if (*p == '\n' || *p == '"')
			*p = ' ';
	return docker_start_failed(c, lang, why, timed_out, f);
}

bool agent_client(const struct conf *c, const char *lang, const struct container_spec *spec, struct strv *argv,
		  char id[65], struct fault *f)
{
	struct buf why = {0};
	int64_t deadline = now_ms() + c->sandbox.start_timeout_ms;
	bool ok = launch_client_argv(c, spec, deadline, argv, &why, id) ||
		  docker_start_failed(c, lang, why.data ? why.data : "", now_ms() >= deadline, f);
	if (ok && why.data)
		log_msg("%s: the docker client instead", why.data);
	buf_free(&why);
	return ok;
}

bool agent_start(const struct conf *c, const char *lang, char *const argv[], pid_t *client, int fds[3],
		 struct fault *f)
{
	fds[0] = fds[1] = fds[2] = -1;
	int *ends[3] = {&fds[0], &fds[1], &fds[2]};
	*client = subproc_spawn(argv, ends);
	if (*client < 0)
		return fail(f, E_SANDBOX_UNAVAILABLE, "cannot start the sandbox's client %s: %s", argv[0],
			    strerror(errno));
	struct buf msg = {0};
	int64_t deadline = now_ms() + c->sandbox.start_timeout_ms;
	bool ok = agent_wait_ready(fds[1], fds[2], deadline, &msg) ||
		  agent_start_failed(c, lang, &msg, now_ms() >= deadline, f);
	buf_free(&msg);
	return ok;
}


/* Write the request while reading what the agent says (a step's old
 * output may still be queued ahead of our answer: it is dropped). */
bool agent_converse(int in_fd, int out_fd, struct agent_call *call, int64_t deadline, const char **why)
{
	struct frame_decoder d;
	frame_init(&d, 16u << 20);
	size_t off = 0;
	while (now_ms() < deadline) {
		struct pollfd p[2] = {{.fd = out_fd, .events = POLLIN},
				      {.fd = off < call->request.len ? in_fd : -1, .events = POLLOUT}};
		if (poll(p, 2, 200) < 0 && errno != EINTR)
			break;
		if (p[1].revents) {
			ssize_t w = write(in_fd, call->request.data + off, call->request.len - off);
			if (w < 0 && errno != EAGAIN && errno != EINTR)
				return (*why = "its sandbox stopped"), false;
			off += w > 0 ? (size_t)w : 0;
		}
		if (!p[0].revents)
			continue;
		char chunk[65536];
		ssize_t n = read(out_fd, chunk, sizeof chunk);
		if (n == 0)
			return (*why = "its sandbox stopped"), false;
		const char *q = chunk;
		size_t left = n > 0 ? (size_t)n : 0;
		while (left > 0) {
			struct frame_event ev;
			size_t used = frame_feed(&d, q, left, &ev);
			q += used;
			left -= used;
			bool ours = !strcmp(ev.tag, call->tag);
			if (ev.kind == FRAME_GARBLED)
				return (*why = "its agent broke the protocol"), false;
			if (ours && ev.kind == FRAME_DATA) {
				if (call->data.len + ev.len > call->data_max)
					return (*why = "its agent sent more than it was asked for"), false;
				buf_append(&call->data, ev.data, ev.len);
			}
			if (ours && ev.kind == FRAME_END) {
				if (call->reply.len < (call->reply_max ? call->reply_max : 65536))
					buf_append(&call->reply, ev.data, ev.len);
				if (!ev.more) {
					call->code = (int)ev.code;
					return true;
				}
			}
		}
	}
	*why = "its agent did not answer in time";
	return false;
}

void agent_call_free(struct agent_call *call)
{
	buf_free(&call->request);
	buf_free(&call->data);
	buf_free(&call->reply);
}
