/* access.c: address lists for the pool's own endpoints (see access.h). */
#define _GNU_SOURCE
#include "access.h"
#include "json.h"

#include <stdio.h>
#include <string.h>

bool cidr_list_allows(const struct cidr_list *l, const char *addr)
{
	return l->open || cidr_list_contains(l->v, l->n, addr);
}

static bool parse_list(const cJSON *v, const char *what, struct cidr_list *l, struct fault *f)
{
	struct strv items = {0};
	char why[160];
	bool ok = json_strings(v, what, 256, &items, f);
	*l = (struct cidr_list){.v = xcalloc(items.n + 1, sizeof *l->v)};
	for (size_t i = 0; ok && i < items.n; i++) {
		if (!cidr_parse(items.v[i], &l->v[l->n], why, sizeof why))
			ok = fail(f, 400, "invalid_value", "%s: %s", what, why);
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

bool access_parse(const cJSON *section, struct access *a, struct fault *f)
{
	static const char *const keys[] = {"metrics", "healthz", NULL};
	*a = (struct access){0};
	set_loopback(&a->metrics);
	a->healthz.open = true;
	if (!section)
		return true;
	if (!json_object(section, "access", f) || !json_known_keys(section, keys, "access", f))
		return false;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(section, "metrics");
	if (v) {
		free(a->metrics.v);
		a->metrics = (struct cidr_list){0};
		if (!parse_list(v, "access.metrics", &a->metrics, f))
			return false;
	}
	v = cJSON_GetObjectItemCaseSensitive(section, "healthz");
	if (v && !parse_list(v, "access.healthz", &a->healthz, f))
		return false;
	return true;
}

void access_free(struct access *a)
{
	free(a->metrics.v);
	free(a->healthz.v);
	*a = (struct access){0};
}
