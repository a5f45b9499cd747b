/*
 * isobox-runc: the OCI runtime of isobox's runc backend (docs/BACKENDS.md).
 *
 * Docker's runtime `isobox-runc` points here; deploy/setup.sh writes the
 * entry in /etc/docker/daemon.json with this program's own flags:
 *
 *   isobox-runc [--isobox-runc=PATH] RUNC-ARGS...
 *
 * containerd's shim calls it as it would call runc, as root, with nothing
 * from a request. Every command is runc's, unchanged, but before `create`
 * (and `run`) the bundle's config.json is changed as runc_spec.h says: a
 * user namespace of the container's own, in which the program's uid 65534
 * is the host's RUNC_HOST_ID (sandbox/uids.h). Docker can only remap users
 * for the whole daemon (userns-remap), which would move every image and
 * the gVisor containers too. If the spec cannot be changed, create fails:
 * no runc sandbox starts without its namespace.
 *
 *   isobox-runc --isobox-hook=prestart
 *
 * is the prestart hook that the same step adds to the spec: runc runs it
 * before the program starts (prestart_hook, below).
 */
#define _GNU_SOURCE
#include "runc_spec.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define MAX_SPEC (4 << 20)

static char **args; /* runc's argv, for the --log file */

/*
 * An error goes to stderr and, as runc's own would, to the --log file (JSON
 * lines), where containerd finds the message that docker shows.
 */
static void fail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "isobox-runc: %s\n", msg);
	static bool failing; /* out of memory while logging: stderr only */
	if (failing)
		exit(1);
	failing = true;
	const char *log = NULL;
	for (int i = 0; args && args[i]; i++) {
		if (!strcmp(args[i], "--log") && args[i + 1])
			log = args[i + 1];
		else if (!strncmp(args[i], "--log=", 6))
			log = args[i] + 6;
	}
	FILE *f = log ? fopen(log, "ae") : NULL;
	if (f) {
		cJSON *line = cJSON_CreateObject();
		char when[32];
		time_t now = time(NULL);
		strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
		char *full = NULL;
		if (asprintf(&full, "isobox-runc: %s", msg) < 0)
			full = NULL;
		cJSON_AddStringToObject(line, "level", "error");
		cJSON_AddStringToObject(line, "msg", full ? full : msg);
		cJSON_AddStringToObject(line, "time", when);
		char *text = cJSON_PrintUnformatted(line);
		if (text)
			fprintf(f, "%s\n", text);
		free(text);
		free(full);
		cJSON_Delete(line);
		fclose(f);
	}
	exit(1);
}

/* cJSON's allocator: a spec half changed for want of memory must not reach runc. */
static void *must_alloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		fail("out of memory");
	return p;
}

static char *read_spec(int dir, size_t *len)
{
	int fd = openat(dir, "config.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		fail("cannot open the bundle's config.json: %s", strerror(errno));
	char *text = malloc(MAX_SPEC + 1);
	size_t n = 0;
	ssize_t r;
	while (text && n < MAX_SPEC && (r = read(fd, text + n, MAX_SPEC - n)) != 0) {
		if (r < 0 && errno != EINTR)
			fail("cannot read config.json: %s", strerror(errno));
		n += r > 0 ? (size_t)r : 0;
	}
	close(fd);
	if (!text || n >= MAX_SPEC)
		fail("config.json is too large");
	text[n] = '\0';
	*len = n;
	return text;
}

/* Written next to the old one and renamed over it: runc reads all or none. */
static void write_spec(int dir, const char *text)
{
	static const char tmp[] = "config.json.isobox-runc";
	unlinkat(dir, tmp, 0);
	int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		fail("cannot write config.json: %s", strerror(errno));
	size_t len = strlen(text), off = 0;
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			fail("cannot write config.json: %s", strerror(errno));
		off += (size_t)w;
	}
	if (fsync(fd) < 0 || close(fd) < 0 || renameat(dir, tmp, dir, "config.json") < 0)
		fail("cannot replace config.json: %s", strerror(errno));
}

/* The flags of the mount that holds path (the source of a bind: docker's
 * spec, paths the worker chose). */
static bool mount_flags(const char *path, unsigned long *flags)
{
	struct statvfs st;
	if (statvfs(path, &st) < 0)
		return false;
	*flags = st.f_flag;
	return true;
}

static void change_spec(const char *bundle)
{
	char self[4096];
	ssize_t len_self = readlink("/proc/self/exe", self, sizeof self - 1);
	if (len_self <= 0 || (size_t)len_self >= sizeof self - 1)
		fail("cannot tell where isobox-runc is");
	self[len_self] = '\0';
	int dir = open(bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		fail("cannot open the bundle %s: %s", bundle, strerror(errno));
	size_t len;
	char *text = read_spec(dir, &len);
	cJSON *spec = cJSON_ParseWithLength(text, len);
	free(text);
	if (!spec)
		fail("config.json is not JSON");
	char err[256];
	if (!runc_spec_userns(spec, RUNC_HOST_ID, err, sizeof err))
		fail("%s", err);
	runc_spec_keep_bind_flags(spec, mount_flags);
	runc_spec_prestart_hook(spec, self);
	char *out = cJSON_PrintUnformatted(spec);
	if (!out)
		fail("out of memory");
	write_spec(dir, out);
	free(out);
	cJSON_Delete(spec);
	close(dir);
}

/*
 * The prestart hook (runc_spec_prestart_hook). runc runs it in the host's
 * namespaces, after docker's own hook has set the container's network up
 * and before the program starts, with the container's state (JSON: "id",
 * "pid") on stdin. It fails, and so does the create, unless both limits
 * below are in place.
 */
static int read_state(char *id, size_t idlen)
{
	char state[65536];
	size_t n = 0;
	ssize_t r;
	while (n < sizeof state - 1 && (r = read(0, state + n, sizeof state - 1 - n)) != 0) {
		if (r < 0 && errno != EINTR)
			fail("hook: cannot read the state: %s", strerror(errno));
		n += r > 0 ? (size_t)r : 0;
	}
	state[n] = '\0';
	cJSON *s = cJSON_Parse(state);
	const cJSON *pid = cJSON_GetObjectItemCaseSensitive(s, "pid");
	const char *cid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "id"));
	if (!cJSON_IsNumber(pid) || pid->valuedouble < 2 || pid->valuedouble > 1 << 22 || !cid ||
	    !cid[0] || strlen(cid) >= idlen || strchr(cid, '/'))
		fail("hook: no pid or id in the container's state");
	snprintf(id, idlen, "%s", cid);
	int p = (int)pid->valuedouble;
	cJSON_Delete(s);
	return p;
}

static bool read_small(const char *path, char *out, size_t len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t r = fd < 0 ? -1 : read(fd, out, len - 1);
	if (fd >= 0)
		close(fd);
	if (r < 0)
		return false;
	out[r] = '\0';
	return true;
}

/*
 * Socket memory. A run's sockets are the host kernel's, loopback included.
 * On cgroup v1 their buffers are charged to a cgroup only once its
 * memory.kmem.tcp.limit_in_bytes is written (runc 1.1 ignores the spec's
 * kernelTCP): it gets the container's own memory limit, TCP and UDP both.
 * cgroup v2 charges them to memory.max already.
 */
static void charge_sockets(int pid, const char *id)
{
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0)
		return;
	char path[640], lines[8192], *cg = NULL;
	snprintf(path, sizeof path, "/proc/%d/cgroup", pid);
	if (!read_small(path, lines, sizeof lines))
		fail("hook: cannot read %s: %s", path, strerror(errno));
	/* "N:memory:/isobox.slice/<id>" (the controllers may be a list) */
	char *keep;
	for (char *line = strtok_r(lines, "\n", &keep); line && !cg; line = strtok_r(NULL, "\n", &keep)) {
		char *ctl = strchr(line, ':'), *at = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!at)
			continue;
		*at = '\0';
		char *list = ctl + 1, *tok, *save;
		for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (!strcmp(tok, "memory"))
				cg = at + 1;
	}
	const char *last = cg ? strrchr(cg, '/') : NULL;
	if (!last || strcmp(last + 1, id) || strstr(cg, ".."))
		fail("hook: the container's memory cgroup is not its own (%s)", cg ? cg : "none");
	char dir[512], limit[64], got[64];
	snprintf(dir, sizeof dir, "/sys/fs/cgroup/memory%s", cg);
	snprintf(path, sizeof path, "%s/memory.limit_in_bytes", dir);
	if (!read_small(path, limit, sizeof limit) || limit[0] < '0' || limit[0] > '9')
		fail("hook: no memory limit in %s", dir);
	limit[strcspn(limit, "\n")] = '\0';
	snprintf(path, sizeof path, "%s/memory.kmem.tcp.limit_in_bytes", dir);
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	bool wrote = fd >= 0 && write(fd, limit, strlen(limit)) == (ssize_t)strlen(limit);
	if (fd >= 0)
		close(fd);
	if (!wrote || !read_small(path, got, sizeof got) || strncmp(got, limit, strlen(limit)))
		fail("hook: cannot set %s to %s", path, limit);
}

/*
 * Docker's embedded DNS. Inside the container's network namespace
 * everything sent to 127.0.0.11 is refused: docker's resolver there
 * answers with other containers' names and forwards queries past the
 * firewall's resolvers (egress runs; with loopback only the rules are
 * moot). TCP with a reset: a connect that gets no answer hangs.
 */
static const char dns_rules[] =
	"*filter\n"
	"-I OUTPUT 1 -d 127.0.0.11/32 -p tcp -j REJECT --reject-with tcp-reset\n"
	"-I OUTPUT 2 -d 127.0.0.11/32 -j REJECT --reject-with icmp-admin-prohibited\n"
	"COMMIT\n";

static void refuse_embedded_dns(int pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/ns/net", pid);
	int ns = open(path, O_RDONLY | O_CLOEXEC);
	struct stat theirs, ours;
	if (ns < 0 || fstat(ns, &theirs) < 0 || stat("/proc/self/ns/net", &ours) < 0)
		fail("hook: cannot open %s: %s", path, strerror(errno));
	if (theirs.st_ino == ours.st_ino && theirs.st_dev == ours.st_dev)
		fail("hook: the container is in the host's network namespace");
	if (setns(ns, CLONE_NEWNET) < 0)
		fail("hook: cannot enter the container's network namespace: %s", strerror(errno));
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0 || write(p[1], dns_rules, strlen(dns_rules)) != (ssize_t)strlen(dns_rules) ||
	    close(p[1]) < 0 || dup2(p[0], 0) < 0)
		fail("hook: cannot pass the rules: %s", strerror(errno));
	execl("/usr/sbin/iptables-restore", "iptables-restore", "--noflush", (char *)NULL);
	fail("hook: cannot run iptables-restore: %s", strerror(errno));
}

static void prestart_hook(void)
{
	char id[128];
	int pid = read_state(id, sizeof id);
	charge_sockets(pid, id);
	refuse_embedded_dns(pid); /* last: it becomes iptables-restore */
}

/* runc's global flags that take a separate value (the rest are booleans). */
static bool takes_value(const char *flag)
{
	static const char *const with_value[] = {"--root", "--log", "--log-format", "--criu", "--rootless", NULL};
	for (int i = 0; with_value[i]; i++)
		if (!strcmp(flag, with_value[i]))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	cJSON_InitHooks(&(cJSON_Hooks){.malloc_fn = must_alloc, .free_fn = free});
	const char *runc = "/usr/sbin/runc";
	char **out = calloc((size_t)argc + 1, sizeof *out);
	if (!out)
		fail("out of memory");
	int n = 0;
	out[n++] = "runc";
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--isobox-runc=", 14)) {
			runc = argv[i] + 14;
		} else if (!strcmp(argv[i], "--isobox-hook=prestart")) {
			prestart_hook();
		} else {
			out[n++] = argv[i];
		}
	}
	out[n] = NULL;
	args = out;
	/* The command is the first word after the global flags. */
	int cmd = 1;
	while (cmd < n && out[cmd][0] == '-')
		cmd += takes_value(out[cmd]) ? 2 : 1;
	if (cmd < n && (!strcmp(out[cmd], "create") || !strcmp(out[cmd], "run"))) {
		const char *bundle = ".";
		for (int i = cmd + 1; i < n; i++) {
			if ((!strcmp(out[i], "--bundle") || !strcmp(out[i], "-b")) && i + 1 < n)
				bundle = out[++i];
			else if (!strncmp(out[i], "--bundle=", 9))
				bundle = out[i] + 9;
		}
		change_spec(bundle);
	} else {
		/* A create not recognised as one would start without the namespace. */
		for (int i = 1; i < n; i++)
			if (!strcmp(out[i], "create") || !strcmp(out[i], "run"))
				fail("cannot tell the command in the arguments");
	}
	execv(runc, out);
	fail("cannot run %s: %s", runc, strerror(errno));
}
