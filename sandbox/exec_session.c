/*
 * exec_session.c: one step in a session's sandbox (session.c): the request goes to its
 * agent, and the step is supervised (supervise.c) until the agent's end
 * frame.
 */
#define _GNU_SOURCE
#include "exec_session.h"
#include "docker.h"

#include <stdio.h>
#include <string.h>

bool exec_session(const struct sandbox *sb, struct session_link *link, int in_fd, int out_fd,
		  const struct buf *request, const struct sandbox_job *job, bool kernel,
		  const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f)
{
	struct exec x = {.c = sb->c, .sb = sb, .job = job, .sink = sink, .res = res, .client = -1,
			 .killer = DOCKER_KILL_NONE, .wait_fd = -1, .link = link, .in_fd = in_fd, .out_fd = out_fd, .err_fd = -1,
			 .in_data = request->data, .in_len = request->len};
	if (link->container_id && strspn(link->container_id, "0123456789abcdef") == 64)
		snprintf(x.cgroup, sizeof x.cgroup, "%s", link->container_id);
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
		if (!docker_kill_started(&x.killer))
			x.killer = docker_kill_start(x.c, sb->name);
	}
	bool ok = supervise_collect(&x, f);
	buf_free(&x.docker_msg);
	buf_free(&x.held);
	buf_free(&link->display); /* a display cut off mid-way */
	return ok;
}
