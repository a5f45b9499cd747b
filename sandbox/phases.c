/*
 * phases.c: follow a run through its phases from what the entry script
 * writes on stderr (protocol in argv.c), and keep each phase's output
 * under its cap.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <stdio.h>
#include <string.h>

#define RS '\036'

/* Keep what fits under outputBytes (stdout and stderr of one phase together). */
static void keep(struct run *r, struct sandbox_phase *ph, int fd, const char *p, size_t n, bool emit)
{
	struct buf *dst = fd == 1 ? &ph->out : &ph->err;
	size_t room = (size_t)r->job->limits.output_bytes - (ph->out.len + ph->err.len);
	if (n > room) {
		n = room;
		ph->truncated = true;
	}
	if (n) {
		buf_append(dst, p, n);
		if (emit && r->sink && r->sink->output && !r->sink->output(r->sink->ctx, fd, p, n))
			r->res->client_gone = true;
		r->last_emit_ms = now_ms();
	}
	if ((emit && ph->truncated) || r->res->client_gone)
		run_kill(r);
}

static void sandbox_up(struct run *r)
{
	r->last_emit_ms = now_ms();
	if (r->sink && r->sink->started)
		r->sink->started(r->sink->ctx);
}

static void start_program(struct run *r)
{
	if (r->program_started)
		return;
	r->program_started = true;
	r->res->has_run = true;
	if (!r->res->has_compile)
		sandbox_up(r);
	r->phase_ms = r->last_emit_ms = now_ms();
}

static void start_compile(struct run *r)
{
	r->res->has_compile = true;
	r->stage = STAGE_COMPILING;
	r->phase_ms = now_ms();
	sandbox_up(r);
}

/* "rc outlen errlen": the compile step is over; its output follows. */
static void compile_header(struct run *r)
{
	struct sandbox_phase *ph = &r->res->compile;
	int rc;
	if (sscanf(r->header.data ? r->header.data : "", "%d %zu %zu", &rc, &r->body_out,
		   &r->body_err) != 3) {
		log_msg("garbled compile result from the sandbox; killing it");
		run_kill(r);
		return;
	}
	ph->exit_code = rc;
	ph->duration_ms = now_ms() - r->phase_ms;
	r->stage = STAGE_BODY;
}

static void compile_done(struct run *r)
{
	r->stage = STAGE_WAIT_RUN;
	r->phase_ms = now_ms();
	if (r->sink && r->sink->compiled)
		r->sink->compiled(r->sink->ctx, &r->res->compile);
}

void phases_stdout(struct run *r, const char *p, size_t n)
{
	/* Only the program writes to stdout (the compile step's goes to a
	 * file): data here means it started, whatever stderr has shown. */
	start_program(r);
	keep(r, &r->res->run, 1, p, n, true);
}

void phases_stderr(struct run *r, const char *p, size_t n)
{
	while (n > 0) {
		const char *mark;
		size_t take;
		switch (r->stage) {
		case STAGE_STARTING:
		case STAGE_WAIT_RUN:
		case STAGE_COMPILING:
			mark = memchr(p, RS, n);
			take = mark ? (size_t)(mark - p) : n;
			if (r->stage == STAGE_STARTING && r->docker_msg.len < 4096)
				buf_append(&r->docker_msg, p, take);
			if (!mark)
				return;
			p += take + 1;
			n -= take + 1;
			if (r->stage == STAGE_COMPILING) {
				r->stage = STAGE_HEADER;
				buf_free(&r->header);
			} else if (r->stage == STAGE_STARTING && r->job->lang->compile.n > 0) {
				start_compile(r);
			} else {
				r->stage = STAGE_RUNNING;
				start_program(r);
			}
			break;
		case STAGE_HEADER:
			mark = memchr(p, '\n', n);
			take = mark ? (size_t)(mark - p) : n;
			if (r->header.len + take > 64) {
				log_msg("overlong compile result from the sandbox; killing it");
				run_kill(r);
				return;
			}
			buf_append(&r->header, p, take);
			if (!mark)
				return;
			p += take + 1;
			n -= take + 1;
			compile_header(r);
			if (r->stage == STAGE_BODY && r->body_out + r->body_err == 0)
				compile_done(r);
			break;
		case STAGE_BODY: {
			int fd = r->body_out ? 1 : 2;
			size_t *left = fd == 1 ? &r->body_out : &r->body_err;
			take = n < *left ? n : *left;
			keep(r, &r->res->compile, fd, p, take, false);
			*left -= take;
			p += take;
			n -= take;
			if (r->body_out + r->body_err == 0)
				compile_done(r);
			break;
		}
		case STAGE_RUNNING:
			keep(r, &r->res->run, 2, p, n, true);
			return;
		}
	}
}

int64_t phases_deadline(const struct run *r)
{
	switch (r->stage) {
	case STAGE_STARTING:
		/* stdout can show the program started before stderr says so */
		return r->program_started ? r->phase_ms + r->job->limits.wall_time_ms
					  : r->spawned_ms + r->c->sandbox.start_timeout_ms;
	case STAGE_COMPILING:
	case STAGE_HEADER:
	case STAGE_BODY:
		return r->phase_ms + r->job->limits.compile_time_ms;
	case STAGE_WAIT_RUN:
		return r->program_started ? r->phase_ms + r->job->limits.wall_time_ms
					  : r->phase_ms + r->c->sandbox.start_timeout_ms;
	case STAGE_RUNNING:
		break;
	}
	return r->phase_ms + r->job->limits.wall_time_ms;
}

void phases_timed_out(struct run *r)
{
	if (r->program_started)
		r->res->run.timed_out = true;
	else if (r->res->has_compile && r->stage != STAGE_WAIT_RUN)
		r->res->compile.timed_out = true;
}
