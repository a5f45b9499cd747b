/* internal.h: what the files of sandbox/ share, and nobody else. */
#ifndef ISOBOX_SANDBOX_INTERNAL_H
#define ISOBOX_SANDBOX_INTERNAL_H

#include "sandbox.h"
#include "decoder.h"
#include <sys/types.h>
#include <time.h>

/*
 * Time bounds, each in one place; deadline.c sums them into the longest a
 * run can take (sandbox_bound_ms), which the pool's hang backstop uses.
 */
/* From the sandbox's first sign of life, the entry script's own steps
 * (between the compile step and the program) may take this long. */
#define START_ALLOWANCE_MS 2000
/* After a kill, the pipes are read (and discarded) this long at most. */
#define DRAIN_AFTER_KILL_MS 5000
/* After the run: the docker client's exit, the kill, inspect, OOM events. */
#define COLLECT_MS 15000
/* Removing the container (docker rm --force). */
#define REMOVE_MS 10000
/* The reaper: listing an instance's containers, and removing them. */
#define REAP_LIST_MS 15000
#define REAP_REMOVE_MS 30000

/* When the current exec began, came up, and entered its current phase
 * (monotonic ms; up_ms is 0 until the sandbox shows a sign of life). */
struct exec_clock {
	int64_t spawned_ms, up_ms, phase_ms;
};

/* The deadline of an exec now (monotonic ms). Pure. */
int64_t exec_deadline(const struct conf *c, const struct limits *l, const struct decoder *d,
		      const struct exec_clock *t);

/* exec.c: run the job in a sandbox that does not exist yet (docker run). */
bool exec_cold(const struct sandbox *sb, const struct sandbox_job *job,
	       const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f);

/* docker.c: bounded docker commands on one container. */
pid_t docker_kill_start(const struct conf *c, const char *name); /* in the background */
bool docker_inspect(const struct conf *c, const char *name, int64_t deadline, int *code, bool *oom);
bool docker_oom_seen(const struct conf *c, const char *name, time_t since, int64_t deadline);
bool docker_remove(const struct conf *c, const char *name, int64_t deadline);

/*
 * subproc.c. Start argv[0] (an absolute path) with a clean environment,
 * every other fd closed, and SIGKILL if the worker dies. fds[i] receives
 * our end of a pipe for the child's fd i, or the child's fd i is /dev/null
 * when fds[i] is NULL. Returns the pid, or -1 with errno set.
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
 * workdir.c. Make <work_dir>/<instance>.<owner>.XXXXXX holding the job's
 * files, written with O_NOFOLLOW|O_EXCL into a directory nothing else
 * writes. *dir_out gets its full path.
 */
bool workdir_create(const struct conf *c, const struct sandbox_job *job, char **dir_out,
		    struct fault *f);
/* Remove a tree the worker made (no symlink is ever followed). */
void workdir_remove(const char *path);

/* owner.c: is the process named by "PID.STARTTIME" still the one running? */
bool owner_alive(const char *owner);

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

#endif
