/*
 * sandbox.h: run programs safely in sandboxes, and clean up after runs that
 * were cut short. This layer knows docker and gVisor; it knows nothing of
 * HTTP.
 *
 * A sandbox is one hardened container (`docker run --runtime=<runsc
 * runtime>` with every flag on: spec.c) and the code directory that only
 * the worker writes, mounted read-only (workdir.c). Its life:
 *
 *	sandbox_create   can it run, the code dir, a name
 *	sandbox_exec     one program in it: stdin, argv, output to a sink,
 *	                 the deadlines, the result flags (supervise.c)
 *	sandbox_destroy  kill, remove the container and the code dir, always
 *
 * (lifecycle.h; the layers above call sandbox_run and the session calls.)
 *
 * A cold run (sandbox_run) is all three in one `docker run`. Containers and
 * code dirs carry the pool instance and their owner's identity in labels,
 * so that the reaper (reap.c) can remove what a killed worker left behind;
 * nothing assumes that the process that made a sandbox is the one that
 * uses or removes it.
 */
#ifndef ISOBOX_SANDBOX_H
#define ISOBOX_SANDBOX_H

#include "../conf/conf.h"
#include "../registry/registry.h"
#include "agent_protocol.h" /* AGENT_MAX_COMMANDS, AGENT_COMMAND_LOG */

#include <signal.h> /* sig_atomic_t */
#include <sys/types.h>

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
	char *const *outputs; /* n_outputs globs of files to return (outputs.c) */
	size_t n_outputs;
	const char *volume;   /* a volume's id, bound at /memory; NULL: none */
	bool volume_ro;       /* read-only */
	const char *request_id; /* the HTTP request's, for its sandbox's label; NULL: none */
};

/* A file a run made that matched one of its job's outputs. Owns its bytes. */
struct sandbox_output {
	char *name; /* relative to the work dir */
	struct buf data;
};

/* What one phase (compile or run) produced. Owns its buffers. */
struct sandbox_phase {
	struct buf out, err;
	int exit_code;        /* 128 + N when killed by signal N */
	int signal;           /* N, read from the wait status; 0: none */
	bool timed_out, oom_killed, truncated;
	int64_t duration_ms;
	/* What the sandbox's cgroup used in the phase, as the host counts it
	 * (cgroup.h): CPU time, and the memory high-water mark up to the
	 * phase's end, gVisor's kernel included. -1: not measured (no cgroup
	 * of ours to read: the systemd driver, docker's client; a session's
	 * peak, which is its whole life's). */
	int64_t cpu_ns, peak_bytes;
};

/* What a job produced: a compile phase (compiled languages) and a run
 * (absent when the compile failed). */
struct sandbox_result {
	struct sandbox_phase compile, run;
	bool has_compile, has_run;
	bool client_gone; /* the client left; the sandbox was killed */
	bool warm;        /* it ran in a warm sandbox (warm.c) */
	const char *backend; /* what ran it: conf_backend_name, static */
	const char *warm_miss; /* else why not, when its language has a warm
				  pool (warm.h, warm_take): "empty", "limits",
				  "memory", "cgroup", "network", "outputs",
				  "volume", "dead" */
	/* A session step (session.c): */
	struct buf kernel;     /* a cell's result as its kernel wrote it (JSON,
				  untrusted: fcgi/ checks what it uses) */
	const char *session_ended; /* the session ended during the step: why */
	char session_why[96];      /* where session_ended's words are, when made up */
	struct sandbox_output *outputs; /* the job's outputs, by name */
	size_t n_outputs;
	bool outputs_truncated; /* more matched than request.maxOutputFiles/Bytes */
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
	/* A kernel cell's display as it happens: one output as the kernel
	 * wrote it (JSON, untrusted: fcgi/ checks it), in order with the
	 * output around it. */
	void (*display)(void *ctx, const char *json, size_t len);
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
extern volatile sig_atomic_t sandbox_stop_requested;

/*
 * One sandbox. Ownership: sandbox_create fills it and sandbox_destroy
 * releases everything in it; conf must outlive it. Its name is all that
 * docker needs to find it, from any process.
 */
struct sandbox {
	const struct conf *c;
	char *name; /* container name, "isobox-<instance>-<random>" */
	char *dir;  /* the code dir, mounted read-only at /src */
};

/* sandbox_destroy starts `docker rm` and returns: wait for what it started
 * (bounded), once the answer is sent. */
void sandbox_settle(void);

struct warm_pool;

/*
 * Run a job: in a warm sandbox from wp when one fits (wp may be NULL),
 * else cold (create, exec, destroy). A caller whose connection has already
 * hung up gets 499 client_gone and nothing runs.
 */
bool sandbox_run(const struct conf *c, struct warm_pool *wp, const struct sandbox_job *job,
		 const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f);
void sandbox_result_free(struct sandbox_result *res);

/*
 * The longest sandbox_run can take with these limits: the start, the
 * compile and run phases, and docker's own teardown. A worker busy longer
 * than this (plus the pool's margin) is hung. Pure.
 */
int64_t sandbox_bound_ms(const struct conf *c, const struct limits *l);

/* The longest any other sandbox call can take (a volume's creation, a
 * session file's upload or download). Pure. */
int64_t sandbox_call_bound_ms(const struct conf *c);

/* Is this a file name a request may use? (relative, no "..", no NUL...) */
bool sandbox_valid_path(const char *name, size_t max_len, struct fault *f);

/*
 * The warm pool (warm.c): sandboxes the pool master starts ahead, per
 * language (conf warm.sandboxes), each running the language's agent and
 * waiting for one job. A sandbox is never reused. The master's side:
 *
 *	warm_create        before forking workers; NULL: no warm pool
 *	warm_after_fork    in each new worker: drop the master's own fds
 *	warm_tick          the duty: notice ready ones, remove used and stale
 *	                   ones, refill (not while the pool is saturated: the
 *	                   caller decides; pool.c says half its workers busy);
 *	                   returns ms until it wants to run again
 *	warm_child_exited  a child died: true if it was a warm sandbox's client
 *	                   (its status goes to the worker that took it)
 *	warm_worker_gone   a worker died: remove what it held
 *	warm_destroy       the master stops: remove them all
 *
 * Workers wake the master with SIGUSR1 when they take or finish one.
 */
struct warm_pool *warm_create(const struct conf *c, const struct registry *reg);
void warm_after_fork(struct warm_pool *wp);
int64_t warm_tick(struct warm_pool *wp, const struct conf *c, const struct registry *reg,
		  bool saturated);
bool warm_child_exited(struct warm_pool *wp, pid_t pid, int status);
void warm_worker_gone(struct warm_pool *wp, const struct conf *c, pid_t pid);
void warm_destroy(struct warm_pool *wp, const struct conf *c);

/* For /metrics: one language's pool. */
struct warm_count {
	const char *language;
	int target, ready, starting;
	long long refills, refill_ms; /* started and ready, and the time that took */
};
size_t warm_counts(const struct warm_pool *wp, struct warm_count *out, size_t max);

/*
 * The container of a kind of sandbox ("cold", "network", "warm",
 * "session", "kernel", "volume", "outputs") for language l at its default
 * limits, as a request would get it (spec.h): its `docker run` argv, each
 * word ended by a NUL, or (body) dockerd's create body as JSON, into out.
 * For isobox-fcgi --print-spec; false with the reason in why.
 */
bool sandbox_spec_text(const struct conf *c, const struct language *l, const char *kind, bool body,
		       struct buf *out, struct buf *why);

/*
 * isobox-fcgi --attach SOCKET NAME DEADLINE: the client of a long-lived
 * sandbox (launch.h's launch_client_argv names it), with stdin, stdout and
 * stderr as its caller's. Attach to the made container NAME through
 * dockerd's API at SOCKET, start it by DEADLINE (now_ms()'s clock), copy
 * stdin to it and its output out until its stream ends: the container's
 * exit status, or 125 (docker's words on stderr) when it did not start,
 * as `docker start --attach` (attach.c).
 */
int sandbox_attach(const char *docker_socket, const char *name, int64_t deadline);

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
/* Log what network.allow takes off the deny list (at start and on reload). */
void sandbox_egress_log(const struct conf *c);

/*
 * Volumes (volume.c): a tenant's files that outlive runs. Each is an ext4
 * image of its own size, loop-mounted at <volumes.dir>/<id> by
 * isobox-volumed (root), and bound into a sandbox at /memory (job->volume)
 * so that the kernel holds a run to the size: ENOSPC past it. Records are
 * in the store (conf/store/store.h); these make and remove the image.
 */
bool volume_make(const struct conf *c, const char *id, int64_t bytes, struct fault *f);
/* 409 volume_busy while a sandbox has it mounted. */
bool volume_unmake(const struct conf *c, const char *id, struct fault *f);
/* Its filesystem's bytes used and size (the size less ext4's own). */
bool volume_usage(const struct conf *c, const char *id, int64_t *used, int64_t *size, struct fault *f);
/*
 * May a sandbox of this server mount it now? Mounted (after a reboot, only
 * once isobox-volumed has mounted it again: a run must never get an empty
 * /memory in its place), and made for this server's backend: its files
 * are that backend's sandbox user's (uids.h), 409 volume_other_backend if
 * not.
 */
bool volume_mountable(const struct conf *c, const char *id, struct fault *f);

/*
 * Sessions (session.c, session_store.c): a sandbox that lives across
 * requests, with a persistent /workspace, and in a kernel session a live
 * interpreter. Its agent (sandbox/agent/agent.c) serves one request at a
 * time over two named pipes that any worker can open; its record lives in
 * a directory of its own under sessions.dir, so any worker serves any
 * step, and the pool master's duty ends idle and old ones.
 *
 *	<sessions.dir>/<id>/record   the session (JSON, written by workers)
 *	<sessions.dir>/<id>/lock     flock: held by the request using it; its
 *	                             mtime is the session's last use
 *	<sessions.dir>/<id>/in, out, err
 *	                             the agent's stdin, stdout and stderr: a
 *	                             detached `docker run -i` holds them open
 *	<sessions.dir>/<id>.gone     why it ended (for 410), kept an hour
 *
 * A session's container carries isobox.kind=session and its id; only
 * session.c removes it, never the owner-based reaper.
 */
/* An id is "<host>-<32 hex digits>": the host (conf's instance) that keeps
 * it, so that a balancer in front of several hosts routes by the id, and
 * 128 random bits. Ids of 32 hex digits alone, from before hosts, are this
 * host's. */
#define SESSION_ID_HEX 32
#define SESSION_HOST_MAX 32
#define SESSION_ID_LEN (SESSION_HOST_MAX + 1 + SESSION_ID_HEX) /* the most */
/* The host in an id, in host ("" for an id from before hosts); false: not
 * an id. Pure. */
bool session_id_host(const char *id, char host[SESSION_HOST_MAX + 1]);
/* A new id, of host. */
void session_new_id(const char *host, char out[SESSION_ID_LEN + 1]);

enum session_type { SESSION_SHELL, SESSION_KERNEL };

struct session {
	char id[SESSION_ID_LEN + 1];
	char tenant[TENANT_NAME_MAX + 1]; /* whose it is: no other tenant finds it */
	char volume[33], volume_name[64]; /* a volume at /memory (its id, its name); "": none */
	bool volume_ro;
	char language[64], version[64]; /* the registry's name and pinned version */
	enum session_type type;
	struct limits limits;   /* memory, cpus, pids: the session's; the rest per step */
	bool network;
	int64_t created_ms;     /* wall clock, ms since the epoch */
	int64_t last_used_ms;
	int64_t idle_ms, lifetime_ms;
	int64_t steps;
	char container[128];
	char container_id[72];  /* docker's full ID: where its cgroup is */
	bool busy;              /* a request holds it (when read) */
	int64_t memory_used;    /* its cgroup's memory now (when read); -1: unknown */
};

/* When it ends if nothing uses it (wall clock ms). Pure. */
int64_t session_expires_ms(const struct session *s);

/* Start one for s->tenant, within its share, as s asks (its type, limits,
 * network, idle_ms, lifetime_ms and volume, and its id if set); the rest
 * of s is filled: 201. 429/507 past the ceilings in sessions:, 403 past
 * the tenant's share (share NULL: the caller has counted it in the
 * store), 5xx when its sandbox does not start (nothing is left behind
 * then). */
bool session_create(const struct conf *c, const struct tenant_limits *share, const struct language *l,
		    struct session *s, struct fault *f);
/*
 * Every call below names the tenant asking (NULL: the server itself): a
 * session of another tenant is not found (404), as if it did not exist.
 */
/* Read one; 404 session_not_found, or 410 session_expired with why. */
bool session_get(const struct conf *c, const char *tenant, const char *id, struct session *out,
		 struct fault *f);
/* All of the tenant's (the caller frees *out). */
bool session_list(const struct conf *c, const char *tenant, struct session **out, size_t *n,
		  struct fault *f);
/* Kill and remove everything it holds, even while a step runs. */
bool session_delete(const struct conf *c, const char *tenant, const char *id, struct fault *f);
/*
 * Run one step: job->files and args (a shell session) or files[0] as a
 * cell (a kernel session). job->limits: the step's wall time and output
 * cap; the sandbox keeps the session's own. 409 session_busy when another
 * request holds the session. res as for sandbox_run; res->session_ended
 * says if the session did not survive it (an OOM kill, its sandbox died).
 */
bool session_step(const struct conf *c, const struct session *s, const struct sandbox_job *job,
		  const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f);

/*
 * Files under a session's /workspace or a volume's /memory, through the
 * agent (it never follows a link). Where: a session (its id: 404 unless
 * it is tenant's), or a volume (the id the store gave its record for the
 * tenant; lang: an image to run the agent in, in a sandbox of its own).
 */
struct files_place {
	const char *tenant;
	const char *session, *volume; /* one of them */
	const struct language *lang;  /* a volume's */
};
struct session_entry {
	char *name; /* raw bytes, NUL-terminated (names have no NUL) */
	char type;  /* 'f' file, 'd' directory, 'l' link, 'o' other */
	int64_t size, mtime;
};
bool files_put(const struct conf *c, const struct files_place *p, const char *path, const char *data,
	       size_t len, struct fault *f);
bool files_get(const struct conf *c, const struct files_place *p, const char *path, struct buf *out,
	       struct fault *f);
bool files_list(const struct conf *c, const struct files_place *p, const char *path,
		struct session_entry **out, size_t *n, struct fault *f);
bool files_delete(const struct conf *c, const struct files_place *p, const char *path, struct fault *f);
void session_entries_free(struct session_entry *e, size_t n);

/*
 * Commands that outlive steps, in a session's sandbox (session_commands.c,
 * through its agent: frame.h bg...): started in the background in
 * /workspace, their stdout and stderr kept by the agent (the last
 * AGENT_COMMAND_LOG bytes of each, at offsets counted from the start),
 * their stdin written when asked, killed when deleted. At most
 * AGENT_MAX_COMMANDS are kept, running or ended; 404 command_not_found
 * for an id the session does not have, 404/410 for the session as the
 * files calls answer.
 */
struct session_command {
	char id[17];          /* 16 hex digits */
	bool running;
	int exit_code;        /* once ended: 128 + N when killed by signal N; -1 while running */
	int signal;           /* N; 0: none */
	uint64_t stdout_bytes, stderr_bytes; /* written in all */
	struct strv args;
};
struct command_output {
	bool running;
	int exit_code, signal; /* as session_command's */
	uint64_t from[2];    /* where the bytes start, in stdout and stderr */
	uint64_t written[2]; /* in all, so far */
	struct buf out[2];
};
/* Start argv (argc > 0) with stdin_data then end of file on its stdin, or
 * (stdin_open, no data) a pipe that command_stdin writes to; 409
 * too_many_commands when the session keeps its most. id: the command's. */
bool command_start(const struct conf *c, const char *tenant, const char *session, char *const *argv,
		   size_t argc, const char *stdin_data, size_t stdin_len, bool stdin_open, char id[17],
		   struct fault *f);
bool command_list(const struct conf *c, const char *tenant, const char *session,
		  struct session_command **out, size_t *n, struct fault *f);
void session_commands_free(struct session_command *v, size_t n);
/* Its stdout and stderr from byte from[i] on (or from the first byte kept,
 * if those are gone), at most max of each. */
bool command_output(const struct conf *c, const char *tenant, const char *session, const char *id,
		    const uint64_t from[2], size_t max, struct command_output *o, struct fault *f);
void command_output_free(struct command_output *o);
/* Write to its stdin as much as its pipe takes now (*written); len 0
 * closes it. 409 stdin_closed once closed. */
bool command_stdin(const struct conf *c, const char *tenant, const char *session, const char *id,
		   const char *data, size_t len, size_t *written, struct fault *f);
/* Signal its process group (sig 1..64); nothing for an ended one. */
bool command_kill(const struct conf *c, const char *tenant, const char *session, const char *id, int sig,
		  struct fault *f);
/* Kill it if it runs and forget it, its output with it. */
bool command_delete(const struct conf *c, const char *tenant, const char *session, const char *id,
		    struct fault *f);

/* The master's duty: end idle and old sessions (*expired) and those whose
 * sandbox stopped (*died), remove what ended ones left. The ids of those
 * it ended are added to ended (their claims in the store go). */
void session_expire(const struct conf *c, int *expired, int *died, struct strv *ended);
/* In each new worker: drop the connections of the sweep's removals. */
void session_sweep_after_fork(void);
/* For /metrics: sessions alive now. */
int session_count(const struct conf *c);

/*
 * The OCI runtime that runs this backend's sandboxes (runtime.c), as
 * dockerd has it registered: its program ("runsc" or "runc"), the
 * program's version, and for runsc the platform (--platform, or "default").
 * False with err set, and *out all empty, when dockerd or the program does
 * not say.
 */
struct sandbox_runtime {
	char program[8];
	char version[64];
	char platform[16];
};
bool sandbox_runtime_describe(const struct conf *c, struct sandbox_runtime *out, char *err, size_t errlen);
/* Does dockerd answer on its API socket (GET /_ping, by deadline)? */
bool sandbox_docker_alive(const struct conf *c, int64_t deadline, struct fault *f);

/* Remove containers, work dirs and cgroups of this instance whose owner
 * is gone. by: who reaps. The pool's master says which warm pool it holds
 * (warm NULL: none now, before it starts and after it stops), whose
 * slots' cgroups stay while they may be waiting for their containers; any
 * other process (CGI, a lone worker) cannot know, and leaves the cgroups
 * that a warm sandbox of its instance may be starting in. */
struct reap_by {
	bool master;
	const struct warm_pool *warm;
};
void sandbox_reap(const struct conf *c, const struct reap_by *by);

#endif
