/* access.c: address lists for the pool's own endpoints (see access.h). */
#define _GNU_SOURCE
#include "access.h"
#include "lib/json.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* A host name or address as a Host header carries it, without the port. */
static bool valid_host(const char *h)
{
	size_t n = strlen(h);
	if (n == 0 || n > 253)
		return false;
	if (h[0] == '[')
		return h[n - 1] == ']' && strspn(h + 1, "0123456789abcdef:.") == n - 2;
	return strspn(h, "abcdefghijklmnopqrstuvwxyz0123456789.-") == n;
}

bool access_host_allowed(const struct access *a, const char *host)
{
	if (!host || !host[0] || !a->hosts.n)
		return true;
	/* "name:port", "[v6]:port": the port is the web server's business. */
	size_t n = host[0] == '[' ? strcspn(host, "]") + 1 : strcspn(host, ":");
	if (n > strlen(host))
		return false;
	if (n > 1 && host[n - 1] == '.') /* "localhost." is "localhost" */
		n--;
	for (size_t i = 0; i < a->hosts.n; i++)
		if (strlen(a->hosts.v[i]) == n && !strncasecmp(a->hosts.v[i], host, n))
			return true;
	return false;
}

bool cidr_list_allows(const struct cidr_list *l, const char *addr)
{
	return l->open || cidr_list_contains(l->v, l->n, addr);
}

bool cidr_list_parse(const cJSON *v, const char *what, struct cidr_list *l, struct fault *f)
{
	struct strv items = {0};
	char why[160];
	bool ok = json_strings(v, what, 256, &items, f);
	*l = (struct cidr_list){.v = xcalloc(items.n + 1, sizeof *l->v)};
	for (size_t i = 0; ok && i < items.n; i++) {
		if (!cidr_parse(items.v[i], &l->v[l->n], why, sizeof why))
			ok = fail(f, E_INVALID_VALUE, "%s: %s", what, why);
		else
			l->n++;
	}
	strv_free(&items);
	return ok;
}

static void set_loopback(struct cidr_list *l)
{
	char err[160];
	*l = (struct cidr_list){.v = xcalloc(2, sizeof *l->v), .n = 2};
	cidr_parse("127.0.0.0/8", &l->v[0], err, sizeof err);
	cidr_parse("::1/128", &l->v[1], err, sizeof err);
}

static bool parse_hosts(const cJSON *v, struct strv *hosts, struct fault *f)
{
	struct strv items = {0};
	bool ok = json_strings(v, "access.hosts", 256, &items, f);
	strv_free(hosts);
	/* An empty list would serve any Host, the way ["*"] says on purpose. */
	if (ok && items.n == 0)
		ok = fail(f, E_INVALID_VALUE, "access.hosts is empty: list the names to serve, or [\"*\"] for any");
	for (size_t i = 0; ok && i < items.n; i++) {
		char *h = items.v[i];
		for (char *p = h; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		if (!strcmp(h, "*") && items.n == 1)
			break; /* any Host: an empty list */
		if (!valid_host(h))
			ok = fail(f, E_INVALID_VALUE, "access.hosts: \"%.64s\" is not a host name, "
				  "an IPv4 address or a [bracketed] IPv6 address (or \"*\" alone)", h);
		else
			strv_push(hosts, h);
	}
	strv_free(&items);
	return ok;
}

/* "https://app.example.com" (scheme://host[:port], as browsers send
 * Origin), or "*" for any. */
static bool parse_origins(const cJSON *v, struct strv *out, struct fault *f)
{
	if (!json_strings(v, "access.corsOrigins", 256, out, f))
		return false;
	for (size_t i = 0; i < out->n; i++) {
		const char *o = out->v[i], *rest = strstr(o, "://");
		if (strcmp(o, "*") && (!rest || rest == o || !rest[3] || strpbrk(rest + 3, "/?#* \t") ||
				       strspn(o, "abcdefghijklmnopqrstuvwxyz") != (size_t)(rest - o)))
			return fail(f, E_INVALID_VALUE, "access.corsOrigins: \"%.100s\" is not an origin "
				    "(scheme://host[:port], no path) or \"*\"", o);
	}
	return true;
}

bool access_parse(const cJSON *section, struct access *a, struct fault *f)
{
	static const char *const keys[] = {"metrics", "healthz", "hosts", "corsOrigins", NULL};
	*a = (struct access){0};
	set_loopback(&a->metrics);
	a->healthz.open = true;
	strv_push(&a->hosts, "localhost");
	strv_push(&a->hosts, "127.0.0.1");
	strv_push(&a->hosts, "[::1]");
	if (!section)
		return true;
	if (!json_object(section, "access", f) || !json_known_keys(section, keys, "access", f))
		return false;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(section, "metrics");
	if (v) {
		free(a->metrics.v);
		a->metrics = (struct cidr_list){0};
		if (!cidr_list_parse(v, "access.metrics", &a->metrics, f))
			return false;
	}
	v = cJSON_GetObjectItemCaseSensitive(section, "healthz");
	if (v && !cidr_list_parse(v, "access.healthz", &a->healthz, f))
		return false;
	v = cJSON_GetObjectItemCaseSensitive(section, "corsOrigins");
	if (v && !parse_origins(v, &a->cors_origins, f))
		return false;
	v = cJSON_GetObjectItemCaseSensitive(section, "hosts");
	return !v || parse_hosts(v, &a->hosts, f);
}

bool access_origin_allowed(const struct access *a, const char *origin)
{
	for (size_t i = 0; origin && origin[0] && i < a->cors_origins.n; i++)
		if (!strcmp(a->cors_origins.v[i], "*") || !strcmp(a->cors_origins.v[i], origin))
			return true;
	return false;
}

void access_free(struct access *a)
{
	free(a->metrics.v);
	free(a->healthz.v);
	strv_free(&a->hosts);
	strv_free(&a->cors_origins);
	*a = (struct access){0};
}
