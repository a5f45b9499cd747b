/*
 * main.c: isobox-fcgi start-up.
 *
 *   isobox-fcgi [--conf FILE] [--workers N] [--check]
 *   isobox-fcgi [--conf FILE] --egress plan|rules|resolv
 *   isobox-fcgi [--conf FILE] --print-conf
 *
 * Started with a listening socket on fd 0 (spawn-fcgi), or handed one by
 * systemd socket activation (LISTEN_FDS, moved to fd 0 here), it is a
 * FastCGI pool: a master and N workers (--workers 0: this process serves
 * alone). Started as a plain CGI program, it answers the one request in its
 * environment. --check loads the settings and the registry, and exits.
 * --egress prints what deploy/egress.sh install installs (see
 * sandbox/egress.c): the network settings as shell-safe KEY=VALUE lines,
 * the firewall as iptables-restore input, or the sandboxes' resolv.conf.
 * --print-conf prints the other settings that deploy scripts need, as
 * KEY=VALUE lines, so that no script reads the YAML itself.
 *
 * Start-up errors exit; after start-up, nothing a request does can.
 */
#define _GNU_SOURCE
#include "worker.h"
#include "metrics.h"
#include "../sandbox/sandbox.h"

#include <arpa/inet.h>
#include <cap-ng.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>

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
 * systemd socket activation passes the listening socket as fd 3 with
 * LISTEN_PID/LISTEN_FDS; libfcgi accepts on fd 0, as under spawn-fcgi.
 */
static void adopt_activated_socket(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	if (!pid || !fds || atol(pid) != (long)getpid())
		return;
	if (strcmp(fds, "1"))
		die("socket activation passed %s sockets; isobox takes exactly one", fds);
	if (dup2(3, STDIN_FILENO) < 0)
		die("cannot move the activated socket to fd 0: %s", strerror(errno));
	close(3);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
}

static void usage(void)
{
	fprintf(stderr, "usage: isobox-fcgi [--conf FILE] [--workers N] [--check]\n"
			"       isobox-fcgi [--conf FILE] --egress plan|rules|resolv\n"
			"       isobox-fcgi [--conf FILE] --print-conf\n");
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
 * quota): KEY=VALUE lines that scripts split with `read`, never evaluate. */
static int print_conf(const struct conf *c)
{
	printf("instance=%s\nruntime=%s\nceilings_cpus=%.3f\nceilings_memory_bytes=%lld\n", c->instance,
	       c->runtime, c->ceilings.cpus, (long long)c->ceilings.memory_bytes);
	return 0;
}

int main(int argc, char **argv)
{
	struct worker w = {.slot = -1};
	const char *env_conf = getenv("ISOBOX_CONF");
	const char *conf_path = env_conf && env_conf[0] ? env_conf : ISOBOX_DEFAULT_CONF;
	long workers = -1;
	bool check = false, print = false;
	const char *egress = NULL;

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
		} else if (!strcmp(argv[i], "--egress") && i + 1 < argc) {
			egress = argv[++i];
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
	if (egress || print) {
		status = egress ? print_egress(&w.conf, egress) : print_conf(&w.conf);
		goto out;
	}
	drop_privileges();
	umask(022);
	adopt_activated_socket();

	if (FCGX_IsCGI()) {
		/* One request; no master will reap after us, so reap first. */
		sandbox_reap(&w.conf);
		worker_serve_cgi(&w);
	} else if ((workers < 0 ? w.conf.pool.workers : workers) == 0) {
		/* Alone: a one-slot region, so that /metrics works here too. */
		sandbox_reap(&w.conf);
		w.metrics = metrics_create(1);
		w.slot = 0;
		w.exec_slots = 1;
		metrics_slot_spawned(w.metrics, 0, getpid());
		status = worker_serve(&w);
		metrics_destroy(w.metrics);
	} else {
		sandbox_egress_log(&w.conf);
		status = pool_run(&w, (int)(workers < 0 ? w.conf.pool.workers : workers));
	}
out:
	worker_free(&w);
	return status;
}
