/* agent_io.h: waiting for an agent and one request to it (agent_io.c). */
#ifndef ISOBOX_SANDBOX_AGENT_IO_H
#define ISOBOX_SANDBOX_AGENT_IO_H

#include "frame.h"
#include "sandbox.h"
#include "spec.h"

/* The agent says "ready" on out_fd before the deadline; docker's own
 * messages (on err_fd) go to docker_msg. */
bool agent_wait_ready(int out_fd, int err_fd, int64_t deadline, struct buf *docker_msg);
/* Why it did not start, as a fault (image missing, docker down, ...). */
bool agent_start_failed(const struct conf *c, const char *lang, struct buf *msg, bool timed_out,
			struct fault *f);
/*
 * The client that will hold the agent's sandbox of spec, as argv
 * (launch_client_argv: the container is made here, through the API, and
 * id is its id; "" where the client makes it), or false with the fault of
 * a create dockerd refused.
 */
bool agent_client(const struct conf *c, const char *lang, const struct container_spec *spec, struct strv *argv,
		  char id[65], struct fault *f);
/*
 * Start that client (argv) for the agent in a sandbox of its own, its
 * stdin, stdout and stderr piped to fds (in, out, err), and wait for its
 * "ready" by the start timeout. *client: the client (-1 if it could
 * not be started); false with f when the agent is not ready. Closing the
 * fds and reaping the client are the caller's, either way.
 */
bool agent_start(const struct conf *c, const char *lang, char *const argv[], pid_t *client, int fds[3],
		 struct fault *f);

/* One request to the agent and its answer. */
struct agent_call {
	struct buf request;
	char tag[AGENT_TAG_LEN + 1];
	size_t data_max;  /* of a get's data */
	struct buf data;  /* a get's bytes */
	struct buf reply; /* the end frame's payload */
	size_t reply_max; /* kept of it (0: 64 KiB); the rest is cut */
	int code;         /* its code: 0 or an errno value */
};

/*
 * Write call->request while reading what the agent says (a step's old
 * output may still be queued ahead of our answer: it is dropped), until
 * the end frame of call->tag. False with *why when the agent cannot
 * answer: it died, broke the protocol, or the deadline passed.
 */
bool agent_converse(int in_fd, int out_fd, struct agent_call *call, int64_t deadline, const char **why);
void agent_call_free(struct agent_call *call);

#endif
