/*
 * egress.c: the firewall for runs with "network": true, made from conf.
 *
 * One function writes the rules (egress_rules, pure) from three inputs: the
 * conf's network section, the host's own IPv4 networks, and the resolvers.
 * `deploy/egress.sh install` applies what `isobox-fcgi --egress rules`
 * prints and records it, with the boot it was installed in, in stateDir.
 * Before each egress run the worker builds the same text again and compares:
 * a conf edit, a new host interface or a reboot (which loses the kernel's
 * rules) all make it refuse with 503 until the install has run again. Fail
 * closed: the worker cannot read iptables (it is not root), so it trusts
 * only a record that must match exactly.
 *
 * Order of the forwarded chain (ISOBOX-EGRESS, for traffic from the bridge):
 *   1. the resolvers, port 53 only
 *   2. the host's own addresses, the bridge subnet, the mail ports: closed,
 *      whatever network.allow says
 *   3. ISOBOX-EGRESS-DENY: network.allow returns first, then the deny list
 *      and the subnets of the host's interfaces (its neighbours)
 *   4. outInterfaces, if any
 * Rules are REJECT with icmp-admin-prohibited, so a blocked connect fails
 * at once with EHOSTUNREACH, which tests tell apart from a refused port.
 */
#define _GNU_SOURCE
#include "egress.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static const char reject[] = "-j REJECT --reject-with icmp-admin-prohibited";

static bool covered_by_any(const struct cidr *a, const struct cidr *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (cidr_within(a, &list[i]))
			return true;
	return false;
}

static bool overlaps_any(const struct cidr *a, const struct cidr *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (cidr_overlap(a, &list[i]))
			return true;
	return false;
}

/*
 * Is host entry k redundant? An own address (a /32) is rejected before
 * network.allow is looked at, so it may be left to the deny list only
 * where no allow entry touches it. A subnet sits after allow, next to the
 * deny list, so the deny list alone decides. Of two equal entries, the
 * first stays; a subnet inside another subnet goes.
 */
static bool redundant(const struct conf_network *n, const struct cidr *all, size_t k, size_t j)
{
	const struct cidr *a = &all[j];
	bool own = a->prefix == 32;
	if (covered_by_any(a, n->deny, n->n_deny) && !(own && overlaps_any(a, n->allow, n->n_allow)))
		return true;
	for (size_t i = 0; i < k; i++) {
		if (i == j || (all[i].prefix == 32) != own || !cidr_within(a, &all[i]))
			continue;
		if (!cidr_within(&all[i], a) || i < j)
			return true;
	}
	return false;
}

static int cidr_order(const void *pa, const void *pb)
{
	const struct cidr *a = pa, *b = pb;
	int c = memcmp(a->addr, b->addr, 4);
	return c ? c : a->prefix - b->prefix;
}

bool egress_host_nets(const struct conf_network *n, struct cidr **out, size_t *count,
		      char *err, size_t errlen)
{
	struct ifaddrs *ifs, *i;
	if (getifaddrs(&ifs) < 0) {
		snprintf(err, errlen, "getifaddrs: %m");
		return false;
	}
	size_t cap = 0, k = 0;
	struct cidr *all = NULL;
	for (i = ifs; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_netmask)
			continue;
		const struct in_addr *a = &((struct sockaddr_in *)i->ifa_addr)->sin_addr;
		uint32_t mask = ntohl(((struct sockaddr_in *)i->ifa_netmask)->sin_addr.s_addr);
		int prefix = __builtin_popcount(mask);
		if (k + 2 > cap)
			all = xrealloc(all, (cap = cap * 2 + 8) * sizeof *all);
		all[k++] = cidr_network(AF_INET, a, 32);      /* the host itself */
		all[k++] = cidr_network(AF_INET, a, prefix);  /* its neighbours */
	}
	freeifaddrs(ifs);
	/* Keep only what the conf's lists and the other entries leave open,
	 * sorted, so that the text is the same whatever order the kernel gives
	 * and a test link inside a denied range changes nothing. */
	*out = xcalloc(k + 1, sizeof **out);
	*count = 0;
	for (size_t j = 0; j < k; j++)
		if (!redundant(n, all, k, j))
			(*out)[(*count)++] = all[j];
	free(all);
	qsort(*out, *count, sizeof **out, cidr_order);
	return true;
}

bool egress_resolvers(const struct conf_network *n, struct cidr **out, size_t *count,
		      char *err, size_t errlen)
{
	*out = xcalloc(n->n_dns + 4, sizeof **out);
	*count = 0;
	if (n->n_dns) {
		memcpy(*out, n->dns, n->n_dns * sizeof **out);
		*count = n->n_dns;
		return true;
	}
	/* The host's resolvers; loopback ones (a local stub) are not reachable
	 * from the bridge, so a host with only those needs network.dns. */
	struct buf text = {0};
	if (!read_file("/etc/resolv.conf", 1 << 16, &text, err, errlen))
		return false;
	char *save = NULL;
	for (char *line = strtok_r(text.data, "\n", &save); line && *count < 3;
	     line = strtok_r(NULL, "\n", &save)) {
		char word[16], addr[64], why[8];
		struct cidr c;
		if (sscanf(line, " %15s %63s", word, addr) != 2 || strcmp(word, "nameserver"))
			continue;
		if (cidr_parse(addr, &c, why, sizeof why) && c.family == AF_INET && c.prefix == 32 &&
		    c.addr[0] != 127)
			(*out)[(*count)++] = c;
	}
	buf_free(&text);
	return true;
}

static bool is_host_address(const struct cidr *a, const struct cidr *host, size_t n_host)
{
	for (size_t i = 0; i < n_host; i++)
		if (host[i].prefix == 32 && !memcmp(host[i].addr, a->addr, 4))
			return true;
	return false;
}

void egress_rules(const struct conf_network *n, const struct cidr *host, size_t n_host,
		  const struct cidr *dns, size_t n_dns, struct buf *out)
{
	char a[64];
	buf_printf(out, "# isobox egress firewall for bridge %s (isobox-fcgi --egress rules)\n", n->bridge);
	buf_printf(out, "*filter\n:ISOBOX-EGRESS - [0:0]\n:ISOBOX-EGRESS-DENY - [0:0]\n"
			":ISOBOX-EGRESS-IN - [0:0]\n");
	/* Forwarded from the bridge: the resolvers (port 53 only) ... */
	for (size_t i = 0; i < n_dns; i++) {
		cidr_format(&dns[i], a, sizeof a);
		buf_printf(out, "-A ISOBOX-EGRESS -d %s -p udp --dport 53 -j RETURN\n", a);
		buf_printf(out, "-A ISOBOX-EGRESS -d %s -p tcp --dport 53 -j RETURN\n", a);
	}
	/* ... what no allow entry can open: the host, the bridge, mail ... */
	for (size_t i = 0; i < n_host; i++)
		if (host[i].prefix == 32)
			buf_printf(out, "-A ISOBOX-EGRESS -d %s %s\n", cidr_format(&host[i], a, sizeof a), reject);
	buf_printf(out, "-A ISOBOX-EGRESS -d %s %s\n", cidr_format(&n->subnet, a, sizeof a), reject);
	for (size_t i = 0; i < n->n_deny_tcp_ports; i++)
		buf_printf(out, "-A ISOBOX-EGRESS -p tcp --dport %lld %s\n",
			   (long long)n->deny_tcp_ports[i], reject);
	/* ... the deny list, with network.allow taken off it ... */
	buf_printf(out, "-A ISOBOX-EGRESS -j ISOBOX-EGRESS-DENY\n");
	/* ... and the uplinks, if named. */
	if (n->out_interfaces.n) {
		for (size_t i = 0; i < n->out_interfaces.n; i++)
			buf_printf(out, "-A ISOBOX-EGRESS -o %s -j RETURN\n", n->out_interfaces.v[i]);
		buf_printf(out, "-A ISOBOX-EGRESS %s\n", reject);
	}
	buf_printf(out, "-A ISOBOX-EGRESS -j RETURN\n");
	for (size_t i = 0; i < n->n_allow; i++)
		buf_printf(out, "-A ISOBOX-EGRESS-DENY -d %s -j RETURN\n", cidr_format(&n->allow[i], a, sizeof a));
	for (size_t i = 0; i < n->n_deny; i++)
		if (n->deny[i].family == AF_INET)
			buf_printf(out, "-A ISOBOX-EGRESS-DENY -d %s %s\n", cidr_format(&n->deny[i], a, sizeof a), reject);
	for (size_t i = 0; i < n_host; i++)
		if (host[i].prefix < 32)
			buf_printf(out, "-A ISOBOX-EGRESS-DENY -d %s %s\n", cidr_format(&host[i], a, sizeof a), reject);
	buf_printf(out, "-A ISOBOX-EGRESS-DENY -j RETURN\n");
	/* To the host itself: nothing new (answers to the host's own
	 * connections pass), but a resolver that is one of its own. */
	buf_printf(out, "-A ISOBOX-EGRESS-IN -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT\n");
	for (size_t i = 0; i < n_dns; i++)
		if (is_host_address(&dns[i], host, n_host) || dns[i].addr[0] == 127 ||
		    cidr_contains(&n->subnet, AF_INET, dns[i].addr)) {
			cidr_format(&dns[i], a, sizeof a);
			buf_printf(out, "-A ISOBOX-EGRESS-IN -d %s -p udp --dport 53 -j ACCEPT\n", a);
			buf_printf(out, "-A ISOBOX-EGRESS-IN -d %s -p tcp --dport 53 -j ACCEPT\n", a);
		}
	buf_printf(out, "-A ISOBOX-EGRESS-IN %s\nCOMMIT\n", reject);
}

void egress_resolv_conf(const struct cidr *dns, size_t n_dns, struct buf *out)
{
	char a[64];
	buf_printf(out, "# written by deploy/egress.sh install (isobox-fcgi --egress resolv)\n");
	for (size_t i = 0; i < n_dns && i < 3; i++) {
		inet_ntop(AF_INET, dns[i].addr, a, sizeof a);
		buf_printf(out, "nameserver %s\n", a);
	}
	buf_printf(out, "options timeout:2 attempts:2\n");
}

bool sandbox_egress_files(const struct conf *c, struct buf *rules, struct buf *resolv,
			  char *err, size_t errlen)
{
	struct cidr *host = NULL, *dns = NULL;
	size_t n_host = 0, n_dns = 0;
	bool ok = egress_host_nets(&c->network, &host, &n_host, err, errlen) &&
		  egress_resolvers(&c->network, &dns, &n_dns, err, errlen);
	if (ok) {
		egress_rules(&c->network, host, n_host, dns, n_dns, rules);
		if (resolv)
			egress_resolv_conf(dns, n_dns, resolv);
	}
	free(host);
	free(dns);
	return ok;
}

/*
 * Does the bridge the rules are hooked to exist with the gateway address?
 * The rules match by interface name: a docker network re-made under
 * another name would pass its traffic unfiltered.
 */
static bool bridge_present(const struct conf_network *n)
{
	struct ifaddrs *ifs;
	bool found = false;
	struct cidr gw = n->subnet;
	gw.addr[3] |= 1; /* docker's gateway: the subnet's first address */
	if (getifaddrs(&ifs) < 0)
		return false;
	for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next)
		found = i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !strcmp(i->ifa_name, n->bridge) &&
			!memcmp(&((struct sockaddr_in *)i->ifa_addr)->sin_addr, gw.addr, 4);
	freeifaddrs(ifs);
	return found;
}

/* The contents of stateDir/name, trailing newline removed; NULL if unreadable. */
static char *state_file(const struct conf *c, const char *name, struct buf *b)
{
	char err[256];
	autofree char *path = xasprintf("%s/%s", c->network.state_dir, name);
	if (!read_file(path, 1 << 20, b, err, sizeof err))
		return NULL;
	while (b->len && b->data[b->len - 1] == '\n')
		b->data[--b->len] = '\0';
	return b->data;
}

bool sandbox_egress_ready(const struct conf *c, char *mode, size_t mode_len, struct fault *f)
{
	struct buf want = {0}, have = {0}, boot = {0}, now = {0}, m = {0};
	char err[256];
	bool ok = false;
	snprintf(mode, mode_len, "none");
	if (!sandbox_egress_files(c, &want, NULL, err, sizeof err)) {
		fail(f, E_NETWORK_UNAVAILABLE, "egress firewall: %s", err);
		goto out;
	}
	if (!state_file(c, "rules.v4", &have) || !state_file(c, "boot", &boot) ||
	    !state_file(c, "mode", &m)) {
		fail(f, E_NETWORK_UNAVAILABLE,
		     "the egress firewall is not installed: run deploy/egress.sh install");
		goto out;
	}
	if (!read_file("/proc/sys/kernel/random/boot_id", 64, &now, err, sizeof err) ||
	    strncmp(now.data, boot.data, boot.len) || boot.len < 32) {
		fail(f, E_NETWORK_UNAVAILABLE,
		     "the egress firewall was installed before the last boot: run deploy/egress.sh install");
		goto out;
	}
	while (want.len && want.data[want.len - 1] == '\n')
		want.data[--want.len] = '\0';
	if (want.len != have.len || memcmp(want.data, have.data, want.len)) {
		fail(f, E_NETWORK_UNAVAILABLE,
		     "the egress firewall does not match the settings or the host's interfaces: "
		     "run deploy/egress.sh install");
		goto out;
	}
	if (!bridge_present(&c->network)) {
		fail(f, E_NETWORK_UNAVAILABLE,
		     "the egress bridge %s is not up with its gateway address: run deploy/egress.sh install",
		     c->network.bridge);
		goto out;
	}
	/* runc has no network stack of its own: a run uses the host kernel's
	 * inside its namespace, which is what gVisor's "host" mode means. */
	snprintf(mode, mode_len, "%s", c->backend == BACKEND_RUNC ? "host" : m.data);
	ok = true;
out:
	buf_free(&want);
	buf_free(&have);
	buf_free(&boot);
	buf_free(&now);
	buf_free(&m);
	return ok;
}

void sandbox_egress_log(const struct conf *c)
{
	char a[64];
	if (!c->network.enabled)
		return;
	for (size_t i = 0; i < c->network.n_allow; i++)
		log_msg("network.allow: %s is taken off the egress deny list (not the host, the bridge "
			"or the mail ports)", cidr_format(&c->network.allow[i], a, sizeof a));
}
