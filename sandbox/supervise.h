/*
 * supervise.h: what the supervisor (supervise.c) keeps of one program's
 * run, set up by the file of the way it starts: exec_cold.c (a `docker
 * run`, through dockerd's API or the docker client), exec_warm.c (a warm
 * sandbox's agent) or exec_session.c (a session's agent, one step).
 */
#ifndef ISOBOX_SANDBOX_SUPERVISE_H
#define ISOBOX_SANDBOX_SUPERVISE_H

#include "cgroup.h"
#include "decoder.h"
#include "docker.h"
#include "deadline.h"
#include "demux.h"
#include "frame.h"
#include "sandbox.h"

#include <time.h>

/*
 * A session step's link to its agent (exec_session.h): how the step
 * ended. lost: the session is over (its sandbox died, broke the protocol,
 * ignored the interrupt or reached its end: it is killed).
 */
struct session_link {
	const char *tag;
	int64_t end_by_ms;      /* the session's end (monotonic ms): the step is cut there */
	const char *container_id; /* its sandbox's, whose cgroup counts the step's CPU; may be "" */
	bool one_run;           /* the sandbox serves this run alone: its memory mark is the run's */
	struct frame_decoder frames;
	bool ended;             /* the end frame came */
	int end_code;
	struct buf end_payload; /* a cell's JSON (the caller frees it) */
	struct buf display;     /* a display's JSON as it comes in pieces (supervise frees it) */
	bool interrupted;       /* the agent was asked to interrupt the step */
	bool lost;              /* the session is over */
};

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
	pid_t client;            /* -1 in a warm sandbox (the master's child) */
	struct docker_kill killer; /* DOCKER_KILL_NONE until stop() */
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
	bool agent_ended;        /* the reporter's end marks came: run.exit_code and signal hold its word */
	int64_t ended_ms;
	int64_t last_emit_ms;    /* when the sink last heard from us */
	/* The sandbox's cgroup (cgroup.h: a container's id, a warm sandbox's
	 * own; "" where none can be read) and its counters: at the start of
	 * the phase that runs, and the latest read (kept when the cgroup has
	 * gone with its sandbox). */
	char cgroup[80];
	int64_t peak_base;       /* a warm sandbox's memory as its run began: not the run's */
	struct cgroup_usage usage_at_phase, usage_last;
	int64_t usage_read_ms;
	time_t spawned_at;       /* wall clock: since when its events are asked (docker_oom_seen) */
};

/* Supervise x until its program ends or is stopped. */
void supervise(struct exec *x);
/* The program's stdin is all written, or no longer read: it sees its end. */
void supervise_end_stdin(struct exec *x);
/* The run is over: wait for the client and the kill, read the status. */
bool supervise_collect(struct exec *x, struct fault *f);
/* A short, single-line reason from docker's own messages. */
const char *supervise_docker_reason(struct exec *x);

#endif
