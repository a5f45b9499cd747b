/*
 * spec_render.c: a container spec (spec.h) as dockerd's create body and
 * as the docker CLI's `docker run` argv, side by side, field by field, so
 * that a field added to one is seen missing from the other.
 *
 * tests/unit/test_launch.c holds the body that docker's own CLI sent for
 * the argv of a cold run, and tests/integration/test_container_spec.py
 * makes the installed CLI send its body for every kind's argv and
 * compares it with ours.
 */
#define _GNU_SOURCE
#include "spec_render.h"
#include "docker.h"

#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* A tmpfs's options, one spelling for both renderers. The caller frees it. */
static char *tmpfs_options(const struct spec_tmpfs *t)
{
	return xasprintf("rw,nosuid,nodev,%ssize=%lld,mode=1777", t->exec ? "exec," : "", (long long)t->bytes);
}

void spec_argv(const struct container_spec *s, const char *docker, struct strv *a)
{
	strv_push(a, docker);
	strv_push(a, "run");
	strv_push(a, "--interactive"); /* stdin, stdout and stderr through pipes */
	strv_push(a, "--pull=never");
	strv_pushf(a, "--name=%s", s->name);
	for (size_t i = 0; i < s->labels.n; i++)
		strv_pushf(a, "--label=%s", s->labels.v[i]);
	strv_pushf(a, "--runtime=%s", s->runtime);
	strv_pushf(a, "--network=%s", s->network);
	if (s->cgroupns_private)
		strv_push(a, "--cgroupns=private");
	if (s->read_only)
		strv_push(a, "--read-only");
	strv_pushf(a, "--user=%s", s->user);
	if (s->cap_drop_all)
		strv_push(a, "--cap-drop=ALL");
	if (s->no_new_privileges)
		strv_push(a, "--security-opt=no-new-privileges");
	strv_pushf(a, "--security-opt=seccomp=%s", s->seccomp_profile);
	strv_pushf(a, "--memory=%lld", (long long)s->memory_bytes);
	strv_pushf(a, "--memory-swap=%lld", (long long)s->memory_swap_bytes);
	if (s->cpus > 0)
		strv_pushf(a, "--cpus=%.3f", s->cpus);
	for (size_t i = 0; i < s->n_ulimits; i++)
		strv_pushf(a, "--ulimit=%s=%lld:%lld", s->ulimits[i].name, (long long)s->ulimits[i].limit,
			   (long long)s->ulimits[i].limit);
	strv_pushf(a, "--pids-limit=%lld", (long long)s->pids_limit);
	for (size_t i = 0; i < s->n_tmpfs; i++) {
		autofree char *options = tmpfs_options(&s->tmpfs[i]);
		strv_pushf(a, "--tmpfs=%s:%s", s->tmpfs[i].dst, options);
	}
	for (size_t i = 0; i < s->n_mounts; i++)
		strv_pushf(a, "--mount=type=bind,src=%s,dst=%s%s", s->mounts[i].src, s->mounts[i].dst,
			   s->mounts[i].readonly ? ",readonly" : "");
	strv_pushf(a, "--workdir=%s", s->workdir);
	strv_pushf(a, "--log-driver=%s", s->log_driver);
	strv_pushf(a, "--cgroup-parent=%s", s->cgroup_parent);
	strv_pushf(a, "--hostname=%s", s->hostname);
	for (size_t i = 0; i < s->env.n; i++)
		strv_pushf(a, "--env=%s", s->env.v[i]);
	strv_push(a, "--entrypoint=");
	strv_push(a, s->image);
	for (size_t i = 0; i < s->cmd.n; i++)
		strv_push(a, s->cmd.v[i]);
}

static cJSON *strings(const struct strv *v)
{
	cJSON *array = cJSON_CreateArray();
	for (size_t i = 0; i < v->n; i++)
		cJSON_AddItemToArray(array, cJSON_CreateString(v->v[i]));
	return array;
}

/* As the CLI does: the profile's JSON, compacted, in the option itself.
 * Not through a symbolic link (the profile is ours: setup writes it). */
static char *seccomp_option(const char *path, struct buf *why)
{
	autoclose int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct buf text = {0};
	char chunk[8192];
	ssize_t r = 0;
	while (fd >= 0 && text.len < API_REPLY_MAX && (r = read(fd, chunk, sizeof chunk)) > 0)
		buf_append(&text, chunk, (size_t)r);
	cJSON *profile = fd >= 0 && r == 0 ? cJSON_ParseWithLength(text.data, text.len) : NULL;
	cJSON_Delete(profile);
	if (!profile) {
		buf_free(&text);
		buf_printf(why, "cannot read the seccomp profile %s", path);
		return NULL;
	}
	/* Whitespace out, the text kept: a number is never re-printed. */
	cJSON_Minify(text.data);
	char *opt = xasprintf("seccomp=%s", text.data);
	buf_free(&text);
	return opt;
}

/* HostConfig: where the container may reach and what it may use. */
static bool host_config(const struct container_spec *s, cJSON *host, struct buf *why)
{
	autofree char *seccomp = seccomp_option(s->seccomp_profile, why);
	if (!seccomp)
		return false;
	cJSON_AddStringToObject(host, "Runtime", s->runtime);
	cJSON_AddStringToObject(host, "NetworkMode", s->network);
	if (s->cgroupns_private)
		cJSON_AddStringToObject(host, "CgroupnsMode", "private");
	cJSON_AddBoolToObject(host, "ReadonlyRootfs", s->read_only);
	if (s->cap_drop_all)
		cJSON_AddItemToArray(cJSON_AddArrayToObject(host, "CapDrop"), cJSON_CreateString("ALL"));
	cJSON *opts = cJSON_AddArrayToObject(host, "SecurityOpt");
	if (s->no_new_privileges)
		cJSON_AddItemToArray(opts, cJSON_CreateString("no-new-privileges"));
	cJSON_AddItemToArray(opts, cJSON_CreateString(seccomp));
	cJSON_AddNumberToObject(host, "Memory", (double)s->memory_bytes);
	cJSON_AddNumberToObject(host, "MemorySwap", (double)s->memory_swap_bytes);
	if (s->cpus > 0)
		cJSON_AddNumberToObject(host, "NanoCpus", round(s->cpus * 1e9));
	cJSON *ulimits = cJSON_AddArrayToObject(host, "Ulimits");
	for (size_t i = 0; i < s->n_ulimits; i++) {
		cJSON *u = cJSON_CreateObject();
		cJSON_AddStringToObject(u, "Name", s->ulimits[i].name);
		cJSON_AddNumberToObject(u, "Soft", (double)s->ulimits[i].limit);
		cJSON_AddNumberToObject(u, "Hard", (double)s->ulimits[i].limit);
		cJSON_AddItemToArray(ulimits, u);
	}
	cJSON_AddNumberToObject(host, "PidsLimit", (double)s->pids_limit);
	cJSON *tmpfs = cJSON_AddObjectToObject(host, "Tmpfs");
	for (size_t i = 0; i < s->n_tmpfs; i++) {
		autofree char *options = tmpfs_options(&s->tmpfs[i]);
		cJSON_AddStringToObject(tmpfs, s->tmpfs[i].dst, options);
	}
	cJSON *mounts = cJSON_AddArrayToObject(host, "Mounts");
	for (size_t i = 0; i < s->n_mounts; i++) {
		cJSON *m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "Type", "bind");
		cJSON_AddStringToObject(m, "Source", s->mounts[i].src);
		cJSON_AddStringToObject(m, "Target", s->mounts[i].dst);
		cJSON_AddBoolToObject(m, "ReadOnly", s->mounts[i].readonly);
		cJSON_AddItemToArray(mounts, m);
	}
	cJSON *log = cJSON_AddObjectToObject(host, "LogConfig");
	cJSON_AddStringToObject(log, "Type", s->log_driver);
	cJSON_AddObjectToObject(log, "Config");
	cJSON_AddStringToObject(host, "CgroupParent", s->cgroup_parent);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(host, "RestartPolicy"), "Name", "no");
	return true;
}

bool spec_create_body(const struct container_spec *s, cJSON **out, struct buf *why)
{
	*out = NULL;
	cJSON *body = cJSON_CreateObject();
	if (!host_config(s, cJSON_AddObjectToObject(body, "HostConfig"), why)) {
		cJSON_Delete(body);
		return false;
	}
	/* --interactive: attached to all three, stdin closed when the
	 * attached client closes it. */
	cJSON_AddBoolToObject(body, "AttachStdin", true);
	cJSON_AddBoolToObject(body, "AttachStdout", true);
	cJSON_AddBoolToObject(body, "AttachStderr", true);
	cJSON_AddBoolToObject(body, "OpenStdin", true);
	cJSON_AddBoolToObject(body, "StdinOnce", true);
	cJSON *labels = cJSON_AddObjectToObject(body, "Labels");
	for (size_t i = 0; i < s->labels.n; i++) {
		const char *kv = s->labels.v[i], *eq = strchr(kv, '=');
		autofree char *key = xstrndup(kv, eq ? (size_t)(eq - kv) : strlen(kv));
		cJSON_AddStringToObject(labels, key, eq ? eq + 1 : "");
	}
	cJSON_AddStringToObject(body, "User", s->user);
	cJSON_AddStringToObject(body, "WorkingDir", s->workdir);
	cJSON_AddStringToObject(body, "Hostname", s->hostname);
	/*
	 * No network: dockerd then sets up none at all, where for "none" it
	 * still made an empty network sandbox and had runc or runsc run a
	 * hook that re-executes dockerd's 80 MB binary (libnetwork-setkey)
	 * in every container: 0.25 CPU-s and 0.2 s of each gVisor run here
	 * (docs/PERFORMANCE.md). The container still gets a network
	 * namespace of its own, with loopback only; /etc/hosts, which dockerd
	 * wrote with that sandbox, is sandbox.hostsFile (spec.c). The CLI
	 * has no flag for it: a run through argv keeps docker's way.
	 */
	if (!strcmp(s->network, "none"))
		cJSON_AddTrueToObject(body, "NetworkDisabled");
	cJSON_AddItemToObject(body, "Env", strings(&s->env));
	cJSON_AddItemToArray(cJSON_AddArrayToObject(body, "Entrypoint"), cJSON_CreateString(""));
	cJSON_AddStringToObject(body, "Image", s->image);
	cJSON_AddItemToObject(body, "Cmd", strings(&s->cmd));
	*out = body;
	return true;
}

bool sandbox_spec_text(const struct conf *c, const struct language *l, const char *kind, bool body,
		       struct buf *out, struct buf *why)
{
	struct container_spec s;
	if (!spec_example(c, l, kind, &s)) {
		buf_printf(why, "no %s sandbox for %s here (a kind spec.h knows, its image built, "
			   "what it needs in the conf)", kind, l->id);
		return false;
	}
	bool ok = true;
	if (body) {
		cJSON *json;
		ok = spec_create_body(&s, &json, why);
		if (ok) {
			autofree char *text = cJSON_Print(json);
			buf_printf(out, "%s\n", text);
			cJSON_Delete(json);
		}
	} else {
		struct strv argv = {0};
		spec_argv(&s, c->docker, &argv);
		for (size_t i = 0; i < argv.n; i++)
			buf_append(out, argv.v[i], strlen(argv.v[i]) + 1);
		strv_free(&argv);
	}
	spec_free(&s);
	return ok;
}
