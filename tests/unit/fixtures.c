#define _GNU_SOURCE
#include "fixtures.h"
#include "tap.h"
#include "../../sandbox/spec_render.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static const char registry_yaml[] =
	"languages:\n"
	"  - name: python\n"
	"    aliases: [py, py3]\n"
	"    version: \"3.11\"\n"
	"    image: python\n"
	"    file: main.py\n"
	"    run: [python3, \"{file}\"]\n"
	"    agent: [python3, /isobox-agent/python.py]\n"
	"    preload: [numpy, pandas]\n"
	"    kernel: [python3, /isobox-agent/kernel.py]\n"
	"    env: {PYTHONDONTWRITEBYTECODE: \"1\"}\n"
	"    limits: {memoryBytes: 268435456, cpus: 1.0, pids: 128, outputBytes: 65536, wallTimeMs: 10000}\n"
	"  - name: python-slim\n"
	"    version: \"3.11\"\n"
	"    image: python-slim\n"
	"    file: main.py\n"
	"    run: [python3, \"{file}\"]\n"
	"    limits: {memoryBytes: 134217728, cpus: 1.0, pids: 64, outputBytes: 65536, wallTimeMs: 10000}\n";

static const char lock_yaml[] =
	"images:\n"
	"  python: {id: \"" TEST_ID_PY "\", version: \"3.11.2\"}\n";

void fixture_load(struct conf *c, struct registry *r)
{
	char err[512];
	if (!conf_load("conf/isobox.yaml", c, err, sizeof err)) {
		fprintf(stderr, "fixture: %s\n", err);
		exit(2);
	}
	if (!registry_parse(registry_yaml, sizeof registry_yaml - 1, lock_yaml,
			    sizeof lock_yaml - 1, r, err, sizeof err)) {
		fprintf(stderr, "fixture: %s\n", err);
		exit(2);
	}
}

int index_of(const struct strv *a, const char *arg)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->v[i], arg))
			return (int)i;
	return -1;
}

/* The repository's settings with one line replaced. */
char *conf_variant(const char *from, const char *to)
{
	struct buf b = {0};
	char err[256];
	if (!read_file("conf/isobox.yaml", 1 << 20, &b, err, sizeof err))
		return NULL;
	char *at = strstr(b.data, from);
	if (!at) {
		buf_free(&b);
		return NULL;
	}
	char *out = xasprintf("%.*s%s%s", (int)(at - b.data), b.data, to, at + strlen(from));
	buf_free(&b);
	return out;
}

struct sandbox_job fixture_python_job(const struct registry *r)
{
	static struct sandbox_file files[] = {{.name = "app.py", .data = "1", .len = 1}};
	static char *args[] = {"--flag", "$(rm -rf /)", "a b"};
	struct fault f;
	return (struct sandbox_job){
		.lang = registry_find(r, "python", NULL, &f), .files = files, .n_files = 1, .args = args, .n_args = 3,
		.limits = {.memory_bytes = 100 << 20, .cpus = 0.5, .pids = 32,
			   .output_bytes = 1000, .wall_time_ms = 2000},
	};
}

void argv_cold(const struct conf *c, const struct sandbox_job *job, const char *name, const char *owner,
	       const char *src_dir, struct strv *a)
{
	struct container_spec s;
	spec_cold(c, job, name, owner, src_dir, "ab12", &s);
	spec_argv(&s, c->docker, a);
	spec_free(&s);
}

void argv_warm(const struct conf *c, const struct language *l, const struct limits *lim, const char *name,
	       const char *owner, bool own_cgroup, struct strv *a)
{
	struct container_spec s;
	spec_warm(c, l, lim, name, owner, own_cgroup, &s);
	spec_argv(&s, c->docker, a);
	spec_free(&s);
}

void argv_session(const struct conf *c, const struct language *l, const struct session *ses, const char *owner,
		  struct strv *a)
{
	struct container_spec s;
	spec_session(c, l, ses, owner, &s);
	spec_argv(&s, c->docker, a);
	spec_free(&s);
}

void argv_outputs(const struct conf *c, const struct sandbox_job *job, const char *name, const char *owner,
		  struct strv *a)
{
	struct container_spec s;
	spec_outputs(c, job, name, owner, &s);
	spec_argv(&s, c->docker, a);
	spec_free(&s);
}

void fixture_write(const char *dir, const char *name, const char *text, mode_t mode)
{
	autofree char *path = xasprintf("%s/%s", dir, name);
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die("cannot write %s", path);
	fchmod(fd, mode);
	close(fd);
}


pid_t fixture_dockerd(char *dir, void (*serve)(int listener, int log_fd), char **sock, int *log_fd)
{
	*sock = NULL;
	*log_fd = -1;
	int logp[2];
	if (!mkdtemp(dir) || pipe(logp) != 0)
		return -1;
	*sock = xasprintf("%s/docker.sock", dir);
	int listener = fixture_unix_listener(*sock, 16);
	pid_t server = listener < 0 ? -1 : fork();
	if (server == 0) {
		close(logp[0]);
		serve(listener, logp[1]);
		_exit(0);
	}
	close(logp[1]);
	if (listener >= 0)
		close(listener);
	*log_fd = logp[0];
	return server;
}

int fixture_unix_listener(const char *path, int backlog)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	if (fd >= 0 && (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, backlog) != 0)) {
		close(fd);
		fd = -1;
	}
	return fd;
}
