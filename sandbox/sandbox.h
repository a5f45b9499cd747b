/*
 * sandbox.h: run one execution safely, and clean up after runs that were
 * cut short. This layer knows docker and gVisor; it knows nothing of HTTP.
 *
 * One execution is one `docker run --runtime=<runsc runtime>` with every
 * hardening flag on (argv.c), the code delivered through a read-only mount
 * of a directory that only the worker writes (workdir.c), output read
 * through pipes with a cap, and wall time enforced here by killing the
 * container (run.c). Containers and work dirs carry the pool instance and
 * the owning worker's identity, so that the reaper (reap.c) can remove what
 * a killed worker left behind.
 */
#ifndef ISOBOX_SANDBOX_H
#define ISOBOX_SANDBOX_H

#include "../conf/conf.h"
#include "../registry/registry.h"

struct sandbox_file {
	const char *name; /* validated relative path, see sandbox_valid_path */
	const char *data;
	size_t len;
};

/*
 * What to run. Ownership: a job borrows everything (language, file names
 * and contents, stdin, args) from its caller, which keeps them alive for the
 * whole run. files[0] is the entry point.
 */
struct sandbox_job {
	const struct language *lang;
	const struct sandbox_file *files;
	size_t n_files;
	const char *stdin_data;
	size_t stdin_len;
	char *const *args; /* n_args strings */
	size_t n_args;
	struct limits limits; /* already merged and clamped */
	bool network;         /* firewalled egress (conf network.enabled checked) */
};

/* What one phase (compile or run) produced. Owns its buffers. */
struct sandbox_phase {
	struct buf out, err;
	int exit_code;
	bool timed_out, oom_killed, truncated;
	int64_t duration_ms;
};

/* What a job produced: a compile phase (compiled languages) and a run
 * (absent when the compile failed). */
struct sandbox_result {
	struct sandbox_phase compile, run;
	bool has_compile, has_run;
	bool client_gone; /* the client left; the sandbox was killed */
};

/*
 * Where a streaming caller hears about a run as it happens (may be NULL).
 * Any callback may be NULL. output and idle return false when the client
 * has gone: the run is then killed at once instead of at its wall time.
 */
struct sandbox_sink {
	void (*started)(void *ctx);  /* the sandbox is up (compile or run began) */
	void (*compiled)(void *ctx, const struct sandbox_phase *compile);
	bool (*output)(void *ctx, int fd, const char *data, size_t len);
	bool (*idle)(void *ctx);     /* no output for idle_ms: a heartbeat */
	int64_t idle_ms;
	void *ctx;
	/*
	 * The connection the result goes back on, or -1 (set it: 0 is an fd).
	 * A hangup there (POLLHUP/POLLERR: the web server gave up or its client
	 * left) means nobody waits for the result: a run not yet started is
	 * refused (499 client_gone), a running one is killed at once.
	 */
	int hangup_fd;
};

/* Set from a signal handler: the worker must stop; runs are killed at once. */
extern volatile int sandbox_stop_requested;

/*
 * Run the job. Returns false (with a fault, 5xx) only when the sandbox could
 * not run the program at all; whatever the program did, it returns true.
 */
bool sandbox_run(const struct conf *c, const struct sandbox_job *job,
		 const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f);
void sandbox_result_free(struct sandbox_result *res);

/* Is this a file name a request may use? (relative, no "..", no NUL...) */
bool sandbox_valid_path(const char *name, size_t max_len, struct fault *f);

/*
 * The docker argv for one run: every hardening flag, the image by ID, then
 * the program's argv. Pure: no I/O (unit-tested).
 */
void sandbox_docker_argv(const struct conf *c, const struct sandbox_job *job,
			 const char *container, const char *owner, const char *src_dir,
			 struct strv *argv);

/*
 * Egress (egress.c). The firewall rules (iptables-restore text) and the
 * sandboxes' resolv.conf made from c->network and the host's interfaces;
 * resolv may be NULL. Both bufs are the caller's.
 */
bool sandbox_egress_files(const struct conf *c, struct buf *rules, struct buf *resolv,
			  char *err, size_t errlen);
/*
 * Is the installed firewall exactly the one c asks for, installed since
 * the last boot? Then true with mode ("host" or "sandbox": gVisor's network
 * stack in use); else 503 network_unavailable. Checked before every egress run.
 */
bool sandbox_egress_ready(const struct conf *c, char *mode, size_t mode_len, struct fault *f);
/* Log what network.allow takes off the deny list (once, at start). */
void sandbox_egress_log(const struct conf *c);

/* "PID.STARTTIME": who owns a container or work dir; unique across pid reuse. */
const char *sandbox_owner_id(void);

/* Remove containers and work dirs of this instance whose owner is gone. */
void sandbox_reap(const struct conf *c);

#endif
