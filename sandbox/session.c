/*
 * session.c: what a request does with a session: start one, run a step
 * in it, move files in and out of its /workspace, end it.
 *
 * A session's sandbox is a `docker run -i` whose client is detached from
 * the worker that started it (subproc_detach): its stdin, stdout and
 * stderr are named pipes in the session's directory, which the client
 * opens read-write, so no worker coming or going ever closes them. A
 * request opens the pipes, writes one request to the agent (frame.h) and
 * reads its answers; the session's lock (session_store.c) makes it the
 * only one doing so.
 *
 * Files go through the agent, inside the sandbox: the host never opens a
 * path that sandboxed code could have made, so no link it plants can send
 * the host anywhere (the agent itself follows none).
 */
#define _GNU_SOURCE
#include "deadline.h"
#include "owner.h"
#include "agent_io.h"
#include "docker.h"
#include "exec_session.h"
#include "frame.h"
#include "session.h"
#include "session_store.h"
#include "subproc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* The pipes, and the detached client that holds them (launch.h). */
static bool start_sandbox(struct session_handle *h, const struct language *l, char id[65], struct fault *f)
{
	const struct conf *c = h->c;
	const struct session *s = &h->s;
	static const char *const names[3] = {"in", "out", "err"};
	int held[3] = {-1, -1, -1}, out_fd = -1, err_fd = -1;
	bool ok = true;
	for (int i = 0; i < 3 && ok; i++)
		ok = mkfifoat(h->dir_fd, names[i], 0600) == 0 &&
		     (held[i] = openat(h->dir_fd, names[i], O_RDWR | O_NOFOLLOW | O_CLOEXEC)) >= 0;
	if (ok) {
		out_fd = openat(h->dir_fd, "out", O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
		err_fd = openat(h->dir_fd, "err", O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
		ok = out_fd >= 0 && err_fd >= 0;
	}
	if (!ok) {
		fail(f, E_SANDBOX_UNAVAILABLE, "cannot make the session's pipes: %s", strerror(errno));
	} else {
		struct container_spec spec;
		struct strv argv = {0};
		spec_session(c, l, s, sandbox_owner_id(), &spec);
		ok = agent_client(c, l->name, &spec, &argv, id, f);
		spec_free(&spec);
		if (ok && !(ok = subproc_detach(argv.v, held)))
			fail(f, E_SANDBOX_UNAVAILABLE, "cannot start the session's client %s", argv.v[0]);
		strv_free(&argv);
	}
	for (int i = 0; i < 3; i++)
		if (held[i] >= 0)
			close(held[i]); /* the client has its own now */
	if (ok) {
		struct buf msg = {0};
		int64_t deadline = now_ms() + c->sandbox.start_timeout_ms;
		ok = agent_wait_ready(out_fd, err_fd, deadline, &msg);
		if (!ok)
			agent_start_failed(c, l->name, &msg, now_ms() >= deadline, f);
		buf_free(&msg);
	}
	if (out_fd >= 0)
		close(out_fd);
	if (err_fd >= 0)
		close(err_fd);
	return ok;
}

bool session_create(const struct conf *c, const struct tenant_limits *share, const struct language *l,
		    struct session *out, struct fault *f)
{
	if (!c->sessions.dir)
		return fail(f, E_SESSIONS_OFF, "sessions are turned off on this server");
	if (!registry_image_built(l, f))
		return false;
	char mode[16];
	if (out->network && !sandbox_egress_ready(c, mode, sizeof mode, f))
		return false;
	struct session s = *out;
	if (!s.id[0])
		session_new_id(c->instance, s.id);
	snprintf(s.language, sizeof s.language, "%s", l->name);
	snprintf(s.version, sizeof s.version, "%s", l->version);
	sandbox_container_name(c->instance, s.id, s.container, sizeof s.container);
	s.created_ms = s.last_used_ms = wall_ms();
	struct session_handle h;
	if (!session_admit(c, &s, share, &h, f))
		return false;
	if (!start_sandbox(&h, l, s.container_id, f)) {
		session_close(&h, false);
		session_end(c, s.id, s.container, "it did not start", true);
		return false;
	}
	/* Where its cgroup is, for GET's memory use: nothing else needs it.
	 * The API's create named it; a client that made it (the CLI's way)
	 * did not say. */
	if (s.container_id[0] ||
	    docker_container_id(c, s.container, now_ms() + REMOVE_MS, s.container_id, sizeof s.container_id)) {
		h.s = s;
		session_record_write(h.dir_fd, &s);
	}
	s.memory_used = -1;
	s.last_used_ms = wall_ms(); /* up now: the idle clock starts here */
	session_close(&h, true);
	*out = s;
	return true;
}

bool session_delete(const struct conf *c, const char *tenant, const char *id, struct fault *f)
{
	struct session s;
	if (!session_get(c, tenant, id, &s, f))
		return false;
	session_end(c, id, s.container, "deleted", true);
	return true;
}

void session_step_request(const struct sandbox_job *job, bool kernel, const char *tag, struct buf *b)
{
	if (kernel) {
		buf_printf(b, "cell %s %zu %zu\n", tag, job->files[0].len, job->stdin_len);
		buf_append(b, job->files[0].data, job->files[0].len);
		buf_append(b, job->stdin_data, job->stdin_len);
		return;
	}
	struct strv argv = {0};
	spec_step_command(job, &argv);
	buf_printf(b, "run %s %zu %zu %zu\n", tag, job->n_files, argv.n, job->stdin_len);
	for (size_t i = 0; i < job->n_files; i++) {
		const struct sandbox_file *file = &job->files[i];
		buf_printf(b, "%zu %zu\n", strlen(file->name), file->len);
		buf_append(b, file->name, strlen(file->name));
		buf_append(b, file->data, file->len);
	}
	for (size_t i = 0; i < argv.n; i++) {
		buf_printf(b, "%zu\n", strlen(argv.v[i]));
		buf_append(b, argv.v[i], strlen(argv.v[i]));
	}
	buf_append(b, job->stdin_data, job->stdin_len);
	strv_free(&argv);
}

bool session_step(const struct conf *c, const struct session *s, const struct sandbox_job *job,
		  const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f)
{
	struct session_handle h;
	int in_fd, out_fd;
	char mode[16];
	*res = (struct sandbox_result){.compile.exit_code = -1, .run.exit_code = -1};
	/* The firewall a network session began with may have changed since
	 * (a new interface or subnet): its steps wait for the right one, as
	 * new runs do (503 network_unavailable). */
	if (s->network && !sandbox_egress_ready(c, mode, sizeof mode, f))
		return false;
	if (!session_open(c, s->tenant, s->id, &h, f))
		return false;
	if (!session_pipes(&h, &in_fd, &out_fd, f)) {
		session_close(&h, false);
		return false;
	}
	bool kernel = h.s.type == SESSION_KERNEL;
	char tag[AGENT_TAG_LEN + 1];
	frame_new_tag(tag);
	struct buf request = {0};
	session_step_request(job, kernel, tag, &request);
	/* The session's end, however busy: the step is cut there, from here
	 * (the master's look also ends it, every 2 s, even while we hold it). */
	int64_t life_end = session_life_end_ms(&h.s);
	struct session_link link = {.tag = tag, .end_by_ms = now_ms() + (life_end - wall_ms()),
				    .container_id = h.s.container_id};
	/* A cell's JSON: its value and error are capped by the output cap,
	 * its images (at most 8) by the file cap. */
	frame_init(&link.frames, (unsigned long long)(job->limits.output_bytes + c->sessions.max_file_bytes));
	struct sandbox sb = {.c = c, .name = h.s.container};
	bool ok = exec_session(&sb, &link, in_fd, out_fd, &request, job, kernel, sink, res, f);
	buf_free(&request);
	if (link.lost) {
		bool oom = res->run.oom_killed || res->compile.oom_killed;
		res->session_ended = oom ? "it ran out of memory (its memoryBytes)"
			: link.interrupted ? "it did not stop its step when interrupted"
					   : "its sandbox stopped";
		if (!oom && wall_ms() >= life_end) { /* cut here, or by the master: the step timed out */
			res->session_ended = session_over(&h.s, life_end, res->session_why);
			if (res->has_run || res->has_compile)
				(res->has_run ? &res->run : &res->compile)->timed_out = true;
			else /* the end came before the step began: refused, as after it (410) */
				ok = fail(f, E_SESSION_EXPIRED, "session %.40s has ended before its step began: %s",
					  h.s.id, res->session_ended);
		}
		session_close(&h, false);
		session_end(c, h.s.id, h.s.container, res->session_ended, true);
	} else {
		h.s.steps++;
		session_record_write(h.dir_fd, &h.s);
		session_close(&h, true);
	}
	res->kernel = link.end_payload; /* the result owns it now */
	return ok;
}
