/*
 * exec_warm.c: a run in a warm sandbox the worker took (warm.c): the job goes to
 * its agent, framed, and the run is supervised (supervise.c).
 */
#define _GNU_SOURCE
#include "exec_warm.h"
#include "cgroup.h"
#include "subproc.h"
#include "supervise.h"
#include "warm.h"

#include <stdio.h>

bool exec_warm(const struct sandbox *sb, struct warm_lease *lease, const struct sandbox_job *job,
	       const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f,
	       bool *go_cold)
{
	/* The nonce of the agent's end marks (decoder.h): not the program's to know. */
	char nonce[2 * 16 + 1];
	random_hex(nonce, 16);
	struct exec x = {.c = sb->c, .sb = sb, .job = job, .sink = sink, .res = res, .client = -1, .lease = lease,
			 .killer = DOCKER_KILL_NONE, .wait_fd = -1,
			 .in_fd = lease->fds[0], .out_fd = lease->fds[1], .err_fd = lease->fds[2]};
	lease->fds[0] = lease->fds[1] = lease->fds[2] = -1; /* ours now; supervise_collect() closes them */
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
	/* Its own cgroup (cgroup.h) counts the run. The agent, booted and
	 * waiting, holds memory that is not the run's (the cgroup's limit is
	 * that plus memoryBytes, warm.c): the high-water mark starts again
	 * from there, and the run's is what it adds. */
	struct cgroup_usage base;
	if (cgroup_peak_reset(x.c, sb->name) &&
	    cgroup_usage_read(x.c, sb->name, &base) && base.peak_bytes >= 0) {
		snprintf(x.cgroup, sizeof x.cgroup, "%s", sb->name);
		x.peak_base = base.peak_bytes;
	}
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
			supervise_docker_reason(&x));
		close_fd(&x.in_fd);
		close_fd(&x.out_fd);
		close_fd(&x.err_fd);
		docker_kill_wait(&x.killer, now_ms() + COLLECT_MS);
		ok = fail(f, E_SANDBOX_FAILED, "the warm sandbox ended before the program started");
	} else {
		ok = supervise_collect(&x, f);
	}
	buf_free(&frame);
	buf_free(&x.docker_msg);
	buf_free(&x.held);
	return ok;
}
