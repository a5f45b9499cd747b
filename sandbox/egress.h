/* egress.h: the egress firewall's parts, for unit tests (egress.c; the rest is in sandbox.h). */
#ifndef ISOBOX_SANDBOX_EGRESS_H
#define ISOBOX_SANDBOX_EGRESS_H

#include "sandbox.h"

/*
 * Egress firewall parts (egress.c), separate so that unit tests can give
 * them any host. Host networks: each IPv4 address (/32) and its subnet,
 * minus what the deny list or another entry already covers, sorted.
 * Resolvers: conf's, else the host's non-loopback ones. *out is the
 * caller's to free.
 */
bool egress_host_nets(const struct conf_network *n, struct cidr **out, size_t *count,
		      char *err, size_t errlen);
bool egress_resolvers(const struct conf_network *n, struct cidr **out, size_t *count,
		      char *err, size_t errlen);
void egress_rules(const struct conf_network *n, const struct cidr *host, size_t n_host,
		  const struct cidr *dns, size_t n_dns, struct buf *out);
void egress_resolv_conf(const struct cidr *dns, size_t n_dns, struct buf *out);

#endif
