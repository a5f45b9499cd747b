/* Egress: address ranges, the conf's network section, the firewall text. */
#include "tap.h"
#include "fixtures.h"
#include "../../sandbox/spec.h"
#include "../../sandbox/egress.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <sys/socket.h>

static bool parses(const char *s, const char *want)
{
	struct cidr c;
	char err[160], text[64];
	return cidr_parse(s, &c, err, sizeof err) && !strcmp(cidr_format(&c, text, sizeof text), want);
}

static bool refused(const char *s)
{
	struct cidr c;
	char err[160];
	return !cidr_parse(s, &c, err, sizeof err) && err[0];
}

static bool inside(const char *range, const char *addr)
{
	struct cidr c;
	char err[160];
	uint8_t a[16];
	int family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	return cidr_parse(range, &c, err, sizeof err) && inet_pton(family, addr, a) == 1 &&
	       cidr_contains(&c, family, a);
}

static struct cidr cidr(const char *s)
{
	struct cidr c = {0};
	char err[160];
	cidr_parse(s, &c, err, sizeof err);
	return c;
}

/* The repository's conf with text replaced; false with err if refused. */
static bool conf_with(const char *from, const char *to, struct conf *c, char *err, size_t n)
{
	struct buf b = {0};
	if (!read_file("conf/isobox.yaml", 1 << 20, &b, err, n))
		return false;
	char *at = strstr(b.data, from);
	if (!at) {
		snprintf(err, n, "fixture: %s not in conf", from);
		buf_free(&b);
		return false;
	}
	char *text = xasprintf("%.*s%s%s", (int)(at - b.data), b.data, to, at + strlen(from));
	bool ok = conf_parse(text, strlen(text), "/base", c, err, n);
	free(text);
	buf_free(&b);
	return ok;
}

static bool conf_refused(const char *from, const char *to, const char *why)
{
	struct conf c;
	char err[512] = "";
	bool loaded = conf_with(from, to, &c, err, sizeof err);
	if (loaded)
		conf_free(&c);
	return !loaded && strstr(err, why);
}

static bool line(const struct buf *b, const char *l)
{
	autofree char *want = xasprintf("\n%s\n", l);
	return b->data && strstr(b->data, want);
}

UNIT_TEST(test_egress)
{
	ok(parses("10.0.0.0/8", "10.0.0.0/8"), "cidr: IPv4 range");
	ok(parses("169.254.169.254", "169.254.169.254/32"), "cidr: bare address is one host");
	ok(parses("::1", "::1/128") && parses("fe80::/10", "fe80::/10"), "cidr: IPv6");
	ok(parses("0.0.0.0/0", "0.0.0.0/0"), "cidr: everything");
	ok(refused("10.1.0.0/8"), "cidr: bits past the prefix refused");
	ok(refused("10.0.0.0/33") && refused("10.0.0.0/") && refused("10.0.0.0/-1") &&
	   refused("10.0.0.0/8x") && refused("10.0.0.0/ 8"), "cidr: bad prefixes refused");
	ok(refused("10.0.0") && refused("") && refused("/8") && refused("example.com") &&
	   refused("1.2.3.4.5"), "cidr: bad addresses refused");
	ok(inside("10.0.0.0/8", "10.255.1.2") && !inside("10.0.0.0/8", "11.0.0.1"), "cidr: contains /8");
	ok(inside("100.64.0.0/10", "100.127.255.255") && !inside("100.64.0.0/10", "100.128.0.0"),
	   "cidr: contains /10 at both edges");
	ok(inside("0.0.0.0/0", "8.8.8.8") && !inside("0.0.0.0/0", "::1"), "cidr: /0, and families never mix");
	ok(inside("::1/128", "::1") && !inside("::1/128", "::2"), "cidr: IPv6 host");

	struct conf c;
	struct registry r;
	char err[512] = "";
	ok(conf_with("enabled: true ", "enabled: true ", &c, err, sizeof err) && c.network.enabled &&
	   c.network.n_deny == 15 && c.network.n_allow == 0 && c.network.n_deny_tcp_ports == 3 && c.network.deny_tcp_ports[2] == 587 &&
	   !strcmp(c.network.bridge, "isobox-eg0"), "conf: shipped network section (%s)", err);
	conf_free(&c);
	ok(conf_refused("    - 10.0.0.0/8 ", "    - 10.0.0.1/8 ", "bits set"), "conf: deny with host bits refused");
	ok(conf_refused("    - 10.0.0.0/8 ", "    - ten ", "network.deny"), "conf: deny not an address refused");
	ok(conf_refused("dns: []", "dns: [10.0.0.0/8]", "one IPv4 address"), "conf: dns must be hosts");
	ok(conf_refused("bridge: isobox-eg0", "bridge: \"eg0; rm -rf /\"", "interface name"),
	   "conf: bridge name with shell characters refused");
	ok(conf_refused("bridge: isobox-eg0", "bridge: a-very-long-bridge-name", "interface name"),
	   "conf: bridge name over 15 bytes refused");
	ok(conf_refused("outInterfaces: []", "outInterfaces: [\"-j ACCEPT\"]", "interface name"),
	   "conf: out interface with iptables words refused");
	ok(conf_refused("[25, 465, 587]", "[25, 70000]", "denyTcpPorts"), "conf: port out of range refused");
	ok(conf_refused("subnet: 10.231.0.0/24", "subnet: 10.231.0.0/30", "/8 to /29"), "conf: tiny subnet refused");
	ok(conf_refused("dockerNetwork: isobox-egress", "dockerNetwork: --help", "dockerNetwork"),
	   "conf: docker network name that is a flag refused");
	ok(conf_refused("  runtime: runsc-egress", "  bogus: 1", "bogus"), "conf: unknown network key refused");
	ok(conf_refused("resolvConf: /var/lib/isobox/sandbox/resolv.conf", "resolvConf: /x,dst=/etc/passwd",
			"sandbox.resolvConf"), "conf: resolvConf that would add mount options refused");
	ok(conf_refused("hostsFile: /var/lib/isobox/sandbox/hosts", "hostsFile: /x,dst=/etc/passwd",
			"sandbox.hostsFile"), "conf: hostsFile that would add mount options refused");
	ok(conf_refused("seccompProfile: /var/lib/isobox/sandbox/seccomp.json", "seccompProfile: \"\"", "seccompProfile"),
	   "conf: empty seccomp profile path refused");

	/* The default deny list: every IANA "not globally reachable" IPv4 range. */
	ok(conf_with("enabled: true ", "enabled: true ", &c, err, sizeof err), "conf: loads (%s)", err);
	static const char *const iana[] = {"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8",
		"169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24",
		"192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4",
		"240.0.0.0/4"};
	bool all_denied = true;
	for (size_t i = 0; i < sizeof iana / sizeof iana[0]; i++) {
		struct cidr want = cidr(iana[i]);
		bool found = false;
		for (size_t j = 0; j < c.network.n_deny; j++)
			found |= cidr_within(&want, &c.network.deny[j]);
		if (!found)
			printf("# not denied: %s\n", iana[i]);
		all_denied &= found;
	}
	uint8_t bcast[4] = {255, 255, 255, 255}, v0[4] = {0, 0, 0, 0};
	ok(all_denied && cidr_list_contains(c.network.deny, c.network.n_deny, "255.255.255.255") &&
	   cidr_contains(&c.network.deny[0], AF_INET, v0) && !cidr_contains(&c.network.deny[0], AF_INET, bcast),
	   "conf: the shipped deny list holds every special-purpose range, broadcast included");
	ok(!cidr_list_contains(c.network.deny, c.network.n_deny, "192.31.196.1") &&
	   !cidr_list_contains(c.network.deny, c.network.n_deny, "8.8.8.8") &&
	   !cidr_list_contains(c.network.deny, c.network.n_deny, "198.51.101.1") &&
	   !cidr_list_contains(c.network.deny, c.network.n_deny, "100.128.0.1"),
	   "conf: and nothing globally reachable (AS112, a public address, the neighbours of the ranges)");
	conf_free(&c);

	/* network.allow: strict, and only what the deny list closes. */
	ok(conf_with("allow: []", "allow: [198.51.100.0/24, 10.1.2.3]", &c, err, sizeof err) &&
	   c.network.n_allow == 2 && c.network.allow[1].prefix == 32, "conf: allow inside deny entries (%s)", err);
	conf_free(&c);
	ok(conf_with("  allow: []\n", "", &c, err, sizeof err) && c.network.n_allow == 0,
	   "conf: allow may be left out (%s)", err);
	conf_free(&c);
	ok(conf_refused("allow: []", "allow: [198.51.100.1/24]", "bits set"), "conf: allow with host bits refused");
	ok(conf_refused("allow: []", "allow: [8.8.8.0/24]", "not inside any network.deny"),
	   "conf: allow that opens nothing refused (typo)");
	ok(conf_refused("allow: []", "allow: [198.51.0.0/16]", "not inside any network.deny"),
	   "conf: allow wider than its deny entry refused");
	ok(conf_refused("allow: []", "allow: [\"::1\"]", "not IPv4"), "conf: IPv6 allow refused");
	ok(conf_refused("allow: []", "allow: 10.0.0.0/8", "network.allow"), "conf: allow not a list refused");
	ok(conf_refused("allow: []", "allow: [10.0.0.0/8, 10.0.0.0/8x]", "prefix"), "conf: allow bad prefix refused");

	fixture_load(&c, &r);
	struct cidr host[] = {cidr("192.0.2.0/24"), cidr("198.51.100.1/32")};
	struct cidr dns[] = {cidr("10.255.255.53/32"), cidr("10.231.0.1/32")};
	struct buf b = {0};
	free(c.network.allow);
	c.network.allow = xcalloc(1, sizeof *c.network.allow);
	c.network.allow[0] = cidr("198.51.100.0/24");
	c.network.n_allow = 1;
	egress_rules(&c.network, host, 2, dns, 2, &b);
	const char *rej = "-j REJECT --reject-with icmp-admin-prohibited";
	char want[200];
	ok(b.data && strstr(b.data, "*filter\n:ISOBOX-EGRESS - [0:0]\n:ISOBOX-EGRESS-DENY - [0:0]\n"
				  ":ISOBOX-EGRESS-IN - [0:0]\n") &&
	   b.len > 8 && !strcmp(b.data + b.len - 7, "COMMIT\n"), "rules: one filter table, our three chains");
	ok(strstr(b.data, "(isobox-fcgi --egress rules)\n") != NULL, "rules: header names the command that prints them");
	snprintf(want, sizeof want, "-A ISOBOX-EGRESS-DENY -d 169.254.0.0/16 %s", rej);
	ok(line(&b, want), "rules: metadata range rejected");
	snprintf(want, sizeof want, "-A ISOBOX-EGRESS-DENY -d 192.0.2.0/24 %s", rej);
	ok(line(&b, want), "rules: the host's LAN rejected, after allow");
	snprintf(want, sizeof want, "-A ISOBOX-EGRESS -p tcp --dport 465 %s", rej);
	ok(line(&b, want), "rules: SMTP submission port rejected");
	ok(strstr(b.data, "-d 10.255.255.53/32 -p udp --dport 53 -j RETURN") <
	   strstr(b.data, "-d 10.0.0.0/8 -j REJECT"), "rules: the resolver's port 53 before the deny list");
	ok(!line(&b, "-A ISOBOX-EGRESS -d 10.231.0.1/32 -p udp --dport 53 -j ACCEPT") &&
	   line(&b, "-A ISOBOX-EGRESS-IN -d 10.231.0.1/32 -p udp --dport 53 -j ACCEPT"),
	   "rules: a resolver on the gateway is let in on port 53 only");
	snprintf(want, sizeof want, "-A ISOBOX-EGRESS-IN %s\nCOMMIT", rej);
	ok(strstr(b.data, want) != NULL, "rules: nothing else from the bridge to the host");
	ok(!strstr(b.data, " -o "), "rules: any out interface when none is listed");
	/* network.allow: first in the deny chain, after everything it must not open. */
	const char *allow = strstr(b.data, "\n-A ISOBOX-EGRESS-DENY -d 198.51.100.0/24 -j RETURN\n");
	const char *jump = strstr(b.data, "\n-A ISOBOX-EGRESS -j ISOBOX-EGRESS-DENY\n");
	const char *deny = strstr(b.data, "\n-A ISOBOX-EGRESS-DENY -d 0.0.0.0/8 -j REJECT");
	snprintf(want, sizeof want, "\n-A ISOBOX-EGRESS -d 198.51.100.1/32 %s\n", rej);
	const char *own = strstr(b.data, want);
	snprintf(want, sizeof want, "\n-A ISOBOX-EGRESS -d 10.231.0.0/24 %s\n", rej);
	const char *bridge = strstr(b.data, want);
	snprintf(want, sizeof want, "\n-A ISOBOX-EGRESS -p tcp --dport 25 %s\n", rej);
	const char *mail = strstr(b.data, want);
	ok(allow && jump && deny && allow < deny, "rules: allow returns before the deny list");
	ok(own && bridge && mail && own < jump && bridge < jump && mail < jump,
	   "rules: the host's own address inside allow, the bridge and mail are rejected before allow");
	ok(!strstr(b.data, "-A ISOBOX-EGRESS -d 198.51.100.0/24"), "rules: allow never in the main chain");
	buf_free(&b);
	strv_push(&c.network.out_interfaces, "eth0");
	egress_rules(&c.network, host, 0, dns, 0, &b);
	snprintf(want, sizeof want, "-A ISOBOX-EGRESS -j ISOBOX-EGRESS-DENY\n-A ISOBOX-EGRESS -o eth0 -j RETURN\n"
		 "-A ISOBOX-EGRESS %s", rej);
	ok(strstr(b.data, want) != NULL, "rules: listed out interfaces only, allowed ranges included");
	buf_free(&b);
	strv_free(&c.network.out_interfaces);

	egress_resolv_conf(dns, 1, &b);
	ok(line(&b, "nameserver 10.255.255.53"), "resolv.conf: the resolver");
	buf_free(&b);

	struct cidr *nets;
	size_t n;
	c.network.allow[0] = cidr("198.51.100.0/24");
	ok(egress_host_nets(&c.network, &nets, &n, err, sizeof err), "host nets: read (%s)", err);
	bool none_denied = true;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < c.network.n_deny; j++)
			none_denied = none_denied && !cidr_contains(&c.network.deny[j], AF_INET, nets[i].addr);
	ok(none_denied, "host nets: none already covered by the deny list (%zu left)", n);
	free(nets);
	/* lo is 127.0.0.1/8 on every host: allow over it keeps the address
	 * (rejected before allow), and its subnet stays with the deny list. */
	c.network.allow[0] = cidr("127.0.0.0/8");
	ok(egress_host_nets(&c.network, &nets, &n, err, sizeof err), "host nets: read (%s)", err);
	bool lo_kept = false, lo_net = false;
	for (size_t i = 0; i < n; i++) {
		lo_kept |= nets[i].prefix == 32 && nets[i].addr[0] == 127 && nets[i].addr[3] == 1;
		lo_net |= nets[i].prefix == 8 && nets[i].addr[0] == 127;
	}
	ok(lo_kept && !lo_net, "host nets: an own address inside allow is kept, its denied subnet is not");
	free(nets);

	/* argv of an egress run */
	struct fault f;
	struct strv a = {0};
	struct sandbox_file files[] = {{.name = "a.py", .data = "1", .len = 1}};
	struct sandbox_job job = {.lang = registry_find(&r, "python", NULL, &f), .files = files,
		.n_files = 1, .network = true,
		.limits = {.memory_bytes = 1 << 26, .cpus = 1, .pids = 8, .output_bytes = 10, .wall_time_ms = 100}};
	argv_cold(&c, &job, "x", "1.2", "/w", &a);
	bool net = false, rt = false, none = false, resolv = false, ro = false, caps = false, sec = false;
	int resolv_mounts = 0;
	for (size_t i = 0; i < a.n; i++) {
		resolv_mounts += strstr(a.v[i], "dst=/etc/resolv.conf") != NULL;
		sec |= !strcmp(a.v[i], "--security-opt=seccomp=/var/lib/isobox/sandbox/seccomp.json");
		net |= !strcmp(a.v[i], "--network=isobox-egress");
		rt |= !strcmp(a.v[i], "--runtime=runsc-egress");
		none |= !strcmp(a.v[i], "--network=none") || !strcmp(a.v[i], "--runtime=runsc-untrusted");
		resolv |= !strcmp(a.v[i], "--mount=type=bind,src=/var/lib/isobox/egress/resolv.conf,"
					   "dst=/etc/resolv.conf,readonly");
		ro |= !strcmp(a.v[i], "--read-only");
		caps |= !strcmp(a.v[i], "--cap-drop=ALL");
	}
	ok(net && rt && !none, "argv: egress run on the egress network and runtime");
	ok(resolv && resolv_mounts == 1, "argv: egress run gets the installed resolv.conf, read-only, and only it");
	ok(ro && caps && sec, "argv: egress run keeps the other hardening flags, seccomp profile included");
	strv_free(&a);
	conf_free(&c);
	registry_free(&r);
}
