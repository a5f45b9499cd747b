/* exec.h: one program run in a sandbox, supervised (exec.c). */
#ifndef ISOBOX_SANDBOX_EXEC_H
#define ISOBOX_SANDBOX_EXEC_H

#include "frame.h"
#include "sandbox.h"

/* Run the job in a sandbox that does not exist yet: one `docker run`. */
bool exec_cold(const struct sandbox *sb, const struct sandbox_job *job,
	       const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f);

/*
 * Run the job in a warm sandbox the worker took (warm.c). When the agent
 * never started the program, false with *go_cold: nothing ran, and the
 * caller may run the job cold.
 */
struct warm_lease;
bool exec_warm(const struct sandbox *sb, struct warm_lease *lease, const struct sandbox_job *job,
	       const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f,
	       bool *go_cold);

/*
 * One step in a session sandbox (session.c): the request, already framed
 * (frame.h), goes to the agent on in_fd; its answers come on out_fd. Both
 * fds become exec's and are closed. The step ends with the agent's end
 * frame; a stop (deadline, output cap, the client gone) asks the agent to
 * interrupt the step; the session's end (link->end_by_ms) kills the sandbox.
 * link says how it ended: lost when the session's sandbox died, broke the
 * protocol, ignored the interrupt or reached its end (it is killed).
 */
struct session_link {
	const char *tag;
	int64_t end_by_ms;      /* the session's end (monotonic ms): the step is cut there */
	struct frame_decoder frames;
	bool ended;             /* the end frame came */
	int end_code;
	struct buf end_payload; /* a cell's JSON (the caller frees it) */
	bool interrupted;       /* the agent was asked to interrupt the step */
	bool lost;              /* the session is over */
};
bool exec_session(const struct sandbox *sb, struct session_link *link, int in_fd, int out_fd,
		  const struct buf *request, const struct sandbox_job *job, bool kernel,
		  const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f);

#endif
