/*
 * reap.c: remove what dead workers left behind.
 *
 * Every container and work dir carries the instance name and its owner
 * (owner.c), "PID.STARTTIME" of the worker process that made it. The pool
 * master calls sandbox_reap when a worker dies and every few seconds besides (a
 * docker client orphaned by a killed worker may still create its container
 * a moment later); a worker without a master (CGI, or plain spawn-fcgi -F N)
 * calls it when it starts.
 */
#define _GNU_SOURCE
#include "deadline.h"
#include "owner.h"
#include "subproc.h"
#include "workdir.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

static void reap_containers(const struct conf *c)
{
	struct buf out = {0};
	char *filter = xasprintf("label=isobox.instance=%s", c->instance);
	char *ps[] = {c->docker, "ps", "--all", "--no-trunc", "--filter", filter,
		"--format", "{{.ID}} {{.State}} {{.Label \"isobox.kind\"}} {{.Label \"isobox.owner\"}}", NULL};
	struct strv rm = {0};
	strv_push(&rm, c->docker);
	strv_push(&rm, "rm");
	strv_push(&rm, "--force");
	if (subproc_capture(ps, REAP_LIST_MS, &out, NULL) == 0 && out.data) {
		for (char *line = strtok(out.data, "\n"); line; line = strtok(NULL, "\n")) {
			char id[80], state[16] = "", kind[16] = "", owner[64] = "";
			int n = sscanf(line, "%79s %15s %15s %63s", id, state, kind, owner);
			/* "dead": a removal that dockerd failed half-way ("directory
			 * not empty", seen under load); nobody uses it any more,
			 * whoever owns it. dockerd 20.10's list can go on saying
			 * "removing" of it (its view keeps the flag the failed
			 * removal set): a second removal clears both. Sessions
			 * outlive their creators: session_expire ends them. */
			if ((n >= 2 && (!strcmp(state, "dead") || !strcmp(state, "removing"))) ||
			    (n >= 3 && strcmp(kind, "session") && !owner_alive(owner)))
				strv_push(&rm, id);
		}
	}
	if (rm.n > 3) {
		log_msg("reaping %zu container(s) of dead workers", rm.n - 3);
		struct buf ignored = {0};
		subproc_capture(rm.v, REAP_REMOVE_MS, &ignored, NULL);
		buf_free(&ignored);
	}
	strv_free(&rm);
	buf_free(&out);
	free(filter);
}

static void reap_dirs(const struct conf *c)
{
	DIR *d = opendir(c->work_dir);
	if (!d)
		return;
	size_t plen = strlen(c->instance);
	struct dirent *e;
	while ((e = readdir(d))) {
		/* <instance>.<pid>.<starttime>.XXXXXX */
		const char *n = e->d_name;
		if (strncmp(n, c->instance, plen) || n[plen] != '.')
			continue;
		char owner[64];
		snprintf(owner, sizeof owner, "%s", n + plen + 1);
		char *last = strrchr(owner, '.');
		if (!last)
			continue;
		*last = '\0';
		if (!owner_alive(owner)) {
			char *path = xasprintf("%s/%s", c->work_dir, n);
			log_msg("reaping work dir %s", n);
			workdir_remove(path);
			free(path);
		}
	}
	closedir(d);
}

void sandbox_reap(const struct conf *c)
{
	reap_containers(c);
	reap_dirs(c);
}
