/*
 * spec.c: the container of every kind of sandbox (spec.h): every
 * hardening property in one function, what each kind adds beside it, and
 * the entry script that a cold run starts with.
 */
#define _GNU_SOURCE
#include "spec.h"
#include "owner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Runs inside the sandbox as its first process, before the user's program
 * (in a session, as each step's first process: without the copy).
 * A constant: no part of a request is ever interpolated into it; the
 * request's file names and args reach it only as argv elements.
 *
 * Arguments: on a cold run, first the nonce of its end marks; then P
 * (the process limit), K, then K words of the compile command (K = 0:
 * none), then the program's argv. It copies the read-only
 * code into the writable work dir, runs the compile step with its output
 * to files, lowers RLIMIT_NPROC to P, and tells the worker where it
 * stands on stderr with the byte \036 (the protocol is in decoder.h).
 * Code that runs during the compile can write to the same stderr, so the
 * worker trusts these records for nothing but the result: the sandbox's
 * life is bounded from outside (deadline.c).
 *
 * The compile, and a cold run's program, run under the agent's reporter
 * (agent/agent_reap.c), which reads how they ended from the wait status:
 * a shell's $? is 128 + N both after signal N and after exit(128 + N).
 * The compile's end status goes to a file, the program's into end marks.
 * A session step's is its agent's to read.
 */
#define REPORTER "/isobox-agent/isobox-agent"
#define COPY_CODE "cp -R /src/. /box/ || exit 125\n"
#define ENTRY_STEPS \
	"p=$1 k=$2; shift 2\n" \
	"if [ \"$k\" -gt 0 ]; then\n" \
	"  printf '\\036' >&2\n" \
	"  ( i=0; for a do shift; i=$((i + 1)); [ $i -le $k ] && set -- \"$@\" \"$a\"; done\n" \
	"    exec " REPORTER " reap =3 \"$@\" ) </dev/null >/tmp/.isobox-out 2>/tmp/.isobox-err 3>/tmp/.isobox-end\n" \
	"  rc=$? end=$(cat /tmp/.isobox-end)\n" \
	"  printf '\\036%d %d %d\\n' ${end:-$rc} $(($(wc -c </tmp/.isobox-out))) $(($(wc -c </tmp/.isobox-err))) >&2\n" \
	"  cat /tmp/.isobox-out /tmp/.isobox-err >&2\n" \
	"  rm -f /tmp/.isobox-out /tmp/.isobox-err /tmp/.isobox-end\n" \
	"  [ $rc -eq 0 ] || exit $rc\n" \
	"  shift $k\n" \
	"fi\n" \
	"ulimit -p \"$p\" || exit 125\n" \
	"printf '\\036' >&2\n"
static const char entry_script[] = COPY_CODE "n=$1; shift\n" ENTRY_STEPS "exec " REPORTER " reap \"$n\" \"$@\"\n";
/* A session step: the agent wrote the files into /workspace already, and
 * it reads how the program ended itself. */
static const char step_script[] = ENTRY_STEPS "exec \"$@\"\n";
/*
 * A warm sandbox's agent starts through the same shell: dash exports PWD
 * and orders the environment its own way, and the program the agent runs
 * must find the environment block (/proc/self/environ) that a cold run's
 * gets, and its own pid: a first child comes and goes, as a cold run's
 * copy to /box does, so that the agent, the program, is pid 3 as a cold
 * run's program is. The reporter learns the job's nonce from the agent
 * (fd 3).
 */
static const char warm_script[] = "/bin/true\nexec " REPORTER " reap - \"$@\"\n";

/* A path's last part without its extension ("src/main.ts": "main"), or
 * with keep_dir the whole path without it ("src/main"). */
static char *strip_ext(const char *path, bool keep_dir)
{
	const char *slash = strrchr(path, '/');
	const char *start = slash ? slash + 1 : path;
	const char *dot = strrchr(start, '.');
	const char *end = dot && dot != start ? dot : start + strlen(start);
	return keep_dir ? xstrndup(path, (size_t)(end - path)) : xstrndup(start, (size_t)(end - start));
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

/*
 * Expand one word of a registry argv template and push the result:
 *   {file}       the entry file ("main.c")
 *   {file:base}  its name without directory and extension ("main")
 *   {file:stem}  its path without extension ("src/main" for "src/main.ts":
 *                where a compiler that keeps the tree puts its output)
 *   {files:EXT}  a whole word: one word per request file ending in EXT,
 *                in request order (several translation units)
 * In a compile command a word that is only a file becomes "./name": no
 * tool can read that as an option, whatever the name (request.c refuses
 * names starting with '-' or '@' as well, for the run command's sake).
 */
static void push_expanded(struct strv *a, const char *tmpl, const struct sandbox_job *job, bool compile)
{
	const char *prefix = compile ? "./" : "";
	if (!strncmp(tmpl, "{files:", 7) && ends_with(tmpl, "}")) {
		char *ext = xstrndup(tmpl + 7, strlen(tmpl) - 8);
		for (size_t i = 0; i < job->n_files; i++)
			if (ends_with(job->files[i].name, ext))
				strv_pushf(a, "%s%s", prefix, job->files[i].name);
		free(ext);
		return;
	}
	if (!strcmp(tmpl, "{file}")) {
		strv_pushf(a, "%s%s", prefix, job->files[0].name);
		return;
	}
	char *base = strip_ext(job->files[0].name, false), *stem = strip_ext(job->files[0].name, true);
	struct buf b = {0};
	for (const char *p = tmpl; *p;) {
		if (!strncmp(p, "{file:base}", 11)) {
			buf_append(&b, base, strlen(base));
			p += 11;
		} else if (!strncmp(p, "{file:stem}", 11)) {
			buf_append(&b, stem, strlen(stem));
			p += 11;
		} else if (!strncmp(p, "{file}", 6)) {
			buf_append(&b, job->files[0].name, strlen(job->files[0].name));
			p += 6;
		} else {
			buf_append(&b, p++, 1);
		}
	}
	strv_push(a, b.data);
	buf_free(&b);
	free(base);
	free(stem);
}

static void add_mount(struct container_spec *s, char *src, const char *dst, bool readonly)
{
	if (s->n_mounts == SPEC_MOUNTS_MAX)
		die("spec: more than %d mounts", SPEC_MOUNTS_MAX); /* a bug of this file's */
	s->mounts[s->n_mounts++] = (struct spec_mount){src, dst, readonly};
}

static void add_tmpfs(struct container_spec *s, const char *dst, int64_t bytes, bool exec)
{
	if (s->n_tmpfs == SPEC_TMPFS_MAX)
		die("spec: more than %d tmpfs", SPEC_TMPFS_MAX);
	s->tmpfs[s->n_tmpfs++] = (struct spec_tmpfs){dst, bytes, exec};
}

static void add_ulimit(struct container_spec *s, const char *name, int64_t limit)
{
	if (s->n_ulimits == SPEC_ULIMITS_MAX)
		die("spec: more than %d ulimits", SPEC_ULIMITS_MAX);
	s->ulimits[s->n_ulimits++] = (struct spec_ulimit){name, limit};
}

void spec_free(struct container_spec *s)
{
	free(s->name);
	strv_free(&s->labels);
	for (size_t i = 0; i < s->n_mounts; i++)
		free(s->mounts[i].src);
	free(s->cgroup_parent);
	strv_free(&s->env);
	strv_free(&s->cmd);
	*s = (struct container_spec){0};
}

/*
 * Every sandbox's hardening: one function for every kind, so that no kind
 * can drift from the others. kind is the isobox.kind label ("cold",
 * "warm", "session"); home the working directory. own_cgroup (NULL:
 * none): a cgroup of our own below the parent that the sandbox starts in
 * (a warm one, cgroup.h), whose quota is its CPU limit: a quota of the
 * container's own would stop the taker from lowering it (the kernel
 * refuses a parent's quota below a child's).
 */
static void hardened(const struct conf *c, const struct language *l, const struct limits *lim, bool network,
		     const char *name, const char *owner, const char *kind, const char *home,
		     const char *own_cgroup, struct container_spec *s)
{
	*s = (struct container_spec){0};
	s->name = xstrdup(name);
	strv_pushf(&s->labels, "isobox.instance=%s", c->instance);
	strv_pushf(&s->labels, "isobox.owner=%s", owner);
	strv_pushf(&s->labels, "isobox.kind=%s", kind);
	bool runc = c->backend == BACKEND_RUNC;
	if (network) {
		/* Egress: the firewalled bridge, a runtime with a network stack
		 * (runsc-egress; runc's is the host kernel's), and the resolvers
		 * that the firewall lets through (egress.c). */
		s->runtime = runc ? c->runc.runtime : c->network.runtime;
		s->network = c->network.docker_network;
		add_mount(s, xasprintf("%s/resolv.conf", c->network.state_dir), "/etc/resolv.conf", true);
	} else {
		s->runtime = runc ? c->runc.runtime : c->runtime;
		s->network = "none";
		/* Not the host's resolvers: a file naming none (deploy/setup.sh).
		 * And /etc/hosts: dockerd writes none where it sets up no
		 * network (spec_render.c, NetworkDisabled). */
		add_mount(s, xstrdup(c->sandbox.resolv_conf), "/etc/resolv.conf", true);
		add_mount(s, xstrdup(c->sandbox.hosts_file), "/etc/hosts", true);
	}
	/* runc: the program's /proc/self/cgroup is "/", not the host's path
	 * (gVisor's is its own anyway). */
	s->cgroupns_private = runc;
	s->read_only = true;
	s->user = "65534:65534";
	s->cap_drop_all = true;
	s->no_new_privileges = true;
	/* gVisor: applied inside the sandbox by runsc --oci-seccomp (no user
	 * namespaces). runc: the host kernel's filter, an allow list. */
	s->seccomp_profile = runc ? c->runc.seccomp_profile : c->sandbox.seccomp_profile;
	s->memory_bytes = lim->memory_bytes;
	s->memory_swap_bytes = lim->memory_bytes; /* = no swap */
	s->cpus = own_cgroup ? 0 : lim->cpus;
	/*
	 * The process limit is RLIMIT_NPROC, which gVisor enforces cleanly.
	 * The host pids cgroup only backstops: under ptrace, a low pids limit
	 * crashes the sandbox at boot (docs/ARCHITECTURE.md). Threads count:
	 * a compiler gets at least compilePids, and the entry script lowers
	 * the limit to the program's before it starts the program. Not in a
	 * session, whose kernel cells run without that script. The limit
	 * counts every process of the sandbox, its first one (the reporter,
	 * agent/agent_reap.c, or a session's agent) included, and the
	 * program sees it as asked.
	 */
	int64_t nproc = lim->pids;
	if (l->compile.n && strcmp(kind, "session") && nproc < c->sandbox.compile_pids)
		nproc = c->sandbox.compile_pids;
	add_ulimit(s, "nproc", nproc);
	s->pids_limit = c->sandbox.pids_backstop;
	add_ulimit(s, "core", 0);
	add_ulimit(s, "nofile", 1024);
	add_tmpfs(s, "/tmp", c->sandbox.tmp_bytes, false);
	add_tmpfs(s, "/box", c->sandbox.work_bytes, true);
	s->workdir = home;
	s->log_driver = "none"; /* output goes through pipes only */
	s->cgroup_parent = own_cgroup ? xasprintf("%s/%s", c->cgroup_parent, own_cgroup) : xstrdup(c->cgroup_parent);
	s->hostname = "isobox";
	/* The image has no environment; this is all the program sees. */
	strv_push(&s->env, "PATH=/usr/local/bin:/usr/bin:/bin");
	strv_pushf(&s->env, "HOME=%s", home);
	strv_push(&s->env, "LANG=C.UTF-8");
	strv_push(&s->env, "TMPDIR=/tmp");
	for (size_t i = 0; i < l->env.n; i++)
		strv_push(&s->env, l->env.v[i]);
	s->image = l->image_id;
}

static void push_command(struct strv *a, const char *script, const char *nonce, const struct sandbox_job *job);

/* A volume (sandbox.h, Volumes) at /memory: its mounted filesystem, never
 * its image. */
static void add_volume(const struct conf *c, const char *id, bool ro, struct container_spec *s)
{
	if (id && c->volumes.dir)
		add_mount(s, xasprintf("%s/%s", c->volumes.dir, id), "/memory", ro);
}

/* The agent (sandbox/agent), read-only, for the kinds it runs in. */
static void add_agent(const struct conf *c, struct container_spec *s)
{
	add_mount(s, xstrdup(c->warm.agent_dir), "/isobox-agent", true);
}

/* Which request a cold sandbox serves, for `docker ps` (a warm one was
 * started before any; a session serves many). */
static void add_request_label(const struct sandbox_job *job, struct container_spec *s)
{
	if (job->request_id)
		strv_pushf(&s->labels, "isobox.request=%s", job->request_id);
}

void spec_cold(const struct conf *c, const struct sandbox_job *job, const char *name, const char *owner,
	       const char *src_dir, const char *nonce, struct container_spec *s)
{
	hardened(c, job->lang, &job->limits, job->network, name, owner, "cold", "/box", NULL, s);
	add_request_label(job, s);
	add_mount(s, xstrdup(src_dir), "/src", true);
	add_agent(c, s); /* its reporter */
	add_volume(c, job->volume, job->volume_ro, s);
	push_command(&s->cmd, entry_script, nonce, job);
}

/* The entry script, (a cold run's nonce,) P, K, the compile command and
 * the program's argv. */
static void push_command(struct strv *a, const char *script, const char *nonce, const struct sandbox_job *job)
{
	const struct language *l = job->lang;
	strv_push(a, "/bin/sh");
	strv_push(a, "-c");
	strv_push(a, script);
	strv_push(a, "isobox"); /* $0 of the entry script */
	if (nonce)
		strv_push(a, nonce);
	strv_pushf(a, "%lld", (long long)job->limits.pids);
	size_t count_at = a->n;
	strv_push(a, "0"); /* K, fixed below */
	for (size_t i = 0; i < l->compile.n; i++)
		push_expanded(a, l->compile.v[i], job, true);
	free(a->v[count_at]);
	a->v[count_at] = xasprintf("%zu", a->n - count_at - 1);
	for (size_t i = 0; i < l->run.n; i++)
		push_expanded(a, l->run.v[i], job, false);
	for (size_t i = 0; i < job->n_args; i++)
		strv_push(a, job->args[i]);
}

void spec_warm(const struct conf *c, const struct language *l, const struct limits *lim, const char *name,
	       const char *owner, bool own_cgroup, struct container_spec *s)
{
	hardened(c, l, lim, false, name, owner, "warm", "/box", own_cgroup ? name : NULL, s);
	add_agent(c, s);
	strv_push(&s->cmd, "/bin/sh");
	strv_push(&s->cmd, "-c");
	strv_push(&s->cmd, warm_script);
	strv_push(&s->cmd, "isobox"); /* $0, as a cold run's */
	for (size_t i = 0; i < l->agent.n; i++)
		strv_push(&s->cmd, l->agent.v[i]);
	/* The agent ends by itself if nobody takes it well after its age. */
	strv_pushf(&s->cmd, "%lld", (long long)(c->warm.max_age_ms / 1000 + 60));
	for (size_t i = 0; i < l->preload.n; i++)
		strv_push(&s->cmd, l->preload.v[i]);
}

void spec_session(const struct conf *c, const struct language *l, const struct session *ses,
		  const char *owner, struct container_spec *s)
{
	bool kernel = ses->type == SESSION_KERNEL;
	hardened(c, l, &ses->limits, ses->network, ses->container, owner, "session", "/workspace", NULL, s);
	strv_pushf(&s->labels, "isobox.session=%s", ses->id);
	add_volume(c, ses->volume[0] ? ses->volume : NULL, ses->volume_ro, s);
	/* The session's files: in its own memory, like /box, and kept. */
	add_tmpfs(s, "/workspace", c->sessions.workspace_bytes, true);
	add_agent(c, s);
	strv_push(&s->cmd, "/isobox-agent/isobox-agent");
	strv_push(&s->cmd, kernel ? "kernel" : "shell");
	for (size_t i = 0; kernel && i < l->kernel.n; i++)
		strv_push(&s->cmd, l->kernel.v[i]);
}

/* The agent's command in a run of files: no session, a workspace dir. */
static void agent_shell(struct container_spec *s, const char *workspace)
{
	strv_push(&s->cmd, "/isobox-agent/isobox-agent");
	strv_push(&s->cmd, "--workspace");
	strv_push(&s->cmd, workspace);
	strv_push(&s->cmd, "shell");
}

void spec_volume(const struct conf *c, const struct language *l, const char *id, const char *name,
		 const char *owner, struct container_spec *s)
{
	hardened(c, l, &l->defaults, false, name, owner, "cold", "/memory", NULL, s);
	add_agent(c, s);
	add_volume(c, id, false, s);
	agent_shell(s, "/memory");
}

void spec_outputs(const struct conf *c, const struct sandbox_job *job, const char *name, const char *owner,
		  struct container_spec *s)
{
	hardened(c, job->lang, &job->limits, job->network, name, owner, "cold", "/box", NULL, s);
	add_request_label(job, s);
	add_agent(c, s);
	add_volume(c, job->volume, job->volume_ro, s);
	agent_shell(s, "/box");
}

void spec_step_command(const struct sandbox_job *job, struct strv *argv)
{
	push_command(argv, step_script, NULL, job);
}

/* Owned by no process: a container made from an example is the reaper's. */
static const char no_owner[] = "0.0";

bool spec_example(const struct conf *c, const struct language *l, const char *kind, struct container_spec *s)
{
	*s = (struct container_spec){0};
	char name[128];
	sandbox_container_name(c->instance, "print", name, sizeof name);
	struct sandbox_file file = {.name = l->file, .data = "", .len = 0};
	struct sandbox_job job = {.lang = l, .files = &file, .n_files = 1, .limits = l->defaults,
				  .network = !strcmp(kind, "network")};
	if (!l->image_id || !c->warm.agent_dir || (job.network && !c->network.enabled))
		return false;
	if (!strcmp(kind, "cold") || job.network) {
		autofree char *src = xasprintf("%s/print", c->work_dir);
		spec_cold(c, &job, name, no_owner, src, "0000000000000000", s);
	} else if (!strcmp(kind, "warm")) {
		spec_warm(c, l, &l->defaults, name, no_owner, false, s);
	} else if (!strcmp(kind, "session") || !strcmp(kind, "kernel")) {
		struct session ses = {.type = strcmp(kind, "kernel") ? SESSION_SHELL : SESSION_KERNEL,
				      .limits = l->defaults};
		snprintf(ses.id, sizeof ses.id, "print");
		snprintf(ses.container, sizeof ses.container, "%s", name);
		spec_session(c, l, &ses, no_owner, s);
	} else if (!strcmp(kind, "volume")) {
		spec_volume(c, l, "print", name, no_owner, s);
	} else if (!strcmp(kind, "outputs")) {
		spec_outputs(c, &job, name, no_owner, s);
	} else {
		return false;
	}
	return true;
}
