/* access.c: CIDR lists for the pool's own endpoints (see access.h). */
#define _GNU_SOURCE
#include "access.h"
#include "json.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static const unsigned char v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/* A textual IPv4 or IPv6 address into 16 bytes; *v4 says which it was. */
static bool parse_addr(const char *text, unsigned char out[16], bool *v4)
{
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, text, &a4) == 1) {
		memcpy(out, v4_mapped, 12);
		memcpy(out + 12, &a4, 4);
		*v4 = true;
		return true;
	}
	if (inet_pton(AF_INET6, text, &a6) == 1) {
		memcpy(out, &a6, 16);
		*v4 = false;
		return true;
	}
	return false;
}

static void clear_host_bits(unsigned char addr[16], int prefix)
{
	for (int bit = prefix; bit < 128; bit++)
		addr[bit / 8] &= (unsigned char)~(0x80u >> (bit % 8));
}

bool cidr_parse(const char *text, struct cidr *out)
{
	char host[64];
	const char *slash = strchr(text, '/');
	if (!slash || (size_t)(slash - text) >= sizeof host || slash == text)
		return false;
	memcpy(host, text, (size_t)(slash - text));
	host[slash - text] = '\0';
	const char *p = slash + 1;
	/* Digits only: no sign, no spaces, no leading zeros but "0" itself. */
	if (!*p || strlen(p) > 3 || strspn(p, "0123456789") != strlen(p) || (p[0] == '0' && p[1]))
		return false;
	int len = atoi(p);
	bool v4;
	if (!parse_addr(host, out->addr, &v4) || len > (v4 ? 32 : 128))
		return false;
	out->prefix = v4 ? 96 + len : len;
	clear_host_bits(out->addr, out->prefix);
	return true;
}

bool cidr_list_allows(const struct cidr_list *l, const char *addr)
{
	if (l->open)
		return true;
	unsigned char a[16];
	bool v4;
	if (!addr || !parse_addr(addr, a, &v4))
		return false;
	for (size_t i = 0; i < l->n; i++) {
		unsigned char masked[16];
		memcpy(masked, a, 16);
		clear_host_bits(masked, l->v[i].prefix);
		if (!memcmp(masked, l->v[i].addr, 16))
			return true;
	}
	return false;
}

static bool parse_list(const cJSON *v, const char *what, struct cidr_list *l, struct fault *f)
{
	struct strv items = {0};
	bool ok = json_strings(v, what, 256, &items, f);
	*l = (struct cidr_list){.v = xcalloc(items.n + 1, sizeof *l->v)};
	for (size_t i = 0; ok && i < items.n; i++) {
		if (!cidr_parse(items.v[i], &l->v[l->n]))
			ok = fail(f, 400, "invalid_value",
				  "%s: \"%.64s\" is not a CIDR block like 10.0.0.0/8 or ::1/128",
				  what, items.v[i]);
		else
			l->n++;
	}
	strv_free(&items);
	return ok;
}

static void set_loopback(struct cidr_list *l)
{
	*l = (struct cidr_list){.v = xcalloc(2, sizeof *l->v), .n = 2};
	cidr_parse("127.0.0.0/8", &l->v[0]);
	cidr_parse("::1/128", &l->v[1]);
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
