/*
 * run.c: one execution, start to finish: start the docker client, feed
 * stdin, read output (phases.c follows the phases), enforce the deadlines,
 * collect the exit status, and tear everything down (run_teardown).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>

#define DOCKER_CMD_TIMEOUT_MS 15000
#define DRAIN_AFTER_KILL_MS 5000

volatile int sandbox_stop_requested;

static void close_fd_at(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Run `docker ARGS... <container>` and wait for it (bounded). */
static int docker_on_container(const struct run *r, const char *a1, const char *a2, struct buf *out)
{
	char *argv[] = {r->c->docker, (char *)a1, (char *)a2, r->container, NULL};
	struct buf scratch = {0};
	if (!a2) {
		argv[2] = r->container;
		argv[3] = NULL;
	}
	int rc = subproc_capture(argv, DOCKER_CMD_TIMEOUT_MS, out ? out : &scratch, NULL);
	buf_free(&scratch);
	return rc;
}

void run_kill(struct run *r)
{
	if (r->killed)
		return;
	r->killed = true;
	if (!r->ended_ms)
		r->ended_ms = now_ms();
	/*
	 * Killing the client would leave the container running: kill the
	 * container. In the background: a program blocked writing output
	 * that nobody reads can hold up its own death (docker's copy of its
	 * stdout waits for the client, the client for us), so supervise()
	 * keeps reading, and discarding, until the client is gone.
	 */
	char *argv[] = {r->c->docker, "kill", r->container, NULL};
	int *none[3] = {NULL, NULL, NULL};
	r->killer = subproc_spawn(argv, none);
	if (r->killer < 0)
		log_msg("cannot start docker kill for %s: %s", r->container, strerror(errno));
}

/* Wait for the background `docker kill`, bounded. */
static void reap_killer(struct run *r)
{
	if (r->killer > 0)
		subproc_wait(r->killer, DOCKER_CMD_TIMEOUT_MS);
	r->killer = 0;
}

/* A heartbeat during silence; how a streaming client's departure is seen. */
static void check_idle(struct run *r, int64_t now)
{
	const struct sandbox_sink *s = r->sink;
	if (!s || !s->idle || r->stage == STAGE_STARTING || r->killed ||
	    now - r->last_emit_ms < s->idle_ms)
		return;
	r->last_emit_ms = now;
	if (!s->idle(s->ctx)) {
		r->res->client_gone = true;
		run_kill(r);
	}
}

/* Has the caller's connection hung up? Asked with no events: a web server
 * that sends nothing more (the body is read) must not look like one. */
static bool caller_hung_up(const struct sandbox_sink *s)
{
	if (!s || s->hangup_fd < 0)
		return false;
	struct pollfd p = {.fd = s->hangup_fd};
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

/* Read what is there on out_fd or err_fd; close it at end of file. */
static void pump(struct run *r, int *fd, int which)
{
	char chunk[16384];
	ssize_t n = read(*fd, chunk, sizeof chunk);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		close_fd_at(fd);
		return;
	}
	if (which == 1)
		phases_stdout(r, chunk, (size_t)n);
	else
		phases_stderr(r, chunk, (size_t)n);
}

static void feed_stdin(struct run *r)
{
	const struct sandbox_job *job = r->job;
	while (r->in_fd >= 0 && r->stdin_off < job->stdin_len) {
		ssize_t w = write(r->in_fd, job->stdin_data + r->stdin_off, job->stdin_len - r->stdin_off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w <= 0) { /* EPIPE: the program stopped reading */
			close_fd_at(&r->in_fd);
			return;
		}
		r->stdin_off += (size_t)w;
	}
	close_fd_at(&r->in_fd); /* all written: the program sees end of file */
}

/* Poll the pipes until both close, enforcing the start and wall deadlines. */
static void supervise(struct run *r)
{
	int64_t kill_deadline = 0;
	feed_stdin(r);
	while (r->out_fd >= 0 || r->err_fd >= 0) {
		int64_t now = now_ms();
		int64_t deadline = phases_deadline(r);
		if (!r->killed && now >= deadline) {
			phases_timed_out(r);
			run_kill(r);
		}
		if (!r->killed && sandbox_stop_requested) {
			r->stopping = true;
			run_kill(r);
		}
		check_idle(r, now);
		if (r->killed && !kill_deadline)
			kill_deadline = now + DRAIN_AFTER_KILL_MS;
		if (kill_deadline && now >= kill_deadline)
			break; /* the client lingers; teardown deals with it */
		int64_t wait = (r->killed ? kill_deadline : deadline) - now;
		if (wait > 200)
			wait = 200; /* notice a stop request soon */
		/* The caller's connection, once the sandbox is up (a kill during
		 * start would race docker creating the container). */
		bool watch = r->sink && r->sink->hangup_fd >= 0 && !r->killed &&
			     r->stage != STAGE_STARTING;
		struct pollfd p[4] = {
			{.fd = r->out_fd, .events = POLLIN},
			{.fd = r->err_fd, .events = POLLIN},
			{.fd = r->in_fd, .events = POLLOUT},
			{.fd = watch ? r->sink->hangup_fd : -1},
		};
		if (poll(p, 4, (int)(wait > 0 ? wait : 0)) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			pump(r, &r->out_fd, 1);
		if (p[1].revents)
			pump(r, &r->err_fd, 2);
		if (p[2].revents)
			feed_stdin(r);
		if ((p[3].revents & (POLLHUP | POLLERR)) && !r->killed) {
			r->res->client_gone = true;
			run_kill(r);
		}
	}
	if (!r->ended_ms)
		r->ended_ms = now_ms();
}

/*
 * Exit code and OOM flag from docker inspect (the client's own status is
 * ambiguous: 125-127 are docker's). They belong to the last phase that ran;
 * a compile step that ended by itself reported its own status already.
 */
static bool inspect_once(struct run *r, int *code, bool *oom)
{
	struct buf out = {0};
	char *argv[] = {r->c->docker, "inspect", "--type=container",
		"--format={{.State.ExitCode}} {{.State.OOMKilled}}", r->container, NULL};
	char flag[8] = "";
	int rc = subproc_capture(argv, DOCKER_CMD_TIMEOUT_MS, &out, NULL);
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
static bool oom_event_seen(struct run *r)
{
	struct buf out = {0};
	autofree char *since = xasprintf("--since=%lld", (long long)r->spawned_at - 1);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now); /* a whole second ahead would wait for it */
	autofree char *until = xasprintf("--until=%lld.%09ld", (long long)now.tv_sec, now.tv_nsec);
	autofree char *name = xasprintf("--filter=container=%s", r->container);
	char *argv[] = {r->c->docker, "events", since, until, name, "--filter=event=oom",
		"--format={{.Action}}", NULL};
	int rc = subproc_capture(argv, DOCKER_CMD_TIMEOUT_MS, &out, NULL);
	bool seen = rc == 0 && out.data && strstr(out.data, "oom");
	buf_free(&out);
	return seen;
}

static bool inspect(struct run *r)
{
	int code = -1;
	bool oom = false;
	if (!inspect_once(r, &code, &oom))
		return false;
	/* An exit by SIGKILL that we did not send: was it the OOM killer?
	 * dockerd may record that after the exit, or lose it from the state
	 * (oom_event_seen); ask again, briefly. */
	for (int i = 0; i < 3 && code == 137 && !oom && !r->killed; i++) {
		usleep(150 * 1000);
		inspect_once(r, &code, &oom);
		oom = oom || oom_event_seen(r);
	}
	bool compiling = !r->program_started && r->stage >= STAGE_COMPILING &&
			 r->stage <= STAGE_HEADER;
	struct sandbox_phase *ph = r->program_started ? &r->res->run : &r->res->compile;
	if (r->program_started || compiling)
		ph->exit_code = code;
	ph->oom_killed = oom;
	return true;
}

/* A short, single-line reason from docker's own messages. */
static const char *docker_reason(struct run *r)
{
	char *s = r->docker_msg.data ? r->docker_msg.data : "";
	for (char *p = s; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '"')
			*p = ' ';
	return s[0] ? s : "docker gave no reason";
}

static bool start_failed(struct run *r, struct fault *f)
{
	const char *why = docker_reason(r);
	if (strstr(why, "No such image"))
		return fail(f, 503, "image_missing",
			    "the pinned image for %s is not in docker: rebuild images (%.200s)",
			    r->job->lang->name, why);
	if (strstr(why, "Cannot connect to the Docker daemon") || strstr(why, "docker.sock"))
		return fail(f, 503, "docker_unavailable", "docker is not reachable: %.200s", why);
	if (r->killed)
		return fail(f, 503, "sandbox_start_timeout", "the sandbox did not start within %lld ms",
			    (long long)r->c->sandbox.start_timeout_ms);
	return fail(f, 503, "sandbox_failed", "the sandbox did not start: %.300s", why);
}

static void run_teardown(struct run *r)
{
	close_fd_at(&r->in_fd);
	close_fd_at(&r->out_fd);
	close_fd_at(&r->err_fd);
	if (r->client > 0)
		subproc_wait(r->client, DOCKER_CMD_TIMEOUT_MS);
	reap_killer(r);
	if (r->container && docker_on_container(r, "rm", "--force", NULL) != 0)
		log_msg("docker rm %s failed; the reaper will retry", r->container);
	if (r->dir)
		workdir_remove(r->dir);
	free(r->container);
	free(r->dir);
	buf_free(&r->docker_msg);
	buf_free(&r->header);
}

bool sandbox_run(const struct conf *c, const struct sandbox_job *job,
		 const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f)
{
	struct run r = {.c = c, .job = job, .sink = sink, .res = res,
			.in_fd = -1, .out_fd = -1, .err_fd = -1};
	struct strv argv = {0};
	uint32_t rnd = 0;
	bool ok = false;

	*res = (struct sandbox_result){.compile.exit_code = -1, .run.exit_code = -1};
	if (!job->lang->image_id)
		return fail(f, 503, "image_not_built",
			    "no image is built for %s yet: run deploy/images/build.sh", job->lang->name);
	if (caller_hung_up(sink))
		return fail(f, 499, "client_gone", "the client left before the run started");
	char mode[16];
	if (job->network && !sandbox_egress_ready(c, mode, sizeof mode, f))
		return false;
	if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
		rnd = (uint32_t)now_ms();
	if (!workdir_create(c, job, &r.dir, f))
		return false;
	r.container = xasprintf("isobox-%s-%s-%08x", c->instance, sandbox_owner_id(), rnd);
	sandbox_docker_argv(c, job, r.container, sandbox_owner_id(), r.dir, &argv);

	int *fds[3] = {&r.in_fd, &r.out_fd, &r.err_fd};
	r.spawned_ms = now_ms();
	r.spawned_at = time(NULL);
	r.client = subproc_spawn(argv.v, fds);
	strv_free(&argv);
	if (r.client < 0) {
		fail(f, 503, "sandbox_unavailable", "cannot start %s: %s", c->docker, strerror(errno));
		goto out;
	}
	if (job->stdin_len == 0)
		close_fd_at(&r.in_fd);
	supervise(&r);
	/* Nothing more is read: a client still writing gets EPIPE and exits. */
	close_fd_at(&r.in_fd);
	close_fd_at(&r.out_fd);
	close_fd_at(&r.err_fd);
	subproc_wait(r.client, DOCKER_CMD_TIMEOUT_MS);
	r.client = 0;
	reap_killer(&r);
	if (r.stopping) {
		fail(f, 503, "worker_stopping", "the worker is shutting down; retry");
		goto out;
	}
	if (r.stage == STAGE_STARTING && !r.program_started) {
		start_failed(&r, f);
		goto out;
	}
	if (!inspect(&r)) {
		fail(f, 503, "sandbox_failed", "cannot read the sandbox's exit status");
		goto out;
	}
	if (r.program_started)
		res->run.duration_ms = r.ended_ms - r.phase_ms;
	else if (r.stage < STAGE_BODY)
		res->compile.duration_ms = r.ended_ms - r.phase_ms;
	ok = true;
out:
	run_teardown(&r);
	return ok;
}

void sandbox_result_free(struct sandbox_result *res)
{
	buf_free(&res->compile.out);
	buf_free(&res->compile.err);
	buf_free(&res->run.out);
	buf_free(&res->run.err);
}
