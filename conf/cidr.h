/*
 * cidr.h: IPv4 and IPv6 address ranges ("10.0.0.0/8", "::1/128"), parsed
 * strictly: a bare address is a single host (/32 or /128), and bits set
 * past the prefix are refused rather than silently cleared, so a typo like
 * "10.1.0.0/8" cannot mean something other than what the operator read.
 */
#ifndef ISOBOX_CIDR_H
#define ISOBOX_CIDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cidr {
	int family;          /* AF_INET or AF_INET6 */
	uint8_t addr[16];    /* network byte order; the first 4 for IPv4 */
	int prefix;          /* 0-32 or 0-128 */
};

/* Parse s; false with a reason in err. */
bool cidr_parse(const char *s, struct cidr *out, char *err, size_t errlen);
/* The range as text ("10.0.0.0/8"); buf needs 50 bytes. */
const char *cidr_format(const struct cidr *c, char *buf, size_t len);
/* Is addr (family, network byte order) inside c? */
bool cidr_contains(const struct cidr *c, int family, const void *addr);
/*
 * Is the textual address (a peer's REMOTE_ADDR) inside any of list[0..n)?
 * An IPv4 peer also matches as its IPv4-mapped IPv6 form and the other way
 * round, so "::ffff:127.0.0.1" is in 127.0.0.0/8 and 192.0.2.1 in ::/0.
 * NULL or garbage: no.
 */
bool cidr_list_contains(const struct cidr *list, size_t n, const char *addr);
/* Is range a inside range b (same family, b's prefix no longer, b holds a)? */
bool cidr_within(const struct cidr *a, const struct cidr *b);
/* Do ranges a and b share an address (one is inside the other)? */
bool cidr_overlap(const struct cidr *a, const struct cidr *b);
/* The network of address addr/prefix, host bits cleared (for interfaces). */
struct cidr cidr_network(int family, const void *addr, int prefix);

#endif
