/* Access lists for /metrics and /healthz: CIDR parsing and matching. */
#include "tap.h"
#include "fixtures.h"
#include "../../conf/access.h"
#include "../../conf/lib/yaml_tree.h"

/* The repository's settings with one piece of text replaced (NULL if absent). */
static char *conf_text_with(const char *from, const char *to)
{
	struct buf b = {0};
	char err[256];
	if (!read_file("conf/isobox.yaml", 1 << 20, &b, err, sizeof err))
		return NULL;
	char *at = strstr(b.data, from);
	char *out = at ? xasprintf("%.*s%s%s", (int)(at - b.data), b.data, to, at + strlen(from)) : NULL;
	buf_free(&b);
	return out;
}

static bool parses(const char *s)
{
	struct cidr c;
	char err[160];
	return cidr_parse(s, &c, err, sizeof err);
}

static bool allows(const char *yaml_list, const char *addr)
{
	char err[256];
	char *doc = xasprintf("metrics: %s\n", yaml_list);
	cJSON *y = yaml_load_string(doc, strlen(doc), err, sizeof err);
	free(doc);
	struct access a;
	struct fault f = {0};
	bool ok_ = y && access_parse(y, &a, &f) && cidr_list_allows(&a.metrics, addr);
	cJSON_Delete(y);
	access_free(&a);
	return ok_;
}

static bool section_fails(const char *doc, const char *want)
{
	char err[256];
	cJSON *y = yaml_load_string(doc, strlen(doc), err, sizeof err);
	struct access a;
	struct fault f = {0};
	bool failed = y && !access_parse(y, &a, &f) && strstr(f.message, want);
	if (!failed)
		printf("# %s\n", f.message);
	cJSON_Delete(y);
	access_free(&a);
	return failed;
}

UNIT_TEST(test_access)
{
	ok(parses("10.0.0.0/8"), "cidr: IPv4 block");
	ok(!parses("127.0.0.1/8"), "cidr: host bits past the prefix refused (say 127.0.0.0/8)");
	ok(parses("::1/128"), "cidr: IPv6 host");
	ok(parses("::/0") && parses("0.0.0.0/0"), "cidr: everything");
	ok(parses("fd00::/8"), "cidr: IPv6 block");
	ok(parses("10.0.0.1"), "cidr: a bare address is one host");
	ok(!parses("10.0.0.0/33"), "cidr: IPv4 prefix over 32 refused");
	ok(!parses("::1/129"), "cidr: IPv6 prefix over 128 refused");
	ok(!parses("10.0.0.0/-1") && !parses("10.0.0.0/+8") && !parses("10.0.0.0/ 8"),
	   "cidr: signs and spaces refused");
	ok(!parses("10.0.0.0/08") && !parses("10.0.0.0/") && !parses("/8"), "cidr: odd lengths refused");
	ok(!parses("10.0.0/8") && !parses("10.0.0.256/8") && !parses("localhost/8"),
	   "cidr: bad addresses refused");
	ok(!parses("10.0.0.0/8x") && !parses("10.0.0.0/8/8"), "cidr: trailing bytes refused");

	ok(allows("[\"127.0.0.0/8\"]", "127.0.0.1"), "match: loopback in 127/8");
	ok(allows("[\"127.0.0.0/8\"]", "127.255.1.2"), "match: edge of 127/8");
	ok(!allows("[\"127.0.0.0/8\"]", "128.0.0.1"), "match: outside 127/8");
	ok(allows("[\"127.0.0.0/8\"]", "::ffff:127.0.0.1"), "match: IPv4-mapped IPv6 peer");
	ok(!allows("[\"127.0.0.0/8\"]", "::1"), "match: ::1 is not in 127/8");
	ok(allows("[\"10.1.2.0/23\"]", "10.1.3.200") && !allows("[\"10.1.2.0/23\"]", "10.1.4.0"),
	   "match: a /23 boundary");
	ok(allows("[\"fd00::/8\"]", "fd12:3456::1") && !allows("[\"fd00::/8\"]", "fe80::1"),
	   "match: IPv6 block");
	ok(!allows("[]", "127.0.0.1"), "match: an empty list denies all");
	ok(!allows("[\"0.0.0.0/0\"]", "") && !allows("[\"0.0.0.0/0\"]", "not-an-ip"),
	   "match: a missing or garbled REMOTE_ADDR is denied");
	ok(!allows("[\"0.0.0.0/0\"]", NULL), "match: no REMOTE_ADDR at all is denied");
	ok(allows("[\"::/0\"]", "192.0.2.1"), "match: ::/0 matches IPv4 peers too");

	struct access a;
	struct fault f = {0};
	ok(access_parse(NULL, &a, &f), "defaults: no access section is fine");
	ok(cidr_list_allows(&a.metrics, "127.0.0.1") && cidr_list_allows(&a.metrics, "::1"),
	   "defaults: metrics open to loopback");
	ok(!cidr_list_allows(&a.metrics, "192.0.2.1"), "defaults: metrics closed to others");
	ok(cidr_list_allows(&a.healthz, "192.0.2.1") && cidr_list_allows(&a.healthz, NULL),
	   "defaults: healthz open");
	access_free(&a);

	ok(section_fails("metrics: [\"10.0.0.0/8\", \"bogus\"]\n", "access.metrics"),
	   "conf: one bad block fails the section");
	ok(section_fails("metrics: \"10.0.0.0/8\"\n", "access.metrics"), "conf: a string is not a list");
	ok(section_fails("healthz: [8]\n", "access.healthz"), "conf: a number is not a block");
	ok(section_fails("metric: []\n", "metric"), "conf: unknown key refused");

	char err[512];
	struct conf c;
	char *text = conf_text_with("access:\n  metrics: [\"127.0.0.0/8\", \"::1/128\"]\n",
				    "access:\n  metrics: [\"10.0.0.0/8\"]\n  healthz: [\"192.0.2.0/24\"]\n");
	ok(text && conf_parse(text, strlen(text), "/base", &c, err, sizeof err),
	   "conf: isobox.yaml with access lists loads (%s)", err);
	ok(!cidr_list_allows(&c.access.metrics, "127.0.0.1") &&
	   cidr_list_allows(&c.access.metrics, "10.9.9.9") &&
	   !cidr_list_allows(&c.access.healthz, "127.0.0.1"), "conf: lists reach struct conf");
	conf_free(&c);
	free(text);
	text = conf_text_with("\"::1/128\"]", "\"::1/12x\"]");
	ok(text && !conf_parse(text, strlen(text), "/base", &c, err, sizeof err) &&
	   strstr(err, "::1/12x"), "conf: a bad block is a config error (%s)", err);
	free(text);

	text = conf_text_with("maxRequests: 0", "maxRequests: 2");
	ok(text && conf_parse(text, strlen(text), "/base", &c, err, sizeof err) &&
	   c.pool.max_requests == 2 && !c.pool.reject_when_busy && c.pool.hang_margin_ms == 15000 &&
	   !c.pool.request_log_json,
	   "conf: pool.maxRequests read, defaults kept");
	conf_free(&c);
	free(text);
	text = conf_text_with("whenBusy: wait", "whenBusy: reject");
	ok(text && conf_parse(text, strlen(text), "/base", &c, err, sizeof err) && c.pool.reject_when_busy,
	   "conf: pool.whenBusy reject");
	conf_free(&c);
	free(text);
	text = conf_text_with("whenBusy: wait", "whenBusy: queue");
	ok(text && !conf_parse(text, strlen(text), "/base", &c, err, sizeof err) && strstr(err, "whenBusy"),
	   "conf: pool.whenBusy must be wait or reject (%s)", err);
	free(text);
	text = conf_text_with("requestLog: logfmt", "requestLog: json");
	ok(text && conf_parse(text, strlen(text), "/base", &c, err, sizeof err) && c.pool.request_log_json,
	   "conf: pool.requestLog json");
	conf_free(&c);
	free(text);
	text = conf_text_with("requestLog: logfmt", "requestLog: syslog");
	ok(text && !conf_parse(text, strlen(text), "/base", &c, err, sizeof err) && strstr(err, "requestLog"),
	   "conf: pool.requestLog must be logfmt or json (%s)", err);
	free(text);
	text = conf_text_with("hangMarginMs: 15000", "hangMarginMs: 5000");
	ok(text && !conf_parse(text, strlen(text), "/base", &c, err, sizeof err),
	   "conf: hangMarginMs below 10 s refused (%s)", err);
	free(text);

	/* The Host header: only this service's own names (DNS rebinding). */
	struct registry reg;
	fixture_load(&c, &reg);
	registry_free(&reg);
	const struct access *ac = &c.access;
	ok(access_host_allowed(ac, "127.0.0.1:8090") && access_host_allowed(ac, "localhost") &&
	   access_host_allowed(ac, "LocalHost.:80") && access_host_allowed(ac, "[::1]:8090"),
	   "hosts: the defaults, with or without a port, any case, a trailing dot");
	ok(access_host_allowed(ac, "") && access_host_allowed(ac, NULL),
	   "hosts: no Host header (HTTP/1.0, never a browser) is served");
	ok(!access_host_allowed(ac, "evil.example:8090") && !access_host_allowed(ac, "127.0.0.1.evil.example") &&
	   !access_host_allowed(ac, "[::1") && !access_host_allowed(ac, "localhostx") &&
	   !access_host_allowed(ac, "127.0.0.10"), "hosts: other names are refused");
	conf_free(&c);
	text = conf_text_with("hosts: [\"localhost\", \"127.0.0.1\", \"[::1]\"]", "hosts: [\"*\"]");
	ok(text && conf_parse(text, strlen(text), "/base", &c, err, sizeof err) &&
	   access_host_allowed(&c.access, "anything.example"), "hosts: [\"*\"] serves any name (%s)", err);
	conf_free(&c);
	free(text);
	text = conf_text_with("hosts: [\"localhost\", \"127.0.0.1\", \"[::1]\"]", "hosts: [\"api.example\", \"*\"]");
	ok(text && !conf_parse(text, strlen(text), "/base", &c, err, sizeof err) && strstr(err, "hosts"),
	   "hosts: \"*\" only alone (%s)", err);
	free(text);
	text = conf_text_with("hosts: [\"localhost\", \"127.0.0.1\", \"[::1]\"]", "hosts: []");
	ok(text && !conf_parse(text, strlen(text), "/base", &c, err, sizeof err) && strstr(err, "empty"),
	   "hosts: an empty list is a config error, not \"any\" (%s)", err);
	free(text);
	text = conf_text_with("hosts: [\"localhost\", \"127.0.0.1\", \"[::1]\"]", "hosts: [\"a b\"]");
	ok(text && !conf_parse(text, strlen(text), "/base", &c, err, sizeof err), "hosts: a bad name is a config error");
	free(text);
}
