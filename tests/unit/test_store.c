#define _GNU_SOURCE
/* The store (conf/store/store.h): rates, running claims, hosts, memory and
 * volume records, the same checks on each backend: an SQLite file in a
 * temporary directory, and a redis-server of our own on a unix socket
 * there (no docker, no network). Redis also gets stopped and started
 * again under a connection, which must fail clearly and then recover. */
#include "tap.h"
#include "../../conf/store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Each check names the backend it ran on. */
static const char *backend = "";
#define okb(cond, fmt, ...) ok(cond, "%s: " fmt, backend, ##__VA_ARGS__)

static void rates_and_claims(const struct store_conf *sc)
{
	struct fault f = {0};
	struct store *s = store_open(sc, "unit", &f), *other = store_open(sc, "unit", &f);
	okb(s && other, "two connections to one store");
	bool allowed;
	int64_t retry, t0 = 1000000;
	int n = 0;
	for (int i = 0; i < 5; i++) {
		store_rate_take(i % 2 ? s : other, "a", 3, t0, &allowed, &retry, &f);
		n += allowed;
	}
	okb(n == 3 && !allowed && retry == 20, "rate: a burst of 3 a minute, then retry in 20 s (%lld)", (long long)retry);
	store_rate_take(s, "b", 3, t0, &allowed, &retry, &f);
	okb(allowed, "rate: each tenant its own");
	store_rate_take(s, "a", 3, t0 + 20000, &allowed, &retry, &f);
	okb(allowed, "rate: one more after one interval");
	store_rate_take(s, "a", 0, t0, &allowed, &retry, &f);
	okb(allowed, "rate: 0 is no limit");

	int64_t c1, c2, c3;
	store_running_claim(s, "a", 2, 1, &c1, &f);
	store_running_claim(other, "a", 2, 2, &c2, &f);
	store_running_claim(s, "a", 2, 1, &c3, &f);
	okb(c1 > 0 && c2 > 0 && c3 == 0 && store_running_count(s, "a") == 2, "running: 2 claims, a third refused");
	store_running_release(s, c1);
	store_running_claim(s, "a", 2, 1, &c3, &f);
	okb(c3 > 0, "running: a released place is taken again");
	store_running_forget(s, 2);
	okb(store_running_count(other, "a") == 1, "running: a dead process's claims forgotten");
	store_running_forget(s, 1);
	store_close(s);
	store_close(other);
}

static void memory(const struct store_conf *sc)
{
	struct fault f = {0};
	struct store *s = store_open(sc, "unit", &f);
	struct memory_quota q = {1000, 4};
	bool created;
	char etag[17], etag2[17];
	int64_t t = 5000000;
	const char bin[] = {'a', 0, (char)0xff, 'b'};
	okb(store_memory_put(s, "a", "k/1", bin, sizeof bin, "application/x-bin", 0, MEMORY_ANY, "", &q, t,
			    &created, etag, &f) && created, "memory: put");
	struct memory_item it;
	okb(store_memory_get(s, "a", "k/1", t, &it, &f) && it.value.len == 4 && !memcmp(it.value.data, bin, 4) &&
	   !strcmp(it.content_type, "application/x-bin") && !strcmp(it.etag, etag), "memory: get, binary exact");
	memory_item_free(&it);
	okb(!store_memory_get(s, "b", "k/1", t, &it, &f) && f.code == E_KEY_NOT_FOUND, "memory: another tenant's key is not there");
	f = (struct fault){0};
	okb(!store_memory_put(s, "a", "k/1", "x", 1, "text/plain", 0, MEMORY_IF_MATCH, "0000000000000000", &q, t,
			     &created, etag2, &f) && f.code == E_PRECONDITION_FAILED, "memory: If-Match with a stale etag: 412");
	f = (struct fault){0};
	okb(store_memory_put(s, "a", "k/1", "x", 1, "text/plain", 0, MEMORY_IF_MATCH, etag, &q, t, &created,
			    etag2, &f) && !created && strcmp(etag, etag2), "memory: If-Match with its etag: replaced, new etag");
	okb(!store_memory_put(s, "a", "k/1", "y", 1, "text/plain", 0, MEMORY_IF_ABSENT, "", &q, t, &created,
			     etag, &f) && f.code == E_PRECONDITION_FAILED, "memory: If-None-Match * on a key there: 412");
	f = (struct fault){0};
	okb(store_memory_put(s, "a", "k/2", "t", 1, "text/plain", 1000, MEMORY_IF_ABSENT, "", &q, t, &created, etag,
			    &f), "memory: put with a TTL");
	okb(store_memory_get(s, "a", "k/2", t + 999, &it, &f), "memory: there before its TTL");
	memory_item_free(&it);
	okb(!store_memory_get(s, "a", "k/2", t + 1000, &it, &f) && f.code == E_KEY_NOT_FOUND, "memory: gone at its TTL");
	f = (struct fault){0};
	store_memory_put(s, "a", "k/3", "3", 1, "text/plain", 0, MEMORY_ANY, "", &q, t, &created, etag, &f);
	store_memory_put(s, "a", "l/1", "4", 1, "text/plain", 0, MEMORY_ANY, "", &q, t, &created, etag, &f);
	okb(!store_memory_put(s, "a", "l/2", "5", 1, "text/plain", 0, MEMORY_ANY, "", &q, t, &created, etag, &f) &&
	   f.code == E_QUOTA_EXCEEDED, "memory: a 5th key past a quota of 4 (an expired one not counted... yet)");
	okb(store_memory_expire(s, t + 1000) == 1, "memory: expiry removes the expired key");
	f = (struct fault){0};
	okb(store_memory_put(s, "a", "l/2", "5", 1, "text/plain", 0, MEMORY_ANY, "", &q, t, &created, etag, &f),
	   "memory: its place is free again");
	char big[1001] = {0};
	okb(!store_memory_put(s, "a", "big", big, sizeof big, "text/plain", 0, MEMORY_ANY, "", &q, t, &created,
			     etag, &f) && f.code == E_QUOTA_EXCEEDED, "memory: bytes past the quota refused");

	struct memory_item *items;
	size_t n;
	bool more;
	okb(store_memory_list(s, "a", "k/", "", 10, t + 1000, &items, &n, &more, &f) && n == 2 && !more &&
	   !strcmp(items[0].key, "k/1") && !strcmp(items[1].key, "k/3") && items[0].size == 1,
	   "memory list: a prefix, in order");
	for (size_t i = 0; i < n; i++)
		memory_item_free(&items[i]);
	free(items);
	okb(store_memory_list(s, "a", "", "", 2, t + 1000, &items, &n, &more, &f) && n == 2 && more &&
	   !strcmp(items[1].key, "k/3"), "memory list: a page, and more after it");
	autofree char *cursor = xstrdup(items[1].key);
	for (size_t i = 0; i < n; i++)
		memory_item_free(&items[i]);
	free(items);
	okb(store_memory_list(s, "a", "", cursor, 2, t + 1000, &items, &n, &more, &f) && n == 2 && !more &&
	   !strcmp(items[0].key, "l/1"), "memory list: the next page from the cursor");
	for (size_t i = 0; i < n; i++)
		memory_item_free(&items[i]);
	free(items);
	okb(store_memory_list(s, "b", "", "", 10, t, &items, &n, &more, &f) && n == 0, "memory list: another tenant sees none");
	free(items);
	okb(!store_memory_delete(s, "a", "k/1", MEMORY_IF_MATCH, "0000000000000000", t, &f) &&
	   f.code == E_PRECONDITION_FAILED, "memory delete: a stale etag refused");
	f = (struct fault){0};
	okb(store_memory_delete(s, "a", "k/1", MEMORY_ANY, "", t, &f) &&
	   !store_memory_delete(s, "a", "k/1", MEMORY_ANY, "", t, &f) && f.code == E_KEY_NOT_FOUND,
	   "memory delete: gone, then not found");
	store_close(s);
}


static void volumes(const struct store_conf *sc)
{
	struct fault f = {0};
	struct store *s = store_open(sc, "unit", &f);
	struct volume v, w;
	okb(store_volume_add(s, "a", "data", 100, 2, 250, 7000, &v, &f) && !strcmp(v.state, "creating") &&
	    strlen(v.id) == VOLUME_ID_LEN && !strcmp(v.host, "unit"), "volume: added, creating, on this host");
	okb(!store_volume_add(s, "a", "data", 100, 2, 250, 7000, &w, &f) && f.code == E_VOLUME_EXISTS,
	    "volume: a second of one name: volume_exists");
	f = (struct fault){0};
	okb(!store_volume_add(s, "a", "big", 200, 2, 250, 7000, &w, &f) && f.code == E_QUOTA_EXCEEDED &&
	    strstr(f.message, "volumeBytes"), "volume: past volumeBytes refused (%s)", f.message);
	f = (struct fault){0};
	okb(store_volume_add(s, "a", "logs", 100, 2, 250, 7000, &w, &f), "volume: a second one");
	okb(!store_volume_add(s, "a", "more", 16, 2, 0, 7000, &w, &f) && f.code == E_QUOTA_EXCEEDED &&
	    strstr(f.message, "(volumes)"), "volume: past the count refused (%s)", f.message);
	f = (struct fault){0};
	okb(!store_volume_get(s, "b", "data", &w, &f) && f.code == E_VOLUME_NOT_FOUND, "volume: not another tenant's");
	f = (struct fault){0};
	okb(store_volume_set_state(s, "a", "data", "creating", "ready", &w, &f) && !strcmp(w.state, "ready"),
	    "volume: creating -> ready");
	okb(!store_volume_set_state(s, "a", "data", "creating", "ready", &w, &f) && f.code == E_VOLUME_BUSY,
	    "volume: a change from a state it is not in refused");
	f = (struct fault){0};
	okb(store_volume_get(s, "a", "data", &w, &f) && !strcmp(w.id, v.id) && !strcmp(w.state, "ready") &&
	    w.size_bytes == 100 && w.created_ms == 7000 && !strcmp(w.host, "unit"), "volume: read back whole");
	struct volume *list;
	size_t n;
	okb(store_volume_list(s, "a", &list, &n, &f) && n == 2 && !strcmp(list[0].name, "data") &&
	    !strcmp(list[1].name, "logs"), "volume: listed by name");
	free(list);
	okb(store_volume_drop(s, "a", "data", &f) && store_volume_drop(s, "a", "logs", &f) &&
	    store_volume_list(s, "a", &list, &n, &f) && n == 0, "volume: dropped");
	free(list);
	store_close(s);
}

/* Marks in use (store.h): taken only on a ready volume, in one
 * step; a delete begun only when none is held; each kind of owner's
 * end forgets its marks; with Redis, a mark is a lease. */
static void volume_uses(const struct store_conf *sc)
{
	struct fault f = {0};
	struct store *s = store_open(sc, "unit", &f), *other = store_open(sc, "unit", &f);
	struct volume v, w, x;
	int64_t t = wall_ms();
	const char *me = process_id(), *dead = "999999999.1";
	store_volume_add(s, "a", "data", 100, 0, 0, t, &v, &f);
	okb(!store_volume_use(s, "a", "data", VOLUME_BY_WORKER, me, t, &w, &f) && f.code == E_VOLUME_NOT_FOUND &&
	    strstr(f.message, "creating"), "uses: a volume being made is not used (%s)", f.message);
	f = (struct fault){0};
	store_volume_set_state(s, "a", "data", "creating", "ready", &v, &f);
	okb(store_volume_use(s, "a", "data", VOLUME_BY_WORKER, me, t, &w, &f) && !strcmp(w.id, v.id) &&
	    !strcmp(w.state, "ready"), "uses: a ready one is marked, its record read in the same step");
	okb(!store_volume_use(s, "b", "data", VOLUME_BY_WORKER, me, t, &w, &f) && f.code == E_VOLUME_NOT_FOUND,
	    "uses: not another tenant's");
	f = (struct fault){0};
	okb(!store_volume_delete_begin(other, "a", "data", me, t, &w, &f) && f.code == E_VOLUME_BUSY &&
	    strstr(f.message, "by a run or a session"), "uses: a delete while it is used: volume_busy (%s)", f.message);
	f = (struct fault){0};
	okb(store_volume_get(s, "a", "data", &w, &f) && !strcmp(w.state, "ready"), "uses: ...and it stays ready");
	okb(store_volume_use(other, "a", "data", VOLUME_BY_SESSION, "unit-s1", t, &w, &f) &&
	    store_volume_use(s, "a", "data", VOLUME_BY_WORKER, me, t, &w, &f), "uses: a session's too; the worker's again (still one mark)");
	okb(store_volume_release(s, me), "uses: the worker's released");
	okb(!store_volume_delete_begin(s, "a", "data", me, t, &w, &f) && f.code == E_VOLUME_BUSY,
	    "uses: the session's still holds it");
	f = (struct fault){0};
	store_session_release(s, "unit-s1"); /* a session's end releases its marks */
	/* A deleter that dies half-way (dead: no process has that name). */
	okb(store_volume_delete_begin(s, "a", "data", dead, t, &w, &f) && !strcmp(w.state, "deleting"),
	    "uses: none left: deleting, in the same step");
	okb(!store_volume_use(other, "a", "data", VOLUME_BY_WORKER, me, t, &x, &f) && f.code == E_VOLUME_NOT_FOUND &&
	    strstr(f.message, "deleting"), "uses: a volume being deleted is not used (%s)", f.message);
	f = (struct fault){0};
	okb(!store_volume_delete_begin(other, "a", "data", me, t, &w, &f) && f.code == E_VOLUME_BUSY &&
	    strstr(f.message, "another request"), "uses: a second delete while one is under way: busy (%s)", f.message);
	f = (struct fault){0};
	struct strv none = {0};
	store_volume_uses_keep(s, &none, t);
	okb(store_volume_delete_begin(s, "a", "data", me, t, &w, &f),
	    "uses: its deleter dead (the upkeep forgets its mark), the delete is begun again");
	store_volume_drop(s, "a", "data", &f);
	store_volume_release(s, me);

	/* The upkeep: a dead worker's mark goes, a live one's stays; a session's
	 * goes when its session is not listed and older than the grace. */
	store_volume_add(s, "a", "kept", 100, 0, 0, t, &v, &f);
	store_volume_set_state(s, "a", "kept", "creating", "ready", &v, &f);
	store_volume_use(s, "a", "kept", VOLUME_BY_WORKER, dead, t, &w, &f);
	store_volume_use(s, "a", "kept", VOLUME_BY_WORKER, me, t, &w, &f);
	store_volume_use(s, "a", "kept", VOLUME_BY_SESSION, "unit-s2", t, &w, &f);
	store_volume_use(s, "a", "kept", VOLUME_BY_SESSION, "unit-s3", t, &w, &f);
	struct strv alive = {0};
	strv_push(&alive, "unit-s2");
	store_volume_uses_keep(s, &alive, t + 1000);
	okb(!store_volume_delete_begin(s, "a", "kept", me, t + 1000, &w, &f) && strstr(f.message, "3 runs"),
	    "uses: the upkeep forgets a dead worker's mark, keeps a young session's it does not list (%s)", f.message);
	f = (struct fault){0};
	int64_t later = t + STORE_SESSION_GRACE_MS + 1000;
	store_volume_uses_keep(s, NULL, later);
	okb(!store_volume_delete_begin(s, "a", "kept", me, later, &w, &f) && strstr(f.message, "3 runs"),
	    "uses: sessions not listed (NULL): their marks are left as they are");
	f = (struct fault){0};
	store_volume_uses_keep(s, &alive, later);
	okb(!store_volume_delete_begin(s, "a", "kept", me, later, &w, &f) && strstr(f.message, "2 runs"),
	    "uses: past the grace, a session it does not list loses its mark (%s)", f.message);
	f = (struct fault){0};
	store_volume_uses_keep(s, &alive, t + STORE_CLAIM_MAX_MS + 1000);
	okb(!store_volume_delete_begin(s, "a", "kept", me, t + STORE_CLAIM_MAX_MS + 1000, &w, &f) &&
	    strstr(f.message, "by a run or"), "uses: a live worker's mark older than any request goes (%s)", f.message);
	f = (struct fault){0};
	strv_free(&alive);
	store_volume_uses_keep(s, &alive, t + STORE_CLAIM_MAX_MS + 1000);
	if (sc->backend == STORE_REDIS) {
		store_volume_use(s, "a", "kept", VOLUME_BY_WORKER, me, t, &w, &f);
		okb(store_volume_delete_begin(s, "a", "kept", me, t + STORE_LEASE_MS + 1, &w, &f),
		    "uses: a lease not renewed (its host dead) stops counting");
		store_volume_set_state(s, "a", "kept", "deleting", "ready", &w, &f);
		store_volume_use(s, "a", "kept", VOLUME_BY_WORKER, me, t, &w, &f);
		store_volume_uses_keep(s, NULL, t + STORE_LEASE_MS);
		okb(!store_volume_delete_begin(s, "a", "kept", me, t + STORE_LEASE_MS + 1, &w, &f) &&
		    f.code == E_VOLUME_BUSY, "uses: one its master renews still counts");
		f = (struct fault){0};
	}
	store_volume_release(s, me);
	okb(store_volume_delete_begin(s, "a", "kept", me, t, &w, &f), "uses: all released: deletable");
	store_volume_drop(s, "a", "kept", &f);
	store_volume_release(s, me);
	store_close(s);
	store_close(other);
}

static void sessions(const struct store_conf *sc)
{
	struct fault f = {0};
	struct store *s = store_open(sc, "unit", &f);
	int64_t t = wall_ms();
	okb(store_session_claim(s, "a", "unit-s1", 100, 2, 250, t, &f) &&
	    store_session_claim(s, "a", "unit-s2", 100, 2, 250, t, &f), "sessions: two claimed");
	okb(!store_session_claim(s, "a", "unit-s3", 10, 2, 0, t, &f) && f.code == E_QUOTA_EXCEEDED &&
	    strstr(f.message, "(sessions)"), "sessions: a third past the share refused (%s)", f.message);
	f = (struct fault){0};
	okb(!store_session_claim(s, "a", "unit-s3", 100, 3, 250, t, &f) && f.code == E_QUOTA_EXCEEDED &&
	    strstr(f.message, "sessionMemoryBytes"), "sessions: memory past the share refused (%s)", f.message);
	f = (struct fault){0};
	okb(store_session_claim(s, "b", "unit-s4", 100, 1, 0, t, &f), "sessions: each tenant its own");
	store_session_release(s, "unit-s1");
	okb(store_session_claim(s, "a", "unit-s3", 100, 2, 250, t, &f), "sessions: a released place is taken again");
	/* The host lists s2, s5 (made while its claim was lost) and s1 (its
	 * list taken before s1's DELETE): s3 and s4 ended without a word. */
	struct session_claim alive[] = {{"unit-s2", "a", 100}, {"unit-s5", "b", 100}, {"unit-s1", "a", 100}};
	store_sessions_keep(s, alive, 3, t);
	okb(!store_session_claim(s, "b", "unit-s7", 100, 2, 0, t, &f) && f.code == E_QUOTA_EXCEEDED,
	    "sessions: the upkeep claims what it lists and the store lacks");
	f = (struct fault){0};
	okb(!store_session_claim(s, "a", "unit-s6", 100, 2, 0, t, &f) && f.code == E_QUOTA_EXCEEDED,
	    "sessions: ...keeps a young claim it does not list (a session being made)");
	f = (struct fault){0};
	okb(store_session_claim(s, "a", "unit-s6", 100, 3, 0, t, &f),
	    "sessions: ...and does not bring back one released after its list was taken");
	store_session_release(s, "unit-s6");
	int64_t later = t + STORE_SESSION_GRACE_MS + 1000;
	store_sessions_keep(s, alive, 3, later);
	okb(store_session_claim(s, "a", "unit-s6", 100, 2, 250, later, &f),
	    "sessions: past the grace, the ended ones it does not list are forgotten");
	store_session_release(s, "unit-s6");
	store_sessions_keep(s, NULL, 0, later + STORE_SESSION_GRACE_MS + 1000);
	okb(store_session_claim(s, "b", "unit-s7", 100, 1, 0, later, &f), "sessions: none left after an upkeep with none");
	store_session_release(s, "unit-s7");
	store_sessions_keep(s, NULL, 0, later + 10 * STORE_SESSION_GRACE_MS);
	store_close(s);
}

static void hosts(const struct store_conf *sc)
{
	struct fault f = {0};
	struct store *s = store_open(sc, "unit", &f);
	bool alive = false, other = true;
	store_running_forget_dead(s); /* the upkeep says this host lives */
	okb(store_host_alive(s, "unit", &alive, &f) && alive && store_host_alive(s, "gone", &other, &f) &&
	    other == (sc->backend == STORE_SQLITE), "hosts: this one alive%s",
	    sc->backend == STORE_SQLITE ? " (one host: always)" : ", one never seen is not");
	okb(store_ping(s, &f), "ping");
	store_close(s);
}

static void run_all(const struct store_conf *sc, const char *name)
{
	backend = name;
	rates_and_claims(sc);
	memory(sc);
	volumes(sc);
	volume_uses(sc);
	sessions(sc);
	hosts(sc);
}

/* Queue mode's jobs and events (queue.h), on a Redis-protocol store. */
static void queue(const struct store_conf *sc)
{
	struct fault f = {0};
	struct store *s = store_open(sc, "unit", &f);
	int64_t length = -1, pending = -1;
	/* Taken with BLOCK 0 below: Redis answers at once when a job is there. */
	okb(s && queue_push(s, "job-a", "acme", true, "{\"a\":1}", 7, 2, &f) &&
	    queue_stats(s, &length, &pending, &f) && length == 1 && pending == 0, "queue: a job pushed, none taken");
	okb(queue_push(s, "job-b", "acme", false, "{}", 2, 2, &f), "queue: a second, up to maxLength (2)");
	f = (struct fault){0};
	okb(!queue_push(s, "job-c", "acme", false, "{}", 2, 2, &f) && f.code == E_BUSY, "queue: a third is busy");
	okb(queue_withdraw(s, "job-b"), "queue: a job no runner has can be withdrawn");
	char cursor[48] = "", cursor2[48] = "";
	struct queue_job job = {0}, again = {0};
	bool got = false;
	f = (struct fault){0};
	okb(queue_take(s, "r1", 60000, 0, cursor, &job, &got, &f) && got && !strcmp(job.job_id, "job-a") &&
	    !strcmp(job.tenant, "acme") && job.piston && job.body.len == 7 && !memcmp(job.body.data, "{\"a\":1}", 7) &&
	    !job.again, "queue: a runner takes it whole (%s)", f.message);
	okb(queue_stats(s, &length, &pending, &f) && pending == 1, "queue: taken, pending until done");
	okb(queue_touch(s, job.entry, "r1"), "queue: its runner renews its claim");
	nanosleep(&(struct timespec){0, 20000000}, NULL);
	okb(queue_take(s, "r2", 10, 0, cursor2, &again, &got, &f) && got && again.again &&
	    !strcmp(again.job_id, "job-a"), "queue: a runner silent past claimAfter loses it to the next");
	okb(!queue_touch(s, job.entry, "r1"), "queue: ...and hears so when it renews");
	okb(!queue_finish(s, &job, "r1", "r1-1", "result", "{\"late\":1}", 10) &&
	    queue_stats(s, &length, &pending, &f) && length == 1 && pending == 1,
	    "queue: the runner that lost it cannot answer for it, nor remove it from under the next");
	okb(queue_emit(s, "job-a", "r2-1", "started", "", 0), "queue: events emitted");
	okb(queue_finish(s, &again, "r2", "r2-1", "result", "{}", 2) && queue_stats(s, &length, &pending, &f) &&
	    length == 0 && pending == 0, "queue: its end written by the runner that has it: done, gone");
	char last[48] = "0";
	struct queue_event *ev = NULL;
	size_t n = 0;
	okb(queue_events(s, "job-a", last, 0, &ev, &n, &f) && n == 2 && !strcmp(ev[0].type, "started") &&
	    !strcmp(ev[1].type, "result") && !strcmp(ev[1].attempt, "r2-1") && ev[1].data.len == 2,
	    "queue: a front reads them in order, with their attempt (none from the runner that lost it)");
	queue_events_free(ev, n);
	queue_cancel(s, "job-a");
	okb(queue_cancelled(s, "job-a") && !queue_cancelled(s, "job-b"), "queue: a cancel is seen by its job only");
	queue_job_free(&job);
	queue_job_free(&again);
	got = true;
	okb(queue_take(s, "r1", 60000, 100, cursor, &job, &got, &f) && !got,
	    "queue: an empty queue gives none, after its wait (100 ms; 0 would be Redis' forever) (%s)", f.message);
	store_close(s);
}

/* The server the Redis backend's suites run against: redis-server, then
 * valkey-server (the same protocol; both are what isobox supports). */
static const char *server = "redis-server";

/* A server of our own, on a socket in dir (with a password, if one is
 * given); its pid. */
static pid_t start_redis_as(const char *dir, const char *name, const char *password)
{
	autofree char *sock = xasprintf("%s/%s", dir, name);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execlp(server, server, "--port", "0", "--unixsocket", sock, "--save", "",
		       "--appendonly", "no", "--dir", dir, "--loglevel", "warning",
		       "--requirepass", password ? password : "", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {
		/* Its socket is there once bound, but refuses until it listens. */
		autoclose int fd = unix_request(sock, "");
		if (fd >= 0)
			return pid;
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid)
			return -1;
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

static pid_t start_redis(const char *dir)
{
	return start_redis_as(dir, "redis.sock", NULL);
}

static void stop_redis(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

/* Redis goes away under an open store, and comes back. */
static void restart(const struct store_conf *sc, const char *dir, pid_t *pid)
{
	struct fault f = {0};
	struct store *s = store_open(sc, "unit", &f);
	bool allowed;
	int64_t retry;
	okb(store_rate_take(s, "r", 100, wall_ms(), &allowed, &retry, &f) && allowed, "restart: working before");
	stop_redis(*pid);
	autofree char *sock = xasprintf("%s/redis.sock", dir);
	unlink(sock);
	okb(!store_rate_take(s, "r", 100, wall_ms(), &allowed, &retry, &f) && f.code == E_STORE_UNAVAILABLE,
	    "restart: down: store_unavailable (%s)", f.message);
	*pid = start_redis(dir);
	f = (struct fault){0};
	okb(*pid > 0 && store_rate_take(s, "r", 100, wall_ms(), &allowed, &retry, &f) && allowed,
	    "restart: up again: the same store works, no reopening");
	/* It came back empty (no persistence here): the queue's group is made
	 * again on the new connection, not believed to be there. */
	struct queue_job job = {0};
	char cursor[48] = "";
	bool got = false;
	okb(queue_push(s, "job-r", "acme", false, "{}", 2, 10, &f) &&
	    queue_take(s, "r1", 60000, 100, cursor, &job, &got, &f) && got && !strcmp(job.job_id, "job-r"),
	    "restart: the queue works on the server that lost it (%s)", f.message);
	queue_finish(s, &job, "r1", "r1-1", NULL, NULL, 0);
	queue_job_free(&job);
	store_close(s);
}

/* store.redis.passwordFile: AUTH with it; a wrong one, or a file others
 * may read, is a clear store_unavailable. */
static void password(const char *dir)
{
	pid_t pid = start_redis_as(dir, "auth.sock", "s3cret-pass");
	okb(pid > 0, "a second %s, with a password", server);
	autofree char *address = xasprintf("unix:%s/auth.sock", dir);
	autofree char *good = xasprintf("%s/redis.password", dir), *bad = xasprintf("%s/wrong.password", dir);
	static const struct {
		const char *text;
		mode_t mode;
	} files[] = {{"s3cret-pass\n", 0640}, {"not-it\n", 0600}};
	const char *paths[] = {good, bad};
	for (size_t i = 0; i < 2; i++) {
		int fd = open(paths[i], O_WRONLY | O_CREAT | O_TRUNC, files[i].mode);
		if (fd < 0 || write(fd, files[i].text, strlen(files[i].text)) < 0)
			die("cannot write %s", paths[i]);
		fchmod(fd, files[i].mode);
		close(fd);
	}
	struct store_conf sc = {.backend = STORE_REDIS, .address = address, .prefix = "unit:",
				.timeout_ms = 2000, .password_file = good};
	struct fault f = {0};
	bool allowed;
	int64_t retry;
	struct store *s = store_open(&sc, "unit", &f);
	okb(s && store_rate_take(s, "p", 10, wall_ms(), &allowed, &retry, &f) && allowed,
	    "AUTH with the password file");
	store_close(s);
	sc.password_file = bad;
	f = (struct fault){0};
	s = store_open(&sc, "unit", &f);
	okb(s && !store_rate_take(s, "p", 10, wall_ms(), &allowed, &retry, &f) && f.code == E_STORE_UNAVAILABLE &&
	    strstr(f.message, "AUTH") && !strstr(f.message, "not-it"),
	    "a wrong password: store_unavailable, the password not in the message (%s)", f.message);
	store_close(s);
	chmod(good, 0644);
	sc.password_file = good;
	f = (struct fault){0};
	okb(!store_open(&sc, "unit", &f) && f.code == E_STORE_UNAVAILABLE && strstr(f.message, "readable by anyone"),
	    "a password file anyone may read is refused (%s)", f.message);
	stop_redis(pid);
	unlink(good);
	unlink(bad);
	autofree char *sock = xasprintf("%s/auth.sock", dir);
	unlink(sock);
}

UNIT_TEST(test_store)
{
	/* As in the worker (serve.c): a write to a Redis that went away
	 * is an error to handle, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	char dir[] = "/tmp/isobox-unit-XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp");
	autofree char *db = xasprintf("%s/store.db", dir);
	struct store_conf sqlite = {.backend = STORE_SQLITE, .path = db};
	run_all(&sqlite, "sqlite");
	struct fault f = {0};
	struct store_conf nowhere = {.backend = STORE_SQLITE, .path = "/nonexistent/dir/x.db"};
	ok(!store_open(&nowhere, "unit", &f) && f.code == E_STORE_UNAVAILABLE,
	   "sqlite: an unusable path is store_unavailable");

	static const char *const servers[][2] = {{"redis-server", "redis"}, {"valkey-server", "valkey"}};
	for (size_t i = 0; i < 2; i++) {
		server = servers[i][0];
		pid_t redis = start_redis(dir);
		ok(redis > 0, "%s: a %s started (installed by make deps)", servers[i][1], server);
		autofree char *address = xasprintf("unix:%s/redis.sock", dir);
		struct store_conf rc = {.backend = STORE_REDIS, .address = address, .prefix = "unit:",
					.timeout_ms = 2000};
		if (redis > 0) {
			run_all(&rc, servers[i][1]);
			queue(&rc);
			restart(&rc, dir, &redis);
			password(dir);
		}
		stop_redis(redis);
		autofree char *sock = xasprintf("%s/redis.sock", dir);
		unlink(sock);
	}
	static const char *const made[] = {"store.db", "store.db-wal", "store.db-shm", "redis.sock", NULL};
	for (size_t i = 0; made[i]; i++) {
		autofree char *path = xasprintf("%s/%s", dir, made[i]);
		unlink(path);
	}
	if (rmdir(dir) != 0)
		printf("# could not remove %s\n", dir);
}
