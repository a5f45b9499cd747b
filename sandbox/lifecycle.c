/*
 * lifecycle.c: a sandbox from creation to removal.
 *
 *	sandbox_create   check that it can run, write the code dir, name it
 *	sandbox_exec     run one program in it (exec_cold.c, supervise.c)
 *	sandbox_destroy  remove the container and the code dir, always
 *
 * A cold run is all three in one `docker run`: the container is created
 * with the program as its command, so "start" happens inside the exec.
 * Nothing here ties a sandbox to the process that made it: its name and
 * labels find it, and the reaper (reap.c) removes what a dead owner left.
 */
#define _GNU_SOURCE
#include "lifecycle.h"
#include "owner.h"
#include "deadline.h"
#include "docker.h"
#include "exec_cold.h"
#include "exec_warm.h"
#include "outputs.h"
#include "removal.h"
#include "subproc.h"
#include "warm.h"
#include "workdir.h"

#include <stdio.h>
#include <sys/wait.h>

bool sandbox_create(const struct conf *c, const struct sandbox_job *job, struct sandbox *sb,
		    struct fault *f)
{
	*sb = (struct sandbox){.c = c};
	if (!registry_image_built(job->lang, f))
		return false;
	char mode[16];
	if (job->network && !sandbox_egress_ready(c, mode, sizeof mode, f))
		return false;
	/* A run with outputs gets its code through the agent (outputs.c). */
	if (!job->n_outputs && !workdir_create(c, job, &sb->dir, f))
		return false;
	char name[128];
	sandbox_container_name(c->instance, NULL, name, sizeof name);
	sb->name = xstrdup(name);
	return true;
}

bool sandbox_exec(struct sandbox *sb, const struct sandbox_job *job, const struct sandbox_sink *sink,
		  struct sandbox_result *res, struct fault *f)
{
	*res = (struct sandbox_result){.compile.exit_code = -1, .run.exit_code = -1};
	return job->n_outputs ? exec_outputs(sb, job, sink, res, f) : exec_cold(sb, job, sink, res, f);
}

/*
 * This worker's removals (removal.h): the answer goes out before `docker
 * rm` (the client need not wait for the clean-up), and sandbox_settle
 * waits for them while the worker still counts as busy, and ends them all
 * (an idle worker holds nothing).
 */
static struct removals removing; /* zeroed: a worker's queue */

void sandbox_settle(void)
{
	if (removals_collect(&removing, now_ms() + REMOVE_MS))
		removals_abandon(&removing);
}

void sandbox_destroy(struct sandbox *sb)
{
	if (sb->name)
		removals_add(&removing, sb->c, sb->name);
	if (sb->dir)
		workdir_remove(sb->dir);
	free(sb->name);
	free(sb->dir);
	*sb = (struct sandbox){0};
}

/* Has the caller's connection hung up? */
static bool caller_hung_up(const struct sandbox_sink *s)
{
	return s && fd_hung_up(s->hangup_fd);
}

/*
 * A warm sandbox, if one fits the job (warm.c): nothing to create, and
 * the master removes it afterwards. False when the job must run cold:
 * none fitted, or the one taken ended before the program started.
 */
static bool run_warm(const struct conf *c, struct warm_pool *wp, const struct sandbox_job *job,
		     const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f,
		     bool *done)
{
	struct warm_lease lease;
	*done = false;
	if (!warm_take(c, wp, job, &lease, &res->warm_miss))
		return false;
	struct sandbox sb = {.c = c, .name = lease.name};
	bool go_cold = false;
	bool ok = exec_warm(&sb, &lease, job, sink, res, f, &go_cold);
	warm_release(wp, &lease);
	if (go_cold) {
		sandbox_result_free(res);
		*res = (struct sandbox_result){.compile.exit_code = -1, .run.exit_code = -1,
					       .warm_miss = "dead"};
		*f = (struct fault){0};
		return false;
	}
	res->warm = true;
	*done = true;
	return ok;
}

bool sandbox_run(const struct conf *c, struct warm_pool *wp, const struct sandbox_job *job,
		 const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f)
{
	struct sandbox sb;
	*res = (struct sandbox_result){.compile.exit_code = -1, .run.exit_code = -1};
	if (caller_hung_up(sink))
		return fail(f, E_CLIENT_GONE, "the client left before the run started");
	bool done, ok = run_warm(c, wp, job, sink, res, f, &done);
	if (done)
		return ok;
	if (!sandbox_create(c, job, &sb, f))
		return false;
	const char *miss = res->warm_miss;
	ok = sandbox_exec(&sb, job, sink, res, f);
	res->warm_miss = miss; /* sandbox_exec starts the result afresh */
	sandbox_destroy(&sb);
	return ok;
}

void sandbox_result_free(struct sandbox_result *res)
{
	buf_free(&res->compile.out);
	buf_free(&res->compile.err);
	buf_free(&res->run.out);
	buf_free(&res->run.err);
	buf_free(&res->kernel);
	for (size_t i = 0; i < res->n_outputs; i++) {
		free(res->outputs[i].name);
		buf_free(&res->outputs[i].data);
	}
	free(res->outputs);
}
