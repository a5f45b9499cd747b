/*
 * reap.c: remove what dead workers left behind.
 *
 * Every container and work dir carries the instance name and its owner
 * (owner.c), "PID.STARTTIME" of the worker process that made it. The pool
 * master calls sandbox_reap when a worker dies and every few seconds besides (a
 * docker client orphaned by a killed worker may still create its container
 * a moment later); a worker without a master (CGI, or plain spawn-fcgi -F N)
 * calls it when it starts.
 *
 * It also removes the cgroups that runsc left behind. A sandbox that dies
 * while it starts (runsc killed by the container's own memory limit, or
 * "cannot read client sync file") leaves its cgroup dirs, empty, under
 * the cgroup parent, and nothing else removes them. Only the cgroupfs
 * driver's layout (<parent>/<64 hex id> in each hierarchy) is tidied here:
 * systemd removes its own scopes. rmdir needs the parent dir to be the
 * service user's (deploy/setup.sh gives it), and it never removes a
 * cgroup that still holds a process or a child cgroup. The same goes for
 * the cgroups of our own that warm sandboxes start in (cgroup.h), named
 * after their containers: the master removes each after its container,
 * and this catches the ones a dead master left.
 */
#define _GNU_SOURCE
#include "cgroup.h"
#include "deadline.h"
#include "docker_list.h"
#include "owner.h"
#include "removal.h"
#include "warm.h"
#include "workdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static bool has(const struct strv *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], str))
			return true;
	return false;
}

/* Removes the containers of dead workers (through one removal queue,
 * waited for here); every container it listed goes into *listed. */
static void reap_containers(const struct conf *c, const struct reap_by *by, struct strv *listed)
{
	autofree char *instance = xasprintf("label=isobox.instance=%s", c->instance);
	const char *filters[] = {instance, NULL};
	struct docker_list l;
	struct removals rm;
	size_t n = 0;
	removals_init(&rm, NULL, NULL, by->master);
	docker_list(c, filters, true, now_ms() + REAP_LIST_MS, &l);
	for (size_t i = 0; i < l.n; i++) {
		const struct docker_listed *d = &l.v[i];
		strv_push(listed, d->id);
		if (*d->name)
			strv_push(listed, d->name); /* a warm one's own cgroup is named so */
		/* "dead": a removal that dockerd failed half-way ("directory
		 * not empty", seen under load); nobody uses it any more,
		 * whoever owns it. dockerd 20.10's list can go on saying
		 * "removing" of it (its view keeps the flag the failed
		 * removal set): a second removal clears both. Sessions
		 * outlive their creators: session_expire ends them. */
		if (!strcmp(d->state, "dead") || !strcmp(d->state, "removing") ||
		    (strcmp(d->kind, "session") && !owner_alive(d->owner))) {
			removals_add(&rm, c, d->id);
			n++;
		}
	}
	if (n) {
		log_msg("reaping %zu container(s) of dead workers", n);
		removals_collect(&rm, now_ms() + REAP_REMOVE_MS);
		removals_abandon(&rm);
	}
	docker_list_free(&l);
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

/* The container ids that cgroups under the parents are named by, each
 * once; and the cgroups of our own that this instance's warm sandboxes
 * started in (named "isobox-<instance>-...") that no warm sandbox may be
 * starting in: a slot's cgroup is made before its container, so one that
 * dockerd does not list yet may be waiting for it. The master knows which
 * its pool holds (a dead master's, from a host killed and started again,
 * are held by none); any other process (CGI, a lone worker) of the same
 * instance does not, and takes only those older than a start may take. */
static void cgroup_ids(const struct conf *c, const struct reap_by *by, const struct strv *parents,
		       struct strv *ids, struct strv *own)
{
	char prefix[128];
	sandbox_container_name(c->instance, "", prefix, sizeof prefix);
	time_t old = time(NULL) - (time_t)(c->sandbox.start_timeout_ms / 1000) - 1;
	struct stat st;
	for (size_t i = 0; i < parents->n; i++) {
		DIR *d = opendir(parents->v[i]);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (strlen(e->d_name) == 64 && strspn(e->d_name, "0123456789abcdef") == 64 &&
			    !has(ids, e->d_name))
				strv_push(ids, e->d_name);
			if (strncmp(e->d_name, prefix, strlen(prefix)) || has(own, e->d_name))
				continue;
			if (by->master ? !warm_holds(by->warm, e->d_name)
				       : fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
						 st.st_mtime < old)
				strv_push(own, e->d_name);
		}
		if (d)
			closedir(d);
	}
}

/* Every container dockerd has, of any instance or none: another
 * instance, or a bare docker run, may share the cgroup parent. */
static bool all_containers(const struct conf *c, struct strv *out)
{
	struct docker_list l;
	bool ok = docker_list(c, NULL, true, now_ms() + REAP_LIST_MS, &l);
	for (size_t i = 0; ok && i < l.n; i++)
		strv_push(out, l.v[i].id);
	docker_list_free(&l);
	return ok;
}

/* unlisted: the names of cgroups found before any container was listed
 * whose container was not in this instance's list. A container makes its
 * cgroups after it is created, so one that dockerd does not list now
 * is gone, and so is the need for its cgroups. */
static void reap_cgroups(const struct conf *c, const struct strv *parents, const struct strv *unlisted)
{
	static bool warned;
	struct strv alive = {0};
	if (unlisted->n && all_containers(c, &alive)) {
		for (size_t i = 0; i < unlisted->n; i++) {
			if (has(&alive, unlisted->v[i]))
				continue;
			int removed = 0;
			for (size_t j = 0; j < parents->n; j++) {
				char *path = xasprintf("%s/%s", parents->v[j], unlisted->v[i]);
				if (rmdir(path) == 0) {
					removed++;
				} else if ((errno == EACCES || errno == EPERM) && !warned) {
					log_msg("cannot remove cgroup %s that a sandbox left behind: %s "
						"(deploy/setup.sh gives the cgroup parent to %s's user)",
						path, strerror(errno), c->instance);
					warned = true;
				}
				free(path);
			}
			if (removed)
				log_msg("removed the cgroups (%d) that container %.12s left behind", removed,
					unlisted->v[i]);
		}
	}
	strv_free(&alive);
}

void sandbox_reap(const struct conf *c, const struct reap_by *by)
{
	struct strv parents = {0}, cgroups = {0}, own = {0}, listed = {0}, unlisted = {0};
	cgroup_parents(c, &parents);
	cgroup_ids(c, by, &parents, &cgroups, &own); /* before the containers are listed */
	reap_containers(c, by, &listed);
	for (size_t i = 0; i < cgroups.n; i++)
		if (!has(&listed, cgroups.v[i]))
			strv_push(&unlisted, cgroups.v[i]);
	reap_cgroups(c, &parents, &unlisted);
	for (size_t i = 0; i < own.n; i++)
		if (!has(&listed, own.v[i]) && cgroup_own_remove(c, own.v[i]))
			log_msg("removed the cgroup of warm sandbox %s, which is gone", own.v[i]);
	reap_dirs(c);
	strv_free(&parents);
	strv_free(&cgroups);
	strv_free(&own);
	strv_free(&listed);
	strv_free(&unlisted);
}
