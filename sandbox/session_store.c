/*
 * session_store.c: where sessions are kept (the layout is in sandbox.h),
 * how one is opened and locked for a request, how one ends, and the pool
 * master's duty that ends idle, old and dead ones.
 *
 * Everything here is in a directory that only workers write: no sandbox
 * mounts it, so nothing in it was made by untrusted code. Still, every
 * name is opened relative to a directory fd with O_NOFOLLOW.
 */
#define _GNU_SOURCE
#include "cgroup.h"
#include "deadline.h"
#include "docker_list.h"
#include "removal.h"
#include "session_store.h"
#include "../conf/store/store.h"
#include "workdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

/* How long "why it ended" is kept for 410 answers. */
#define TOMBSTONE_MS (3600 * 1000)
/* A session directory without a record this old was never started (its
 * creator died before writing one). */
#define NEVER_STARTED_MS (600 * 1000)
/* An ending this old has lost its ender (it died half-way). */
#define ENDING_STALE_MS (60 * 1000)

/* A session's lock is an open-file-description write lock on its "lock"
 * file (fcntl, not flock) so that a look can ask whether a request holds
 * it (F_OFD_GETLK) without taking it: looking at a session must never make
 * a step that arrives at that instant fail as busy. Like flock, it goes
 * with the last fd of the open file, so a worker that dies lets it go. */
static bool lock_take(int fd)
{
	struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	return fd >= 0 && fcntl(fd, F_OFD_SETLK, &l) == 0;
}

static bool lock_held(int fd)
{
	struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	return fd >= 0 && fcntl(fd, F_OFD_GETLK, &l) == 0 && l.l_type != F_UNLCK;
}

bool session_id_host(const char *id, char host[SESSION_HOST_MAX + 1])
{
	size_t n = strnlen(id, SESSION_ID_LEN + 1);
	if (n < SESSION_ID_HEX || n > SESSION_ID_LEN)
		return false;
	const char *hex = id + n - SESSION_ID_HEX;
	for (const char *p = hex; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	host[0] = '\0';
	if (hex == id)
		return true; /* from before hosts */
	size_t h = (size_t)(hex - 1 - id);
	if (hex[-1] != '-' || h == 0)
		return false;
	for (size_t i = 0; i < h; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= '0' && id[i] <= '9') || id[i] == '-'))
			return false;
	memcpy(host, id, h);
	host[h] = '\0';
	return true;
}

bool session_valid_id(const char *id)
{
	char host[SESSION_HOST_MAX + 1];
	return session_id_host(id, host);
}

void session_new_id(const char *host, char out[SESSION_ID_LEN + 1])
{
	int at = snprintf(out, SESSION_ID_LEN + 1, "%.*s-", SESSION_HOST_MAX, host);
	random_hex(out + at, SESSION_ID_HEX / 2);
}

int64_t session_life_end_ms(const struct session *s)
{
	return s->created_ms + s->lifetime_ms;
}

int64_t session_expires_ms(const struct session *s)
{
	int64_t idle = s->last_used_ms + s->idle_ms, life = session_life_end_ms(s);
	return idle < life ? idle : life;
}

const char *session_over(const struct session *s, int64_t now, char text[SESSION_WHY_MAX])
{
	if (now >= session_life_end_ms(s))
		snprintf(text, SESSION_WHY_MAX, "it reached its maxLifetimeMs (%lld)", (long long)s->lifetime_ms);
	else if (!s->busy && now >= s->last_used_ms + s->idle_ms)
		snprintf(text, SESSION_WHY_MAX, "it was idle for its idleTimeoutMs (%lld)", (long long)s->idle_ms);
	else
		return NULL;
	return text;
}

bool session_record_write(int dir_fd, const struct session *s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "id", s->id);
	cJSON_AddStringToObject(o, "tenant", s->tenant);
	cJSON_AddStringToObject(o, "language", s->language);
	cJSON_AddStringToObject(o, "version", s->version);
	cJSON_AddStringToObject(o, "type", s->type == SESSION_KERNEL ? "kernel" : "shell");
	cJSON_AddNumberToObject(o, "memoryBytes", (double)s->limits.memory_bytes);
	cJSON_AddNumberToObject(o, "cpus", s->limits.cpus);
	cJSON_AddNumberToObject(o, "pids", (double)s->limits.pids);
	cJSON_AddBoolToObject(o, "network", s->network);
	cJSON_AddNumberToObject(o, "createdMs", (double)s->created_ms);
	cJSON_AddNumberToObject(o, "idleTimeoutMs", (double)s->idle_ms);
	cJSON_AddNumberToObject(o, "maxLifetimeMs", (double)s->lifetime_ms);
	cJSON_AddNumberToObject(o, "steps", (double)s->steps);
	cJSON_AddStringToObject(o, "container", s->container);
	cJSON_AddStringToObject(o, "containerId", s->container_id);
	cJSON_AddStringToObject(o, "volume", s->volume);
	cJSON_AddStringToObject(o, "volumeName", s->volume_name);
	cJSON_AddBoolToObject(o, "volumeReadOnly", s->volume_ro);
	autofree char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	autoclose int fd = openat(dir_fd, "record.new", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	size_t len = strlen(text);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len)
		return false;
	return renameat(dir_fd, "record.new", dir_fd, "record") == 0;
}

static int64_t num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
}

static void str(const cJSON *o, const char *key, char *out, size_t n)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	snprintf(out, n, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

static bool record_read(int dir_fd, struct session *s)
{
	char text[8192];
	autoclose int fd = openat(dir_fd, "record", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
	if (n <= 0)
		return false;
	text[n] = '\0';
	cJSON *o = cJSON_Parse(text);
	if (!o)
		return false;
	*s = (struct session){0};
	str(o, "id", s->id, sizeof s->id);
	str(o, "tenant", s->tenant, sizeof s->tenant);
	if (!s->tenant[0]) /* a record from before tenants */
		snprintf(s->tenant, sizeof s->tenant, "%s", TENANT_LOCAL);
	str(o, "language", s->language, sizeof s->language);
	str(o, "version", s->version, sizeof s->version);
	char type[16];
	str(o, "type", type, sizeof type);
	s->type = !strcmp(type, "kernel") ? SESSION_KERNEL : SESSION_SHELL;
	s->limits.memory_bytes = num(o, "memoryBytes");
	const cJSON *cpus = cJSON_GetObjectItemCaseSensitive(o, "cpus");
	s->limits.cpus = cJSON_IsNumber(cpus) ? cpus->valuedouble : 1.0;
	s->limits.pids = num(o, "pids");
	s->network = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "network"));
	s->created_ms = num(o, "createdMs");
	s->idle_ms = num(o, "idleTimeoutMs");
	s->lifetime_ms = num(o, "maxLifetimeMs");
	s->steps = num(o, "steps");
	str(o, "container", s->container, sizeof s->container);
	str(o, "containerId", s->container_id, sizeof s->container_id);
	str(o, "volume", s->volume, sizeof s->volume);
	str(o, "volumeName", s->volume_name, sizeof s->volume_name);
	s->volume_ro = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "volumeReadOnly"));
	cJSON_Delete(o);
	struct stat st;
	s->last_used_ms = s->created_ms;
	if (fstatat(dir_fd, "lock", &st, AT_SYMLINK_NOFOLLOW) == 0)
		s->last_used_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
	return session_valid_id(s->id);
}

/* Does s belong to tenant (NULL: the server itself, who sees them all)?
 * Another tenant's session is not found: 404, never 403, so that an id
 * does not confirm that it exists. */
static bool owned(const struct session *s, const char *tenant)
{
	return !tenant || !strcmp(s->tenant, tenant);
}

/* Why a session that is not there ended, from its tombstone ("<tenant>
 * <why>"), if it was the tenant's. */
static bool not_there(const struct conf *c, const char *tenant, const char *id, struct fault *f)
{
	char text[400] = "";
	autofree char *path = xasprintf("%s/%s.gone", c->sessions.dir, id);
	autoclose int fd = session_valid_id(id) ? open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
	ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
	text[n > 0 ? n : 0] = '\0';
	char *why = strchr(text, ' ');
	if (why)
		*why++ = '\0';
	if (!why || (tenant && strcmp(text, tenant)))
		return fail(f, E_SESSION_NOT_FOUND, "no session %.40s", id);
	return fail(f, E_SESSION_EXPIRED, "session %.40s has ended: %s", id, why);
}

static int open_dir(const struct conf *c, const char *id)
{
	if (!c->sessions.dir || !session_valid_id(id)) {
		errno = ENOENT;
		return -1;
	}
	autoclose int top = open(c->sessions.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return top < 0 ? -1 : openat(top, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* What its cgroup holds now (cgroup.h). */
static int64_t memory_used(const struct conf *c, const struct session *s)
{
	if (strspn(s->container_id, "0123456789abcdef") != 64)
		return -1;
	return cgroup_memory_used(c, s->container_id);
}

/* One as its directory has it, over or not: what it holds until it is
 * ended (the admission counts it). */
static bool look(const struct conf *c, const char *tenant, const char *id, struct session *out,
		 struct fault *f)
{
	if (!c->sessions.dir)
		return fail(f, E_SESSIONS_OFF, "sessions are turned off on this server");
	autoclose int dir = open_dir(c, id);
	if (dir < 0 || !record_read(dir, out) || !owned(out, tenant))
		return not_there(c, tenant, id, f);
	autoclose int lock = openat(dir, "lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	out->busy = lock_held(lock);
	out->memory_used = memory_used(c, out);
	return true;
}

/* A session over by its clocks is ended already for its callers, before
 * the master's next look (every 2 s) or a request ends it. */
bool session_get(const struct conf *c, const char *tenant, const char *id, struct session *out,
		 struct fault *f)
{
	char text[SESSION_WHY_MAX];
	const char *why;
	if (!look(c, tenant, id, out, f))
		return false;
	if ((why = session_over(out, wall_ms(), text)))
		return fail(f, E_SESSION_EXPIRED, "session %.40s has ended: %s", id, why);
	return true;
}

bool session_open(const struct conf *c, const char *tenant, const char *id, struct session_handle *h,
		  struct fault *f)
{
	*h = (struct session_handle){.c = c, .dir_fd = -1, .lock_fd = -1};
	if (!c->sessions.dir)
		return fail(f, E_SESSIONS_OFF, "sessions are turned off on this server");
	h->dir_fd = open_dir(c, id);
	if (h->dir_fd >= 0)
		h->lock_fd = openat(h->dir_fd, "lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	struct session peek;
	if (h->lock_fd < 0 || !record_read(h->dir_fd, &peek) || !owned(&peek, tenant)) {
		session_close(h, false);
		return not_there(c, tenant, id, f);
	}
	if (!lock_take(h->lock_fd)) {
		session_close(h, false);
		return fail(f, E_SESSION_BUSY, "session %.40s is running another request; "
			    "send one request at a time", id);
	}
	/* It may have ended while we waited for the lock. */
	if (!record_read(h->dir_fd, &h->s)) {
		session_close(h, false);
		return not_there(c, tenant, id, f);
	}
	/* Or be over by its clocks, the master not having looked yet: nothing
	 * starts in it. */
	char text[SESSION_WHY_MAX];
	const char *why = session_over(&h->s, wall_ms(), text);
	if (why) {
		struct session s = h->s;
		session_close(h, false);
		session_end(c, s.id, s.container, why, true);
		return fail(f, E_SESSION_EXPIRED, "session %.40s has ended: %s", id, why);
	}
	return true;
}

void session_close(struct session_handle *h, bool used)
{
	if (used && h->lock_fd >= 0)
		futimens(h->lock_fd, NULL);
	if (h->lock_fd >= 0)
		close(h->lock_fd); /* and the lock with it */
	if (h->dir_fd >= 0)
		close(h->dir_fd);
	h->lock_fd = h->dir_fd = -1;
}

bool session_pipes(struct session_handle *h, int *in_fd, int *out_fd, struct fault *f)
{
	/* No reader on its stdin pipe (ENXIO): the client that
	 * held it has exited, so the sandbox is gone. */
	*in_fd = openat(h->dir_fd, "in", O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	*out_fd = *in_fd < 0 ? -1 : openat(h->dir_fd, "out", O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (*out_fd >= 0)
		return true;
	if (*in_fd >= 0)
		close(*in_fd);
	*in_fd = -1;
	const char *why = "its sandbox stopped (dockerd or the host restarted, or it was killed)";
	session_end(h->c, h->s.id, h->s.container, why, true);
	return fail(f, E_SESSION_EXPIRED, "session %s has ended: %s", h->s.id, why);
}

/*
 * The removals that the master's sweep (session_expire) asks for: sent to
 * dockerd's API, their answers read at the next sweep, never waited on
 * (the master must not block). Only the master ends sessions without
 * waiting; a worker forked from it drops the queue's connections
 * (session_sweep_after_fork). What a stopping master leaves is found by
 * the next one's sweep (remove_orphans).
 */
static struct removals sweep_removals = {.master = true}; /* removals_init(q, NULL, NULL, true) */

void session_sweep_after_fork(void)
{
	removals_drop(&sweep_removals);
}

void session_end(const struct conf *c, const char *id, const char *container, const char *why,
		 bool wait)
{
	autoclose int top = open(c->sessions.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0 || !session_valid_id(id))
		return;
	/* Why, for 410 answers; a deleted one leaves no reason: it is simply
	 * not found (404). */
	char gone[SESSION_ID_LEN + 8], ending[SESSION_ID_LEN + 32];
	snprintf(gone, sizeof gone, "%s.gone", id);
	struct session s;
	autoclose int dir = openat(top, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0 || !record_read(dir, &s))
		snprintf(s.tenant, sizeof s.tenant, "%s", TENANT_LOCAL);
	autofree char *text = xasprintf("%s %s", s.tenant, why);
	int fd = strcmp(why, "deleted") ? openat(top, gone, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			log_msg("cannot record why session %s ended: %s", id, strerror(errno));
		close(fd);
	}
	/* Out of reach first (a rename is atomic), then removed. Whoever
	 * renames it ended it; a later ender takes back its reason. */
	snprintf(ending, sizeof ending, ".%s.ending", id);
	bool moved = renameat(top, id, top, ending) == 0;
	if (!moved && fd >= 0)
		unlinkat(top, gone, 0);
	if (container[0]) {
		if (wait)
			removal_now(c, container, now_ms() + REMOVE_MS);
		else
			removals_add(&sweep_removals, c, container);
	}
	if (moved) {
		autofree char *path = xasprintf("%s/%s", c->sessions.dir, ending);
		workdir_remove(path);
		log_msg("session %s ended: %s", id, why);
	}
}

bool session_list(const struct conf *c, const char *tenant, struct session **out, size_t *n,
		  struct fault *f)
{
	*out = NULL;
	*n = 0;
	if (!c->sessions.dir)
		return fail(f, E_SESSIONS_OFF, "sessions are turned off on this server");
	DIR *d = opendir(c->sessions.dir);
	if (!d)
		return fail(f, E_SANDBOX_UNAVAILABLE, "cannot read %s: %s", c->sessions.dir, strerror(errno));
	struct dirent *e;
	size_t cap = 0;
	while ((e = readdir(d))) {
		struct session s;
		struct fault ignored;
		if (!session_valid_id(e->d_name) || !look(c, tenant, e->d_name, &s, &ignored))
			continue;
		if (*n == cap)
			*out = xrealloc(*out, (cap = cap ? 2 * cap : 16) * sizeof **out);
		(*out)[(*n)++] = s;
	}
	closedir(d);
	return true;
}

int session_count(const struct conf *c)
{
	struct session *all;
	size_t n;
	struct fault ignored;
	if (!session_list(c, NULL, &all, &n, &ignored))
		return 0;
	free(all);
	return (int)n;
}

bool session_admit(const struct conf *c, const struct session *s, const struct tenant_limits *share,
		   struct session_handle *h, struct fault *f)
{
	*h = (struct session_handle){.c = c, .s = *s, .dir_fd = -1, .lock_fd = -1};
	autoclose int top = open(c->sessions.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	autoclose int admit = top < 0 ? -1 : openat(top, ".admit", O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (admit < 0 || flock(admit, LOCK_EX) < 0)
		return fail(f, E_SANDBOX_UNAVAILABLE, "cannot use %s: %s", c->sessions.dir, strerror(errno));
	struct session *all;
	size_t n;
	if (!session_list(c, NULL, &all, &n, f))
		return false;
	int64_t held = 0, mine = 0, mine_held = 0;
	for (size_t i = 0; i < n; i++) {
		held += all[i].limits.memory_bytes;
		if (!strcmp(all[i].tenant, s->tenant)) {
			mine++;
			mine_held += all[i].limits.memory_bytes;
		}
	}
	free(all);
	if (share && !session_quota_holds(s->tenant, mine, mine_held, s->limits.memory_bytes, share->sessions,
					  share->session_memory_bytes, f))
		return false;
	if ((int64_t)n >= c->sessions.max)
		return fail(f, E_TOO_MANY_SESSIONS, "%zu sessions are open, the most this server keeps "
			    "(sessions.max): end one (DELETE /v1/sessions/{id}) or retry later", n);
	if (held + s->limits.memory_bytes > c->sessions.memory_budget_bytes)
		return fail(f, E_SESSION_MEMORY_FULL, "open sessions hold %lld bytes of memory; %lld more "
			    "would pass sessions.memoryBudgetBytes: ask for less or end one",
			    (long long)held, (long long)s->limits.memory_bytes);
	/* Counted from here on: the record is written before the admission
	 * lock is let go, and the session's own lock is held until it is up. */
	bool ok = mkdirat(top, s->id, 0700) == 0 &&
		  (h->dir_fd = openat(top, s->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0 &&
		  (h->lock_fd = openat(h->dir_fd, "lock", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) >= 0 &&
		  lock_take(h->lock_fd) && session_record_write(h->dir_fd, s);
	if (!ok) {
		fail(f, E_SANDBOX_UNAVAILABLE, "cannot make the session's directory: %s", strerror(errno));
		session_close(h, false);
		session_end(c, s->id, "", "it never started", false);
		return false;
	}
	return true;
}

/* Is its agent's stdin pipe still held open (by its client)? */
static bool holder_alive(int dir_fd)
{
	int fd = openat(dir_fd, "in", O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	return fd >= 0 || errno != ENXIO;
}

/* Why a session should end now (NULL: it should not), from its record;
 * kind: 1 expired, 2 died, 0 neither (a creation that died half-way).
 * busy: a request holds it, so only its lifetime can end it here. */
static const char *why_to_end(const struct conf *c, int dir, int64_t now, bool busy, struct session *s,
			      char text[SESSION_WHY_MAX], int *kind)
{
	*s = (struct session){0};
	*kind = 1;
	if (!record_read(dir, s)) {
		struct stat st;
		*s = (struct session){0};
		*kind = 0;
		return fstat(dir, &st) == 0 && now - (int64_t)st.st_mtime * 1000 > NEVER_STARTED_MS ?
			"it never started" : NULL;
	}
	s->busy = busy;
	const char *why = session_over(s, now, text);
	if (why || busy)
		return why;
	*kind = 2;
	if (now - s->created_ms > c->sandbox.start_timeout_ms && !holder_alive(dir))
		return "its sandbox stopped (dockerd or the host restarted, or it was killed)";
	return NULL;
}

/* One session: end it if it is idle, old or dead and no request holds it,
 * or past its maxLifetimeMs even if one does (the lifetime is enforced
 * from outside: that request answers with what it has). Only a session
 * to end is locked, and judged again under the lock (a step may have come
 * and gone in between): the master's look every two seconds must not
 * make a step that arrives then fail as busy. 0: kept; 1: expired; 2: died. */
static int expire_one(const struct conf *c, int top, const char *id, int64_t now)
{
	autoclose int dir = openat(top, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	autoclose int lock = dir < 0 ? -1 : openat(dir, "lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	struct session s;
	char text[SESSION_WHY_MAX];
	int kind;
	if (dir < 0)
		return 0;
	bool busy = lock_held(lock);
	const char *why = why_to_end(c, dir, now, busy, &s, text, &kind);
	if (why && busy && kind == 1) {
		session_end(c, id, s.container, why, false);
		return kind;
	}
	/* Not held: taken, and judged again. No lock file: a creation that
	 * died before making it. */
	if (!why || busy || (lock >= 0 && !lock_take(lock)) ||
	    !(why = why_to_end(c, dir, now, false, &s, text, &kind)))
		return 0;
	session_end(c, id, s.container, why, false);
	return kind;
}

/* Containers of sessions that have no directory any more (a worker died
 * half-way through ending one). */
static void remove_orphans(const struct conf *c, int top)
{
	autofree char *instance = xasprintf("label=isobox.instance=%s", c->instance);
	const char *filters[] = {instance, "label=isobox.kind=session", NULL};
	struct docker_list l;
	if (!docker_list(c, filters, true, now_ms() + REAP_LIST_MS, &l)) {
		docker_list_free(&l);
		return;
	}
	for (size_t i = 0; i < l.n; i++) {
		const struct docker_listed *d = &l.v[i];
		struct stat st;
		/* A label too long to be an id was cut, and is no id either:
		 * session_valid_id says no to both. */
		_Static_assert(sizeof d->session > SESSION_ID_LEN + 1, "a cut label must not look like an id");
		if (session_valid_id(d->session) && fstatat(top, d->session, &st, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		const char *which = *d->name ? d->name : d->id;
		log_msg("removing session container %s: its session is gone", which);
		removals_add(&sweep_removals, c, which);
	}
	docker_list_free(&l);
}

void session_expire(const struct conf *c, int *expired, int *died, struct strv *ended)
{
	static int64_t next_orphan_check;
	*expired = *died = 0;
	if (!c->sessions.dir)
		return;
	removals_collect(&sweep_removals, now_ms()); /* the last sweep's answers, as they are */
	int top = open(c->sessions.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = top < 0 ? NULL : fdopendir(top);
	if (!d) {
		if (top >= 0)
			close(top);
		return;
	}
	int64_t now = wall_ms();
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		size_t len = strlen(n);
		struct stat st;
		if (session_valid_id(n)) {
			int kind = expire_one(c, top, n, now);
			*expired += kind == 1;
			*died += kind == 2;
			if (kind)
				strv_push(ended, n);
		} else if (len > 5 && !strcmp(n + len - 5, ".gone") &&
			   fstatat(top, n, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			   now - (int64_t)st.st_mtime * 1000 > TOMBSTONE_MS) {
			unlinkat(top, n, 0);
		} else if (len > 7 && n[0] == '.' && !strcmp(n + len - 7, ".ending") &&
			   fstatat(top, n, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			   now - (int64_t)st.st_mtime * 1000 > ENDING_STALE_MS) {
			/* Its ender died half-way (the container is an orphan now). */
			autofree char *path = xasprintf("%s/%s", c->sessions.dir, n);
			workdir_remove(path);
		}
	}
	if (now_ms() >= next_orphan_check) {
		remove_orphans(c, top);
		next_orphan_check = now_ms() + SESSION_ORPHANS_EVERY_MS;
	}
	closedir(d);
}
