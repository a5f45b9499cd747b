/*
 * volume.c: volumes' images (sandbox.h, Volumes), by asking isobox-volumed
 * over its socket: one line each way. The worker never mounts anything
 * itself (it holds no privilege); it names a volume by the id the store
 * gave it, never by a path.
 */
#define _GNU_SOURCE
#include "volume.h"
#include "spec.h"
#include "deadline.h"
#include "docker.h"
#include "docker_list.h"
#include "removal.h"
#include "frame.h"
#include "owner.h"
#include "subproc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool volume_ask(const struct conf *c, const char *line, char *out, size_t out_len, struct fault *f)
{
	if (!c->volumes.dir)
		return fail(f, E_VOLUMES_OFF, "volumes are turned off on this server");
	autoclose int fd = unix_request(c->volumes.socket, line);
	if (fd < 0)
		return fail(f, E_SANDBOX_UNAVAILABLE, "isobox-volumed does not answer on %s: %s",
			    c->volumes.socket, strerror(errno));
	char reply[300];
	if (read_line_by(fd, now_ms() + VOLUMED_MS, reply, sizeof reply) < 0)
		return fail(f, E_SANDBOX_UNAVAILABLE, "isobox-volumed did not answer in time");
	reply[strcspn(reply, "\n")] = '\0';
	if (!strncmp(reply, "ok", 2) && (reply[2] == '\0' || reply[2] == ' ')) {
		if (out_len)
			snprintf(out, out_len, "%s", reply[2] ? reply + 3 : "");
		return true;
	}
	if (!strcmp(reply, "err busy"))
		return fail(f, E_VOLUME_BUSY, "the volume is mounted by a run or a session: "
			    "delete it when they end");
	return fail(f, E_SANDBOX_UNAVAILABLE, "isobox-volumed: %.200s",
		    !strncmp(reply, "err ", 4) ? reply + 4 : reply[0] ? reply : "no answer");
}

/* The volume is made for this server's backend: its root is that
 * backend's sandbox user's (uids.h). */
bool volume_make(const struct conf *c, const char *id, int64_t bytes, struct fault *f)
{
	char line[96];
	snprintf(line, sizeof line, "create %.32s %lld %s\n", id, (long long)bytes, conf_backend_name(c));
	return volume_ask(c, line, NULL, 0, f);
}

/*
 * Does a container bind its mount point? Unmounting it would not stop
 * one: the bind in the container's namespace keeps the filesystem alive,
 * so "busy" is asked of dockerd (a bind's source is its volume filter).
 */
static bool mounted_by_a_container(const struct conf *c, const char *id, struct fault *f)
{
	autofree char *volume = xasprintf("volume=%s/%s", c->volumes.dir, id);
	const char *filters[] = {volume, NULL};
	struct docker_list l;
	bool listed = docker_list(c, filters, false, now_ms() + REAP_LIST_MS, &l);
	bool busy = listed && l.n > 0;
	docker_list_free(&l);
	if (!listed)
		return !fail(f, E_DOCKER_UNAVAILABLE, "cannot ask dockerd what mounts the volume");
	if (busy)
		fail(f, E_VOLUME_BUSY, "the volume is mounted by a run or a session: delete it when they end");
	return busy;
}

bool volume_unmake(const struct conf *c, const char *id, struct fault *f)
{
	if (mounted_by_a_container(c, id, f) || f->code)
		return false;
	char line[64];
	snprintf(line, sizeof line, "remove %.32s\n", id);
	return volume_ask(c, line, NULL, 0, f);
}

/* "usage": bytes used, size, and the backend whose user owns its root. */
static bool ask_usage(const struct conf *c, const char *id, int64_t *used, int64_t *size,
		      char made_for[16], struct fault *f)
{
	char line[64], out[64];
	long long u, s;
	snprintf(line, sizeof line, "usage %.32s\n", id);
	if (!volume_ask(c, line, out, sizeof out, f))
		return false;
	if (sscanf(out, "%lld %lld %15s", &u, &s, made_for) != 3)
		return fail(f, E_SANDBOX_UNAVAILABLE, "isobox-volumed: a usage without numbers or owner");
	*used = u;
	*size = s;
	return true;
}

bool volume_usage(const struct conf *c, const char *id, int64_t *used, int64_t *size, struct fault *f)
{
	char made_for[16];
	return ask_usage(c, id, used, size, made_for, f);
}

bool volume_mountable(const struct conf *c, const char *id, struct fault *f)
{
	int64_t used, size;
	char made_for[16];
	if (!ask_usage(c, id, &used, &size, made_for, f))
		return false;
	const char *ours = conf_backend_name(c);
	if (strcmp(made_for, ours))
		return fail(f, E_VOLUME_OTHER_BACKEND, "the volume was made for the %s backend and this server "
			    "runs %s: its files are another sandbox user's (docs/BACKENDS.md, Volumes)",
			    made_for, ours);
	return true;
}

bool volume_agent_call(const struct conf *c, const struct language *l, const char *id,
		       struct agent_call *call, int64_t deadline, struct fault *f)
{
	if (!c->warm.agent_dir)
		return fail(f, E_SANDBOX_UNAVAILABLE, "no agent installed (warm.agentDir)");
	if (!l || !l->image_id)
		return fail(f, E_IMAGE_NOT_BUILT, "no image is built to reach the volume's files in");
	char rnd[AGENT_TAG_LEN + 1], tag[AGENT_TAG_LEN + 4], name[128];
	frame_new_tag(rnd);
	snprintf(tag, sizeof tag, "vf-%s", rnd);
	sandbox_container_name(c->instance, tag, name, sizeof name);
	int fds[3];
	pid_t client = -1;
	struct container_spec spec;
	struct strv argv = {0};
	spec_volume(c, l, id, name, sandbox_owner_id(), &spec);
	char container_id[65];
	bool ok = agent_client(c, l->name, &spec, &argv, container_id, f) &&
		  agent_start(c, l->name, argv.v, &client, fds, f);
	spec_free(&spec);
	strv_free(&argv);
	if (client < 0) {
		removal_now(c, name, now_ms() + REMOVE_MS); /* made, if dockerd got that far */
		return false;
	}
	const char *why = NULL;
	if (ok && !agent_converse(fds[0], fds[1], call, deadline + c->sandbox.start_timeout_ms, &why))
		ok = fail(f, E_SANDBOX_FAILED, "the volume's agent could not answer: %s", why);
	/* End of its stdin: the agent exits, and the sandbox with it. */
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	if (subproc_wait(client, COLLECT_MS) < 0)
		log_msg("volume files: lost the client of %s", name);
	removal_now(c, name, now_ms() + REMOVE_MS);
	return ok;
}
