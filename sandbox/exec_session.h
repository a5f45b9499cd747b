/* exec_session.h: one step in a session's sandbox (exec_session.c). */
#ifndef ISOBOX_SANDBOX_EXEC_SESSION_H
#define ISOBOX_SANDBOX_EXEC_SESSION_H

#include "supervise.h"

/*
 * One step in a session sandbox (session.c): the request, already framed
 * (frame.h), goes to the agent on in_fd; its answers come on out_fd. Both
 * fds become exec's and are closed. The step ends with the agent's end
 * frame; a stop (deadline, output cap, the client gone) asks the agent to
 * interrupt the step; the session's end (link->end_by_ms) kills the sandbox.
 * link says how it ended: lost when the session's sandbox died, broke the
 * protocol, ignored the interrupt or reached its end (it is killed).
 */
bool exec_session(const struct sandbox *sb, struct session_link *link, int in_fd, int out_fd,
		  const struct buf *request, const struct sandbox_job *job, bool kernel,
		  const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f);

#endif
