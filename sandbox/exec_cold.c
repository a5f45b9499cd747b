/*
 * exec_cold.c: a cold run: the container is created with the program as
 * its command (launch.c: through dockerd's API; the docker client when
 * that cannot be reached), then supervised (supervise.c).
 */
#define _GNU_SOURCE
#include "exec_cold.h"
#include "docker.h"
#include "launch.h"
#include "owner.h"
#include "spec_render.h"
#include "subproc.h"
#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

bool exec_cold(const struct sandbox *sb, const struct sandbox_job *job,
	       const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f)
{
	struct exec x = {.c = sb->c, .sb = sb, .job = job, .sink = sink, .res = res, .client = -1,
			 .killer = DOCKER_KILL_NONE, .in_fd = -1, .out_fd = -1, .err_fd = -1, .wait_fd = -1,
			 .in_data = job->stdin_data, .in_len = job->stdin_len};
	struct container_spec spec;
	/* The nonce of the reporter's end marks (decoder.h, agent/agent_reap.c). */
	char nonce[2 * 16 + 1];
	random_hex(nonce, 16);
	decoder_init(&x.dec, job->lang->compile.n > 0);
	decoder_expect_end(&x.dec, nonce);
	spec_cold(x.c, job, sb->name, sandbox_owner_id(), sb->dir, nonce, &spec);
	x.clock.spawned_ms = now_ms();
	x.spawned_at = time(NULL);
	bool unreachable;
	/* Create, attach, start: by the start deadline (up_ms is 0 yet). */
	int64_t start_by = exec_deadline(x.c, &job->limits, &x.dec, &x.clock);
	char id[65];
	x.out_fd = launch_start(x.c, &spec, start_by, &x.docker_msg, &unreachable, &x.wait_fd, &x.wait_reply, id);
	snprintf(x.cgroup, sizeof x.cgroup, "%s", id); /* "" from docker's client: not measured */
	if (x.out_fd >= 0) {
		x.api = true;
		x.in_fd = fcntl(x.out_fd, F_DUPFD_CLOEXEC, 0);
	} else if (unreachable) {
		log_msg("%s: the docker client instead", x.docker_msg.data);
		buf_free(&x.docker_msg);
		int *fds[3] = {&x.in_fd, &x.out_fd, &x.err_fd};
		struct strv argv = {0};
		spec_argv(&spec, x.c->docker, &argv);
		x.client = subproc_spawn(argv.v, fds);
		strv_free(&argv);
	}
	spec_free(&spec);
	bool ok;
	if (x.out_fd < 0 && !unreachable) {
		ok = docker_start_failed(x.c, job->lang->name, supervise_docker_reason(&x), now_ms() >= start_by, f);
	} else if (x.client < 0 && !x.api) {
		ok = fail(f, E_SANDBOX_UNAVAILABLE, "cannot start %s: %s", x.c->docker, strerror(errno));
	} else if (x.api && x.in_fd < 0) { /* the sandbox goes with sandbox_destroy */
		ok = fail(f, E_SANDBOX_UNAVAILABLE, "cannot hold the sandbox's stdin: %s", strerror(errno));
		close_fd(&x.out_fd);
		close_fd(&x.wait_fd);
	} else {
		if (job->stdin_len == 0)
			supervise_end_stdin(&x);
		supervise(&x);
		ok = supervise_collect(&x, f);
	}
	buf_free(&x.docker_msg);
	buf_free(&x.held);
	buf_free(&x.wait_reply);
	return ok;
}
