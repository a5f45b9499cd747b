#define _GNU_SOURCE
/* A long-lived sandbox's client (sandbox/attach.c, launch_client_argv)
 * against a stand-in dockerd: a unix socket whose child process makes the
 * container, keeps the attached stream, answers the wait, and on the start
 * echoes what the stream brought until its half-close, as a stdout frame
 * and a stderr frame, then ends the stream and the wait with the exit
 * status 7. No docker. */
#include "tap.h"
#include "fixtures.h"
#include "../../sandbox/launch.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void frame(int fd, int stream, const char *p, size_t n)
{
	unsigned char head[8] = {(unsigned char)stream, 0, 0, 0, (unsigned char)(n >> 24), (unsigned char)(n >> 16),
				 (unsigned char)(n >> 8), (unsigned char)n};
	if (write(fd, head, 8) != 8 || write(fd, p, n) != (ssize_t)n)
		_exit(1);
}

/* A request whole (a create's body is bigger than a read may bring; a
 * socket closed with some of it unread would be reset), its first line in
 * line. */
static void read_request(int fd, char *line, size_t max)
{
	static char req[1 << 16];
	size_t n = 0;
	char *end = NULL;
	ssize_t r;
	while (!(end = memmem(req, n, "\r\n\r\n", 4)) && n < sizeof req - 1 &&
	       (r = read(fd, req + n, sizeof req - 1 - n)) > 0)
		n += (size_t)r;
	req[n] = '\0';
	const char *cl = strcasestr(req, "Content-Length: ");
	size_t want = end ? (size_t)(end + 4 - req) + (cl ? strtoul(cl + 16, NULL, 10) : 0) : n;
	while (n < want && n < sizeof req - 1 && (r = read(fd, req + n, sizeof req - 1 - n)) > 0)
		n += (size_t)r;
	snprintf(line, max, "%.*s", (int)strcspn(req, "\r"), req);
}

static void serve(int listener, int log_fd)
{
	int stream = -1, wait = -1;
	for (;;) {
		int fd = accept(listener, NULL, NULL);
		if (fd < 0)
			continue;
		char req[512];
		read_request(fd, req, sizeof req);
		dprintf(log_fd, "%s\n", req);
		if (strstr(req, "/containers/create?name=refused ")) {
			dprintf(fd, "HTTP/1.0 409 Conflict\r\nContent-Type: application/json\r\n\r\n"
				    "{\"message\":\"name in use\"}");
			close(fd);
		} else if (strstr(req, "/containers/create?")) {
			dprintf(fd, "HTTP/1.0 201 Created\r\nContent-Type: application/json\r\n\r\n{\"Id\":\"" ID "\"}");
			close(fd);
		} else if (strstr(req, "/attach?")) {
			dprintf(fd, "HTTP/1.1 101 UPGRADED\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n");
			stream = fd;
		} else if (strstr(req, "/wait?")) {
			dprintf(fd, "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n");
			wait = fd;
		} else if (strstr(req, "/containers/unstartable/start ")) {
			dprintf(fd, "HTTP/1.0 500 Internal Server Error\r\nContent-Type: application/json\r\n\r\n"
				    "{\"message\":\"runsc did not start\"}");
			close(fd);
			close(stream);
			close(wait);
		} else if (strstr(req, "/start ")) {
			dprintf(fd, "HTTP/1.0 204 No Content\r\n\r\n");
			close(fd);
			char in[4096];
			size_t n = 0;
			ssize_t r;
			while (n < sizeof in && (r = read(stream, in + n, sizeof in - n)) > 0)
				n += (size_t)r;
			frame(stream, 1, in, n);
			frame(stream, 2, "err\n", 4);
			close(stream);
			dprintf(wait, "{\"Error\":null,\"StatusCode\":7}\n");
			close(wait);
		} else {
			dprintf(fd, "HTTP/1.0 400 Bad Request\r\n\r\n");
			close(fd);
		}
	}
}

/* sandbox_attach in a child of its own with piped stdio: what it wrote to
 * stdout and stderr, and its exit status (-1: killed). */
static int attach(const char *sock, const char *name, const char *input, struct buf *out, struct buf *err)
{
	int in[2], o[2], e[2];
	if (pipe(in) || pipe(o) || pipe(e))
		return -2;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(o[1], 1);
		dup2(e[1], 2);
		for (int fd = 3; fd < 64; fd++)
			close(fd);
		_exit(sandbox_attach(sock, name, now_ms() + 5000));
	}
	close(in[0]);
	close(o[1]);
	close(e[1]);
	if (write(in[1], input, strlen(input)) != (ssize_t)strlen(input))
		return -2;
	close(in[1]);
	int from[2] = {o[0], e[0]};
	struct buf *to[2] = {out, err};
	for (int i = 0; i < 2; i++) {
		char chunk[4096];
		ssize_t r;
		while ((r = read(from[i], chunk, sizeof chunk)) > 0)
			buf_append(to[i], chunk, (size_t)r);
		close(from[i]);
	}
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool is(const struct buf *b, const char *text)
{
	return b->len == strlen(text) && !memcmp(b->data, text, b->len);
}

UNIT_TEST(test_attach)
{
	char dir[] = "/tmp/isobox-attach.XXXXXX";
	autofree char *sock = NULL;
	int log_fd;
	pid_t server = fixture_dockerd(dir, serve, &sock, &log_fd);
	ok(server > 0, "attach: a stand-in dockerd listens");

	struct conf c;
	struct registry r;
	struct container_spec spec;
	fixture_load(&c, &r);
	free(c.docker_socket);
	c.docker_socket = xstrdup(sock);
	struct sandbox_job job = fixture_python_job(&r);
	spec_cold(&c, &job, "isobox-main-0123456789abcdef", "1.2", "/var/lib/isobox/work/x", "ab12", &spec);
	struct strv argv = {0};
	struct buf why = {0};
	char id[65] = "";
	int64_t deadline = now_ms() + 5000;
	bool made = launch_client_argv(&c, &spec, deadline, &argv, &why, id);
	char by[24];
	snprintf(by, sizeof by, "%lld", (long long)deadline);
	ok(made && argv.n == 5 && !strcmp(argv.v[0], "/proc/self/exe") && !strcmp(argv.v[1], "--attach") &&
		   !strcmp(argv.v[2], sock) && !strcmp(argv.v[3], spec.name) && !strcmp(argv.v[4], by),
	   "attach: once made through the API, the client is this binary: --attach SOCKET NAME DEADLINE");
	ok(!strcmp(id, ID), "attach: ... and the container's id is the create's");
	strv_free(&argv);
	spec_free(&spec);

	spec_cold(&c, &job, "refused", "1.2", "/var/lib/isobox/work/x", "ab12", &spec);
	buf_free(&why);
	ok(!launch_client_argv(&c, &spec, now_ms() + 5000, &argv, &why, id) && argv.n == 0 && why.data &&
		   strstr(why.data, "name in use"),
	   "attach: a create dockerd refuses is no client, in docker's words (%s)", why.data ? why.data : "");
	spec_free(&spec);
	buf_free(&why);

	struct buf out = {0}, err = {0};
	int status = attach(sock, "isobox-main-0123456789abcdef", "ping\n", &out, &err);
	ok(status == 7, "attach: it exits with the container's status (%d)", status);
	ok(is(&out, "ping\n") && is(&err, "err\n"),
	   "attach: stdin reaches the container, its frames come out on stdout and stderr");
	buf_free(&out);
	buf_free(&err);

	status = attach(sock, "unstartable", "", &out, &err);
	ok(status == 125 && out.len == 0 && err.data && strstr(err.data, "runsc did not start"),
	   "attach: a start dockerd refuses is 125, docker's words on stderr (%.*s)", (int)err.len,
	   err.data ? err.data : "");
	buf_free(&out);
	buf_free(&err);
	status = attach(sock, "Not/Ours", "", &out, &err);
	ok(status == 125 && err.data && strstr(err.data, "not a name of ours"),
	   "attach: a name that is not ours never reaches a path");
	buf_free(&out);
	buf_free(&err);

	kill(server, SIGKILL);
	waitpid(server, NULL, 0);
	close(log_fd);
	conf_free(&c);
	registry_free(&r);
	rmdir(dir);
}
