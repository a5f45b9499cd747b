/* The runc backend: conf, argv, and the spec that isobox-runc hands runc. */
#define _GNU_SOURCE
#include "tap.h"
#include "fixtures.h"
#include "../../sandbox/spec.h"
#include "../../sandbox/sandbox.h"
#include "../../sandbox/runc/runc_spec.h"

#include <stdlib.h>
#include <sys/statvfs.h>

/* What docker 20.10 writes for a sandbox (the parts that matter here). */
static const char docker_spec[] =
	"{\"ociVersion\":\"1.0.2\",\"process\":{\"user\":{\"uid\":65534,\"gid\":65534},\"args\":[\"sh\"]},"
	"\"root\":{\"path\":\"/var/lib/docker/overlay2/x/merged\",\"readonly\":true},"
	"\"linux\":{\"resources\":{\"memory\":{\"limit\":268435456,\"swap\":268435456}},"
	"\"namespaces\":[{\"type\":\"mount\"},{\"type\":\"network\"},{\"type\":\"uts\"},"
	"{\"type\":\"pid\"},{\"type\":\"ipc\"}],\"maskedPaths\":[\"/proc/kcore\"],"
	"\"sysctl\":{\"net.ipv4.ping_group_range\":\"0 2147483647\",\"net.ipv4.ip_unprivileged_port_start\":\"0\"}},"
	"\"mounts\":[{\"destination\":\"/dev/pts\",\"type\":\"devpts\",\"source\":\"devpts\","
	"\"options\":[\"nosuid\",\"noexec\",\"newinstance\",\"ptmxmode=0666\",\"mode=0620\",\"gid=5\"]}]}";

static cJSON *spec_with(const char *from, const char *to)
{
	const char *at = strstr(docker_spec, from);
	if (!at)
		return NULL;
	char *text = xasprintf("%.*s%s%s", (int)(at - docker_spec), docker_spec, to, at + strlen(from));
	cJSON *s = cJSON_Parse(text);
	free(text);
	return s;
}

static int count_type(const cJSON *spec, const char *type)
{
	int n = 0;
	const cJSON *ns;
	cJSON_ArrayForEach(ns, cJSON_GetObjectItem(cJSON_GetObjectItem(spec, "linux"), "namespaces")) {
		const cJSON *t = cJSON_GetObjectItem(ns, "type");
		n += cJSON_IsString(t) && !strcmp(t->valuestring, type);
	}
	return n;
}

/* The mapping list is exactly 0->0 and 65534->host, one id each. */
static bool mapped(const cJSON *list, double host)
{
	const double want[2][2] = {{0, 0}, {65534, host}};
	if (cJSON_GetArraySize(list) != 2)
		return false;
	for (int i = 0; i < 2; i++) {
		const cJSON *m = cJSON_GetArrayItem(list, i);
		if (cJSON_GetObjectItem(m, "containerID")->valuedouble != want[i][0] ||
		    cJSON_GetObjectItem(m, "hostID")->valuedouble != want[i][1] ||
		    cJSON_GetObjectItem(m, "size")->valuedouble != 1)
			return false;
	}
	return true;
}

/* A fake statvfs: a volume (nosuid,nodev,noatime), a strictatime source,
 * the host's root (relatime), and a path it cannot tell. */
static bool fake_flags(const char *path, unsigned long *flags)
{
	if (!strncmp(path, "/vol/", 5))
		*flags = ST_NOSUID | ST_NODEV | ST_NOATIME;
	else if (!strcmp(path, "/strict"))
		*flags = ST_NODEV;
	else if (!strcmp(path, "/gone"))
		return false;
	else
		*flags = ST_RELATIME;
	return true;
}

/* The options of the mount at dst, joined by commas. */
static char *options_of(const cJSON *spec, const char *dst)
{
	const cJSON *m;
	cJSON_ArrayForEach(m, cJSON_GetObjectItem(spec, "mounts")) {
		if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(m, "destination")), dst))
			continue;
		struct buf b = {0};
		const cJSON *o;
		cJSON_ArrayForEach(o, cJSON_GetObjectItem(m, "options"))
			buf_printf(&b, "%s%s", b.len ? "," : "", o->valuestring);
		return b.data ? b.data : xstrdup("");
	}
	return xstrdup("?");
}

static void test_bind_flags(void)
{
	cJSON *s = cJSON_Parse("{\"mounts\":["
		"{\"destination\":\"/memory\",\"type\":\"bind\",\"source\":\"/vol/abc\",\"options\":[\"rbind\",\"ro\"]},"
		"{\"destination\":\"/rw\",\"type\":\"bind\",\"source\":\"/vol/def\",\"options\":[\"rbind\"]},"
		"{\"destination\":\"/src\",\"type\":\"bind\",\"source\":\"/work/x\",\"options\":[\"rbind\",\"ro\"]},"
		"{\"destination\":\"/s\",\"type\":\"bind\",\"source\":\"/strict\",\"options\":[\"bind\",\"ro\",\"nodev\"]},"
		"{\"destination\":\"/g\",\"type\":\"bind\",\"source\":\"/gone\",\"options\":[\"rbind\",\"ro\"]},"
		"{\"destination\":\"/tmp\",\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":[\"ro\"]}]}");
	runc_spec_keep_bind_flags(s, fake_flags);
	runc_spec_keep_bind_flags(s, fake_flags);
	struct {
		const char *dst, *want, *what;
	} cases[] = {
		{"/memory", "rbind,ro,nosuid,nodev,noatime", "a read-only volume keeps the flags the kernel locks"},
		{"/rw", "rbind", "a read-write bind is left alone (runc does not remount it)"},
		{"/src", "rbind,ro", "a relatime source: nothing to add"},
		{"/s", "bind,ro,nodev,strictatime", "a strictatime source says so, once, and nodev once"},
		{"/g", "rbind,ro", "a source it cannot tell: left as it was"},
		{"/tmp", "ro", "not a bind: left alone"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = options_of(s, cases[i].dst);
		ok(!strcmp(got, cases[i].want), "runc spec: %s (%s)", cases[i].what, got);
		free(got);
	}
	cJSON_Delete(s);
}

static void test_spec(void)
{
	char err[256];
	cJSON *s = cJSON_Parse(docker_spec);
	ok(runc_spec_userns(s, 165534, err, sizeof err), "runc spec: docker's sandbox spec is accepted");
	const cJSON *linux = cJSON_GetObjectItem(s, "linux");
	ok(count_type(s, "user") == 1, "runc spec: a user namespace of its own is added");
	ok(count_type(s, "network") == 1 && count_type(s, "pid") == 1, "runc spec: the other namespaces are kept");
	ok(mapped(cJSON_GetObjectItem(linux, "uidMappings"), 165534),
	   "runc spec: uids 0->0 and 65534->165534, nothing else");
	ok(mapped(cJSON_GetObjectItem(linux, "gidMappings"), 165534), "runc spec: gids the same");
	ok(cJSON_GetObjectItem(linux, "maskedPaths") != NULL, "runc spec: docker's masks are kept");
	const cJSON *sysctl = cJSON_GetObjectItem(linux, "sysctl");
	ok(!cJSON_GetObjectItem(sysctl, "net.ipv4.ping_group_range") &&
	   cJSON_GetObjectItem(sysctl, "net.ipv4.ip_unprivileged_port_start"),
	   "runc spec: ping sockets for all groups (unmapped ids) dropped, other sysctls kept");
	char *pts = cJSON_PrintUnformatted(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(s, "mounts"), 0), "options"));
	is_str(pts, "[\"nosuid\",\"noexec\",\"newinstance\",\"ptmxmode=0666\",\"mode=0620\"]",
	       "runc spec: /dev/pts without gid=5 (tty: not mapped)");
	free(pts);
	/* Again: still one namespace, the same mappings (no duplicates). */
	ok(runc_spec_userns(s, 165534, err, sizeof err) && count_type(s, "user") == 1 &&
	   mapped(cJSON_GetObjectItem(linux, "uidMappings"), 165534),
	   "runc spec: changing a changed spec changes nothing more");
	cJSON_Delete(s);

	/* Docker's own prestart hook first (it makes the network), then ours. */
	s = spec_with("\"ociVersion\":\"1.0.2\",", "\"ociVersion\":\"1.0.2\",\"hooks\":{\"prestart\":"
		      "[{\"path\":\"/usr/bin/dockerd\",\"args\":[\"libnetwork-setkey\"]}]},");
	runc_spec_prestart_hook(s, "/opt/isobox/bin/isobox-runc");
	runc_spec_prestart_hook(s, "/opt/isobox/bin/isobox-runc");
	const cJSON *pre = cJSON_GetObjectItem(cJSON_GetObjectItem(s, "hooks"), "prestart");
	const cJSON *last = cJSON_GetArrayItem(pre, 1);
	ok(cJSON_GetArraySize(pre) == 2 &&
	   tap_streq(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(pre, 0), "path")), "/usr/bin/dockerd") &&
	   tap_streq(cJSON_GetStringValue(cJSON_GetObjectItem(last, "path")), "/opt/isobox/bin/isobox-runc") &&
	   tap_streq(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(last, "args"), 1)), "--isobox-hook=prestart"),
	   "runc spec: the DNS hook runs after docker's network hook, once");
	cJSON_Delete(s);
	s = cJSON_Parse(docker_spec);
	runc_spec_prestart_hook(s, "/x/isobox-runc");
	ok(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(s, "hooks"), "prestart")) == 1,
	   "runc spec: the DNS hook where the spec had no hooks");
	cJSON_Delete(s);

	struct {
		const char *from, *to, *what;
	} refused[] = {
		{"\"uid\":65534", "\"uid\":0", "a container that runs as root"},
		{"\"gid\":65534}", "\"gid\":0}", "a container whose group is root"},
		{"\"gid\":65534}", "\"gid\":65534,\"additionalGids\":[65534,0]}", "a container with root's group as well"},
		{"{\"type\":\"ipc\"}", "{\"type\":\"ipc\"},{\"type\":\"user\",\"path\":\"/proc/1/ns/user\"}",
		 "a user namespace to join (the host's)"},
		{"\"limit\":268435456,", "", "no memory limit (socket buffers unbounded)"},
		{"\"namespaces\":[", "\"spaces\":[", "no namespaces at all"},
	};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
		s = spec_with(refused[i].from, refused[i].to);
		err[0] = '\0';
		ok(s && !runc_spec_userns(s, 165534, err, sizeof err) && err[0],
		   "runc spec: refused, %s (%s)", refused[i].what, err);
		cJSON_Delete(s);
	}
	s = cJSON_Parse(docker_spec);
	ok(!runc_spec_userns(s, 0, err, sizeof err) && !runc_spec_userns(s, 65534, err, sizeof err),
	   "runc spec: the program's host id is never root's or the host's own nobody");
	cJSON_Delete(s);
}

static bool has(const struct strv *a, const char *arg)
{
	return index_of(a, arg) >= 0;
}

static void test_backend_argv(void)
{
	struct conf c;
	struct registry r;
	struct fault f;
	fixture_load(&c, &r);
	is_str(conf_backend_name(&c), "gvisor", "backend: gvisor unless the conf says otherwise");
	ok(conf_backend_warning(&c) == NULL, "backend: gVisor carries no warning");
	const struct language *py = registry_find(&r, "python", NULL, &f);
	struct sandbox_file files[] = {{.name = "app.py", .data = "1", .len = 1}};
	struct sandbox_job job = {.lang = py, .files = files, .n_files = 1, .limits = py->defaults};

	c.backend = BACKEND_RUNC;
	is_str(conf_backend_name(&c), "runc", "backend: runc is reported as runc");
	ok(conf_backend_warning(&c) && strstr(conf_backend_warning(&c), "host's kernel"),
	   "backend: runc warns that the boundary is the host's kernel");
	struct strv a = {0};
	argv_cold(&c, &job, "isobox-main-1.2-abcd", "1.2", "/w/x", &a);
	ok(has(&a, "--runtime=isobox-runc"), "runc argv: the isobox-runc runtime");
	ok(has(&a, "--security-opt=seccomp=/var/lib/isobox/sandbox/seccomp-runc.json"),
	   "runc argv: the runc backend's own seccomp profile");
	ok(!has(&a, "--runtime=runsc-untrusted") &&
	   !has(&a, "--security-opt=seccomp=/var/lib/isobox/sandbox/seccomp.json"),
	   "runc argv: nothing of gVisor's runtime or profile");
	ok(has(&a, "--network=none") && has(&a, "--read-only") && has(&a, "--user=65534:65534") &&
	   has(&a, "--cap-drop=ALL") && has(&a, "--security-opt=no-new-privileges"),
	   "runc argv: every hardening flag of gVisor's runs as well");
	ok(has(&a, "--cgroupns=private"), "runc argv: a cgroup namespace of its own (no host cgroup paths)");
	strv_free(&a);
	job.network = true;
	argv_cold(&c, &job, "isobox-main-1.2-abcd", "1.2", "/w/x", &a);
	ok(has(&a, "--runtime=isobox-runc") && !has(&a, "--network=none"),
	   "runc argv: an egress run uses isobox-runc too, on the egress network");
	strv_free(&a);
	struct strv w = {0};
	argv_warm(&c, py, &py->defaults, "isobox-main-warm", "1.2", true, &w);
	ok(has(&w, "--runtime=isobox-runc"), "runc argv: warm sandboxes run on runc too");
	strv_free(&w);
	conf_free(&c);
	registry_free(&r);
}

static bool conf_variant_loads(const char *from, const char *to, struct conf *c, char *err, size_t n)
{
	char *text = conf_variant(from, to);
	bool loaded = text && conf_parse(text, strlen(text), "/base", c, err, n);
	if (!text)
		snprintf(err, n, "no %s in conf/isobox.yaml", from);
	free(text);
	return loaded;
}

static void test_backend_conf(void)
{
	char err[512];
	struct conf c;
	ok(conf_variant_loads("backend: gvisor", "backend: runc", &c, err, sizeof err) &&
	   c.backend == BACKEND_RUNC && tap_streq(c.runc.runtime, "isobox-runc"),
	   "conf: backend runc, with its runtime");
	conf_free(&c);
	ok(!conf_variant_loads("backend: gvisor", "backend: lxc", &c, err, sizeof err) &&
	   strstr(err, "gvisor or runc"), "conf: an unknown backend is refused (%s)", err);
	ok(conf_variant_loads("backend: gvisor", "backend: gvisor", &c, err, sizeof err) &&
	   tap_streq(c.sandbox.platform, "auto"), "conf: runsc's platform is auto (setup measures) as shipped");
	conf_free(&c);
	ok(conf_variant_loads("  platform: auto", "  platform: systrap", &c, err, sizeof err) &&
	   tap_streq(c.sandbox.platform, "systrap"), "conf: a platform may be named");
	conf_free(&c);
	ok(!conf_variant_loads("  platform: auto", "  platform: ptrace --debug", &c, err, sizeof err) &&
	   strstr(err, "auto, ptrace, systrap or kvm"), "conf: any other platform is refused (%s)", err);
	/* The whole runc section away (its two lines read as one block). */
	char *text = conf_variant("backend: gvisor\nrunc:\n", "backend: runc\nx_runc_gone:\n");
	char *gone = text ? strstr(text, "x_runc_gone:\n") : NULL;
	if (gone) {
		char *end = strstr(gone, "seccompProfile:");
		end = end ? strchr(end, '\n') : NULL;
		if (end)
			memmove(gone, end + 1, strlen(end + 1) + 1);
	}
	ok(gone && !conf_parse(text, strlen(text), "/base", &c, err, sizeof err) &&
	   strstr(err, "needs the runc section"), "conf: backend runc without its section is refused (%s)", err);
	free(text);
}

UNIT_TEST(test_runc)
{
	test_spec();
	test_bind_flags();
	test_backend_argv();
	test_backend_conf();
}
