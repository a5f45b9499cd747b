/* argv.c: the hardened docker argv of one run. */
#define _GNU_SOURCE
#include "argv.h"

#include <string.h>

/*
 * Runs inside the sandbox as its first process, before the user's program
 * (in a session, as each step's first process: without the copy).
 * A constant: no part of a request is ever interpolated into it; the
 * request's file names and args reach it only as argv elements.
 *
 * Arguments: P (the program's process limit), K, then K words of the
 * compile command (K = 0: none), then the program's argv. It copies the
 * read-only code into the writable work dir, runs the compile step with
 * its output to files, lowers RLIMIT_NPROC to P, and tells the worker
 * where it stands on stderr with the byte \036 (the protocol is in
 * decoder.h). Code that runs during the compile can write to the same
 * stderr, so the worker trusts these records for nothing but the result:
 * the sandbox's life is bounded from outside (deadline.c).
 */
#define COPY_CODE "cp -R /src/. /box/ || exit 125\n"
#define ENTRY_STEPS \
	"p=$1 k=$2; shift 2\n" \
	"if [ \"$k\" -gt 0 ]; then\n" \
	"  printf '\\036' >&2\n" \
	"  ( i=0; for a do shift; i=$((i + 1)); [ $i -le $k ] && set -- \"$@\" \"$a\"; done\n" \
	"    exec \"$@\" ) </dev/null >/tmp/.isobox-out 2>/tmp/.isobox-err\n" \
	"  rc=$?\n" \
	"  printf '\\036%d %d %d\\n' $rc $(($(wc -c </tmp/.isobox-out))) $(($(wc -c </tmp/.isobox-err))) >&2\n" \
	"  cat /tmp/.isobox-out /tmp/.isobox-err >&2\n" \
	"  rm -f /tmp/.isobox-out /tmp/.isobox-err\n" \
	"  [ $rc -eq 0 ] || exit $rc\n" \
	"  shift $k\n" \
	"fi\n" \
	"ulimit -p \"$p\" || exit 125\n" \
	"printf '\\036' >&2\n" \
	"exec \"$@\"\n"
static const char entry_script[] = COPY_CODE ENTRY_STEPS;
/* A session step: the agent wrote the files into /workspace already. */
static const char step_script[] = ENTRY_STEPS;
/*
 * A warm sandbox's agent starts through the same shell: dash exports PWD
 * and orders the environment its own way, and the program the agent runs
 * must find the environment block (/proc/self/environ, /proc/1/environ)
 * that a cold run's gets.
 */
static const char warm_script[] = "exec \"$@\"\n";

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

/*
 * Everything but the code, the agent and the command: one list for a cold
 * run and a warm sandbox, so that they cannot drift apart. kind is the
 * isobox.kind label ("cold", "warm").
 */
/*
 * Every run's flags. own_cgroup (NULL: none): a cgroup of our own below
 * the parent that the sandbox starts in (a warm one, cgroup.h), whose
 * quota is its CPU limit: a quota of the container's own would stop the
 * taker from lowering it (the kernel refuses a parent's quota below a
 * child's).
 */
static void push_hardened(const struct conf *c, const struct language *l, const struct limits *lim,
			  bool network, const char *container, const char *owner, const char *kind,
			  const char *home, const char *own_cgroup, struct strv *a)
{
	strv_push(a, c->docker);
	strv_push(a, "run");
	strv_push(a, "--interactive"); /* stdin, stdout and stderr through pipes */
	strv_push(a, "--pull=never");
	strv_pushf(a, "--name=%s", container);
	strv_pushf(a, "--label=isobox.instance=%s", c->instance);
	strv_pushf(a, "--label=isobox.owner=%s", owner);
	strv_pushf(a, "--label=isobox.kind=%s", kind);
	bool runc = c->backend == BACKEND_RUNC;
	if (network) {
		/* Egress: the firewalled bridge, a runtime with a network stack
		 * (runsc-egress; runc's is the host kernel's), and the resolvers
		 * that the firewall lets through (egress.c). */
		strv_pushf(a, "--runtime=%s", runc ? c->runc.runtime : c->network.runtime);
		strv_pushf(a, "--network=%s", c->network.docker_network);
		strv_pushf(a, "--mount=type=bind,src=%s/resolv.conf,dst=/etc/resolv.conf,readonly",
			   c->network.state_dir);
	} else {
		strv_pushf(a, "--runtime=%s", runc ? c->runc.runtime : c->runtime);
		strv_push(a, "--network=none");
		/* Not the host's resolvers: a file naming none (deploy/setup.sh). */
		strv_pushf(a, "--mount=type=bind,src=%s,dst=/etc/resolv.conf,readonly", c->sandbox.resolv_conf);
	}
	/* runc: the program's /proc/self/cgroup is "/", not the host's path
	 * (gVisor's is its own anyway). */
	if (runc)
		strv_push(a, "--cgroupns=private");
	strv_push(a, "--read-only");
	strv_push(a, "--user=65534:65534");
	strv_push(a, "--cap-drop=ALL");
	strv_push(a, "--security-opt=no-new-privileges");
	/* gVisor: applied inside the sandbox by runsc --oci-seccomp (no user
	 * namespaces). runc: the host kernel's filter, an allow list. */
	strv_pushf(a, "--security-opt=seccomp=%s",
		   runc ? c->runc.seccomp_profile : c->sandbox.seccomp_profile);
	strv_pushf(a, "--memory=%lld", (long long)lim->memory_bytes);
	strv_pushf(a, "--memory-swap=%lld", (long long)lim->memory_bytes); /* = no swap */
	if (!own_cgroup)
		strv_pushf(a, "--cpus=%.3f", lim->cpus);
	/*
	 * The process limit is RLIMIT_NPROC, which gVisor enforces cleanly.
	 * The host pids cgroup only backstops: under ptrace, a low pids limit
	 * crashes the sandbox at boot (docs/ARCHITECTURE.md). Threads count:
	 * a compiler gets at least compilePids, and the entry script lowers
	 * the limit to the program's before it starts the program. Not in a
	 * session, whose kernel cells run without that script.
	 */
	int64_t nproc = lim->pids;
	if (l->compile.n && strcmp(kind, "session") && nproc < c->sandbox.compile_pids)
		nproc = c->sandbox.compile_pids;
	strv_pushf(a, "--ulimit=nproc=%lld:%lld", (long long)nproc, (long long)nproc);
	strv_pushf(a, "--pids-limit=%lld", (long long)c->sandbox.pids_backstop);
	strv_push(a, "--ulimit=core=0:0");
	strv_push(a, "--ulimit=nofile=1024:1024");
	strv_pushf(a, "--tmpfs=/tmp:rw,nosuid,nodev,size=%lld,mode=1777",
		   (long long)c->sandbox.tmp_bytes);
	strv_pushf(a, "--tmpfs=/box:rw,nosuid,nodev,exec,size=%lld,mode=1777",
		   (long long)c->sandbox.work_bytes);
	strv_pushf(a, "--workdir=%s", home);
	strv_push(a, "--log-driver=none"); /* output goes through pipes only */
	if (own_cgroup)
		strv_pushf(a, "--cgroup-parent=%s/%s", c->cgroup_parent, own_cgroup);
	else
		strv_pushf(a, "--cgroup-parent=%s", c->cgroup_parent);
	strv_push(a, "--hostname=isobox");
	/* The image has no environment; this is all the program sees. */
	strv_push(a, "--env=PATH=/usr/local/bin:/usr/bin:/bin");
	strv_pushf(a, "--env=HOME=%s", home);
	strv_push(a, "--env=LANG=C.UTF-8");
	strv_push(a, "--env=TMPDIR=/tmp");
	for (size_t i = 0; i < l->env.n; i++)
		strv_pushf(a, "--env=%s", l->env.v[i]);
}

static void push_command(struct strv *a, const char *script, const struct sandbox_job *job);

/* A volume (sandbox.h, Volumes) at /memory: its mounted filesystem, never
 * its image. */
static void push_volume(const struct conf *c, const char *id, bool ro, struct strv *a)
{
	if (id && c->volumes.dir)
		strv_pushf(a, "--mount=type=bind,src=%s/%s,dst=/memory%s", c->volumes.dir, id,
			   ro ? ",readonly" : "");
}

/* Which request a cold sandbox serves, for `docker ps` (a warm one was
 * started before any; a session serves many). */
static void push_request_label(const struct sandbox_job *job, struct strv *a)
{
	if (job->request_id)
		strv_pushf(a, "--label=isobox.request=%s", job->request_id);
}

void sandbox_docker_argv(const struct conf *c, const struct sandbox_job *job,
			 const char *container, const char *owner, const char *src_dir,
			 struct strv *a)
{
	const struct language *l = job->lang;
	push_hardened(c, l, &job->limits, job->network, container, owner, "cold", "/box", NULL, a);
	push_request_label(job, a);
	strv_pushf(a, "--mount=type=bind,src=%s,dst=/src,readonly", src_dir);
	push_volume(c, job->volume, job->volume_ro, a);
	strv_push(a, "--entrypoint=");
	strv_push(a, l->image_id);
	push_command(a, entry_script, job);
}

/* The entry script, P, K, the compile command and the program's argv. */
static void push_command(struct strv *a, const char *script, const struct sandbox_job *job)
{
	const struct language *l = job->lang;
	strv_push(a, "/bin/sh");
	strv_push(a, "-c");
	strv_push(a, script);
	strv_push(a, "isobox"); /* $0 of the entry script */
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

void sandbox_warm_argv(const struct conf *c, const struct language *l, const struct limits *lim,
		       const char *container, const char *owner, bool own_cgroup, struct strv *a)
{
	push_hardened(c, l, lim, false, container, owner, "warm", "/box", own_cgroup ? container : NULL, a);
	strv_pushf(a, "--mount=type=bind,src=%s,dst=/isobox-agent,readonly", c->warm.agent_dir);
	strv_push(a, "--entrypoint=");
	strv_push(a, l->image_id);
	strv_push(a, "/bin/sh");
	strv_push(a, "-c");
	strv_push(a, warm_script);
	strv_push(a, "isobox"); /* $0, as a cold run's */
	for (size_t i = 0; i < l->agent.n; i++)
		strv_push(a, l->agent.v[i]);
	/* The agent ends by itself if nobody takes it well after its age. */
	strv_pushf(a, "%lld", (long long)(c->warm.max_age_ms / 1000 + 60));
	for (size_t i = 0; i < l->preload.n; i++)
		strv_push(a, l->preload.v[i]);
}

void sandbox_session_argv(const struct conf *c, const struct language *l, const struct session *s,
			  const char *owner, struct strv *a)
{
	bool kernel = s->type == SESSION_KERNEL;
	push_hardened(c, l, &s->limits, s->network, s->container, owner, "session", "/workspace", NULL, a);
	strv_pushf(a, "--label=isobox.session=%s", s->id);
	push_volume(c, s->volume[0] ? s->volume : NULL, s->volume_ro, a);
	/* The session's files: in its own memory, like /box, and kept. */
	strv_pushf(a, "--tmpfs=/workspace:rw,nosuid,nodev,exec,size=%lld,mode=1777",
		   (long long)c->sessions.workspace_bytes);
	strv_pushf(a, "--mount=type=bind,src=%s,dst=/isobox-agent,readonly", c->warm.agent_dir);
	strv_push(a, "--entrypoint=");
	strv_push(a, l->image_id);
	strv_push(a, "/isobox-agent/isobox-agent");
	strv_push(a, kernel ? "kernel" : "shell");
	for (size_t i = 0; kernel && i < l->kernel.n; i++)
		strv_push(a, l->kernel.v[i]);
}

void sandbox_volume_argv(const struct conf *c, const struct language *l, const char *id,
			 const char *container, const char *owner, struct strv *a)
{
	push_hardened(c, l, &l->defaults, false, container, owner, "cold", "/memory", NULL, a);
	strv_pushf(a, "--mount=type=bind,src=%s,dst=/isobox-agent,readonly", c->warm.agent_dir);
	push_volume(c, id, false, a);
	strv_push(a, "--entrypoint=");
	strv_push(a, l->image_id);
	strv_push(a, "/isobox-agent/isobox-agent");
	strv_push(a, "--workspace");
	strv_push(a, "/memory");
	strv_push(a, "shell");
}

void sandbox_outputs_argv(const struct conf *c, const struct sandbox_job *job, const char *container,
			  const char *owner, struct strv *a)
{
	push_hardened(c, job->lang, &job->limits, job->network, container, owner, "cold", "/box", NULL, a);
	push_request_label(job, a);
	strv_pushf(a, "--mount=type=bind,src=%s,dst=/isobox-agent,readonly", c->warm.agent_dir);
	push_volume(c, job->volume, job->volume_ro, a);
	strv_push(a, "--entrypoint=");
	strv_push(a, job->lang->image_id);
	strv_push(a, "/isobox-agent/isobox-agent");
	strv_push(a, "--workspace");
	strv_push(a, "/box");
	strv_push(a, "shell");
}

void sandbox_step_argv(const struct sandbox_job *job, struct strv *a)
{
	push_command(a, step_script, job);
}
