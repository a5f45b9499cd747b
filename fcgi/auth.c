/*
 * auth.c: who is calling, within what share, and CORS (auth.h).
 *
 * The key is read from the request and dropped: it is never copied into
 * the request, a log line, a metric or an error message; only the tenant
 * it proves is kept.
 */
#define _GNU_SOURCE
#include "auth.h"
#include "request.h"
#include "respond.h"
#include "turnstile.h"
#include "../conf/store/store.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define CHALLENGE "WWW-Authenticate: Bearer realm=\"isobox\""

static bool refuse(struct request *rq, const char *headers)
{
	respond_fault(rq, headers);
	return false;
}

/* Within `per_minute` requests a minute for `key` (a tenant, or a demo
 * caller's address: `who`, in the message)? Otherwise answered (429, or
 * the store's 503). */
static bool within_rate(struct worker *w, struct request *rq, const char *key, const char *who,
			int64_t per_minute, const char *setting)
{
	if (per_minute <= 0)
		return true;
	struct store *s = worker_store(w, &rq->fault);
	bool allowed;
	int64_t retry_s;
	if (!s || !store_rate_take(s, key, per_minute, wall_ms(), &allowed, &retry_s, &rq->fault))
		return refuse(rq, "");
	if (allowed)
		return true;
	char headers[48];
	snprintf(headers, sizeof headers, "Retry-After: %lld\r\n", (long long)retry_s);
	fail(&rq->fault, E_RATE_LIMITED, "%s may make %lld requests a minute (%s); retry in %lld s",
	     who, (long long)per_minute, setting, (long long)retry_s);
	return refuse(rq, headers);
}

/*
 * A caller of the public demo (conf/demo.h), from addr: the tenant
 * "demo", its share and ceilings. A route that runs a program also needs
 * a Turnstile token that siteverify accepts, within the address's rate
 * (checked first: a caller without tokens costs siteverify nothing).
 */
static bool admit_demo(struct worker *w, struct request *rq, const char *addr)
{
	const struct demo *d = &w->conf.demo;
	snprintf(rq->tenant, sizeof rq->tenant, "%s", TENANT_DEMO);
	rq->share = &d->share;
	rq->demo = true;
	if (!(rq->route->flags & ROUTE_RUNS_PROGRAM))
		return true;
	const char *token = http_param(&rq->io, "HTTP_X_TURNSTILE_TOKEN");
	if (!token[0]) {
		fail(&rq->fault, E_UNAUTHORIZED, "this demo runs a program for a Cloudflare Turnstile token: "
		     "solve the challenge on its page (sent as X-Turnstile-Token), or send an API key");
		return refuse(rq, CHALLENGE "\r\n");
	}
	if (strlen(token) > DEMO_TOKEN_MAX) {
		fail(&rq->fault, E_TURNSTILE_FAILED, "a Turnstile token is at most %d characters", DEMO_TOKEN_MAX);
		return refuse(rq, "");
	}
	/* "@" is in no tenant's name: the two never share a count. */
	char key[80], who[96];
	snprintf(key, sizeof key, "demo@%.64s", addr);
	snprintf(who, sizeof who, "the demo's callers from %.64s", addr);
	return within_rate(w, rq, key, who, d->runs_per_minute_per_address, "demo.runsPerMinutePerAddress") &&
	       (turnstile_verify(d, token, addr, &rq->fault) || refuse(rq, ""));
}

/* The tenant that the request's key proves, "local" for a keyless call
 * from an anonymous address, or NULL (rq->fault says why; *demo: ask the
 * demo's guard instead, a keyless call to a demo route while it is on). */
static const char *who(const struct worker *w, struct request *rq, const char **challenge, bool *demo)
{
	const struct tenants *t = &w->conf.tenants;
	const char *header = http_param(&rq->io, "HTTP_AUTHORIZATION");
	const char *addr = http_param(&rq->io, "REMOTE_ADDR");
	*challenge = CHALLENGE "\r\n";
	*demo = false;
	if (!header[0]) {
		if (cidr_list_allows(&t->anonymous, addr))
			return TENANT_LOCAL;
		if (w->conf.demo.enabled && (rq->route->flags & ROUTE_DEMO)) {
			*demo = true;
			return NULL;
		}
		fail(&rq->fault, E_UNAUTHORIZED, "this server needs an API key from %.64s: send "
		     "\"Authorization: Bearer <key>\" (keys are made with isobox-fcgi --new-key)", addr);
		return NULL;
	}
	*challenge = CHALLENGE ", error=\"invalid_token\"\r\n";
	if (strncasecmp(header, "Bearer ", 7)) {
		fail(&rq->fault, E_UNAUTHORIZED, "the Authorization header must be \"Bearer <key>\"");
		return NULL;
	}
	const char *key = header + 7 + strspn(header + 7, " ");
	const char *tenant = tenants_check_key(t, key);
	if (!tenant)
		fail(&rq->fault, E_UNAUTHORIZED, "the API key is not valid (unknown, revoked or mistyped)");
	return tenant;
}

bool auth_admit(struct worker *w, struct request *rq)
{
	const char *challenge;
	bool demo;
	const char *tenant = who(w, rq, &challenge, &demo);
	if (demo)
		return admit_demo(w, rq, http_param(&rq->io, "REMOTE_ADDR"));
	if (!tenant)
		return refuse(rq, challenge);
	snprintf(rq->tenant, sizeof rq->tenant, "%s", tenant);
	rq->share = tenants_limits(&w->conf.tenants, tenant);
	char label[TENANT_NAME_MAX + 8];
	snprintf(label, sizeof label, "tenant %s", tenant);
	return within_rate(w, rq, tenant, label, rq->share->requests_per_minute, "requestsPerMinute");
}

bool auth_claim_execution(struct worker *w, struct request *rq)
{
	int64_t limit = rq->share ? rq->share->concurrent_executions : 0;
	if (limit <= 0)
		return true;
	struct store *s = worker_store(w, &rq->fault);
	if (!s || !store_running_claim(s, rq->tenant, limit, getpid(), &rq->claim, &rq->fault))
		return false;
	if (rq->claim)
		return true;
	return fail(&rq->fault, E_TOO_MANY_EXECUTIONS, "tenant %s runs %lld programs at once, its most "
		    "(concurrentExecutions); retry when one ends", rq->tenant, (long long)limit);
}

void auth_release(struct worker *w, struct request *rq)
{
	if (rq->claim && w->store)
		store_running_release(w->store, rq->claim);
	rq->claim = 0;
}

void auth_cors(struct worker *w, struct request *rq)
{
	const char *origin = http_param(&rq->io, "HTTP_ORIGIN");
	if (!access_origin_allowed(&w->conf.access, origin) || strpbrk(origin, "\r\n"))
		return;
	size_t used = strlen(rq->io.always);
	snprintf(rq->io.always + used, sizeof rq->io.always - used,
		 "Access-Control-Allow-Origin: %.200s\r\nVary: Origin\r\n"
		 "Access-Control-Expose-Headers: ETag, Retry-After, Location, X-Request-Id\r\n", origin);
	rq->cors = true;
}

void auth_preflight(struct request *rq, const char *allow)
{
	char headers[512];
	const char *origin = http_param(&rq->io, "HTTP_ORIGIN");
	if (origin[0] && !rq->cors) {
		fail(&rq->fault, E_FORBIDDEN, "pages from %.100s may not call this server "
		     "(access.corsOrigins in isobox.yaml)", origin);
		respond_fault(rq, "");
		return;
	}
	snprintf(headers, sizeof headers, "Allow: %s, OPTIONS\r\n%s", allow, origin[0] ?
		 "Access-Control-Allow-Headers: Authorization, Content-Type, Accept, If-Match, "
		 "If-None-Match, X-Request-Id\r\nAccess-Control-Max-Age: 600\r\n" : "");
	if (origin[0]) {
		size_t used = strlen(headers);
		snprintf(headers + used, sizeof headers - used, "Access-Control-Allow-Methods: %s\r\n", allow);
	}
	http_send_empty(&rq->io, 204, headers);
}
