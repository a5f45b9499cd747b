/*
 * warm.c: the warm pool. Sandboxes started ahead of demand by the pool
 * master, each running its language's agent (sandbox/agent/) and waiting
 * for exactly one job; a request takes one, runs its program in it, and
 * the container is removed afterwards. Never reused: every run still gets
 * a fresh filesystem, fresh processes and fresh memory.
 *
 * Who owns what:
 *  - The master starts each sandbox (`docker run -i`, labels
 *    isobox.kind=warm and the master as owner), reads the agent's
 *    "\036ready\n", then puts the sandbox in its language's queue: a
 *    SOCK_SEQPACKET socketpair whose messages carry the slot number and
 *    the three pipe ends (SCM_RIGHTS). The master then closes its copies.
 *  - A worker takes one with a non-blocking recvmsg (the kernel hands each
 *    message to exactly one taker), marks the slot TAKEN in the shared
 *    board, runs the job (exec_warm.c) and marks it DONE. The master removes
 *    DONE containers, and the ones of a worker that died holding one.
 *  - The clients are the master's children: when one exits, the
 *    master learns that its sandbox ended (a ready one that dies in the
 *    queue is purged from it).
 *  - If the master dies, its clients die with it (PR_SET_PDEATHSIG), the
 *    agents see end of file and exit, and the next master's reaper
 *    removes the containers (their owner is gone). An agent nobody takes
 *    exits by itself after warm.maxAgeMs plus a minute.
 *
 * The board in shared memory says what each slot is; workers write only a
 * slot's state and taker. The master acts on its own records (the client
 * pid, the container name it chose), never on a pid read from the board.
 *
 * Limits: docker update does not work on runsc, so a sandbox is started
 * with room for any request (the ceilings' memory and CPU, plus what its
 * agent's preloads hold: warm.preloadBytes) in a cgroup of its own
 * (cgroup.h), and the worker that takes it sets that cgroup to what its
 * request asked, above what the sandbox holds then: the program gets all
 * the memory it asked for, and no more, and the preloads are charged to
 * the sandbox beside it. The process limit (RLIMIT_NPROC) is set at the
 * start and cannot change, so the pids must be the language's default.
 * Where the cgroup parent is no path (systemd's driver) there is no cgroup
 * of our own: sandboxes start with the default limits plus preloadBytes,
 * and only default limits take one.
 */
#define _GNU_SOURCE
#include "warm.h"
#include "launch.h"
#include "cgroup.h"
#include "owner.h"
#include "deadline.h"
#include "docker.h"
#include "removal.h"
#include "subproc.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

enum warm_state { W_FREE, W_STARTING, W_READY, W_TAKEN, W_DONE, W_DEAD };

#define STARTING_AT_ONCE 2     /* boots share the CPUs with live runs */
#define BACKOFF_FIRST_MS 1000  /* after a sandbox failed to start */
#define BACKOFF_MAX_MS 30000

struct warm_slot { /* shared */
	_Atomic int state;
	_Atomic int taker; /* the worker that took it */
	int lang;
	char name[64];     /* the container: written by the master before READY */
	struct limits boot; /* what it started with (its pids are its RLIMIT_NPROC): its
			       own, since the language's may change at a reload */
	_Atomic int exit_status; /* its client's wait status; -1: running */
};

struct warm_lang { /* shared */
	char name[64];     /* the language's id: name@version (registry.h) */
	int target;
	struct limits profile; /* what a request that asks for none gets */
	struct limits boot;    /* what its sandboxes were started with */
	_Atomic long long preloaded; /* what one held when it was ready (0: not known yet) */
	_Atomic int ready, starting;
	_Atomic long long refills, refill_ms;
};

struct warm_board {
	bool own_cgroups; /* sandboxes start in cgroups of their own (cgroup.h) */
	struct warm_lang lang[WARM_MAX_LANGUAGES];
	int n_langs;
	struct warm_slot slot[WARM_MAX_SANDBOXES];
	int n_slots;
};

struct warm_own { /* the master's record of one slot */
	pid_t client;     /* its client (launch.h); 0: none (or forgotten) */
	int fds[3];       /* while starting: stdin, stdout, stderr; else -1 */
	char name[64];
	char image_id[80];
	int64_t born_ms, ready_ms;
	struct buf said;  /* stderr while starting: "\036ready\n" or docker's complaint */
};

struct warm_pool {
	struct warm_board *board;        /* MAP_SHARED, made before the fork */
	int queue[WARM_MAX_LANGUAGES][2]; /* [0]: the master puts, [1]: workers take */
	pid_t master;
	struct warm_own own[WARM_MAX_SANDBOXES];
	struct removals removing;        /* the master's (removal.h) */
	int64_t backoff_until[WARM_MAX_LANGUAGES], backoff_ms[WARM_MAX_LANGUAGES];
};

/* A language of conf's warm.sandboxes: "python" (its default version) or
 * "python@3.14" (the highest version the pin matches, as a request's). */
static const struct language *conf_lang(const struct registry *reg, const char *key)
{
	struct fault ignored;
	const char *at = strchr(key, '@');
	if (!at)
		return registry_find(reg, key, NULL, &ignored);
	char name[64];
	snprintf(name, sizeof name, "%.*s", (int)(at - key), key);
	return at[1] ? registry_find(reg, name, at + 1, &ignored) : NULL;
}

/* The limits a request that asks for none gets. */
static struct limits profile_of(const struct conf *c, const struct language *l)
{
	struct limits none = {0};
	return language_limits(l, &none, 0, c, &c->ceilings);
}

/* What a sandbox starts with: room for any request's memory and CPU, and
 * for its preloads (the header comment). */
static struct limits boot_of(const struct conf *c, const struct language *l, bool own_cgroups)
{
	struct limits b = profile_of(c, l);
	if (own_cgroups) {
		b.memory_bytes = c->ceilings.memory_bytes;
		b.cpus = c->ceilings.cpus;
	}
	b.memory_bytes += c->warm.preload_bytes;
	return b;
}

/* What a ready or starting sandbox of lang holds against the budget: a
 * default request's memory and its preloads. */
static int64_t held_by(const struct conf *c, const struct warm_lang *wl)
{
	long long preloaded = atomic_load(&wl->preloaded);
	return wl->profile.memory_bytes + (preloaded > 0 ? preloaded : c->warm.preload_bytes);
}

static void close_fds(int fds[3])
{
	for (int i = 0; i < 3; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

/* A container of the pool's is gone: its cgroup too, when the pool made
 * it (else the reaper's, later). */
static void removed(void *arg, const struct conf *c, const char *name)
{
	const struct warm_pool *wp = arg;
	if (wp->board->own_cgroups)
		cgroup_own_remove(c, name);
}

struct warm_pool *warm_create(const struct conf *c, const struct registry *reg)
{
	if (!c->warm.agent_dir || c->warm.total == 0)
		return NULL;
	struct warm_pool *wp = xcalloc(1, sizeof *wp);
	wp->board = mmap(NULL, sizeof *wp->board, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (wp->board == MAP_FAILED)
		die("cannot map the warm pool's board: %s", strerror(errno));
	memset(wp->board, 0, sizeof *wp->board);
	wp->board->own_cgroups = cgroup_own_possible(c);
	wp->master = getpid();
	for (size_t i = 0; i < c->warm.n; i++) {
		const struct language *l = conf_lang(reg, c->warm.langs[i]);
		if (!l)
			die("warm.sandboxes: no language %s in the registry", c->warm.langs[i]);
		if (c->warm.counts[i] > 0 && l->agent.n == 0)
			die("warm.sandboxes: %s has no agent in the registry", l->name);
		for (int j = 0; j < wp->board->n_langs; j++)
			if (!strcmp(wp->board->lang[j].name, l->id))
				die("warm.sandboxes: %s and another key both name %s", c->warm.langs[i], l->id);
		struct warm_lang *wl = &wp->board->lang[wp->board->n_langs];
		if ((size_t)snprintf(wl->name, sizeof wl->name, "%s", l->id) >= sizeof wl->name)
			die("warm.sandboxes: %s: its id %s is too long", c->warm.langs[i], l->id);
		wl->target = (int)c->warm.counts[i];
		wl->profile = profile_of(c, l);
		wl->boot = boot_of(c, l, wp->board->own_cgroups);
		int *q = wp->queue[wp->board->n_langs++];
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, q) < 0)
			die("cannot make the warm queue: %s", strerror(errno));
	}
	wp->board->n_slots = (int)c->warm.total;
	for (int i = 0; i < WARM_MAX_SANDBOXES; i++)
		wp->own[i].fds[0] = wp->own[i].fds[1] = wp->own[i].fds[2] = -1;
	removals_init(&wp->removing, removed, wp, true);
	log_msg("warm pool: %d sandbox(es) in all, memory budget %lld MiB, replaced after %lld s",
		wp->board->n_slots, (long long)(c->warm.memory_budget_bytes >> 20),
		(long long)(c->warm.max_age_ms / 1000));
	return wp;
}

void warm_after_fork(struct warm_pool *wp)
{
	if (!wp)
		return;
	for (int i = 0; i < WARM_MAX_SANDBOXES; i++) {
		close_fds(wp->own[i].fds);
		buf_free(&wp->own[i].said);
	}
	for (int l = 0; l < wp->board->n_langs; l++) {
		close(wp->queue[l][0]);
		wp->queue[l][0] = -1;
	}
	removals_drop(&wp->removing);
}

/* ---- the master's side ---- */

/* Remove a slot's container in the background and free the slot. The
 * client, if still alive, exits when its container goes. */
static void retire(struct warm_pool *wp, const struct conf *c, int i)
{
	struct warm_own *o = &wp->own[i];
	if (o->name[0])
		removals_add(&wp->removing, c, o->name);
	close_fds(o->fds);
	buf_free(&o->said);
	o->client = 0;
	o->name[0] = '\0';
	atomic_store(&wp->board->slot[i].state, W_FREE);
}

struct warm_start {
	const struct conf *c;
	const struct container_spec *spec;
};

/*
 * In the client's own process, before it becomes the client: the
 * container made through the API (launch.h), so that the master never
 * waits on dockerd. What goes wrong goes to stderr, which check_starting
 * logs when the sandbox does not become ready.
 */
static void create_then_attach(void *arg)
{
	const struct warm_start *ws = arg;
	struct strv argv = {0};
	struct buf why = {0};
	char id[65];
	if (!launch_client_argv(ws->c, ws->spec, now_ms() + ws->c->sandbox.start_timeout_ms, &argv, &why, id)) {
		dprintf(2, "%s\n", why.data ? why.data : "dockerd did not make the container");
		_exit(125);
	}
	subproc_exec(argv.v);
}

static void start_one(struct warm_pool *wp, const struct conf *c, const struct language *l, int lang)
{
	int i = 0;
	while (i < wp->board->n_slots && atomic_load(&wp->board->slot[i].state) != W_FREE)
		i++;
	if (i == wp->board->n_slots)
		return;
	struct warm_own *o = &wp->own[i];
	sandbox_container_name(c->instance, NULL, o->name, sizeof o->name);
	snprintf(o->image_id, sizeof o->image_id, "%s", l->image_id);
	memcpy(wp->board->slot[i].name, o->name, sizeof o->name);
	struct limits boot = boot_of(c, l, wp->board->own_cgroups);
	if (wp->board->own_cgroups && !cgroup_own_make(c, o->name, boot.memory_bytes, boot.cpus)) {
		cgroup_own_remove(c, o->name);
		o->name[0] = '\0';
		return; /* logged; the next tick tries again */
	}
	struct container_spec spec;
	spec_warm(c, l, &boot, o->name, sandbox_owner_id(), wp->board->own_cgroups, &spec);
	int *fds[3] = {&o->fds[0], &o->fds[1], &o->fds[2]};
	struct warm_start ws = {.c = c, .spec = &spec};
	o->client = subproc_spawn_with(fds, create_then_attach, &ws);
	spec_free(&spec);
	if (o->client < 0) {
		log_msg("warm pool: cannot start docker for %s: %s", l->id, strerror(errno));
		if (wp->board->own_cgroups)
			cgroup_own_remove(c, o->name);
		o->client = 0;
		o->name[0] = '\0';
		return;
	}
	o->born_ms = now_ms();
	wp->board->slot[i].lang = lang;
	atomic_store(&wp->board->slot[i].exit_status, -1);
	wp->board->slot[i].boot = boot;
	wp->board->lang[lang].profile = profile_of(c, l);
	wp->board->lang[lang].boot = boot;
	atomic_store(&wp->board->slot[i].state, W_STARTING);
}

/* Put a ready sandbox in its language's queue: the pipes go with it. */
static bool enqueue(struct warm_pool *wp, int i, int fds[3])
{
	char cbuf[CMSG_SPACE(3 * sizeof(int))] = {0};
	struct iovec iov = {.iov_base = &i, .iov_len = sizeof i};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			   .msg_controllen = sizeof cbuf};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(3 * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, 3 * sizeof(int));
	int lang = wp->board->slot[i].lang;
	return sendmsg(wp->queue[lang][0], &m, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)sizeof i;
}

/* One message off a queue: the slot and its pipes; false when empty. */
static bool dequeue(int fd, int *slot, int fds[3])
{
	char cbuf[CMSG_SPACE(3 * sizeof(int))];
	struct iovec iov = {.iov_base = slot, .iov_len = sizeof *slot};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			   .msg_controllen = sizeof cbuf};
	fds[0] = fds[1] = fds[2] = -1;
	ssize_t n = recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return false;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(3 * sizeof(int)))
		memcpy(fds, CMSG_DATA(cm), 3 * sizeof(int));
	return n == (ssize_t)sizeof *slot;
}

/* A starting sandbox: has its agent said it is ready? */
static void check_starting(struct warm_pool *wp, const struct conf *c, int i, int64_t now)
{
	static const char ready[] = "\036ready\n";
	struct warm_own *o = &wp->own[i];
	struct warm_lang *wl = &wp->board->lang[wp->board->slot[i].lang];
	const size_t rlen = sizeof ready - 1;
	char chunk[512];
	ssize_t n = 1;
	/* Read no further than the ready record: the job's output follows it. */
	while (o->said.len < 4096 && !(o->said.len == rlen && !memcmp(o->said.data, ready, rlen))) {
		n = read(o->fds[2], chunk, o->said.len < rlen ? rlen - o->said.len : sizeof chunk);
		if (n <= 0)
			break;
		buf_append(&o->said, chunk, (size_t)n);
	}
	bool eof = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
	if (o->said.len == rlen && !memcmp(o->said.data, ready, rlen)) {
		int slot = i;
		if (!enqueue(wp, slot, o->fds)) {
			log_msg("warm pool: cannot queue %s: %s", o->name, strerror(errno));
			retire(wp, c, i);
			return;
		}
		close_fds(o->fds); /* the queue holds them now */
		buf_free(&o->said);
		o->ready_ms = now;
		/* What its agent and preloads hold: charged beside each request. */
		int64_t held = wp->board->own_cgroups ? cgroup_memory_used(c, o->name) : -1;
		if (held > 0)
			atomic_store(&wl->preloaded, held);
		atomic_fetch_add(&wl->refills, 1);
		atomic_fetch_add(&wl->refill_ms, now - o->born_ms);
		wp->backoff_ms[wp->board->slot[i].lang] = 0;
		atomic_store(&wp->board->slot[i].state, W_READY);
		return;
	}
	bool late = now - o->born_ms > c->sandbox.start_timeout_ms;
	bool garbled = o->said.len >= rlen; /* and not the ready record */
	if (!eof && !late && !garbled)
		return;
	/* It will not become ready: say why once, and back off. */
	for (size_t k = 0; k < o->said.len; k++)
		if (o->said.data[k] == '\n' || o->said.data[k] == '\036')
			o->said.data[k] = ' ';
	log_msg("warm pool: %s sandbox %s did not start%s: %.300s", wl->name, o->name,
		late ? " in time" : "", o->said.len ? o->said.data : "(nothing said)");
	int lang = wp->board->slot[i].lang;
	wp->backoff_ms[lang] = wp->backoff_ms[lang] ? wp->backoff_ms[lang] * 2 : BACKOFF_FIRST_MS;
	if (wp->backoff_ms[lang] > BACKOFF_MAX_MS)
		wp->backoff_ms[lang] = BACKOFF_MAX_MS;
	wp->backoff_until[lang] = now + wp->backoff_ms[lang];
	retire(wp, c, i);
}

/* Is this ready sandbox still what a request would get? */
static bool still_good(struct warm_pool *wp, const struct conf *c, const struct registry *reg, int i,
		       int64_t now)
{
	struct warm_lang *wl = &wp->board->lang[wp->board->slot[i].lang];
	const struct language *l = registry_by_id(reg, wl->name);
	if (!l || !l->image_id || strcmp(l->image_id, wp->own[i].image_id))
		return false; /* the image was rebuilt (or the language went) */
	const struct limits *had = &wp->board->slot[i].boot;
	struct limits b = boot_of(c, l, wp->board->own_cgroups);
	if (b.memory_bytes != had->memory_bytes || b.cpus != had->cpus || b.pids != had->pids)
		return false; /* the defaults, ceilings or preloadBytes changed since it started */
	return now - wp->own[i].ready_ms < c->warm.max_age_ms;
}

/* Take every message off a queue; put back the ones still good. */
static void purge(struct warm_pool *wp, const struct conf *c, const struct registry *reg, int lang,
		  int64_t now)
{
	int slot, fds[3];
	int keep[WARM_MAX_SANDBOXES], n_keep = 0;
	int keep_fds[WARM_MAX_SANDBOXES][3];
	while (dequeue(wp->queue[lang][1], &slot, fds)) {
		if (slot < 0 || slot >= wp->board->n_slots)
			continue;
		int state = atomic_load(&wp->board->slot[slot].state);
		if (state == W_READY && still_good(wp, c, reg, slot, now) && n_keep < WARM_MAX_SANDBOXES) {
			keep[n_keep] = slot;
			memcpy(keep_fds[n_keep++], fds, sizeof fds);
			continue;
		}
		close_fds(fds);
		if (state == W_READY || state == W_DEAD)
			retire(wp, c, slot);
	}
	for (int k = 0; k < n_keep; k++) {
		if (!enqueue(wp, keep[k], keep_fds[k]))
			retire(wp, c, keep[k]);
		close_fds(keep_fds[k]);
	}
}

int64_t warm_tick(struct warm_pool *wp, const struct conf *c, const struct registry *reg, bool saturated)
{
	if (!wp)
		return 1000;
	struct warm_board *b = wp->board;
	int64_t now = now_ms();
	bool stale[WARM_MAX_LANGUAGES] = {0};
	int ready[WARM_MAX_LANGUAGES] = {0}, starting[WARM_MAX_LANGUAGES] = {0};
	int starting_all = 0;
	int64_t held = 0;
	for (int i = 0; i < b->n_slots; i++) {
		int state = atomic_load(&b->slot[i].state), lang = b->slot[i].lang;
		if (state == W_STARTING)
			check_starting(wp, c, i, now);
		else if (state == W_DONE)
			retire(wp, c, i);
		else if ((state == W_READY && !still_good(wp, c, reg, i, now)) || state == W_DEAD)
			stale[lang] = true;
	}
	for (int l = 0; l < b->n_langs; l++)
		if (stale[l])
			purge(wp, c, reg, l, now);
	for (int i = 0; i < b->n_slots; i++) {
		int state = atomic_load(&b->slot[i].state), lang = b->slot[i].lang;
		if (state == W_READY)
			ready[lang]++;
		if (state == W_STARTING)
			starting[lang]++, starting_all++;
		if (state == W_READY || state == W_STARTING)
			held += held_by(c, &b->lang[lang]);
	}
	bool waiting = starting_all > 0, held_back = false;
	for (int l = 0; l < b->n_langs; l++) {
		const struct language *lang = registry_by_id(reg, b->lang[l].name);
		/* While the pool is busy, a boot only takes CPU from the runs:
		 * each request then pays a boot anyway (bench/warm.py). */
		while (!saturated && lang && lang->image_id && ready[l] + starting[l] < b->lang[l].target &&
		       starting_all < STARTING_AT_ONCE && now >= wp->backoff_until[l]) {
			if (held + held_by(c, &b->lang[l]) > c->warm.memory_budget_bytes)
				break;
			start_one(wp, c, lang, l);
			starting[l]++, starting_all++;
			held += held_by(c, &b->lang[l]);
			waiting = true;
		}
		if (saturated && ready[l] + starting[l] < b->lang[l].target)
			held_back = true;
		atomic_store(&b->lang[l].ready, ready[l]);
		atomic_store(&b->lang[l].starting, starting[l]);
	}
	bool removing = removals_collect(&wp->removing, now);
	/* A boot is watched closely, a held refill or a removal soon; else
	 * refills follow SIGUSR1. */
	return waiting ? 20 : held_back || removing ? 100 : 1000;
}

bool warm_child_exited(struct warm_pool *wp, pid_t pid, int status)
{
	if (!wp || pid <= 0)
		return false;
	for (int i = 0; i < wp->board->n_slots; i++) {
		if (wp->own[i].client != pid)
			continue;
		wp->own[i].client = 0;
		/* The attached client exits with its container's status: the taker reads
		 * it here instead of asking docker (warm_exit_status). */
		atomic_store(&wp->board->slot[i].exit_status, status);
		/* A ready one died in the queue (OOM, dockerd restarted, its age):
		 * the next tick purges it. A starting one: check_starting sees EOF. */
		int expected = W_READY;
		atomic_compare_exchange_strong(&wp->board->slot[i].state, &expected, W_DEAD);
		return true;
	}
	return false;
}

void warm_worker_gone(struct warm_pool *wp, const struct conf *c, pid_t pid)
{
	if (!wp)
		return;
	for (int i = 0; i < wp->board->n_slots; i++)
		if (atomic_load(&wp->board->slot[i].state) == W_TAKEN &&
		    atomic_load(&wp->board->slot[i].taker) == pid) {
			log_msg("warm pool: worker %d died holding %s: removing it", (int)pid, wp->own[i].name);
			retire(wp, c, i);
		}
}

void warm_destroy(struct warm_pool *wp, const struct conf *c)
{
	if (!wp)
		return;
	for (int i = 0; i < wp->board->n_slots; i++) {
		if (wp->own[i].name[0])
			removals_add(&wp->removing, c, wp->own[i].name);
		close_fds(wp->own[i].fds);
		buf_free(&wp->own[i].said);
	}
	removals_collect(&wp->removing, now_ms() + REAP_REMOVE_MS);
	removals_drop(&wp->removing); /* what is left is the reaper's */
	for (int l = 0; l < wp->board->n_langs; l++)
		for (int k = 0; k < 2; k++)
			if (wp->queue[l][k] >= 0)
				close(wp->queue[l][k]);
	munmap(wp->board, sizeof *wp->board);
	free(wp);
}

bool warm_holds(const struct warm_pool *wp, const char *name)
{
	for (int i = 0; wp && i < wp->board->n_slots; i++)
		if (!strcmp(wp->own[i].name, name))
			return true;
	return wp && removals_holds(&wp->removing, name);
}

size_t warm_counts(const struct warm_pool *wp, struct warm_count *out, size_t max)
{
	size_t n = 0;
	for (int l = 0; wp && l < wp->board->n_langs && n < max; l++, n++) {
		const struct warm_lang *wl = &wp->board->lang[l];
		out[n] = (struct warm_count){.language = wl->name, .target = wl->target,
			.ready = atomic_load(&wl->ready), .starting = atomic_load(&wl->starting),
			.refills = atomic_load(&wl->refills), .refill_ms = atomic_load(&wl->refill_ms)};
	}
	return n;
}

/* ---- a worker's side ---- */

/* Wake the master (SIGUSR1) to refill or remove; only the master that
 * forked us: after its death the pid may be someone else's. */
static void tell_master(const struct warm_pool *wp)
{
	if (getppid() == wp->master)
		kill(wp->master, SIGUSR1);
}

/* Give the taken sandbox the job's memory, above what it holds now, and
 * its CPU (the header comment); boot: what it started with. */
static bool set_limits(const struct conf *c, const struct limits *boot, const char *name,
		       const struct limits *want, const char **miss)
{
	int64_t held = cgroup_memory_used(c, name);
	if (held >= 0 && held + want->memory_bytes > boot->memory_bytes)
		return *miss = "memory", false; /* its preloads grew past preloadBytes */
	if (held < 0 || !cgroup_own_set(c, name, held + want->memory_bytes, want->cpus))
		return *miss = "cgroup", false; /* logged */
	return true;
}

bool warm_take(const struct conf *c, struct warm_pool *wp, const struct sandbox_job *job,
	       struct warm_lease *lease, const char **miss)
{
	*miss = NULL;
	if (!wp)
		return false;
	int lang = 0;
	while (lang < wp->board->n_langs && strcmp(wp->board->lang[lang].name, job->lang->id))
		lang++;
	if (lang == wp->board->n_langs || wp->board->lang[lang].target == 0)
		return false;
	const struct warm_lang *wl = &wp->board->lang[lang];
	const struct limits *p = &wl->profile, *want = &job->limits;
	if (job->network)
		return *miss = "network", false;
	if (job->n_outputs) /* the agent returns files (outputs.c); warm ones do not */
		return *miss = "outputs", false;
	if (job->volume) /* mounted at start; a warm one started without it */
		return *miss = "volume", false;
	bool own = wp->board->own_cgroups;
	if (want->pids != p->pids || (!own && (want->memory_bytes != p->memory_bytes || want->cpus != p->cpus)))
		return *miss = "limits", false;
	if (own && atomic_load(&wl->preloaded) + want->memory_bytes > wl->boot.memory_bytes)
		return *miss = "memory", false;
	int slot, fds[3];
	while (dequeue(wp->queue[lang][1], &slot, fds)) {
		int expected = W_READY;
		if (slot >= 0 && slot < wp->board->n_slots && fds[2] >= 0 &&
		    atomic_compare_exchange_strong(&wp->board->slot[slot].state, &expected, W_TAKEN)) {
			atomic_store(&wp->board->slot[slot].taker, getpid());
			*lease = (struct warm_lease){.slot = slot, .wp = wp};
			memcpy(lease->fds, fds, sizeof fds);
			snprintf(lease->name, sizeof lease->name, "%s", wp->board->slot[slot].name);
			tell_master(wp); /* refill now */
			/* Started before a reload changed the language's pids: not
			 * this job's process limit. */
			const struct limits *boot = &wp->board->slot[slot].boot;
			if (boot->pids != want->pids)
				*miss = "limits";
			if (*miss || (own && !set_limits(c, boot, lease->name, want, miss))) {
				warm_release(wp, lease); /* unused: the master removes it */
				return false;
			}
			return true;
		}
		close_fds(fds); /* died in the queue: the master removes it */
	}
	*miss = "empty";
	return false;
}

int warm_exit_status(const struct warm_lease *lease, int64_t wait_ms)
{
	const _Atomic int *st = &lease->wp->board->slot[lease->slot].exit_status;
	int64_t until = now_ms() + wait_ms;
	while (atomic_load(st) == -1 && now_ms() < until)
		usleep(1000); /* the master reaps the client as its pipes close */
	return atomic_load(st);
}

void warm_release(struct warm_pool *wp, struct warm_lease *lease)
{
	close_fds(lease->fds);
	atomic_store(&wp->board->slot[lease->slot].state, W_DONE);
	tell_master(wp);
}

void warm_job_frame(const struct sandbox_job *job, const char *nonce, struct buf *out)
{
	char line[64];
	buf_printf(out, "%s\n", nonce);
	int n = snprintf(line, sizeof line, "%zu\n", job->n_files);
	buf_append(out, line, (size_t)n);
	for (size_t i = 0; i < job->n_files; i++) {
		const struct sandbox_file *file = &job->files[i];
		n = snprintf(line, sizeof line, "%zu %zu\n", strlen(file->name), file->len);
		buf_append(out, line, (size_t)n);
		buf_append(out, file->name, strlen(file->name));
		buf_append(out, file->data, file->len);
	}
	n = snprintf(line, sizeof line, "%zu\n", job->n_args);
	buf_append(out, line, (size_t)n);
	for (size_t i = 0; i < job->n_args; i++) {
		n = snprintf(line, sizeof line, "%zu\n", strlen(job->args[i]));
		buf_append(out, line, (size_t)n);
		buf_append(out, job->args[i], strlen(job->args[i]));
	}
	buf_append(out, job->stdin_data, job->stdin_len);
}
