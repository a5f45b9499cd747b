#define _GNU_SOURCE
/* The removal queue (sandbox/removal.h) against a stand-in dockerd: a
 * unix socket in a temporary directory whose child process answers each
 * DELETE by the container's name (204, or 500 the first time, or 500
 * always), and against docker CLI stand-ins (/bin/true, /bin/false) when
 * the socket cannot be reached. No docker. */
#include "tap.h"
#include "fixtures.h"
#include "../../sandbox/removal.h"

#include <signal.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the stand-in answers a DELETE of name, the asked-th time (1, 2). */
static int answer(const char *name, int asked)
{
	if (!strcmp(name, "flaky"))
		return asked == 1 ? 500 : 204;
	if (!strcmp(name, "stuck"))
		return 500;
	return strcmp(name, "absent") ? 204 : 404;
}

/* Serve until killed; each request's name is written to log_fd. */
static void serve(int listener, int log_fd)
{
	int asked[4] = {0}; /* flaky, stuck, other */
	for (;;) {
		int fd = accept(listener, NULL, NULL);
		if (fd < 0)
			continue;
		char req[512] = "", name[64] = "";
		ssize_t got = read(fd, req, sizeof req - 1);
		if (got > 0 && sscanf(req, "DELETE /containers/%63[a-z0-9-]?force=1", name) == 1) {
			int k = !strcmp(name, "flaky") ? 0 : !strcmp(name, "stuck") ? 1 : 2;
			int status = answer(name, ++asked[k]);
			dprintf(fd, "HTTP/1.1 %d X\r\nContent-Length: 0\r\n\r\n", status);
			dprintf(log_fd, "%s\n", name);
		}
		close(fd);
	}
}

struct told {
	char names[256];
	int n;
};

static void gone(void *arg, const struct conf *c, const char *name)
{
	(void)c;
	struct told *t = arg;
	t->n++;
	strcat(t->names, name);
	strcat(t->names, " ");
}

static int count_lines(const char *text, const char *line)
{
	int n = 0;
	size_t len = strlen(line);
	for (const char *p = text; (p = strstr(p, line)); p += len)
		if ((p == text || p[-1] == '\n') && p[len] == '\n')
			n++;
	return n;
}

UNIT_TEST(test_removal)
{
	char dir[] = "/tmp/isobox-removal.XXXXXX";
	autofree char *sock = NULL;
	int log_fd;
	pid_t server = fixture_dockerd(dir, serve, &sock, &log_fd);
	ok(server > 0, "removal: a stand-in dockerd listens");

	struct conf c = {.docker = "/bin/false", .docker_socket = sock};
	struct told told = {0};
	struct removals q;
	removals_init(&q, gone, &told, false);
	removals_add(&q, &c, "gone-one");
	removals_add(&q, &c, "flaky");
	removals_add(&q, &c, "stuck");
	removals_add(&q, &c, "absent");
	ok(q.n == 4 && removals_holds(&q, "flaky") && !removals_holds(&q, "other"),
	   "removal: four under way, each held by its name");
	int64_t t0 = now_ms();
	bool left = removals_collect(&q, t0 + 5000);
	ok(!left && q.n == 0, "removal: all over before the deadline (%lld ms)", (long long)(now_ms() - t0));
	ok(told.n == 3 && strstr(told.names, "gone-one ") && strstr(told.names, "flaky ") &&
	   strstr(told.names, "absent "), "removal: removed, removed at the second try, and gone already are told (%s)",
	   told.names);
	ok(!strstr(told.names, "stuck"), "removal: one that fails twice is not told");

	kill(server, SIGKILL);
	waitpid(server, NULL, 0);
	char log[1024] = "";
	ssize_t got = read(log_fd, log, sizeof log - 1);
	log[got > 0 ? got : 0] = '\0';
	close(log_fd);
	ok(count_lines(log, "gone-one") == 1 && count_lines(log, "absent") == 1,
	   "removal: a removal that succeeds is asked once");
	ok(count_lines(log, "flaky") == 2 && count_lines(log, "stuck") == 2,
	   "removal: a failed one is asked once more, and no more");

	/* dockerd out of reach: the CLI, waited for as the answer. */
	unlink(sock);
	ok(removal_now(&(struct conf){.docker = "/bin/true", .docker_socket = sock}, "by-cli", now_ms() + 5000),
	   "removal: without the API, a docker rm that exits 0 removed it");
	ok(!removal_now(&c, "by-cli", now_ms() + 5000), "removal: one that fails (twice) did not");
	/* The pool's master reaps its own children: a process is left to it. */
	struct removals master;
	removals_init(&master, gone, &told, true);
	removals_add(&master, &(struct conf){.docker = "/bin/true", .docker_socket = sock}, "by-master");
	int st = -1;
	ok(master.n == 0 && waitpid(-1, &st, 0) > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "removal: the master's docker rm process is not waited on by the queue, but by its reaper");
	struct removals none = {0};
	ok(!removals_collect(&none, now_ms()) && !removals_holds(&none, "x"), "removal: a zeroed queue is empty");
	rmdir(dir);
}
