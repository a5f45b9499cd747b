/*
 * supervise.c: one program run in a sandbox, supervised, whichever way it
 * started (exec_cold.c, exec_warm.c, exec_session.c): feed stdin, read its
 * output through the decoder (decoder.c) and act on what it reports: keep
 * output under its cap, tell the sink, and stop the container at the
 * deadline (deadline.c), at the output cap, when the caller leaves or the
 * worker stops. Then collect the exit status and the OOM flag. Everything
 * it holds is released before the mode returns; the container itself is
 * the sandbox's, removed by sandbox_destroy.
 */
#define _GNU_SOURCE
#include "supervise.h"
#include "deadline.h"
#include "frame.h"
#include "decoder.h"
#include "docker.h"
#include "demux.h"
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

static bool session_interrupt(struct exec *x);

/* How often the cgroup's counters are read while a phase runs: the
 * figures of a phase cut short (killed, its sandbox gone) are the last. */
#define USAGE_EVERY_MS 500

/* The cgroup's counters now, each kept as it was when it cannot be read. */
static void sample(struct exec *x)
{
	struct cgroup_usage u;
	x->usage_read_ms = now_ms();
	if (!x->cgroup[0] || !cgroup_usage_read(x->c, x->cgroup, &u))
		return;
	if (u.cpu_ns >= 0)
		x->usage_last.cpu_ns = u.cpu_ns;
	if (u.peak_bytes >= 0)
		x->usage_last.peak_bytes = u.peak_bytes;
}

static void phase_begins(struct exec *x, struct sandbox_phase *ph)
{
	ph->cpu_ns = ph->peak_bytes = -1;
	sample(x);
	x->usage_at_phase = x->usage_last;
}

/* The phase's CPU time since it began, and the high-water mark so far,
 * less a warm sandbox's start (a session's mark is its whole life's, not
 * the step's: none). Either way the mark counts against memoryBytes. */
static void phase_measured(struct exec *x, struct sandbox_phase *ph)
{
	sample(x);
	const struct cgroup_usage *from = &x->usage_at_phase, *to = &x->usage_last;
	ph->cpu_ns = from->cpu_ns >= 0 && to->cpu_ns >= from->cpu_ns ? to->cpu_ns - from->cpu_ns : -1;
	bool whole_life = x->link && !x->link->one_run;
	ph->peak_bytes = whole_life || to->peak_bytes < x->peak_base ? -1 : to->peak_bytes - x->peak_base;
}

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
	sample(x); /* the counters before the kill, while the cgroup is there */
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
		phase_begins(x, &res->compile);
		break;
	case DEC_COMPILE_ENDED:
		res->compile.exit_code = agent_end_exit_code(ev->rc);
		res->compile.signal = agent_end_signal(ev->rc);
		res->compile.duration_ms = now_ms() - x->clock.phase_ms;
		phase_measured(x, &res->compile);
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
		phase_begins(x, &res->run);
		break;
	case DEC_OUTPUT:
		keep(x, &res->run, ev->fd, ev->data, ev->len, true);
		break;
	case DEC_PROGRAM_ENDED:
		/* How the program ended, from its wait status. A warm run's
		 * answer need not wait for the sandbox's teardown: the master
		 * removes it (warm_release). A cold run's does (supervise). */
		x->agent_ended = true;
		res->run.exit_code = agent_end_exit_code(ev->rc);
		res->run.signal = agent_end_signal(ev->rc);
		phase_measured(x, &res->run);
		if (!x->ended_ms && x->lease)
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
		if (ev.kind == FRAME_DISPLAY && ours && !l->ended) {
			buf_append(&l->display, ev.data, ev.len);
			if (!ev.more) {
				if (x->sink && x->sink->display && !x->stopped)
					x->sink->display(x->sink->ctx, l->display.data ? l->display.data : "",
							 l->display.len);
				buf_free(&l->display);
			}
		}
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
	close_fd(&x->wait_fd);
}

/* The program's stdin is all written, or no longer read: it sees its end. */
void supervise_end_stdin(struct exec *x)
{
	if (x->api && x->in_fd >= 0)
		shutdown(x->in_fd, SHUT_WR);
	close_fd(&x->in_fd);
}

/* Read what is there on one pipe; close it at end of file. */
static void pump(struct exec *x, int *fd, int which)
{
	char chunk[16384];
	ssize_t n = read(*fd, chunk, sizeof chunk);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		close_fd(fd);
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
			supervise_end_stdin(x);
			return;
		}
		x->in_off += (size_t)w;
	}
	if (!x->link) /* a session's agent reads more requests after this one */
		supervise_end_stdin(x); /* all written: the program sees end of file */
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
void supervise(struct exec *x)
{
	int64_t drain_until = 0;
	feed_stdin(x);
	/* A warm run is answered on its end marks (the master removes the
	 * sandbox); a cold one when its sandbox has ended, so that what it
	 * wrote to a volume is all there, and nothing a program forges ends
	 * it early. */
	while ((x->out_fd >= 0 || x->err_fd >= 0 || x->wait_fd >= 0) && !(x->link && x->link->ended) &&
	       !(x->agent_ended && x->lease)) {
		int64_t now = now_ms();
		int64_t deadline = exec_deadline(x->c, &x->job->limits, &x->dec, &x->clock);
		if (!x->stopped && now >= deadline)
			timed_out(x, now);
		if (!x->stopped && sandbox_stop_requested)
			stop(x, STOP_WORKER);
		check_idle(x, now);
		if (!x->stopped && x->up_told && now - x->usage_read_ms >= USAGE_EVERY_MS)
			sample(x);
		if (x->stopped && !drain_until)
			drain_until = now + DRAIN_AFTER_KILL_MS;
		if (drain_until && now >= drain_until)
			break; /* the client lingers; supervise_collect() deals with it */
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
 * Exit code, signal and OOM flag. They belong to the last phase that ran;
 * a compile step that ended by itself reported its own. How the program
 * ended is read from its wait status where something inside saw it (the
 * reporter's end marks, a session agent's end frame); docker's exit code
 * (the client's own status is ambiguous: 125-127 are docker's) only says
 * 128 + N for a signal, which is exact only when the sandbox was ended from
 * outside (our stop, the OOM killer, its removal), where no program chose
 * the number.
 */
static bool inspect(struct exec *x, int client_status, int64_t deadline)
{
	int code = -1, sig = -1; /* -1: no wait status was seen */
	bool oom = false;
	/*
	 * `docker run` exits with its container's status. A clean exit (0) of
	 * a program that we did not stop is its own, and a docker call (~20 ms)
	 * is saved. Any other status needs docker's word: 125-127 may be
	 * docker's own failures, 137 ours or the OOM killer's, and a sandbox
	 * killed for memory can end with another status too (gVisor: 2),
	 * which the oomKilled flag explains (and 137 is reported, below).
	 */
	int own = client_status >= 0 && WIFEXITED(client_status) ? WEXITSTATUS(client_status) : -1;
	if (x->link && x->link->ended) { /* the agent's word: the session lives on */
		code = agent_end_exit_code(x->link->end_code);
		sig = agent_end_signal(x->link->end_code);
	} else if (x->agent_ended && !x->stopped) { /* the reporter's end marks (DEC_PROGRAM_ENDED) */
		code = x->res->run.exit_code;
		sig = x->res->run.signal;
	} else if ((x->client > 0 || x->lease || x->api) && !x->stopped && own == 0) {
		code = own;
		sig = 0;
	} else if (!docker_inspect(x->c, x->sb->name, deadline, &code, &oom)) {
		if (!x->link)
			return false;
		code = 137; /* a session's sandbox removed under it (deleted) */
	}
	/* An exit by SIGKILL that we did not send: was it the OOM killer?
	 * dockerd may record that after the exit, or lose it from the state
	 * (docker_oom_seen); ask again, briefly. */
	for (int i = 0; i < 3 && code == 137 && !oom && !x->stopped && now_ms() + 150 < deadline; i++) {
		int again = code;
		usleep(150 * 1000);
		if (docker_inspect(x->c, x->sb->name, deadline, &again, &oom) && sig < 0)
			code = again;
		oom = oom || docker_oom_seen(x->c, x->sb->name, x->spawned_at, deadline);
	}
	/*
	 * Ended for memory, with no word from inside (the reporter or the
	 * agent went with it): the status is the runtime's, not a program's.
	 * gVisor's sentry ends with 2 (a Go panic) when the OOM killer took
	 * one of its processes rather than itself, seen in 1 of 5 JVM bombs
	 * and under a slice's cap. It was killed for memory: 137, SIGKILL,
	 * whichever of its processes the kernel chose.
	 */
	if (oom && sig < 0 && code != 0 && code != 137)
		code = 137;
	if (sig < 0)
		sig = code > 128 && code <= 128 + 64 ? code - 128 : 0;
	struct sandbox_result *res = x->res;
	struct sandbox_phase *last = x->dec.program_started ? &res->run : &res->compile;
	if (x->dec.program_started || (res->has_compile && !x->dec.compile_ended)) {
		last->exit_code = code;
		last->signal = sig;
	}
	last->oom_killed = oom;
	return true;
}

/* A short, single-line reason from docker's own messages. */
const char *supervise_docker_reason(struct exec *x)
{
	char *s = x->docker_msg.data ? x->docker_msg.data : "";
	for (char *p = s; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '"')
			*p = ' ';
	return s[0] ? s : "docker gave no reason";
}

static bool start_failed(struct exec *x, struct fault *f)
{
	return docker_start_failed(x->c, x->job->lang->name, supervise_docker_reason(x), x->stopped == STOP_DEADLINE, f);
}

/* The run is over: wait for the client and the kill, read the status. */
bool supervise_collect(struct exec *x, struct fault *f)
{
	int64_t deadline = now_ms() + COLLECT_MS;
	/* Nothing more is read: a client still writing gets EPIPE and exits. */
	close_fd(&x->in_fd);
	close_fd(&x->out_fd);
	close_fd(&x->err_fd);
	close_fd(&x->wait_fd);
	int client_status = -1;
	if (x->client > 0)
		client_status = subproc_wait(x->client, deadline - now_ms());
	else if (x->lease && !x->stopped && !x->agent_ended)
		client_status = warm_exit_status(x->lease, 200);
	docker_kill_wait(&x->killer, deadline);
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
	/* The phase cut short: its figures as last read (the cgroup may be gone). */
	if (x->dec.program_started) {
		res->run.duration_ms = x->ended_ms - x->clock.phase_ms;
		if (!x->agent_ended || x->stopped)
			phase_measured(x, &res->run);
	} else if (res->has_compile && !x->dec.compile_ended) {
		res->compile.duration_ms = x->ended_ms - x->clock.phase_ms;
		phase_measured(x, &res->compile);
	}
	return true;
}
