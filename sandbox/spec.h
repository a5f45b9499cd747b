/*
 * spec.h: one container as isobox makes it (spec.c builds it for each kind
 * of sandbox; spec_render.h renders it).
 *
 * The spec is the one truth of a sandbox's flags: dockerd's create body
 * (the API, the usual way) and the docker CLI's argv (where the API cannot
 * be reached, and for the sandboxes still started by a client process)
 * are both rendered from it, so they cannot say different things, and
 * `isobox-fcgi --print-spec` shows it to the tests and benches that start
 * containers of their own with the same hardening.
 *
 * Ownership: a spec owns its name, labels, mount sources, cgroup parent,
 * env and command (spec_free frees them); every other string points into
 * the conf or the registry it was built from, which must outlive it.
 */
#ifndef ISOBOX_SANDBOX_SPEC_H
#define ISOBOX_SANDBOX_SPEC_H

#include "sandbox.h"

struct spec_mount {
	char *src;
	const char *dst;
	bool readonly;
};

struct spec_tmpfs {
	const char *dst;
	int64_t bytes;
	bool exec; /* else docker's default for a tmpfs: noexec */
};

struct spec_ulimit {
	const char *name;
	int64_t limit; /* soft = hard */
};

#define SPEC_MOUNTS_MAX 5
#define SPEC_TMPFS_MAX 3
#define SPEC_ULIMITS_MAX 3

struct container_spec {
	char *name;
	struct strv labels; /* "key=value" */
	const char *runtime, *network;
	bool cgroupns_private; /* runc: the program's /proc/self/cgroup is "/" */
	bool read_only, no_new_privileges, cap_drop_all;
	const char *user;
	const char *seccomp_profile; /* a path: its JSON goes in the create body */
	int64_t memory_bytes, memory_swap_bytes;
	double cpus; /* 0: no quota of the container's own (a warm one's is its cgroup's) */
	int64_t pids_limit;
	struct spec_ulimit ulimits[SPEC_ULIMITS_MAX];
	size_t n_ulimits;
	struct spec_tmpfs tmpfs[SPEC_TMPFS_MAX];
	size_t n_tmpfs;
	struct spec_mount mounts[SPEC_MOUNTS_MAX];
	size_t n_mounts;
	const char *workdir, *hostname, *log_driver;
	char *cgroup_parent;
	struct strv env; /* "KEY=value", all the program sees */
	const char *image; /* by ID */
	struct strv cmd;   /* the image's entrypoint is always reset */
};

void spec_free(struct container_spec *s);

/* The kinds of sandbox (the isobox.kind label, and --print-spec's names). */
/* nonce: of the end marks its reporter writes (decoder_expect_end). */
void spec_cold(const struct conf *c, const struct sandbox_job *job, const char *name, const char *owner,
	       const char *src_dir, const char *nonce, struct container_spec *s);
/* own_cgroup: started in a cgroup of its own named as the container
 * (cgroup.h), which holds its CPU limit. */
void spec_warm(const struct conf *c, const struct language *l, const struct limits *lim, const char *name,
	       const char *owner, bool own_cgroup, struct container_spec *s);
void spec_session(const struct conf *c, const struct language *l, const struct session *ses,
		  const char *owner, struct container_spec *s);
/* A volume's files: the agent alone, the volume at /memory. */
void spec_volume(const struct conf *c, const struct language *l, const char *id, const char *name,
		 const char *owner, struct container_spec *s);
/* A cold run with outputs: the agent, not the entry script, in /box. */
void spec_outputs(const struct conf *c, const struct sandbox_job *job, const char *name, const char *owner,
		  struct container_spec *s);
/* One session step's command (the agent runs it in the sandbox). */
void spec_step_command(const struct sandbox_job *job, struct strv *argv);

/*
 * A sandbox of a kind ("cold", "network", "warm", "session", "kernel",
 * "volume", "outputs") for language l at its default limits, as a request
 * would get it, named "isobox-<instance>-print": for --print-spec. False
 * if there is no such kind, or the conf lacks what the kind needs.
 */
bool spec_example(const struct conf *c, const struct language *l, const char *kind, struct container_spec *s);

#endif
