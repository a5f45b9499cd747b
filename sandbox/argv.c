/* argv.c: the hardened docker argv of one run. */
#define _GNU_SOURCE
#include "sandbox.h"

#include <string.h>

/*
 * Runs inside the sandbox as its first process, before the user's program:
 * copy the read-only code into the writable work dir, announce the start
 * with one byte (\036, RS) on stderr, then become the program. The worker
 * times the run from that byte and strips it, so docker's own start-up
 * messages never reach the result and start-up never eats the wall time.
 * A constant: no part of a request is ever interpolated into it.
 */
static const char entry_script[] =
	"cp -R /src/. /box/ && printf '\\036' >&2 && exec \"$@\"";

/* Replace each "{file}" in tmpl with file. */
static char *expand(const char *tmpl, const char *file)
{
	struct buf b = {0};
	const char *p;
	while ((p = strstr(tmpl, "{file}"))) {
		buf_append(&b, tmpl, (size_t)(p - tmpl));
		buf_append(&b, file, strlen(file));
		tmpl = p + 6;
	}
	buf_append(&b, tmpl, strlen(tmpl));
	return b.data;
}

void sandbox_docker_argv(const struct conf *c, const struct sandbox_job *job,
			 const char *container, const char *owner, const char *src_dir,
			 struct strv *a)
{
	const struct language *l = job->lang;
	const struct limits *lim = &job->limits;

	strv_push(a, c->docker);
	strv_push(a, "run");
	strv_push(a, "--interactive"); /* stdin, stdout and stderr through pipes */
	strv_push(a, "--pull=never");
	strv_pushf(a, "--name=%s", container);
	strv_pushf(a, "--label=isobox.instance=%s", c->instance);
	strv_pushf(a, "--label=isobox.owner=%s", owner);
	strv_pushf(a, "--runtime=%s", c->runtime);
	strv_push(a, "--network=none");
	strv_push(a, "--read-only");
	strv_push(a, "--user=65534:65534");
	strv_push(a, "--cap-drop=ALL");
	strv_push(a, "--security-opt=no-new-privileges");
	strv_pushf(a, "--memory=%lld", (long long)lim->memory_bytes);
	strv_pushf(a, "--memory-swap=%lld", (long long)lim->memory_bytes); /* = no swap */
	strv_pushf(a, "--cpus=%.3f", lim->cpus);
	/*
	 * The process limit is RLIMIT_NPROC, which gVisor enforces cleanly.
	 * The host pids cgroup only backstops: under ptrace, a low pids limit
	 * crashes the sandbox at boot (docs/ARCHITECTURE.md).
	 */
	strv_pushf(a, "--ulimit=nproc=%lld:%lld", (long long)lim->pids, (long long)lim->pids);
	strv_pushf(a, "--pids-limit=%lld", (long long)c->sandbox.pids_backstop);
	strv_push(a, "--ulimit=core=0:0");
	strv_push(a, "--ulimit=nofile=1024:1024");
	strv_pushf(a, "--tmpfs=/tmp:rw,nosuid,nodev,size=%lld,mode=1777",
		   (long long)c->sandbox.tmp_bytes);
	strv_pushf(a, "--tmpfs=/box:rw,nosuid,nodev,exec,size=%lld,mode=1777",
		   (long long)c->sandbox.work_bytes);
	strv_pushf(a, "--mount=type=bind,src=%s,dst=/src,readonly", src_dir);
	strv_push(a, "--workdir=/box");
	strv_push(a, "--log-driver=none"); /* output goes through pipes only */
	strv_pushf(a, "--cgroup-parent=%s", c->cgroup_parent);
	strv_push(a, "--hostname=isobox");
	/* The image has no environment; this is all the program sees. */
	strv_push(a, "--env=PATH=/usr/local/bin:/usr/bin:/bin");
	strv_push(a, "--env=HOME=/box");
	strv_push(a, "--env=LANG=C.UTF-8");
	strv_push(a, "--env=TMPDIR=/tmp");
	for (size_t i = 0; i < l->env.n; i++)
		strv_pushf(a, "--env=%s", l->env.v[i]);
	strv_push(a, "--entrypoint=");
	strv_push(a, l->image_id);
	strv_push(a, "/bin/sh");
	strv_push(a, "-c");
	strv_push(a, entry_script);
	strv_push(a, "isobox"); /* $0 of the entry script */
	for (size_t i = 0; i < l->run.n; i++) {
		char *arg = expand(l->run.v[i], job->files[0].name);
		strv_push(a, arg);
		free(arg);
	}
	for (size_t i = 0; i < job->n_args; i++)
		strv_push(a, job->args[i]);
}
