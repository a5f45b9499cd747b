/* conf.c: load conf/isobox.yaml. */
#define _GNU_SOURCE
#include "conf.h"
#include "lib/json.h"
#include "lib/yaml_tree.h"

#include <errno.h>
#include <libgen.h>
#include <sys/socket.h>
#include <stdio.h>
#include <string.h>

static bool valid_instance(const char *s)
{
	if (!s[0] || strlen(s) > 32)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return false;
	return true;
}

/* Read key as a string; a relative path is resolved against base_dir. */
static bool get_path(const cJSON *o, const char *key, const char *base_dir, char **out, struct fault *f)
{
	const char *s;
	if (!json_string(cJSON_GetObjectItemCaseSensitive(o, key), key, &s, f))
		return false;
	if (!s[0])
		return fail(f, E_INVALID_VALUE, "%s must not be empty", key);
	*out = path_join(base_dir, s);
	return true;
}

/* A file bound into every sandbox: it goes into docker's argv as part of
 * one flag's value (--mount=type=bind,src=PATH,...). */
static bool bind_source(const char *path, const char *name, struct fault *f)
{
	if (strchr(path, ',') || strchr(path, '=') || path[0] != '/')
		return fail(f, E_INVALID_VALUE, "%s must be an absolute path without , or =", name);
	return true;
}

static bool get_int(const cJSON *o, const char *section, const char *key, int64_t min, int64_t *out, struct fault *f)
{
	char name[96];
	snprintf(name, sizeof name, "%s.%s", section, key);
	return json_int(cJSON_GetObjectItemCaseSensitive(o, key), name, min, (int64_t)1 << 40, out, f);
}

static bool get_limits(const cJSON *root, const char *key, struct limits *l, struct fault *f)
{
	unsigned set;
	if (!limits_parse(cJSON_GetObjectItemCaseSensitive(root, key), key, l, &set, f))
		return false;
	if (set != LIMIT_ALL)
		return fail(f, E_MISSING_FIELD, "%s must set every limit but compileTimeMs", key);
	return true;
}

/* Is each floor at most its ceiling (compileTimeMs aside)? */
static bool floors_under(const struct limits *lo, const struct limits *hi)
{
	return lo->memory_bytes <= hi->memory_bytes && lo->cpus <= hi->cpus && lo->pids <= hi->pids &&
	       lo->output_bytes <= hi->output_bytes && lo->wall_time_ms <= hi->wall_time_ms;
}

/* A Linux interface name: 1-15 of [A-Za-z0-9_.-]. */
static bool valid_ifname(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 15)
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

/* An array of address ranges; hosts_only: each must be a single IPv4 host. */
static bool get_cidrs(const cJSON *o, const char *key, bool hosts_only, struct cidr **out,
		      size_t *n, struct fault *f)
{
	struct strv list = {0};
	char name[64], why[160];
	snprintf(name, sizeof name, "network.%s", key);
	bool ok = json_strings(cJSON_GetObjectItemCaseSensitive(o, key), name, 256, &list, f);
	*out = xcalloc(list.n + 1, sizeof **out);
	for (size_t i = 0; ok && i < list.n; i++) {
		if (!cidr_parse(list.v[i], &(*out)[i], why, sizeof why))
			ok = fail(f, E_INVALID_VALUE, "%s: %s", name, why);
		else if (hosts_only && ((*out)[i].family != AF_INET || (*out)[i].prefix != 32))
			ok = fail(f, E_INVALID_VALUE, "%s: %s must be one IPv4 address", name, list.v[i]);
		*n = i + 1;
	}
	strv_free(&list);
	return ok;
}

/*
 * network.allow: each entry must be IPv4 and lie inside one deny entry.
 * An entry that takes nothing off the deny list is a typo, or a belief
 * that allow opens something else (the host, the bridge, mail ports: it
 * never does), so it is refused rather than silently meaningless.
 */
static bool check_allow(const struct conf_network *n, struct fault *f)
{
	char a[64];
	for (size_t i = 0; i < n->n_allow; i++) {
		bool inside = false;
		cidr_format(&n->allow[i], a, sizeof a);
		if (n->allow[i].family != AF_INET)
			return fail(f, E_INVALID_VALUE, "network.allow: %s is not IPv4 (IPv6 egress is off)", a);
		for (size_t j = 0; j < n->n_deny && !inside; j++)
			inside = cidr_within(&n->allow[i], &n->deny[j]);
		if (!inside)
			return fail(f, E_INVALID_VALUE,
				    "network.allow: %s is not inside any network.deny entry, so it would change nothing", a);
	}
	return true;
}

/*
 * The egress section. The firewall that deploy/egress.sh installs is made
 * from it (sandbox/egress.c), so everything here is checked as strictly as
 * a request: a rule that silently meant something else would open a hole.
 */
static bool get_network(const cJSON *root, struct conf_network *n, struct fault *f)
{
	static const char *const keys[] = {"enabled", "dockerNetwork", "bridge", "subnet", "runtime",
		"stateDir", "dns", "deny", "allow", "denyTcpPorts", "outInterfaces", NULL};
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "network"), *v;
	const char *s;
	char why[160];

	if (!json_object(o, "network", f) || !json_known_keys(o, keys, "network", f) ||
	    !json_bool(cJSON_GetObjectItemCaseSensitive(o, "enabled"), "network.enabled", &n->enabled, f))
		return false;
	if (!json_string(cJSON_GetObjectItemCaseSensitive(o, "dockerNetwork"), "network.dockerNetwork", &s, f))
		return false;
	if (!s[0] || strlen(s) > 64 || s[0] == '-' ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_.-") != strlen(s))
		return fail(f, E_INVALID_VALUE, "network.dockerNetwork must be 1-64 of [a-z0-9_.-]");
	n->docker_network = xstrdup(s);
	if (!json_string(cJSON_GetObjectItemCaseSensitive(o, "bridge"), "network.bridge", &s, f))
		return false;
	if (!valid_ifname(s))
		return fail(f, E_INVALID_VALUE, "network.bridge must be an interface name (1-15 of [A-Za-z0-9_.-])");
	n->bridge = xstrdup(s);
	if (!json_string(cJSON_GetObjectItemCaseSensitive(o, "subnet"), "network.subnet", &s, f))
		return false;
	if (!cidr_parse(s, &n->subnet, why, sizeof why))
		return fail(f, E_INVALID_VALUE, "network.subnet: %s", why);
	if (n->subnet.family != AF_INET || n->subnet.prefix < 8 || n->subnet.prefix > 29)
		return fail(f, E_INVALID_VALUE, "network.subnet must be an IPv4 range from /8 to /29");
	if (!json_string(cJSON_GetObjectItemCaseSensitive(o, "runtime"), "network.runtime", &s, f))
		return false;
	n->runtime = xstrdup(s);
	if (!json_string(cJSON_GetObjectItemCaseSensitive(o, "stateDir"), "network.stateDir", &s, f))
		return false;
	if (s[0] != '/')
		return fail(f, E_INVALID_VALUE, "network.stateDir must be an absolute path");
	n->state_dir = xstrdup(s);
	if (!get_cidrs(o, "dns", true, &n->dns, &n->n_dns, f) ||
	    !get_cidrs(o, "deny", false, &n->deny, &n->n_deny, f))
		return false;
	/* Optional: absent is the same as empty. */
	if (cJSON_GetObjectItemCaseSensitive(o, "allow")) {
		if (!get_cidrs(o, "allow", false, &n->allow, &n->n_allow, f) || !check_allow(n, f))
			return false;
	}

	v = cJSON_GetObjectItemCaseSensitive(o, "denyTcpPorts");
	if (!cJSON_IsArray(v))
		return fail(f, E_INVALID_TYPE, "network.denyTcpPorts must be an array of ports");
	if ((size_t)cJSON_GetArraySize(v) > sizeof n->deny_tcp_ports / sizeof n->deny_tcp_ports[0])
		return fail(f, E_TOO_MANY, "network.denyTcpPorts has more than 32 entries");
	const cJSON *p;
	cJSON_ArrayForEach(p, v)
		if (!json_int(p, "network.denyTcpPorts[]", 1, 65535, &n->deny_tcp_ports[n->n_deny_tcp_ports++], f))
			return false;

	if (!json_strings(cJSON_GetObjectItemCaseSensitive(o, "outInterfaces"), "network.outInterfaces",
			  16, &n->out_interfaces, f))
		return false;
	for (size_t i = 0; i < n->out_interfaces.n; i++)
		if (!valid_ifname(n->out_interfaces.v[i]))
			return fail(f, E_INVALID_VALUE, "network.outInterfaces: \"%.20s\" is not an interface name",
				    n->out_interfaces.v[i]);
	return true;
}

/* An optional integer key: absent keeps *out (the default). */
static bool get_optional_int(const cJSON *o, const char *section, const char *key, int64_t min,
			     int64_t *out, struct fault *f)
{
	return !cJSON_GetObjectItemCaseSensitive(o, key) || get_int(o, section, key, min, out, f);
}

/* An optional key that is one of two words: *second says whether it is
 * the second (left as it was when the key is absent). */
static bool get_optional_choice(const cJSON *o, const char *section, const char *key, const char *first,
				const char *second, bool *is_second, struct fault *f)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	const char *s;
	char where[64];
	snprintf(where, sizeof where, "%s.%s", section, key);
	if (!v)
		return true;
	if (!json_string(v, where, &s, f))
		return false;
	if (strcmp(s, first) && strcmp(s, second))
		return fail(f, E_INVALID_VALUE, "%s must be \"%s\" or \"%s\"", where, first, second);
	*is_second = !strcmp(s, second);
	return true;
}

/*
 * pool: the master's settings. Only `workers` is required; the rest keep
 * php-fpm-like defaults (never recycle, wait when busy, 15 s hang margin).
 */
static bool parse_pool(const cJSON *o, struct conf_pool *p, struct fault *f)
{
	static const char *const keys[] = {"workers", "maxRequests", "whenBusy", "hangMarginMs", "requestLog",
					   "metricsTenants", NULL};
	p->max_requests = 0;
	p->metrics_tenants = 20;
	p->reject_when_busy = false;
	p->request_log_json = false;
	p->hang_margin_ms = 15000;
	if (!json_object(o, "pool", f) || !json_known_keys(o, keys, "pool", f) ||
	    !get_int(o, "pool", "workers", 0, &p->workers, f) ||
	    !get_optional_int(o, "pool", "maxRequests", 0, &p->max_requests, f) ||
	    /* at least 10 s: it also covers the run's teardown (inspect, rm) */
	    !get_optional_int(o, "pool", "hangMarginMs", 10000, &p->hang_margin_ms, f) ||
	    !get_optional_int(o, "pool", "metricsTenants", 0, &p->metrics_tenants, f))
		return false;
	if (p->metrics_tenants > 64) /* metrics.c's table: 512 label sets for every family */
		return fail(f, E_INVALID_VALUE, "pool.metricsTenants must be 0-64");
	return get_optional_choice(o, "pool", "whenBusy", "wait", "reject", &p->reject_when_busy, f) &&
	       get_optional_choice(o, "pool", "requestLog", "logfmt", "json", &p->request_log_json, f);
}

/*
 * warm: sandboxes started ahead (sandbox/warm.c). Optional; absent, there is
 * no warm pool. Counts are per language name, checked against the registry
 * when the pool starts (a language needs an agent). agentDir is where
 * sandbox/agent/ is installed: every kind of sandbox mounts it (a cold
 * run's reporter is the agent), so without the section it is setup's.
 */
static bool parse_warm(const cJSON *o, const char *base_dir, struct conf_warm *w, struct fault *f)
{
	static const char *const keys[] = {"sandboxes", "memoryBudgetBytes", "preloadBytes", "maxAgeMs",
					   "agentDir", NULL};
	w->memory_budget_bytes = (int64_t)2 << 30;
	w->preload_bytes = (int64_t)256 << 20;
	w->max_age_ms = 600000;
	if (!o) {
		w->agent_dir = xstrdup("/var/lib/isobox/sandbox/agent");
		return true;
	}
	if (!json_object(o, "warm", f) || !json_known_keys(o, keys, "warm", f) ||
	    !get_optional_int(o, "warm", "memoryBudgetBytes", 0, &w->memory_budget_bytes, f) ||
	    !get_optional_int(o, "warm", "preloadBytes", 0, &w->preload_bytes, f) ||
	    !get_optional_int(o, "warm", "maxAgeMs", 10000, &w->max_age_ms, f))
		return false;
	if (!cJSON_GetObjectItemCaseSensitive(o, "agentDir"))
		return fail(f, E_MISSING_FIELD, "warm.agentDir must say where sandbox/agent/ is installed");
	if (!get_path(o, "agentDir", base_dir, &w->agent_dir, f))
		return false;
	if (w->agent_dir[0] != '/' || strchr(w->agent_dir, ',') || strchr(w->agent_dir, '='))
		return fail(f, E_INVALID_VALUE, "warm.agentDir must be an absolute path without , or =");
	const cJSON *counts = cJSON_GetObjectItemCaseSensitive(o, "sandboxes"), *e;
	if (counts && !json_object(counts, "warm.sandboxes", f))
		return false;
	cJSON_ArrayForEach(e, counts) {
		int64_t n;
		char name[96];
		snprintf(name, sizeof name, "warm.sandboxes.%.40s", e->string);
		if (!json_int(e, name, 0, WARM_MAX_SANDBOXES, &n, f))
			return false;
		if (w->n == WARM_MAX_LANGUAGES)
			return fail(f, E_INVALID_VALUE, "warm.sandboxes: at most %d languages", WARM_MAX_LANGUAGES);
		w->langs[w->n] = xstrdup(e->string);
		w->counts[w->n++] = n;
		w->total += n;
	}
	if (w->total > WARM_MAX_SANDBOXES)
		return fail(f, E_INVALID_VALUE, "warm.sandboxes: at most %d in all", WARM_MAX_SANDBOXES);
	return true;
}

/* Sessions (sandbox/session.c): absent, they are off. */
static bool parse_sessions(const cJSON *o, const char *base_dir, struct conf_sessions *s, struct fault *f)
{
	static const char *const keys[] = {"dir", "max", "memoryBudgetBytes", "memoryBytes",
		"idleTimeoutMs", "maxIdleTimeoutMs", "lifetimeMs", "maxLifetimeMs", "maxStepMs",
		"workspaceBytes", "maxFileBytes", "maxListEntries", NULL};
	*s = (struct conf_sessions){.max = 16, .memory_budget_bytes = (int64_t)4 << 30,
				    .memory_bytes = (int64_t)512 << 20, .idle_ms = 600000,
				    .max_idle_ms = 3600000, .lifetime_ms = 3600000,
				    .max_lifetime_ms = 86400000, .max_step_ms = 300000,
				    .workspace_bytes = (int64_t)256 << 20,
				    .max_file_bytes = (int64_t)32 << 20, .max_list_entries = 10000};
	if (!o)
		return true;
	if (!json_object(o, "sessions", f) || !json_known_keys(o, keys, "sessions", f) ||
	    !get_path(o, "dir", base_dir, &s->dir, f) ||
	    !get_optional_int(o, "sessions", "max", 0, &s->max, f) ||
	    !get_optional_int(o, "sessions", "memoryBudgetBytes", 0, &s->memory_budget_bytes, f) ||
	    !get_optional_int(o, "sessions", "memoryBytes", 1 << 24, &s->memory_bytes, f) ||
	    !get_optional_int(o, "sessions", "idleTimeoutMs", 1000, &s->idle_ms, f) ||
	    !get_optional_int(o, "sessions", "maxIdleTimeoutMs", 1000, &s->max_idle_ms, f) ||
	    !get_optional_int(o, "sessions", "lifetimeMs", 1000, &s->lifetime_ms, f) ||
	    !get_optional_int(o, "sessions", "maxLifetimeMs", 1000, &s->max_lifetime_ms, f) ||
	    !get_optional_int(o, "sessions", "maxStepMs", 1000, &s->max_step_ms, f) ||
	    !get_optional_int(o, "sessions", "workspaceBytes", 1 << 20, &s->workspace_bytes, f) ||
	    !get_optional_int(o, "sessions", "maxFileBytes", 1, &s->max_file_bytes, f) ||
	    !get_optional_int(o, "sessions", "maxListEntries", 1, &s->max_list_entries, f))
		return false;
	if (s->dir[0] != '/')
		return fail(f, E_INVALID_VALUE, "sessions.dir must be an absolute path");
	if (s->idle_ms > s->max_idle_ms || s->lifetime_ms > s->max_lifetime_ms)
		return fail(f, E_INVALID_VALUE, "sessions: a default timeout is over its maximum");
	return true;
}

/* store.redis: where the shared store is, and how to reach it. */
static bool parse_redis(const cJSON *o, const char *base_dir, struct store_conf *sc, struct fault *f)
{
	static const char *const keys[] = {"address", "passwordFile", "prefix", "timeoutMs", NULL};
	const char *address, *prefix = "isobox:";
	const cJSON *password = cJSON_GetObjectItemCaseSensitive(o, "passwordFile");
	const cJSON *px = cJSON_GetObjectItemCaseSensitive(o, "prefix");
	sc->timeout_ms = 2000;
	if (!o)
		return fail(f, E_INVALID_VALUE, "store.backend redis needs store.redis.address");
	if (!json_object(o, "store.redis", f) || !json_known_keys(o, keys, "store.redis", f) ||
	    !json_string(cJSON_GetObjectItemCaseSensitive(o, "address"), "store.redis.address", &address, f) ||
	    (password && !get_path(o, "passwordFile", base_dir, &sc->password_file, f)) ||
	    (px && !json_string(px, "store.redis.prefix", &prefix, f)) ||
	    !get_optional_int(o, "store.redis", "timeoutMs", 1, &sc->timeout_ms, f))
		return false;
	if (strncmp(address, "unix:/", 6) && !strchr(address, ':'))
		return fail(f, E_INVALID_VALUE, "store.redis.address must be unix:/PATH or HOST:PORT");
	for (const char *c = prefix; *c; c++)
		if (*c <= ' ' || *c > '~')
			return fail(f, E_INVALID_VALUE, "store.redis.prefix must be printable, without spaces");
	if (strlen(prefix) > 64)
		return fail(f, E_INVALID_VALUE, "store.redis.prefix is longer than 64");
	sc->address = xstrdup(address);
	sc->prefix = xstrdup(prefix);
	return true;
}

/* The store (conf/store/store.h) and the memory API's bounds: absent, both are
 * off (and so is every tenant limit that needs counting across workers). */
static bool parse_store(const cJSON *store, const cJSON *memory, const char *base_dir,
			struct conf *c, struct fault *f)
{
	static const char *const store_keys[] = {"backend", "path", "redis", NULL};
	static const char *const memory_keys[] = {"maxValueBytes", "maxKeyBytes", "maxListKeys", NULL};
	struct store_conf *sc = &c->store;
	const char *backend = "sqlite";
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(store, "backend");
	c->memory.max_value_bytes = 1 << 20;
	c->memory.max_key_bytes = 512;
	c->memory.max_list_keys = 1000;
	if (store && (!json_object(store, "store", f) || !json_known_keys(store, store_keys, "store", f) ||
		      (b && !json_string(b, "store.backend", &backend, f))))
		return false;
	if (!store) {
		sc->backend = STORE_NONE;
	} else if (!strcmp(backend, "sqlite")) {
		sc->backend = STORE_SQLITE;
		if (!get_path(store, "path", base_dir, &sc->path, f))
			return false;
		if (sc->path[0] != '/')
			return fail(f, E_INVALID_VALUE, "store.path must be an absolute path");
	} else if (!strcmp(backend, "redis")) {
		sc->backend = STORE_REDIS;
		if (!parse_redis(cJSON_GetObjectItemCaseSensitive(store, "redis"), base_dir, sc, f))
			return false;
	} else {
		return fail(f, E_INVALID_VALUE, "store.backend must be sqlite or redis");
	}
	return !memory ||
	       (json_object(memory, "memory", f) && json_known_keys(memory, memory_keys, "memory", f) &&
		get_optional_int(memory, "memory", "maxValueBytes", 0, &c->memory.max_value_bytes, f) &&
		get_optional_int(memory, "memory", "maxKeyBytes", 1, &c->memory.max_key_bytes, f) &&
		get_optional_int(memory, "memory", "maxListKeys", 1, &c->memory.max_list_keys, f));
}

/* queue: absent, off. It needs the Redis store. */
static bool parse_queue(const cJSON *o, const struct conf *c, struct conf_queue *q, struct fault *f)
{
	static const char *const keys[] = {"role", "maxLength", "claimAfterMs", "waitMs", NULL};
	*q = (struct conf_queue){.role = QUEUE_OFF, .max_length = 1000, .claim_after_ms = 30000, .wait_ms = 30000};
	const char *role;
	if (!o)
		return true;
	if (!json_object(o, "queue", f) || !json_known_keys(o, keys, "queue", f) ||
	    !json_string(cJSON_GetObjectItemCaseSensitive(o, "role"), "queue.role", &role, f) ||
	    !get_optional_int(o, "queue", "maxLength", 1, &q->max_length, f) ||
	    !get_optional_int(o, "queue", "claimAfterMs", 1000, &q->claim_after_ms, f) ||
	    !get_optional_int(o, "queue", "waitMs", 1000, &q->wait_ms, f))
		return false;
	if (!strcmp(role, "front"))
		q->role = QUEUE_FRONT;
	else if (!strcmp(role, "runner"))
		q->role = QUEUE_RUNNER;
	else if (strcmp(role, "off"))
		return fail(f, E_INVALID_VALUE, "queue.role must be off, front or runner");
	if (q->role != QUEUE_OFF && c->store.backend != STORE_REDIS)
		return fail(f, E_INVALID_VALUE, "queue.role %s needs store.backend redis", role);
	/* The queue's reads wait up to a second for Redis to answer. */
	if (q->role != QUEUE_OFF && c->store.timeout_ms < 1500)
		return fail(f, E_INVALID_VALUE, "store.redis.timeoutMs must be at least 1500 in queue mode");
	return true;
}

/* Volumes (sandbox/volume.c): absent, they are off. */
static bool parse_volumes(const cJSON *o, const char *base_dir, struct conf_volumes *v, struct fault *f)
{
	static const char *const keys[] = {"dir", "socket", "minBytes", "maxBytes", NULL};
	*v = (struct conf_volumes){.min_bytes = 16 << 20, .max_bytes = (int64_t)1 << 30};
	if (!o)
		return true;
	if (!json_object(o, "volumes", f) || !json_known_keys(o, keys, "volumes", f) ||
	    !get_path(o, "dir", base_dir, &v->dir, f) || !get_path(o, "socket", base_dir, &v->socket, f) ||
	    !get_optional_int(o, "volumes", "minBytes", 16 << 20, &v->min_bytes, f) ||
	    !get_optional_int(o, "volumes", "maxBytes", 16 << 20, &v->max_bytes, f))
		return false;
	/* The dir goes into docker's argv inside one flag's value. */
	if (v->dir[0] != '/' || strpbrk(v->dir, ",=") || v->socket[0] != '/')
		return fail(f, E_INVALID_VALUE, "volumes.dir and volumes.socket must be absolute paths, "
			    "the dir without , or =");
	if (v->min_bytes > v->max_bytes)
		return fail(f, E_INVALID_VALUE, "volumes.minBytes is over volumes.maxBytes");
	return true;
}

/*
 * piston: the Piston-compatible route. Optional; acceptTextPlain is off
 * unless set: a browser sends a text/plain body to any site without asking
 * first (no CORS preflight), so reading one as JSON lets web pages start
 * runs (docs/API.md, Piston-compatible API). The npm piston-client sends
 * no Content-Type, which its fetch makes text/plain.
 */
static bool parse_piston(const cJSON *o, struct conf_piston *p, struct fault *f)
{
	static const char *const keys[] = {"acceptTextPlain", NULL};
	*p = (struct conf_piston){.accept_text_plain = false};
	if (!o)
		return true;
	if (!json_object(o, "piston", f) || !json_known_keys(o, keys, "piston", f))
		return false;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "acceptTextPlain");
	return !v || json_bool(v, "piston.acceptTextPlain", &p->accept_text_plain, f);
}

/*
 * backend: gvisor (the default) or runc; runc: {runtime, seccompProfile},
 * read whenever it is there, so that a broken section is found before an
 * operator switches to it.
 */
static bool parse_backend(const cJSON *root, const char *base_dir, struct conf *c, struct fault *f)
{
	static const char *const keys[] = {"runtime", "seccompProfile", NULL};
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "backend");
	const char *s = "gvisor";
	if (b && !json_string(b, "backend", &s, f))
		return false;
	if (!strcmp(s, "gvisor"))
		c->backend = BACKEND_GVISOR;
	else if (!strcmp(s, "runc"))
		c->backend = BACKEND_RUNC;
	else
		return fail(f, E_INVALID_VALUE, "backend must be gvisor or runc");
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "runc");
	if (!o)
		return c->backend != BACKEND_RUNC ||
		       fail(f, E_INVALID_VALUE, "backend runc needs the runc section");
	if (!json_object(o, "runc", f) || !json_known_keys(o, keys, "runc", f) ||
	    !json_string(cJSON_GetObjectItemCaseSensitive(o, "runtime"), "runc.runtime", &s, f))
		return false;
	c->runc.runtime = xstrdup(s);
	return get_path(o, "seccompProfile", base_dir, &c->runc.seccomp_profile, f);
}

const char *conf_backend_name(const struct conf *c)
{
	return c->backend == BACKEND_RUNC ? "runc" : "gvisor";
}

const char *conf_backend_warning(const struct conf *c)
{
	return c->backend != BACKEND_RUNC ? NULL :
	       "backend runc: programs run on the host's kernel (namespaces, seccomp, a user "
	       "namespace of their own), not in gVisor; a kernel bug that the seccomp profile "
	       "lets through is an escape (docs/BACKENDS.md)";
}

static bool parse(const cJSON *root, const char *base_dir, struct conf *c, struct fault *f)
{
	static const char *const top[] = {"instance", "registry", "imagesLock", "workDir", "docker", "dockerSocket",
		"runtime", "cgroupParent", "pool", "ceilings", "floors", "request", "sandbox", "access",
		"network", "warm", "sessions", "auth", "tenants", "store", "memory", "volumes", "queue",
		"piston", "backend", "runc", "demo", NULL};
	static const char *const request_keys[] = {"maxBodyBytes", "maxFiles", "maxFileBytes",
		"maxPathBytes", "maxArgs", "maxArgBytes", "maxStdinBytes", "maxJsonValues",
		"maxOutputFiles", "maxOutputBytes", NULL};
	static const char *const sandbox_keys[] = {"tmpBytes", "workBytes", "pidsBackstop",
		"compilePids", "startTimeoutMs", "seccompProfile", "resolvConf", "hostsFile", "platform", NULL};
	const char *s;
	const cJSON *o;

	if (!json_object(root, "the settings file", f) || !json_known_keys(root, top, "settings", f))
		return false;
	if (!json_string(cJSON_GetObjectItemCaseSensitive(root, "instance"), "instance", &s, f))
		return false;
	if (!valid_instance(s))
		return fail(f, E_INVALID_VALUE, "instance must be 1-32 of [a-z0-9-]");
	c->instance = xstrdup(s);
	if (!get_path(root, "registry", base_dir, &c->registry, f) ||
	    !get_path(root, "imagesLock", base_dir, &c->images_lock, f) ||
	    !get_path(root, "workDir", base_dir, &c->work_dir, f) ||
	    !get_path(root, "docker", base_dir, &c->docker, f))
		return false;
	if (!cJSON_GetObjectItemCaseSensitive(root, "dockerSocket"))
		c->docker_socket = xstrdup("/var/run/docker.sock");
	else if (!get_path(root, "dockerSocket", base_dir, &c->docker_socket, f))
		return false;
	if (!json_string(cJSON_GetObjectItemCaseSensitive(root, "runtime"), "runtime", &s, f))
		return false;
	c->runtime = xstrdup(s);
	if (!parse_backend(root, base_dir, c, f))
		return false;
	if (!json_string(cJSON_GetObjectItemCaseSensitive(root, "cgroupParent"), "cgroupParent", &s, f))
		return false;
	c->cgroup_parent = xstrdup(s);

	if (!parse_pool(cJSON_GetObjectItemCaseSensitive(root, "pool"), &c->pool, f) ||
	    !access_parse(cJSON_GetObjectItemCaseSensitive(root, "access"), &c->access, f))
		return false;

	if (!get_limits(root, "ceilings", &c->ceilings, f) || !get_limits(root, "floors", &c->floors, f))
		return false;
	if (!floors_under(&c->floors, &c->ceilings))
		return fail(f, E_INVALID_VALUE, "every floor must be at most its ceiling");
	if (!demo_parse(cJSON_GetObjectItemCaseSensitive(root, "demo"), base_dir, &c->ceilings, &c->demo, f))
		return false;
	if (!floors_under(&c->floors, &c->demo.ceilings))
		return fail(f, E_INVALID_VALUE, "every floor must be at most its demo.ceilings");

	o = cJSON_GetObjectItemCaseSensitive(root, "request");
	if (!json_object(o, "request", f) || !json_known_keys(o, request_keys, "request", f) ||
	    !get_int(o, "request", "maxBodyBytes", 1024, &c->request.max_body_bytes, f) ||
	    !get_int(o, "request", "maxFiles", 1, &c->request.max_files, f) ||
	    !get_int(o, "request", "maxFileBytes", 1, &c->request.max_file_bytes, f) ||
	    !get_int(o, "request", "maxPathBytes", 1, &c->request.max_path_bytes, f) ||
	    !get_int(o, "request", "maxArgs", 0, &c->request.max_args, f) ||
	    !get_int(o, "request", "maxArgBytes", 1, &c->request.max_arg_bytes, f) ||
	    !get_int(o, "request", "maxStdinBytes", 0, &c->request.max_stdin_bytes, f))
		return false;
	c->request.max_json_values = 50000;
	c->request.max_output_files = 20;
	c->request.max_output_bytes = 4 << 20;
	if (!get_optional_int(o, "request", "maxJsonValues", 100, &c->request.max_json_values, f) ||
	    !get_optional_int(o, "request", "maxOutputFiles", 0, &c->request.max_output_files, f) ||
	    !get_optional_int(o, "request", "maxOutputBytes", 0, &c->request.max_output_bytes, f))
		return false;

	o = cJSON_GetObjectItemCaseSensitive(root, "sandbox");
	if (!json_object(o, "sandbox", f) || !json_known_keys(o, sandbox_keys, "sandbox", f) ||
	    !get_int(o, "sandbox", "tmpBytes", 1 << 20, &c->sandbox.tmp_bytes, f) ||
	    !get_int(o, "sandbox", "workBytes", 1 << 20, &c->sandbox.work_bytes, f) ||
	    !get_int(o, "sandbox", "pidsBackstop", 64, &c->sandbox.pids_backstop, f) ||
	    !get_int(o, "sandbox", "startTimeoutMs", 1000, &c->sandbox.start_timeout_ms, f) ||
	    !get_path(o, "seccompProfile", base_dir, &c->sandbox.seccomp_profile, f) ||
	    !get_path(o, "resolvConf", base_dir, &c->sandbox.resolv_conf, f) ||
	    !get_path(o, "hostsFile", base_dir, &c->sandbox.hosts_file, f))
		return false;
	c->sandbox.compile_pids = 64;
	if (!get_optional_int(o, "sandbox", "compilePids", 1, &c->sandbox.compile_pids, f))
		return false;
	snprintf(c->sandbox.platform, sizeof c->sandbox.platform, "auto");
	const cJSON *platform = cJSON_GetObjectItemCaseSensitive(o, "platform");
	if (platform) {
		if (!json_string(platform, "sandbox.platform", &s, f))
			return false;
		if (strcmp(s, "auto") && strcmp(s, "ptrace") && strcmp(s, "systrap") && strcmp(s, "kvm"))
			return fail(f, E_INVALID_VALUE, "sandbox.platform must be auto, ptrace, systrap or kvm");
		snprintf(c->sandbox.platform, sizeof c->sandbox.platform, "%s", s);
	}
	if (!bind_source(c->sandbox.resolv_conf, "sandbox.resolvConf", f) ||
	    !bind_source(c->sandbox.hosts_file, "sandbox.hostsFile", f))
		return false;
	if (c->sandbox.seccomp_profile[0] != '/')
		return fail(f, E_INVALID_VALUE, "sandbox.seccompProfile must be an absolute path");
	return get_network(root, &c->network, f) &&
	       parse_piston(cJSON_GetObjectItemCaseSensitive(root, "piston"), &c->piston, f) &&
	       parse_warm(cJSON_GetObjectItemCaseSensitive(root, "warm"), base_dir, &c->warm, f) &&
	       parse_sessions(cJSON_GetObjectItemCaseSensitive(root, "sessions"), base_dir, &c->sessions, f) &&
	       parse_volumes(cJSON_GetObjectItemCaseSensitive(root, "volumes"), base_dir, &c->volumes, f) &&
	       parse_store(cJSON_GetObjectItemCaseSensitive(root, "store"),
			   cJSON_GetObjectItemCaseSensitive(root, "memory"), base_dir, c, f) &&
	       tenants_parse(cJSON_GetObjectItemCaseSensitive(root, "auth"),
			     cJSON_GetObjectItemCaseSensitive(root, "tenants"), base_dir, &c->tenants, f) &&
	       parse_queue(cJSON_GetObjectItemCaseSensitive(root, "queue"), c, &c->queue, f) &&
	       /* A runner parses the job again, without knowing its caller. */
	       (!c->demo.enabled || c->queue.role != QUEUE_FRONT ||
		fail(f, E_INVALID_VALUE, "demo.enabled on a queue front: serve the demo from a host "
		     "that runs its programs itself"));
}

bool conf_parse(const char *text, size_t len, const char *base_dir, struct conf *out,
		char *err, size_t errlen)
{
	struct fault f = {0};
	char yerr[300];
	*out = (struct conf){0};
	cJSON *root = yaml_load_string(text, len, yerr, sizeof yerr);
	if (!root) {
		snprintf(err, errlen, "%s", yerr);
		return false;
	}
	bool ok = parse(root, base_dir, out, &f);
	cJSON_Delete(root);
	if (!ok) {
		snprintf(err, errlen, "%s", f.message);
		conf_free(out);
	}
	return ok;
}

bool conf_load(const char *path, struct conf *out, char *err, size_t errlen)
{
	struct buf text = {0};
	char inner[400];
	*out = (struct conf){0};
	if (!read_file(path, 1 << 20, &text, err, errlen))
		return false;
	/* Resolve relative paths against the file's real directory, not our cwd. */
	autofree char *real = realpath(path, NULL);
	if (!real) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		buf_free(&text);
		return false;
	}
	bool ok = conf_parse(text.data, text.len, dirname(real), out, inner, sizeof inner);
	buf_free(&text);
	if (!ok) {
		snprintf(err, errlen, "%s: %s", path, inner);
		return false;
	}
	out->path = xstrdup(path);
	return true;
}

void conf_free(struct conf *c)
{
	free(c->path);
	free(c->instance);
	free(c->registry);
	free(c->images_lock);
	free(c->work_dir);
	free(c->docker);
	free(c->docker_socket);
	free(c->runtime);
	free(c->runc.runtime);
	free(c->runc.seccomp_profile);
	free(c->cgroup_parent);
	free(c->sandbox.seccomp_profile);
	free(c->sandbox.resolv_conf);
	free(c->sandbox.hosts_file);
	for (size_t i = 0; i < c->warm.n; i++)
		free(c->warm.langs[i]);
	free(c->warm.agent_dir);
	free(c->sessions.dir);
	free(c->network.docker_network);
	free(c->network.bridge);
	free(c->network.runtime);
	free(c->network.state_dir);
	free(c->network.dns);
	free(c->network.deny);
	free(c->network.allow);
	strv_free(&c->network.out_interfaces);
	access_free(&c->access);
	store_conf_free(&c->store);
	free(c->volumes.dir);
	free(c->volumes.socket);
	tenants_free(&c->tenants);
	demo_free(&c->demo);
	*c = (struct conf){0};
}
