/* cidr.c: address ranges (see cidr.h). */
#define _GNU_SOURCE
#include "cidr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static size_t addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

/* Does addr have any bit set after the first prefix bits? */
static bool host_bits_set(const uint8_t *addr, size_t len, int prefix)
{
	for (size_t bit = (size_t)prefix; bit < len * 8; bit++)
		if (addr[bit / 8] & (0x80 >> (bit % 8)))
			return true;
	return false;
}

bool cidr_parse(const char *s, struct cidr *out, char *err, size_t errlen)
{
	char text[64];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	if (n == 0 || n >= sizeof text) {
		snprintf(err, errlen, "\"%.60s\" is not an address or address/prefix", s);
		return false;
	}
	memcpy(text, s, n);
	text[n] = '\0';
	*out = (struct cidr){0};
	if (inet_pton(AF_INET, text, out->addr) == 1)
		out->family = AF_INET;
	else if (inet_pton(AF_INET6, text, out->addr) == 1)
		out->family = AF_INET6;
	else {
		snprintf(err, errlen, "\"%.60s\" is not an IPv4 or IPv6 address", text);
		return false;
	}
	int max = (int)addr_len(out->family) * 8;
	out->prefix = max;
	if (slash) {
		char *end;
		const char *p = slash + 1;
		/* Digits only: no sign, no space, no leading zero but "0" itself. */
		long v = (*p >= '0' && *p <= '9' && !(p[0] == '0' && p[1])) ? strtol(p, &end, 10) : -1;
		if (v < 0 || v > max || *end || end - p > 3) {
			snprintf(err, errlen, "\"%.60s\": the prefix must be 0-%d", s, max);
			return false;
		}
		out->prefix = (int)v;
	}
	if (host_bits_set(out->addr, addr_len(out->family), out->prefix)) {
		snprintf(err, errlen, "\"%.60s\" has bits set past its /%d prefix", s, out->prefix);
		return false;
	}
	return true;
}

const char *cidr_format(const struct cidr *c, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	inet_ntop(c->family, c->addr, a, sizeof a);
	snprintf(buf, len, "%s/%d", a, c->prefix);
	return buf;
}

bool cidr_contains(const struct cidr *c, int family, const void *addr)
{
	if (family != c->family)
		return false;
	const uint8_t *a = addr;
	int full = c->prefix / 8, rest = c->prefix % 8;
	if (memcmp(a, c->addr, (size_t)full))
		return false;
	if (!rest)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a[full] & mask) == (c->addr[full] & mask);
}

bool cidr_within(const struct cidr *a, const struct cidr *b)
{
	return a->family == b->family && b->prefix <= a->prefix && cidr_contains(b, a->family, a->addr);
}

bool cidr_overlap(const struct cidr *a, const struct cidr *b)
{
	return cidr_within(a, b) || cidr_within(b, a);
}

struct cidr cidr_network(int family, const void *addr, int prefix)
{
	struct cidr c = {.family = family, .prefix = prefix};
	memcpy(c.addr, addr, addr_len(family));
	for (size_t bit = (size_t)prefix; bit < addr_len(family) * 8; bit++)
		c.addr[bit / 8] &= (uint8_t)~(0x80 >> (bit % 8));
	return c;
}

static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

bool cidr_list_contains(const struct cidr *list, size_t n, const char *addr)
{
	uint8_t v4[4], v6[16];
	bool is_v4 = false, is_v6 = false;
	if (!addr)
		return false;
	if (inet_pton(AF_INET, addr, v4) == 1) {
		is_v4 = is_v6 = true;
		memcpy(v6, v4_mapped, 12);
		memcpy(v6 + 12, v4, 4);
	} else if (inet_pton(AF_INET6, addr, v6) == 1) {
		is_v6 = true;
		if (!memcmp(v6, v4_mapped, 12)) {
			is_v4 = true;
			memcpy(v4, v6 + 12, 4);
		}
	}
	for (size_t i = 0; i < n; i++)
		if ((is_v4 && cidr_contains(&list[i], AF_INET, v4)) ||
		    (is_v6 && cidr_contains(&list[i], AF_INET6, v6)))
			return true;
	return false;
}
