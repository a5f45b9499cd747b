/* internal.h: what the files of sandbox/ share, and nobody else. */
#ifndef ISOBOX_SANDBOX_INTERNAL_H
#define ISOBOX_SANDBOX_INTERNAL_H

#include "sandbox.h"
#include <sys/types.h>
#include <time.h>

/*
 * Start argv[0] (an absolute path) with a clean environment, every other fd
 * closed, and SIGKILL if the worker dies. fds[i] receives our end of a pipe
 * for the child's fd i, or the child's fd i is /dev/null when fds[i] is NULL.
 * Returns the pid, or -1 with errno set.
 */
pid_t subproc_spawn(char *const argv[], int *fds[3]);

/*
 * Run argv to completion (killed after timeout_ms), capturing stdout (and
 * stderr, if err is not NULL) up to 64 KiB each. Returns the exit status
 * (0-255), or -1 if it could not run or was killed.
 */
int subproc_capture(char *const argv[], int64_t timeout_ms, struct buf *out, struct buf *err);

/* Wait for pid, at most timeout_ms, then SIGKILL it. Returns the wait status. */
int subproc_wait(pid_t pid, int64_t timeout_ms);

/*
 * Make <work_dir>/<instance>.<owner>.XXXXXX holding the job's files, written
 * with O_NOFOLLOW|O_EXCL into a directory nothing else writes. *dir_out gets
 * its full path.
 */
bool workdir_create(const struct conf *c, const struct sandbox_job *job, char **dir_out,
		    struct fault *f);

/* Remove a tree the worker made (no symlink is ever followed). */
void workdir_remove(const char *path);

/*
 * Egress firewall parts (egress.c), separate so that unit tests can give
 * them any host. Host networks: each IPv4 address (/32) and its subnet,
 * minus what the deny list or another entry already covers, sorted.
 * Resolvers: conf's, else the host's non-loopback ones. *out is the
 * caller's to free.
 */
bool egress_host_nets(const struct conf_network *n, struct cidr **out, size_t *count,
		      char *err, size_t errlen);
bool egress_resolvers(const struct conf_network *n, struct cidr **out, size_t *count,
		      char *err, size_t errlen);
void egress_rules(const struct conf_network *n, const struct cidr *host, size_t n_host,
		  const struct cidr *dns, size_t n_dns, struct buf *out);
void egress_resolv_conf(const struct cidr *dns, size_t n_dns, struct buf *out);

/* Where the run is, as told by the entry script on stderr (argv.c). */
enum stage {
	STAGE_STARTING,  /* stderr is docker's own, until the first RS */
	STAGE_COMPILING, /* the compile step runs; its output goes to files */
	STAGE_HEADER,    /* reading "rc outlen errlen\n" */
	STAGE_BODY,      /* reading the compile step's stdout, then stderr */
	STAGE_WAIT_RUN,  /* compiled; waiting for the RS that starts the program */
	STAGE_RUNNING,   /* stderr is the program's */
};

/*
 * One execution in progress. Owns everything it holds (container name,
 * work dir, docker client, pipes); run_teardown (run.c) releases it all,
 * whatever happened, so nothing outlives the request.
 */
struct run {
	const struct conf *c;
	const struct sandbox_job *job;
	const struct sandbox_sink *sink;
	struct sandbox_result *res;
	char *container;
	char *dir;
	pid_t client;
	pid_t killer;             /* `docker kill` in flight (0: none) */
	int in_fd, out_fd, err_fd;
	size_t stdin_off;
	struct buf docker_msg;    /* docker's own stderr, before the first RS */
	enum stage stage;
	bool program_started;     /* stdout may show it before stderr's RS does */
	struct buf header;        /* the compile result line being read */
	size_t body_out, body_err; /* compile output bytes still to read */
	bool killed, stopping;
	int64_t spawned_ms, phase_ms, ended_ms;
	time_t spawned_at;        /* wall clock, for `docker events --since` */
	int64_t last_emit_ms;     /* when the sink last heard from us */
};

/* phases.c: the stderr protocol, phase changes and capped output. */
void phases_stdout(struct run *r, const char *p, size_t n);
void phases_stderr(struct run *r, const char *p, size_t n);
/* The deadline of the current stage (monotonic ms). */
int64_t phases_deadline(const struct run *r);
/* Mark the current phase timed out (the deadline passed). */
void phases_timed_out(struct run *r);
/* Kill the container (once); the client alone would leave it running.
 * Does not wait: the caller keeps draining the pipes meanwhile. */
void run_kill(struct run *r);

#endif
