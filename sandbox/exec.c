/*
 * exec.c: one program run in a sandbox, supervised. Start the container
 * (launch.c: through dockerd's API; the docker client when that cannot be
 * reached), feed stdin, read its output through the decoder (decoder.c) and
 * act on what it reports: keep output under its cap, tell the sink, and
 * stop the container at the deadline (deadline.c), at the output cap, when
 * the caller leaves or the worker stops. Then collect the exit status and
 * the OOM flag. Everything it holds is released before it returns; the
 * container itself is the sandbox's, removed by sandbox_destroy.
 */
#define _GNU_SOURCE
#include "exec.h"
#include "argv.h"
#include "owner.h"
#include "deadline.h"
#include "frame.h"
#include "decoder.h"
#include "docker.h"
#include "launch.h"
#include "subproc.h"
#include "warm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>

volatile sig_atomic_t sandbox_stop_requested;

/* Why the worker stopped the container (first reason wins). STOP_ENDED:
 * the sandbox's own end came (a session's maxLifetimeMs). */
enum stop_reason { STOP_NONE, STOP_DEADLINE, STOP_ENDED, STOP_OUTPUT_CAP, STOP_CLIENT_GONE, STOP_WORKER,
		   STOP_GARBLED };

struct exec {
	const struct conf *c;
	const struct sandbox *sb;
	const struct sandbox_job *job;
	const struct sandbox_sink *sink;
	struct sandbox_result *res;
	struct decoder dec;
	struct exec_clock clock;
	pid_t client, killer;    /* client: -1 in a warm sandbox (the master's child) */
	const struct warm_lease *lease; /* a warm sandbox's, else NULL */
	struct session_link *link;      /* a session step's, else NULL */
	int in_fd, out_fd, err_fd;
	/* A cold run through dockerd's API: out_fd is the attached stream
	 * (stdout and stderr in frames), in_fd a dup of it for stdin, whose
	 * end is a shutdown of the connection's writing half. */
	bool api;
	struct demux demux;
	int wait_fd;             /* API: dockerd answers here when the container exits */
	struct buf wait_reply;   /* API: that answer (launch_exit_code reads it) */
	const char *in_data;     /* what goes down stdin: the program's stdin, or */
	size_t in_len, in_off;   /* for a warm sandbox the job first (warm.c) */
	struct buf docker_msg;   /* docker's own stderr, before the sandbox is up */
	/* The program's stdout that overtook the compile result: the two pipes
	 * keep no common order, but the sink hears the compile first. */
	struct buf held;
	bool compile_told;       /* the sink heard the compile result */
	bool up_told;            /* the sink heard that the sandbox is up */
	enum stop_reason stopped;
	bool agent_ended;        /* a warm agent's end marks came: run.exit_code holds its word */
	int64_t ended_ms;
	int64_t last_emit_ms;    /* when the sink last heard from us */
	time_t spawned_at;       /* wall clock, for `docker events --since` */
};

static void close_fd_at(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static bool session_interrupt(struct exec *x);

/*
 * Kill the container, once: killing the client would leave it running. In
 * the background: a program blocked writing output that nobody reads can
 * hold up its own death (docker's copy of its stdout waits for the client,
 * the client for us), so supervise() keeps reading, and discarding, until
 * the client is gone.
 */
static void stop(struct exec *x, enum stop_reason why)
{
	if (x->stopped)
		return;
	x->stopped = why;
	if (!x->ended_ms)
		x->ended_ms = now_ms();
	if (x->link && why != STOP_GARBLED && why != STOP_ENDED && session_interrupt(x))
		return; /* the session lives on if its agent ends the step */
	if (x->link)
		x->link->lost = true;
	x->killer = docker_kill_start(x->c, x->sb->name);
}

/* Tell the sink about output; a sink that fails has lost its client. */
static void emit(struct exec *x, int fd, const char *p, size_t n)
{
	if (!n || x->stopped || !x->sink || !x->sink->output)
		return;
	if (!x->sink->output(x->sink->ctx, fd, p, n)) {
		x->res->client_gone = true;
		stop(x, STOP_CLIENT_GONE);
	}
}

static void emit_held(struct exec *x)
{
	emit(x, 1, x->held.data, x->held.len);
	buf_free(&x->held);
}

/* Keep what fits under outputBytes (stdout and stderr of one phase together). */
static void keep(struct exec *x, struct sandbox_phase *ph, int fd, const char *p, size_t n, bool tell)
{
	struct buf *dst = fd == 1 ? &ph->out : &ph->err;
	size_t room = (size_t)x->job->limits.output_bytes - (ph->out.len + ph->err.len);
	if (n > room) {
		n = room;
		ph->truncated = true;
	}
	if (n) {
		buf_append(dst, p, n);
		if (tell && x->dec.compiles && !x->compile_told)
			buf_append(&x->held, p, n); /* only the program writes stdout */
		else if (tell)
			emit(x, fd, p, n);
		x->last_emit_ms = now_ms();
	}
	if (ph == &x->res->run && ph->truncated)
		stop(x, STOP_OUTPUT_CAP);
}

/* The first sign of life: the compile step or the program began. */
static void sandbox_up(struct exec *x)
{
	if (x->up_told)
		return;
	x->up_told = true;
	x->last_emit_ms = now_ms();
	if (!x->clock.up_ms) /* a warm sandbox was up before the job came */
		x->clock.up_ms = x->last_emit_ms;
	if (x->sink && x->sink->started)
		x->sink->started(x->sink->ctx);
}

static void on_event(struct exec *x, const struct dec_event *ev)
{
	struct sandbox_result *res = x->res;
	switch (ev->kind) {
	case DEC_MORE:
		break;
	case DEC_DOCKER:
		if (x->docker_msg.len < 4096)
			buf_append(&x->docker_msg, ev->data, ev->len);
		break;
	case DEC_COMPILE_STARTED:
		res->has_compile = true;
		sandbox_up(x);
		x->clock.phase_ms = now_ms();
		break;
	case DEC_COMPILE_ENDED:
		res->compile.exit_code = ev->rc;
		res->compile.duration_ms = now_ms() - x->clock.phase_ms;
		break;
	case DEC_COMPILE_OUTPUT:
		keep(x, &res->compile, ev->fd, ev->data, ev->len, false);
		break;
	case DEC_COMPILE_DONE:
		x->clock.phase_ms = now_ms();
		if (x->sink && x->sink->compiled)
			x->sink->compiled(x->sink->ctx, &res->compile);
		x->compile_told = true;
		emit_held(x);
		break;
	case DEC_PROGRAM_STARTED:
		res->has_run = true;
		sandbox_up(x);
		x->clock.phase_ms = x->last_emit_ms = now_ms();
		break;
	case DEC_OUTPUT:
		keep(x, &res->run, ev->fd, ev->data, ev->len, true);
		break;
	case DEC_PROGRAM_ENDED:
		/* The answer need not wait for the sandbox's teardown: the master
		 * removes it (warm_release). */
		x->agent_ended = true;
		res->run.exit_code = ev->rc;
		if (!x->ended_ms)
			x->ended_ms = now_ms();
		break;
	case DEC_GARBLED:
		log_msg("%s from sandbox %s: stopping it", ev->reason, x->sb->name);
		stop(x, STOP_GARBLED);
		break;
	}
}

static void decode(struct exec *x, int fd, const char *p, size_t n)
{
	struct dec_event ev;
	do {
		size_t used = decoder_feed(&x->dec, fd, p, n, &ev);
		on_event(x, &ev);
		p += used;
		n -= used;
	} while (n > 0 || ev.kind != DEC_MORE);
}

/*
 * A session step is stopped by asking its agent to interrupt it, which
 * keeps the session; if the request is not yet all written, or the agent
 * does not answer before the drain ends, the container is killed instead
 * and the session is over (supervise, collect).
 */
static bool session_interrupt(struct exec *x)
{
	if (x->in_fd < 0 || x->in_off < x->in_len)
		return false;
	char line[AGENT_TAG_LEN + 8];
	int n = snprintf(line, sizeof line, "int %s\n", x->link->tag);
	/* The pipe is empty (the request was read before anything ran): a
	 * short line fits at once. */
	if (write(x->in_fd, line, (size_t)n) != n)
		return false;
	x->link->interrupted = true;
	return true;
}

/* A session's agent speaks in frames (frame.h): the step's output goes to
 * the decoder as if read from its pipes, its end frame ends the step. */
static void unframe(struct exec *x, const char *p, size_t n)
{
	struct session_link *l = x->link;
	struct frame_event ev;
	do {
		size_t used = frame_feed(&l->frames, p, n, &ev);
		p += used;
		n -= used;
		bool ours = !strcmp(ev.tag, l->tag);
		if (ev.kind == FRAME_OUT && ours && !l->ended)
			decode(x, ev.fd, ev.data, ev.len);
		if (ev.kind == FRAME_END && ours && !l->ended) {
			buf_append(&l->end_payload, ev.data, ev.len);
			if (!ev.more) {
				l->ended = true;
				l->end_code = (int)ev.code;
				if (!x->ended_ms)
					x->ended_ms = now_ms();
			}
		}
		if (ev.kind == FRAME_GARBLED) {
			log_msg("session sandbox %s: %s: ending it", x->sb->name, ev.reason);
			stop(x, STOP_GARBLED);
		}
	} while (n > 0 || ev.kind != FRAME_MORE);
}

/* Output held back as a possible end mark is output after all. */
static void flush_held(struct exec *x, int which)
{
	struct dec_event ev;
	decoder_flush(&x->dec, which, &ev);
	on_event(x, &ev);
}

/* The attached stream: each piece of output to the decoder, as if read
 * from its own pipe. */
static void demux_stream(struct exec *x, const char *p, size_t n)
{
	while (n > 0) {
		int fd;
		const char *data;
		size_t len;
		size_t used = demux_feed(&x->demux, p, n, &fd, &data, &len);
		if (len)
			decode(x, fd, data, len);
		p += used;
		n -= used;
	}
}

/* dockerd's answer to the wait: the container has exited. */
static void read_wait(struct exec *x)
{
	char chunk[1024];
	ssize_t n = read(x->wait_fd, chunk, sizeof chunk);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0 && x->wait_reply.len < 65536) {
		buf_append(&x->wait_reply, chunk, (size_t)n);
		return;
	}
	close_fd_at(&x->wait_fd);
}

/* The program's stdin is all written, or no longer read: it sees its end. */
static void end_stdin(struct exec *x)
{
	if (x->api && x->in_fd >= 0)
		shutdown(x->in_fd, SHUT_WR);
	close_fd_at(&x->in_fd);
}

/* Read what is there on one pipe; close it at end of file. */
static void pump(struct exec *x, int *fd, int which)
{
	char chunk[16384];
	ssize_t n = read(*fd, chunk, sizeof chunk);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		close_fd_at(fd);
		flush_held(x, which);
		if (x->api)
			flush_held(x, 2); /* the stream carried both */
		return;
	}
	if (x->link)
		unframe(x, chunk, (size_t)n);
	else if (x->api)
		demux_stream(x, chunk, (size_t)n);
	else
		decode(x, which, chunk, (size_t)n);
}

static void feed_stdin(struct exec *x)
{
	while (x->in_fd >= 0 && x->in_off < x->in_len) {
		ssize_t w = write(x->in_fd, x->in_data + x->in_off, x->in_len - x->in_off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w <= 0) { /* EPIPE: the program stopped reading */
			end_stdin(x);
			return;
		}
		x->in_off += (size_t)w;
	}
	if (!x->link) /* a session's agent reads more requests after this one */
		end_stdin(x); /* all written: the program sees end of file */
}


/* A heartbeat during silence; how a streaming client's departure is seen. */
static void check_idle(struct exec *x, int64_t now)
{
	const struct sandbox_sink *s = x->sink;
	/* Not before the sink heard that the sandbox is up: a warm or session
	 * sandbox is up from the start, and a stream's headers go out only
	 * when its program starts (a heartbeat first would precede them). */
	if (!s || !s->idle || !x->up_told || x->stopped || now - x->last_emit_ms < s->idle_ms)
		return;
	x->last_emit_ms = now;
	if (!s->idle(s->ctx)) {
		x->res->client_gone = true;
		stop(x, STOP_CLIENT_GONE);
	}
}

/* The deadline passed: the phase that was running ran out of time, its
 * own or the sandbox's (then nothing is interrupted: the sandbox ends). */
static void timed_out(struct exec *x, int64_t now)
{
	if (x->dec.program_started)
		x->res->run.timed_out = true;
	else if (x->res->has_compile)
		x->res->compile.timed_out = true;
	stop(x, x->clock.end_by_ms && now >= x->clock.end_by_ms ? STOP_ENDED : STOP_DEADLINE);
}

/* Poll the pipes until both close, enforcing the deadlines. */
static void supervise(struct exec *x)
{
	int64_t drain_until = 0;
	feed_stdin(x);
	while ((x->out_fd >= 0 || x->err_fd >= 0 || x->wait_fd >= 0) && !(x->link && x->link->ended) &&
	       !x->agent_ended) {
		int64_t now = now_ms();
		int64_t deadline = exec_deadline(x->c, &x->job->limits, &x->dec, &x->clock);
		if (!x->stopped && now >= deadline)
			timed_out(x, now);
		if (!x->stopped && sandbox_stop_requested)
			stop(x, STOP_WORKER);
		check_idle(x, now);
		if (x->stopped && !drain_until)
			drain_until = now + DRAIN_AFTER_KILL_MS;
		if (drain_until && now >= drain_until)
			break; /* the client lingers; collect() deals with it */
		int64_t wait = (x->stopped ? drain_until : deadline) - now;
		if (wait > 200)
			wait = 200; /* notice a stop request soon */
		/* The caller's connection, once the sandbox is up (a kill during
		 * start would race docker creating the container). */
		bool watch = x->sink && x->sink->hangup_fd >= 0 && !x->stopped && x->clock.up_ms;
		struct pollfd p[5] = {
			{.fd = x->out_fd, .events = POLLIN},
			{.fd = x->err_fd, .events = POLLIN},
			{.fd = x->in_off < x->in_len ? x->in_fd : -1, .events = POLLOUT},
			{.fd = watch ? x->sink->hangup_fd : -1},
			{.fd = x->wait_fd, .events = POLLIN},
		};
		if (poll(p, 5, (int)(wait > 0 ? wait : 0)) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			pump(x, &x->out_fd, 1);
		if (p[1].revents)
			pump(x, &x->err_fd, 2);
		if (p[2].revents)
			feed_stdin(x);
		if ((p[3].revents & (POLLHUP | POLLERR)) && !x->stopped) {
			x->res->client_gone = true;
			stop(x, STOP_CLIENT_GONE);
		}
		if (p[4].revents)
			read_wait(x);
	}
	if (!x->ended_ms)
		x->ended_ms = now_ms();
	flush_held(x, 1);
	flush_held(x, 2);
	x->compile_told = true; /* a compile that never reported: nothing to wait for */
	emit_held(x);
}

/*
 * Exit code and OOM flag from docker inspect (the client's own status is
 * ambiguous: 125-127 are docker's). They belong to the last phase that
 * ran; a compile step that ended by itself reported its own status.
 */
static bool inspect(struct exec *x, int client_status, int64_t deadline)
{
	int code = -1;
	bool oom = false;
	/*
	 * `docker run` exits with its container's status. A clean exit (0) of
	 * a program that we did not stop is its own, and a docker call (~20 ms)
	 * is saved. Any other status needs docker's word: 125-127 may be
	 * docker's own failures, 137 ours or the OOM killer's, and a sandbox
	 * killed for memory can end with another status too (the JVM, gVisor:
	 * 2), which only the oomKilled flag explains.
	 */
	int own = client_status >= 0 && WIFEXITED(client_status) ? WEXITSTATUS(client_status) : -1;
	if (x->link && x->link->ended) {
		code = x->link->end_code; /* the agent's word: the session lives on */
	} else if (x->agent_ended) {
		code = x->res->run.exit_code; /* the warm agent's word (DEC_PROGRAM_ENDED) */
	} else if ((x->client > 0 || x->lease || x->api) && !x->stopped && own == 0) {
		code = own;
	} else if (!docker_inspect(x->c, x->sb->name, deadline, &code, &oom)) {
		if (!x->link)
			return false;
		code = 137; /* a session's sandbox removed under it (deleted) */
	}
	/* An exit by SIGKILL that we did not send: was it the OOM killer?
	 * dockerd may record that after the exit, or lose it from the state
	 * (docker_oom_seen); ask again, briefly. */
	for (int i = 0; i < 3 && code == 137 && !oom && !x->stopped && now_ms() + 150 < deadline; i++) {
		usleep(150 * 1000);
		docker_inspect(x->c, x->sb->name, deadline, &code, &oom);
		oom = oom || docker_oom_seen(x->c, x->sb->name, x->spawned_at, deadline);
	}
	struct sandbox_result *res = x->res;
	if (x->dec.program_started)
		res->run.exit_code = code;
	else if (res->has_compile && !x->dec.compile_ended)
		res->compile.exit_code = code;
	(x->dec.program_started ? &res->run : &res->compile)->oom_killed = oom;
	return true;
}

/* A short, single-line reason from docker's own messages. */
static const char *docker_reason(struct exec *x)
{
	char *s = x->docker_msg.data ? x->docker_msg.data : "";
	for (char *p = s; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '"')
			*p = ' ';
	return s[0] ? s : "docker gave no reason";
}

static bool start_failed(struct exec *x, struct fault *f)
{
	return docker_start_failed(x->c, x->job->lang->name, docker_reason(x), x->stopped == STOP_DEADLINE, f);
}

/* The run is over: wait for the client and the kill, read the status. */
static bool collect(struct exec *x, struct fault *f)
{
	int64_t deadline = now_ms() + COLLECT_MS;
	/* Nothing more is read: a client still writing gets EPIPE and exits. */
	close_fd_at(&x->in_fd);
	close_fd_at(&x->out_fd);
	close_fd_at(&x->err_fd);
	close_fd_at(&x->wait_fd);
	int client_status = -1;
	if (x->client > 0)
		client_status = subproc_wait(x->client, deadline - now_ms());
	else if (x->lease && !x->stopped && !x->agent_ended)
		client_status = warm_exit_status(x->lease, 200);
	if (x->killer > 0)
		subproc_wait(x->killer, deadline - now_ms());
	int waited = x->api ? launch_exit_code(&x->wait_reply) : -1;
	if (waited >= 0)
		client_status = W_EXITCODE(waited, 0); /* dockerd's wait answered */
	if (x->stopped == STOP_WORKER)
		return fail(f, E_WORKER_STOPPING, "the worker is shutting down; retry");
	if (!x->clock.up_ms)
		return start_failed(x, f);
	if (!inspect(x, client_status, deadline))
		return fail(f, E_SANDBOX_FAILED, "cannot read the sandbox's exit status");
	struct sandbox_result *res = x->res;
	if (x->dec.program_started)
		res->run.duration_ms = x->ended_ms - x->clock.phase_ms;
	else if (res->has_compile && !x->dec.compile_ended)
		res->compile.duration_ms = x->ended_ms - x->clock.phase_ms;
	return true;
}

bool exec_cold(const struct sandbox *sb, const struct sandbox_job *job,
	       const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f)
{
	struct exec x = {.c = sb->c, .sb = sb, .job = job, .sink = sink, .res = res, .client = -1,
			 .in_fd = -1, .out_fd = -1, .err_fd = -1, .wait_fd = -1,
			 .in_data = job->stdin_data, .in_len = job->stdin_len};
	struct strv argv = {0};
	decoder_init(&x.dec, job->lang->compile.n > 0);
	sandbox_docker_argv(x.c, job, sb->name, sandbox_owner_id(), sb->dir, &argv);
	x.clock.spawned_ms = now_ms();
	x.spawned_at = time(NULL);
	bool unreachable;
	/* Create, attach, start: by the start deadline (up_ms is 0 yet). */
	int64_t start_by = exec_deadline(x.c, &job->limits, &x.dec, &x.clock);
	x.out_fd = launch_start(x.c, argv.v, start_by, &x.docker_msg, &unreachable, &x.wait_fd, &x.wait_reply);
	if (x.out_fd >= 0) {
		x.api = true;
		x.in_fd = fcntl(x.out_fd, F_DUPFD_CLOEXEC, 0);
	} else if (unreachable) {
		log_msg("%s: the docker client instead", x.docker_msg.data);
		buf_free(&x.docker_msg);
		int *fds[3] = {&x.in_fd, &x.out_fd, &x.err_fd};
		x.client = subproc_spawn(argv.v, fds);
	}
	strv_free(&argv);
	bool ok;
	if (x.out_fd < 0 && !unreachable) {
		ok = docker_start_failed(x.c, job->lang->name, docker_reason(&x), now_ms() >= start_by, f);
	} else if (x.client < 0 && !x.api) {
		ok = fail(f, E_SANDBOX_UNAVAILABLE, "cannot start %s: %s", x.c->docker, strerror(errno));
	} else if (x.api && x.in_fd < 0) { /* the sandbox goes with sandbox_destroy */
		ok = fail(f, E_SANDBOX_UNAVAILABLE, "cannot hold the sandbox's stdin: %s", strerror(errno));
		close_fd_at(&x.out_fd);
		close_fd_at(&x.wait_fd);
	} else {
		if (job->stdin_len == 0)
			end_stdin(&x);
		supervise(&x);
		ok = collect(&x, f);
	}
	buf_free(&x.docker_msg);
	buf_free(&x.held);
	buf_free(&x.wait_reply);
	return ok;
}

bool exec_warm(const struct sandbox *sb, struct warm_lease *lease, const struct sandbox_job *job,
	       const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f,
	       bool *go_cold)
{
	/* The nonce of the agent's end marks (decoder.h): not the program's to know. */
	char nonce[2 * 16 + 1];
	random_hex(nonce, 16);
	struct exec x = {.c = sb->c, .sb = sb, .job = job, .sink = sink, .res = res, .client = -1, .lease = lease,
			 .wait_fd = -1,
			 .in_fd = lease->fds[0], .out_fd = lease->fds[1], .err_fd = lease->fds[2]};
	lease->fds[0] = lease->fds[1] = lease->fds[2] = -1; /* ours now; collect() closes them */
	struct buf frame = {0};
	warm_job_frame(job, nonce, &frame);
	x.in_data = frame.data;
	x.in_len = frame.len;
	decoder_init(&x.dec, false);
	decoder_expect_end(&x.dec, nonce);
	/* Up already: the agent must start the program within the start
	 * allowance, and the whole life is bounded from now (deadline.c). */
	x.clock.spawned_ms = x.clock.up_ms = x.clock.phase_ms = now_ms();
	x.spawned_at = time(NULL);
	supervise(&x);
	/*
	 * The agent never started the program: it died in the queue (an OOM,
	 * dockerd restarted) or hung. Nothing of the job ran, so it may run
	 * cold, unless the client left or the worker is stopping.
	 */
	*go_cold = !x.dec.program_started &&
		   (x.stopped == STOP_NONE || x.stopped == STOP_DEADLINE || x.stopped == STOP_GARBLED);
	bool ok;
	if (*go_cold) {
		log_msg("warm sandbox %s ended before its program started (%s): running it cold", sb->name,
			docker_reason(&x));
		close_fd_at(&x.in_fd);
		close_fd_at(&x.out_fd);
		close_fd_at(&x.err_fd);
		if (x.killer > 0)
			subproc_wait(x.killer, COLLECT_MS);
		ok = fail(f, E_SANDBOX_FAILED, "the warm sandbox ended before the program started");
	} else {
		ok = collect(&x, f);
	}
	buf_free(&frame);
	buf_free(&x.docker_msg);
	buf_free(&x.held);
	return ok;
}

bool exec_session(const struct sandbox *sb, struct session_link *link, int in_fd, int out_fd,
		  const struct buf *request, const struct sandbox_job *job, bool kernel,
		  const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f)
{
	struct exec x = {.c = sb->c, .sb = sb, .job = job, .sink = sink, .res = res, .client = -1,
			 .wait_fd = -1, .link = link, .in_fd = in_fd, .out_fd = out_fd, .err_fd = -1,
			 .in_data = request->data, .in_len = request->len};
	decoder_init(&x.dec, !kernel && job->lang->compile.n > 0);
	/* Up already, like a warm sandbox: bounded from now (deadline.c),
	 * and by the session's own end. */
	x.clock.spawned_ms = x.clock.up_ms = x.clock.phase_ms = now_ms();
	x.clock.end_by_ms = link->end_by_ms;
	x.spawned_at = time(NULL);
	supervise(&x);
	if (!link->ended && !link->lost) {
		/* The agent left the step unanswered (it died, or ignored the
		 * interrupt until the drain ended): the session is over. */
		log_msg("session sandbox %s did not end its step: removing it", sb->name);
		link->lost = true;
		if (x.killer <= 0)
			x.killer = docker_kill_start(x.c, sb->name);
	}
	bool ok = collect(&x, f);
	buf_free(&x.docker_msg);
	buf_free(&x.held);
	return ok;
}
