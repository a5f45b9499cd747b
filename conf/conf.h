/*
 * conf.h: the operator's settings (conf/isobox.yaml).
 *
 * Ownership: conf_load fills a struct conf that owns all its strings;
 * conf_free releases them. A worker keeps one current conf and swaps in a
 * new one only when a reload has fully succeeded.
 */
#ifndef ISOBOX_CONF_H
#define ISOBOX_CONF_H

#include "lib/base.h"
#include "cidr.h"
#include "limits.h"
#include "access.h"
#include "tenants.h"
#include "demo.h"
#include "store/store.h"

#define WARM_MAX_LANGUAGES 16
#define WARM_MAX_SANDBOXES 64

struct conf {
	char *path;          /* the file this was loaded from */
	char *instance;      /* pool name, [a-z0-9-]+ */
	char *registry;      /* absolute paths from here on */
	char *images_lock;
	char *work_dir;
	char *docker;
	char *docker_socket;    /* dockerd's API, for what needs no CLI (docker.c) */
	/* What runs the sandboxes (docs/BACKENDS.md): gVisor, the sandbox's
	 * own kernel; or runc, the host's kernel behind namespaces, a seccomp
	 * profile of our own and a user namespace per container. */
	enum backend { BACKEND_GVISOR, BACKEND_RUNC } backend;
	char *runtime;       /* the gVisor backend's docker runtime */
	struct conf_runc {
		char *runtime;         /* docker runtime: isobox-runc (sandbox/runc/) */
		char *seccomp_profile; /* deploy/seccomp-runc.json, installed */
	} runc;
	char *cgroup_parent;
	struct conf_pool {
		int64_t workers;
		int64_t max_requests;   /* recycle a worker after this many; 0: never */
		bool reject_when_busy;  /* whenBusy: reject (else wait) */
		bool request_log_json;  /* requestLog: json (else logfmt) */
		int64_t metrics_tenants; /* tenants with series of their own; the rest: "other" */
		int64_t hang_margin_ms; /* backstop: a request longer than its bound
					   plus this is a hung worker */
	} pool;
	struct access access;
	struct limits ceilings, floors;
	struct {
		int64_t max_body_bytes, max_files, max_file_bytes, max_path_bytes;
		int64_t max_args, max_arg_bytes, max_stdin_bytes;
		int64_t max_json_values; /* values in a body, counted before parsing */
		int64_t max_output_files, max_output_bytes; /* "outputs": files returned */
	} request;
	struct {
		int64_t tmp_bytes, work_bytes, pids_backstop, start_timeout_ms;
		int64_t compile_pids; /* RLIMIT_NPROC while a compiler runs (spec.c) */
		char *seccomp_profile; /* docker --security-opt seccomp= (deploy/seccomp.json) */
		char *resolv_conf;     /* /etc/resolv.conf of runs without network */
		char *hosts_file;      /* and their /etc/hosts (spec.c says why) */
		/* runsc's platform: "auto" (deploy/setup.sh measures and
		 * picks), "ptrace", "systrap" or "kvm". Setup reads it. */
		char platform[8];
	} sandbox;
	struct conf_warm {
		char *langs[WARM_MAX_LANGUAGES]; /* language names, as in the registry */
		int64_t counts[WARM_MAX_LANGUAGES]; /* sandboxes kept ready for each */
		size_t n;
		int64_t total;               /* all counts */
		int64_t memory_budget_bytes; /* what the ready ones may hold in all */
		int64_t preload_bytes;       /* room for what an agent's preloads hold, above
						a request's memory (sandbox/warm.c) */
		int64_t max_age_ms;          /* replaced after waiting this long */
		char *agent_dir;             /* sandbox/agent/ as installed; NULL: no pool */
	} warm;
	struct conf_sessions {
		char *dir;                /* records and pipes, worker-only; NULL: sessions off */
		int64_t max;              /* alive at once */
		int64_t memory_budget_bytes; /* what all of them may hold (their memory limits) */
		int64_t memory_bytes;     /* ceiling of one session's memory (cpus, pids: ceilings) */
		int64_t idle_ms, max_idle_ms;         /* default and ceiling of idleTimeoutMs */
		int64_t lifetime_ms, max_lifetime_ms; /* default and ceiling of maxLifetimeMs */
		int64_t max_step_ms;      /* ceiling of a step's wallTimeMs (its default: the language's) */
		int64_t workspace_bytes;  /* tmpfs /workspace */
		int64_t max_file_bytes;   /* one upload or download */
		int64_t max_list_entries; /* one listing */
	} sessions;
	struct tenants tenants; /* auth: and tenants:, and the files they name */
	struct demo demo;       /* demo: the public demo's guard and share */
	struct store_conf store; /* conf/store/store.h; backend STORE_NONE: no store */
	struct {
		int64_t max_value_bytes, max_key_bytes, max_list_keys;
	} memory;               /* /v1/memory */
	struct conf_volumes {
		char *dir;        /* images and mount points (isobox-volumed's); NULL: volumes off */
		char *socket;     /* isobox-volumed's socket */
		int64_t min_bytes, max_bytes; /* one volume's size */
	} volumes;
	/* queue: executions through a Redis stream (docs/SCALING.md). A front
	 * puts each /execute on it and follows its events; a runner takes
	 * them. Off: every host runs its own. */
	struct conf_queue {
		enum queue_role { QUEUE_OFF, QUEUE_FRONT, QUEUE_RUNNER } role;
		int64_t max_length;     /* jobs waiting or running; past it: 503 busy */
		int64_t claim_after_ms; /* a job whose runner showed no life this long is re-run */
		int64_t wait_ms;        /* a front gives up on a job no runner started by then */
	} queue;
	/* The Piston-compatible route (fcgi/piston.c). */
	struct conf_piston {
		bool accept_text_plain; /* read a text/plain body as JSON (piston-client) */
	} piston;
	struct conf_network {
		bool enabled;          /* may a request ask for "network": true? */
		char *docker_network;  /* the egress bridge network's docker name */
		char *bridge;          /* its Linux interface name */
		struct cidr subnet;    /* its IPv4 subnet */
		char *runtime;         /* runsc with a network stack */
		char *state_dir;       /* what deploy/setup.sh installed (sandbox/egress.c) */
		struct cidr *dns;      /* resolvers (IPv4 hosts); none: the host's */
		size_t n_dns;
		struct cidr *deny;     /* never forwarded to */
		size_t n_deny;
		struct cidr *allow;    /* taken off the deny list (IPv4, each inside a deny entry) */
		size_t n_allow;
		int64_t deny_tcp_ports[32];
		size_t n_deny_tcp_ports;
		struct strv out_interfaces; /* empty: any */
	} network;
};

bool conf_load(const char *path, struct conf *out, char *err, size_t errlen);
/* The same, from YAML text; relative paths resolve against base_dir. */
bool conf_parse(const char *text, size_t len, const char *base_dir, struct conf *out,
		char *err, size_t errlen);
void conf_free(struct conf *c);
/* "gvisor" or "runc": every result's and /runtimes' "backend". */
const char *conf_backend_name(const struct conf *c);
/* What an operator and a client should know of the backend (/healthz,
 * /runtimes); NULL: nothing. */
const char *conf_backend_warning(const struct conf *c);

#endif
