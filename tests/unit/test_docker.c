#define _GNU_SOURCE
/* The kill and the OOM event (sandbox/docker.h) against a stand-in dockerd:
 * a unix socket in a temporary directory whose child process answers a
 * kill (204; 409 for one that is not running) and the event log (an `oom`
 * event for one container, none for the others), and writes each request
 * line to a pipe; then against docker CLI stand-ins (/bin/true,
 * /bin/false) when the socket cannot be reached. No docker. */
#include "tap.h"
#include "fixtures.h"
#include "../../sandbox/docker.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OOM_FILTER "filters=%7B%22container%22%3A%5B%22oomed%22%5D%2C%22event%22%3A%5B%22oom%22%5D%7D"

static void serve(int listener, int log_fd)
{
	for (;;) {
		int fd = accept(listener, NULL, NULL);
		if (fd < 0)
			continue;
		char req[1024] = "";
		ssize_t got = read(fd, req, sizeof req - 1);
		req[got > 0 ? got : 0] = '\0';
		req[strcspn(req, "\r")] = '\0';
		dprintf(log_fd, "%s\n", req);
		if (strstr(req, "POST /containers/ended/kill "))
			dprintf(fd, "HTTP/1.1 409 Conflict\r\nContent-Length: 0\r\n\r\n");
		else if (strstr(req, "POST /containers/"))
			dprintf(fd, "HTTP/1.1 204 No Content\r\n\r\n");
		else if (strstr(req, "GET /events?") && strstr(req, OOM_FILTER))
			dprintf(fd, "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n"
				    "{\"status\":\"oom\",\"id\":\"abc\",\"Type\":\"container\",\"Action\":\"oom\"}\n");
		else if (strstr(req, "GET /events?"))
			dprintf(fd, "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n");
		else
			dprintf(fd, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
		close(fd);
	}
}

UNIT_TEST(test_docker)
{
	char dir[] = "/tmp/isobox-docker.XXXXXX";
	autofree char *sock = NULL;
	int log_fd;
	pid_t server = fixture_dockerd(dir, serve, &sock, &log_fd);
	ok(server > 0, "docker: a stand-in dockerd listens");

	/* The CLI stand-in fails: only the API can make these pass. */
	struct conf c = {.docker = "/bin/false", .docker_socket = sock};
	struct docker_kill none = DOCKER_KILL_NONE;
	ok(!docker_kill_started(&none), "docker: no kill until one is started");
	struct docker_kill k = docker_kill_start(&c, "running");
	ok(k.fd >= 0 && k.pid == -1 && docker_kill_started(&k), "docker: a kill goes to the API, no process");
	docker_kill_wait(&k, now_ms() + 5000);
	ok(k.fd == -1 && k.pid == -1, "docker: its answer read, the connection closed");
	k = docker_kill_start(&c, "ended");
	docker_kill_wait(&k, now_ms() + 5000);
	ok(!docker_kill_started(&k), "docker: a kill of one that ended (409) is over too");
	k = docker_kill_start(&c, "Not/Plain");
	ok(k.fd == -1 && k.pid > 0, "docker: a name that is not ours is never put in a path (the CLI has it)");
	docker_kill_wait(&k, now_ms() + 5000);

	time_t since = time(NULL) - 5;
	ok(docker_oom_seen(&c, "oomed", since, now_ms() + 5000), "docker: an oom event in the log is seen");
	ok(!docker_oom_seen(&c, "calm", since, now_ms() + 5000), "docker: a log without one says none");

	kill(server, SIGKILL);
	waitpid(server, NULL, 0);
	char log[4096] = "";
	ssize_t got = read(log_fd, log, sizeof log - 1);
	log[got > 0 ? got : 0] = '\0';
	close(log_fd);
	ok(strstr(log, "POST /containers/running/kill HTTP/1.0\n") != NULL, "docker: the kill, by name");
	char want[64];
	snprintf(want, sizeof want, "GET /events?since=%lld&until=", (long long)since - 1);
	ok(strstr(log, want) && strstr(log, OOM_FILTER) && !strstr(log, "Not/Plain"),
	   "docker: the event log from a second before the start, filtered to the container's oom");

	/* dockerd out of reach: the CLI, its exit the answer. */
	unlink(sock);
	struct conf cli = {.docker = "/bin/true", .docker_socket = sock};
	k = docker_kill_start(&cli, "by-cli");
	pid_t pid = k.pid;
	ok(k.fd == -1 && pid > 0, "docker: without the API, a docker kill process");
	docker_kill_wait(&k, now_ms() + 5000);
	ok(k.pid == -1 && kill(pid, 0) < 0, "docker: that process reaped");
	ok(!docker_oom_seen(&c, "oomed", since, now_ms() + 5000),
	   "docker: without the API, docker events that fail saw nothing");
	rmdir(dir);
}
