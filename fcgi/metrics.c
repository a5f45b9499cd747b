/*
 * metrics.c: the pool's shared counters (see metrics.h).
 *
 * A label set ("python", "ok") gets an entry in a fixed table the first
 * time any worker counts it: the worker claims an empty entry with a
 * compare-and-swap, writes the labels, then publishes the entry. Nothing
 * ever locks, so a worker killed at any instant cannot wedge the others.
 * Two workers adding the same new label set at the same moment may both
 * claim an entry; rendering sums entries with equal labels, so the
 * exposition stays correct. A full table drops the sample and counts it
 * in isobox_metrics_dropped_total.
 */
#define _GNU_SOURCE
#include "metrics.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define N_COUNTERS 512
#define N_HISTOGRAMS 64
#define LABEL_A 64 /* a language id: name@version (registry.h), 57 at most */
#define LABEL_B 24

enum { ENTRY_EMPTY, ENTRY_WRITING, ENTRY_READY };

/* Upper bounds of the duration buckets; +Inf is the last, implicit one.
 * From 1 ms (a warm run is served in 1-20 ms) to 30 s (the wall time's
 * ceiling, 20 s, plus a compile and the teardown). */
static const int64_t bucket_ms[] = {1, 2, 5, 10, 20, 50, 100, 250, 500, 1000, 2000, 5000, 10000, 20000, 30000};
static const char *const bucket_le[] = {"0.001", "0.002", "0.005", "0.01", "0.02", "0.05", "0.1", "0.25",
					"0.5", "1", "2", "5", "10", "20", "30"};
#define N_BUCKETS (sizeof bucket_ms / sizeof bucket_ms[0])

struct counter {
	_Atomic uint32_t state;
	uint32_t family;
	char a[LABEL_A], b[LABEL_B];
	_Atomic uint64_t value;
};

/* Non-cumulative buckets ([N_BUCKETS] is +Inf); rendering accumulates. */
struct histogram {
	_Atomic uint32_t state;
	char language[LABEL_A];
	_Atomic uint64_t bucket[N_BUCKETS + 1];
	_Atomic uint64_t sum_ms;
};

struct metrics {
	_Atomic uint64_t dropped;
	struct counter counters[N_COUNTERS];
	struct histogram histograms[N_HISTOGRAMS];
};

static const struct family {
	const char *name, *help, *label_a, *label_b;
	bool ms_as_seconds; /* counted in ms, shown in seconds (Prometheus' base unit) */
} families[M_FAMILIES] = {
	[M_HTTP_REQUESTS] = {"isobox_http_requests_total",
		"Requests answered, by route (\"other\" for unknown paths) and HTTP status.",
		"route", "status", false},
	[M_EXECUTIONS] = {"isobox_executions_total",
		"Programs run, by language and outcome (cancelled, timeout, oom, truncated, error, ok: the first that holds).",
		"language", "outcome", false},
	[M_REJECTED] = {"isobox_rejected_requests_total",
		"Requests refused before anything ran (bad input, forbidden, busy, client gone), by error code and status.",
		"code", "status", false},
	[M_SANDBOX_FAILURES] = {"isobox_sandbox_failures_total",
		"Requests that failed on the server side (5xx: docker unavailable, image missing, start timeout), by error code.",
		"code", "status", false},
	[M_WORKER_EXITS] = {"isobox_worker_exits_total",
		"Worker processes that ended and were replaced, by reason (recycled, hung, killed, exited).",
		"reason", NULL, false},
	[M_WARM_HITS] = {"isobox_warm_hits_total",
		"Programs run in a sandbox started ahead (the warm pool), by language.",
		"language", NULL, false},
	[M_WARM_MISSES] = {"isobox_warm_misses_total",
		"Programs of a language with a warm pool that ran cold, by reason (empty, limits, network, dead).",
		"language", "reason", false},
	[M_SESSIONS_CREATED] = {"isobox_sessions_created_total",
		"Sessions started, by type (shell, kernel).",
		"type", NULL, false},
	[M_SESSIONS_ENDED] = {"isobox_sessions_ended_total",
		"Sessions that ended, by reason (deleted; expired: idle or past their lifetime; died: their sandbox stopped, an OOM kill).",
		"reason", NULL, false},
	[M_SESSION_STEPS] = {"isobox_session_steps_total",
		"Steps run in sessions, by session type and outcome (as isobox_executions_total).",
		"type", "outcome", false},
	[M_SESSION_STEP_MS] = {"isobox_session_step_seconds_total",
		"Time spent in session steps (the whole request), by session type: divided by the steps, the mean step latency.",
		"type", NULL, true},
	[M_TENANT_REQUESTS] = {"isobox_tenant_requests_total",
		"Requests of tenants' callers, by tenant (the first pool.metricsTenants by name, then \"other\") and HTTP status.",
		"tenant", "status", false},
	[M_TENANT_RUN_MS] = {"isobox_tenant_run_seconds_total",
		"Time of tenants' runs (whole requests, container start included), by tenant as isobox_tenant_requests_total.",
		"tenant", NULL, true},
};

struct metrics *metrics_create(void)
{
	void *p = mmap(NULL, sizeof(struct metrics), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		log_msg("metrics: cannot map %zu bytes: %s; /metrics is off", sizeof(struct metrics),
			strerror(errno));
		return NULL;
	}
	return p; /* zero-filled by the kernel: every entry empty */
}

void metrics_destroy(struct metrics *m)
{
	if (m)
		munmap(m, sizeof *m);
}

static void copy_label(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
}

static bool ready(const _Atomic uint32_t *state)
{
	return atomic_load(state) == ENTRY_READY;
}

/* Claim entry state for writing; false if another process got there first. */
static bool claim(_Atomic uint32_t *state)
{
	uint32_t want = ENTRY_EMPTY;
	return atomic_compare_exchange_strong(state, &want, ENTRY_WRITING);
}

static struct counter *find_counter(struct metrics *m, uint32_t fam, const char *a, const char *b)
{
	char la[LABEL_A], lb[LABEL_B];
	copy_label(la, sizeof la, a);
	copy_label(lb, sizeof lb, b);
	for (size_t i = 0; i < N_COUNTERS;) {
		struct counter *c = &m->counters[i];
		uint32_t st = atomic_load(&c->state);
		if (st == ENTRY_EMPTY) {
			if (!claim(&c->state))
				continue; /* look at this entry again */
			c->family = fam;
			memcpy(c->a, la, sizeof la);
			memcpy(c->b, lb, sizeof lb);
			atomic_store(&c->state, ENTRY_READY);
			return c;
		}
		if (st == ENTRY_READY && c->family == fam && !strcmp(c->a, la) && !strcmp(c->b, lb))
			return c;
		i++;
	}
	return NULL;
}

void metrics_add(struct metrics *m, enum metrics_family fam, const char *a, const char *b, uint64_t n)
{
	if (!m || !n)
		return;
	struct counter *c = find_counter(m, fam, a, b);
	if (c)
		atomic_fetch_add(&c->value, n);
	else
		atomic_fetch_add(&m->dropped, 1);
}

void metrics_count(struct metrics *m, enum metrics_family fam, const char *a, const char *b)
{
	metrics_add(m, fam, a, b, 1);
}

void metrics_tenant_label(const struct metrics *m, const char *tenant, int64_t max, char out[LABEL_A])
{
	copy_label(out, LABEL_A, tenant);
	if (!m)
		return;
	/* The tenants named so far, each once (an entry per status). */
	const char *named[64];
	int64_t n = 0, cap = max < 64 ? max : 64;
	for (size_t i = 0; i < N_COUNTERS; i++) {
		const struct counter *c = &m->counters[i];
		if (!ready(&c->state) || c->family != M_TENANT_REQUESTS || !strcmp(c->a, "other"))
			continue;
		if (!strcmp(c->a, out))
			return;
		bool seen = false;
		for (int64_t j = 0; j < n && !seen; j++)
			seen = !strcmp(named[j], c->a);
		if (!seen && n < cap)
			named[n++] = c->a;
	}
	if (n >= cap)
		copy_label(out, LABEL_A, "other");
}

static struct histogram *find_histogram(struct metrics *m, const char *language)
{
	char l[LABEL_A];
	copy_label(l, sizeof l, language);
	for (size_t i = 0; i < N_HISTOGRAMS;) {
		struct histogram *h = &m->histograms[i];
		uint32_t st = atomic_load(&h->state);
		if (st == ENTRY_EMPTY) {
			if (!claim(&h->state))
				continue;
			memcpy(h->language, l, sizeof l);
			atomic_store(&h->state, ENTRY_READY);
			return h;
		}
		if (st == ENTRY_READY && !strcmp(h->language, l))
			return h;
		i++;
	}
	return NULL;
}

void metrics_observe_ms(struct metrics *m, const char *language, int64_t ms)
{
	if (!m)
		return;
	struct histogram *h = find_histogram(m, language);
	if (!h) {
		atomic_fetch_add(&m->dropped, 1);
		return;
	}
	if (ms < 0)
		ms = 0;
	size_t i = 0;
	while (i < N_BUCKETS && ms > bucket_ms[i])
		i++;
	atomic_fetch_add(&h->bucket[i], 1);
	atomic_fetch_add(&h->sum_ms, (uint64_t)ms);
}

const char *metrics_outcome(const struct sandbox_result *res)
{
	const struct sandbox_phase *p = res->has_run ? &res->run : &res->compile;
	if (res->client_gone)
		return "cancelled";
	if (p->timed_out)
		return "timeout";
	if (p->oom_killed)
		return "oom";
	if (p->truncated)
		return "truncated";
	if (!res->has_run || p->exit_code != 0)
		return "error";
	return "ok";
}

/* A label value with \, " and newline escaped, as the format requires. */
static void put_label(struct buf *out, const char *name, const char *value)
{
	buf_printf(out, "%s=\"", name);
	for (const char *p = value; *p; p++) {
		if (*p == '\\' || *p == '"')
			buf_printf(out, "\\%c", *p);
		else if (*p == '\n')
			buf_printf(out, "\\n");
		else
			buf_append(out, p, 1);
	}
	buf_append(out, "\"", 1);
}

/* A language id ("python@3.13") as two labels, language and version: one
 * series per version, and the language's sum one query away. */
static void put_language(struct buf *out, const char *id)
{
	const char *at = strchr(id, '@');
	if (!at) {
		put_label(out, "language", id);
		return;
	}
	char name[LABEL_A];
	snprintf(name, sizeof name, "%.*s", (int)(at - id), id);
	put_label(out, "language", name);
	buf_append(out, ",", 1);
	put_label(out, "version", at + 1);
}

static void header(struct buf *out, const char *name, const char *type, const char *help)
{
	buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void metrics_render_build_info(const char *version, const char *backend, const char *runtime,
			       const char *runtime_version, struct buf *out)
{
	header(out, "isobox_build_info", "gauge",
	       "isobox's version, its sandbox backend and that backend's runtime (always 1)");
	buf_printf(out, "isobox_build_info{");
	put_label(out, "version", version);
	buf_append(out, ",", 1);
	put_label(out, "backend", backend);
	buf_append(out, ",", 1);
	put_label(out, "runtime", runtime);
	buf_append(out, ",", 1);
	put_label(out, "runtime_version", runtime_version);
	buf_printf(out, "} 1\n");
}

static bool same_counter(const struct counter *x, const struct counter *y)
{
	return x->family == y->family && !strcmp(x->a, y->a) && !strcmp(x->b, y->b);
}

static void render_family(const struct metrics *m, enum metrics_family fam, struct buf *out)
{
	const struct family *f = &families[fam];
	header(out, f->name, "counter", f->help);
	for (size_t i = 0; i < N_COUNTERS; i++) {
		const struct counter *c = &m->counters[i];
		if (!ready(&c->state) || c->family != (uint32_t)fam)
			continue;
		bool seen = false; /* a duplicate of an earlier entry was summed there */
		for (size_t j = 0; j < i && !seen; j++)
			seen = ready(&m->counters[j].state) && same_counter(&m->counters[j], c);
		if (seen)
			continue;
		uint64_t v = 0;
		for (size_t j = i; j < N_COUNTERS; j++)
			if (ready(&m->counters[j].state) && same_counter(&m->counters[j], c))
				v += atomic_load(&m->counters[j].value);
		buf_printf(out, "%s{", f->name);
		if (!strcmp(f->label_a, "language"))
			put_language(out, c->a);
		else
			put_label(out, f->label_a, c->a);
		if (f->label_b) {
			buf_append(out, ",", 1);
			put_label(out, f->label_b, c->b);
		}
		if (f->ms_as_seconds)
			buf_printf(out, "} %llu.%03llu\n", (unsigned long long)(v / 1000),
				   (unsigned long long)(v % 1000));
		else
			buf_printf(out, "} %llu\n", (unsigned long long)v);
	}
}

static void render_histograms(const struct metrics *m, struct buf *out)
{
	const char *name = "isobox_execution_duration_seconds";
	header(out, name, "histogram",
	       "Time to serve one execution (container start, compile, run, teardown), by language.");
	for (size_t i = 0; i < N_HISTOGRAMS; i++) {
		const struct histogram *h = &m->histograms[i];
		if (!ready(&h->state))
			continue;
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = ready(&m->histograms[j].state) && !strcmp(m->histograms[j].language, h->language);
		if (seen)
			continue;
		uint64_t buckets[N_BUCKETS + 1] = {0}, sum_ms = 0;
		for (size_t j = i; j < N_HISTOGRAMS; j++) {
			const struct histogram *d = &m->histograms[j];
			if (!ready(&d->state) || strcmp(d->language, h->language))
				continue;
			for (size_t k = 0; k <= N_BUCKETS; k++)
				buckets[k] += atomic_load(&d->bucket[k]);
			sum_ms += atomic_load(&d->sum_ms);
		}
		uint64_t cumulative = 0;
		for (size_t k = 0; k <= N_BUCKETS; k++) {
			cumulative += buckets[k];
			buf_printf(out, "%s_bucket{", name);
			put_language(out, h->language);
			buf_printf(out, ",le=\"%s\"} %llu\n", k < N_BUCKETS ? bucket_le[k] : "+Inf",
				   (unsigned long long)cumulative);
		}
		buf_printf(out, "%s_sum{", name);
		put_language(out, h->language);
		buf_printf(out, "} %.3f\n%s_count{", (double)sum_ms / 1000.0, name);
		put_language(out, h->language);
		buf_printf(out, "} %llu\n", (unsigned long long)cumulative);
	}
}

/* The warm pool, per language, read off its shared board (sandbox/warm.c). */
static void render_warm(const struct warm_pool *warm, struct buf *out)
{
	struct warm_count n[WARM_MAX_LANGUAGES];
	size_t k = warm_counts(warm, n, WARM_MAX_LANGUAGES);
	static const struct {
		const char *name, *type, *help;
	} g[] = {
		{"isobox_warm_target", "gauge", "Warm sandboxes the pool keeps for the language (warm.sandboxes)."},
		{"isobox_warm_ready", "gauge", "Warm sandboxes ready to take now."},
		{"isobox_warm_starting", "gauge", "Warm sandboxes booting now."},
		{"isobox_warm_refills_total", "counter", "Warm sandboxes started and ready."},
		{"isobox_warm_refill_seconds_total", "counter",
		 "Time from docker run to the agent's ready, summed over refills."},
	};
	for (size_t j = 0; j < sizeof g / sizeof g[0]; j++) {
		header(out, g[j].name, g[j].type, g[j].help);
		for (size_t i = 0; i < k; i++) {
			buf_printf(out, "%s{", g[j].name);
			put_language(out, n[i].language);
			if (j == 4)
				buf_printf(out, "} %.3f\n", (double)n[i].refill_ms / 1000.0);
			else
				buf_printf(out, "} %lld\n", j == 0 ? (long long)n[i].target
					       : j == 1 ? (long long)n[i].ready
					       : j == 2 ? (long long)n[i].starting : n[i].refills);
		}
	}
}

void metrics_render(const struct metrics *m, const struct scoreboard *sb, int exec_slots,
		    const struct warm_pool *warm, int sessions, struct buf *out)
{
	struct scoreboard_counts n = scoreboard_count(sb);
	header(out, "isobox_workers", "gauge", "Worker processes alive in the pool.");
	buf_printf(out, "isobox_workers %d\n", n.alive);
	header(out, "isobox_workers_busy", "gauge", "Workers running a program now.");
	buf_printf(out, "isobox_workers_busy %d\n", n.executing);
	header(out, "isobox_execution_slots", "gauge", "Programs the pool runs at once (pool.workers).");
	buf_printf(out, "isobox_execution_slots %d\n", exec_slots);
	for (int fam = 0; fam < M_FAMILIES; fam++)
		render_family(m, (enum metrics_family)fam, out);
	render_histograms(m, out);
	render_warm(warm, out);
	if (sessions >= 0) {
		header(out, "isobox_sessions", "gauge", "Sessions alive now.");
		buf_printf(out, "isobox_sessions %d\n", sessions);
	}
	header(out, "isobox_metrics_dropped_total", "counter",
	       "Samples not counted because a label table was full.");
	buf_printf(out, "isobox_metrics_dropped_total %llu\n",
		   (unsigned long long)atomic_load(&m->dropped));
}

void metrics_render_store(const struct metrics_store *ms, struct buf *out)
{
	header(out, "isobox_store_up", "gauge", "Whether the store answered this scrape (1) or not (0).");
	buf_printf(out, "isobox_store_up{backend=\"%s\"} %d\n", ms->backend, ms->up);
	if (!ms->up)
		return;
	header(out, "isobox_cluster_host_up", "gauge",
	       "Hosts whose master renewed its life in the store within the lease (10 s).");
	for (size_t i = 0; i < ms->hosts.n; i++) {
		buf_printf(out, "isobox_cluster_host_up{");
		put_label(out, "host", ms->hosts.v[i]);
		buf_printf(out, "} 1\n");
	}
	if (!ms->queue)
		return;
	header(out, "isobox_queue_jobs", "gauge", "Jobs on the queue's stream: waiting, or taken and not done.");
	buf_printf(out, "isobox_queue_jobs %lld\n", (long long)ms->jobs);
	header(out, "isobox_queue_pending", "gauge", "Jobs a runner has taken and not finished (claimed).");
	buf_printf(out, "isobox_queue_pending %lld\n", (long long)ms->pending);
}
