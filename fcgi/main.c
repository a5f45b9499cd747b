/*
 * main.c: isobox-fcgi start-up.
 *
 *   isobox-fcgi [--conf FILE] [--workers N] [--status-socket PATH] [--check]
 *   isobox-fcgi [--conf FILE] --egress plan|rules|resolv
 *   isobox-fcgi [--conf FILE] --print-conf
 *   isobox-fcgi [--conf FILE] --print-spec argv|body KIND LANGUAGE
 *   isobox-fcgi --attach SOCKET NAME DEADLINE
 *   isobox-fcgi --errors | --version
 *   isobox-fcgi [--conf FILE] --new-key TENANT | --revoke-key ID | --list-keys
 *
 * Started with a listening socket on fd 0 (spawn-fcgi), or handed one by
 * systemd socket activation (LISTEN_FDS, moved to fd 0 here), it is a
 * FastCGI pool: a master and N workers (--workers 0: this process serves
 * alone). --status-socket (or a second activated socket named "status")
 * adds a worker that serves GET /healthz and /metrics there and never runs
 * a program. Started as a plain CGI program, it answers the one request in
 * its environment. --check loads the settings and the registry, and
 * exits. --egress prints what deploy/egress.sh install installs (see
 * sandbox/egress.c): the network settings as shell-safe KEY=VALUE lines,
 * the firewall as iptables-restore input, or the sandboxes' resolv.conf.
 * --print-conf prints the other settings that deploy scripts need, as
 * KEY=VALUE lines, so that no script reads the YAML itself. --print-spec
 * prints the container of a kind of sandbox (sandbox/spec.h) for a
 * language: its `docker run` argv, each word ended by a NUL, or dockerd's
 * create body as JSON; tests and benches that start containers of their
 * own take the hardening from it instead of copying it. --errors
 * prints the error codes with their statuses (fcgi/errors.c), for the
 * docs' tests; --version, isobox's version (the Makefile's ISOBOX_VERSION). The key commands edit the keys file (fcgi/keys.h); a new
 * key is printed once, on stdout.
 *
 * Start-up errors exit; after start-up, nothing a request does can.
 */
#define _GNU_SOURCE
#include "worker.h"
#include "admin.h"
#include "errors.h"
#include "keys.h"
#include "metrics.h"
#include "pool.h"
#include "scoreboard.h"
#include "serve.h"
#include "turnstile.h"
#include "../sandbox/sandbox.h"

#include <arpa/inet.h>
#include <cap-ng.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#ifndef ISOBOX_DEFAULT_CONF
#define ISOBOX_DEFAULT_CONF "/opt/isobox/conf/isobox.yaml"
#endif

/*
 * The worker needs no privilege at all: it talks to dockerd through the
 * socket (group docker), so it refuses root and holds no capabilities.
 */
static void drop_privileges(void)
{
	if (getuid() == 0 || geteuid() == 0 || getgid() == 0 || getegid() == 0)
		die("refusing to run as root: start isobox-fcgi as its own user "
		    "(spawn-fcgi -u isobox -g isobox; see deploy/setup.sh)");
	capng_clear(CAPNG_SELECT_BOTH);
	if (capng_apply(CAPNG_SELECT_CAPS) != 0)
		die("cannot drop capabilities");
	capng_get_caps_process();
	if (capng_have_capabilities(CAPNG_SELECT_CAPS) != CAPNG_NONE)
		die("capabilities remain after dropping them");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		die("cannot set no_new_privs: %s", strerror(errno));
}

/*
 * systemd socket activation passes the listening sockets from fd 3 with
 * LISTEN_PID/LISTEN_FDS (and their names in LISTEN_FDNAMES); libfcgi
 * accepts on fd 0, as under spawn-fcgi. A second socket must be named
 * "status" (FileDescriptorName=status): its fd is returned, else -1.
 */
static int adopt_activated_sockets(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	const char *names = getenv("LISTEN_FDNAMES");
	int status_fd = -1, main_fd = 3;
	if (!pid || !fds || atol(pid) != (long)getpid())
		return -1;
	if (!strcmp(fds, "2")) {
		/* "name3:name4": which one is the status socket (just one)? */
		const char *colon = names ? strchr(names, ':') : NULL;
		bool first = colon && !strncmp(names, "status:", 7);
		bool second = colon && !strcmp(colon + 1, "status");
		if (first == second)
			die("socket activation passed 2 sockets; name exactly one of them \"status\"");
		if (second)
			status_fd = 4;
		else
			status_fd = 3, main_fd = 4;
	} else if (!strcmp(fds, "1")) {
		/* The status socket alone would take programs as the main one. */
		if (names && !strcmp(names, "status"))
			die("socket activation passed only the status socket; the pool needs its main socket too");
	} else {
		die("socket activation passed %s sockets; isobox takes one, or two with one named status",
		    fds);
	}
	if (dup2(main_fd, STDIN_FILENO) < 0)
		die("cannot move the activated socket to fd 0: %s", strerror(errno));
	close(main_fd);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return status_fd;
}

/*
 * The status socket at path: mode 0660, owned by us, its group the
 * directory's (pool.sh makes the directory setgid to the web server's
 * group, as spawn-fcgi does for the main socket).
 */
static int open_status_socket(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct stat old_st, main_st;
	if (strlen(path) >= sizeof a.sun_path)
		die("--status-socket: the path is too long");
	/* Only a stale socket is replaced, and never the pool's own. */
	if (lstat(path, &old_st) == 0 &&
	    (!S_ISSOCK(old_st.st_mode) ||
	     (fstat(STDIN_FILENO, &main_st) == 0 && main_st.st_ino == old_st.st_ino &&
	      main_st.st_dev == old_st.st_dev)))
		die("--status-socket %s: something other than a stale status socket is there", path);
	memcpy(a.sun_path, path, strlen(path));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("status socket: %s", strerror(errno));
	unlink(path); /* a stale socket of an earlier pool */
	mode_t old = umask(0117);
	int rc = bind(fd, (struct sockaddr *)&a, sizeof a);
	umask(old);
	if (rc < 0 || listen(fd, 128) < 0)
		die("status socket %s: %s", path, strerror(errno));
	return fd;
}

static void usage(void)
{
	fprintf(stderr, "usage: isobox-fcgi [--conf FILE] [--workers N] [--status-socket PATH] [--check]\n"
			"       isobox-fcgi [--conf FILE] --egress plan|rules|resolv\n"
			"       isobox-fcgi [--conf FILE] --print-conf\n"
			"       isobox-fcgi [--conf FILE] --print-spec argv|body KIND LANGUAGE\n"
			"       isobox-fcgi --attach SOCKET NAME DEADLINE\n"
			"         KIND: cold network warm session kernel volume outputs\n"
			"       isobox-fcgi --errors | --version\n"
			"       isobox-fcgi [--conf FILE] --new-key TENANT | --revoke-key ID | --list-keys\n");
	exit(2);
}

/* The values were checked by the conf loader: none needs shell quoting. */
static int print_egress(const struct conf *c, const char *what)
{
	const struct conf_network *n = &c->network;
	struct buf rules = {0}, resolv = {0};
	char err[256], subnet[64], gateway[64];
	if (!strcmp(what, "plan")) {
		struct cidr gw = n->subnet;
		gw.addr[3] |= 1; /* docker's gateway: the subnet's first address */
		cidr_format(&n->subnet, subnet, sizeof subnet);
		inet_ntop(AF_INET, gw.addr, gateway, sizeof gateway);
		printf("enabled=%d\ndocker_network=%s\nbridge=%s\nsubnet=%s\ngateway=%s\n"
		       "runtime=%s\nstate_dir=%s\nallow=", n->enabled, n->docker_network, n->bridge,
		       subnet, gateway, n->runtime, n->state_dir);
		for (size_t i = 0; i < n->n_allow; i++)
			printf("%s%s", i ? " " : "", cidr_format(&n->allow[i], subnet, sizeof subnet));
		printf("\n");
		return 0;
	}
	if (strcmp(what, "rules") && strcmp(what, "resolv"))
		usage();
	if (!sandbox_egress_files(c, &rules, &resolv, err, sizeof err))
		die("%s", err);
	fputs(!strcmp(what, "rules") ? rules.data : resolv.data, stdout);
	buf_free(&rules);
	buf_free(&resolv);
	return 0;
}

/* For deploy/setup.sh (the runtime to configure, the cgroup parent's CPU
 * quota) and bench/ (a bare run under the same seccomp profile): KEY=VALUE
 * lines that scripts split with `read`, never evaluate. */
static int print_conf(const struct worker *w)
{
	const struct conf *c = &w->conf;
	const struct registry *r = &w->reg;
	printf("instance=%s\nruntime=%s\nceilings_cpus=%.3f\nceilings_memory_bytes=%lld\n"
	       "seccomp_profile=%s\ncgroup_parent=%s\nbackend=%s\nplatform=%s\n", c->instance, c->runtime,
	       c->ceilings.cpus, (long long)c->ceilings.memory_bytes, c->sandbox.seccomp_profile,
	       c->cgroup_parent ? c->cgroup_parent : "", conf_backend_name(c), c->sandbox.platform);
	if (c->runc.runtime)
		printf("runc_runtime=%s\nrunc_seccomp_profile=%s\n", c->runc.runtime, c->runc.seccomp_profile);
	/* The built images, by recipe (the lock's IDs): image_bash=sha256:... */
	for (size_t i = 0; i < r->n; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(r->langs[j].image, r->langs[i].image);
		if (!seen && r->langs[i].image_id)
			printf("image_%s=%s\n", r->langs[i].image, r->langs[i].image_id);
	}
	if (c->warm.agent_dir)
		printf("agent_dir=%s\n", c->warm.agent_dir);
	if (c->sessions.dir)
		printf("sessions_dir=%s\n", c->sessions.dir);
	if (c->volumes.dir)
		printf("volumes_dir=%s\nvolumes_socket=%s\n", c->volumes.dir, c->volumes.socket);
	printf("answer_bound_ms=%lld\n", (long long)admin_hang_bound_ms(w));
	return 0;
}

/* --print-spec: a sandbox's container as the API or the CLI gets it. */
static int print_spec(const struct conf *c, const struct registry *r, char **what)
{
	struct fault f = {0};
	const struct language *l = registry_find(r, what[2], NULL, &f);
	if (!l)
		die("%s", f.message);
	struct buf text = {0}, why = {0};
	if (!sandbox_spec_text(c, l, what[1], !strcmp(what[0], "body"), &text, &why))
		die("%s", why.data);
	fwrite(text.data, 1, text.len, stdout);
	buf_free(&text);
	return 0;
}

int main(int argc, char **argv)
{
	struct worker w = {.slot = -1};
	/* cJSON allocates with our policy: out of memory is fatal, as for
	 * every other allocation (base.h), never a NULL that a caller misses. */
	cJSON_InitHooks(&(cJSON_Hooks){.malloc_fn = xmalloc, .free_fn = free});
	const char *env_conf = getenv("ISOBOX_CONF");
	const char *conf_path = env_conf && env_conf[0] ? env_conf : ISOBOX_DEFAULT_CONF;
	long workers = -1;
	bool check = false, print = false;
	const char *egress = NULL, *status_path = NULL, *key_cmd = NULL, *key_arg = NULL;
	char **spec = NULL;

	/* A sandbox's client (sandbox.h): its caller's work, before any conf. */
	if (argc == 5 && !strcmp(argv[1], "--attach")) {
		char *end;
		long long deadline = strtoll(argv[4], &end, 10);
		if (*end || deadline <= 0)
			usage();
		return sandbox_attach(argv[2], argv[3], deadline);
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--conf") && i + 1 < argc) {
			conf_path = argv[++i];
		} else if (!strcmp(argv[i], "--workers") && i + 1 < argc) {
			char *end;
			workers = strtol(argv[++i], &end, 10);
			if (*end || workers < 0 || workers > 1024)
				usage();
		} else if (!strcmp(argv[i], "--check")) {
			check = true;
		} else if (!strcmp(argv[i], "--print-conf")) {
			print = true;
		} else if (!strcmp(argv[i], "--print-spec") && i + 3 < argc &&
			   (!strcmp(argv[i + 1], "argv") || !strcmp(argv[i + 1], "body"))) {
			spec = &argv[i + 1];
			i += 3;
		} else if (!strcmp(argv[i], "--egress") && i + 1 < argc) {
			egress = argv[++i];
		} else if (!strcmp(argv[i], "--status-socket") && i + 1 < argc) {
			status_path = argv[++i];
		} else if ((!strcmp(argv[i], "--new-key") || !strcmp(argv[i], "--revoke-key")) && i + 1 < argc) {
			key_cmd = argv[i];
			key_arg = argv[++i];
		} else if (!strcmp(argv[i], "--list-keys")) {
			key_cmd = argv[i];
		} else if (!strcmp(argv[i], "--version")) {
			printf("isobox-fcgi %s\n", ISOBOX_VERSION);
			return 0;
		} else if (!strcmp(argv[i], "--errors")) {
			errors_print();
			return 0;
		} else {
			usage();
		}
	}

	char err[512];
	w.conf_path = (char *)conf_path;
	w.started_ms = now_ms();
	if (!worker_load(&w, err, sizeof err))
		die("%s", err);
	int status = 0;
	if (check) {
		printf("ok: %s, %zu languages\n", conf_path, w.reg.n);
		goto out;
	}
	if (key_cmd) {
		status = !strcmp(key_cmd, "--new-key") ? keys_new(conf_path, &w.conf, key_arg) :
			 !strcmp(key_cmd, "--revoke-key") ? keys_revoke(&w.conf, key_arg) : keys_list(&w.conf);
		goto out;
	}
	if (spec) {
		status = print_spec(&w.conf, &w.reg, spec);
		goto out;
	}
	if (egress || print) {
		status = egress ? print_egress(&w.conf, egress) : print_conf(&w);
		goto out;
	}
	drop_privileges();
	umask(022);
	turnstile_init();
	int status_fd = adopt_activated_sockets();
	if (status_path && status_fd >= 0)
		die("the status socket came by socket activation and by --status-socket: give one");
	if (status_path)
		status_fd = open_status_socket(status_path);
	if (workers < 0)
		workers = w.conf.pool.workers;

	if (FCGX_IsCGI()) {
		/* One request; no master will reap after us, so reap first. */
		w.pool_fd = -1;
		sandbox_reap(&w.conf, &(struct reap_by){.master = false});
		serve_cgi(&w);
	} else if (workers == 0) {
		/* Alone: a one-slot pool, so that /metrics works here too. */
		if (status_fd >= 0)
			die("a status socket needs a pool (--workers 1 or more)");
		sandbox_reap(&w.conf, &(struct reap_by){.master = false});
		worker_describe_runtime(&w);
		w.board = scoreboard_create(1);
		w.metrics = metrics_create();
		w.slot = 0;
		w.exec_slots = 1;
		scoreboard_spawned(w.board, 0, getpid());
		status = serve_fastcgi(&w);
		metrics_destroy(w.metrics);
		scoreboard_destroy(w.board);
	} else {
		sandbox_egress_log(&w.conf);
		status = pool_run(&w, (int)workers, status_fd);
	}
out:
	worker_free(&w);
	return status;
}
