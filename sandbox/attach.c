/*
 * attach.c: the client that holds a long-lived sandbox's stdin, stdout and
 * stderr (warm, session, volume files, outputs): `isobox-fcgi --attach`,
 * which launch_client_argv names once the container is made.
 *
 * It does what `docker start --attach --interactive` did, through dockerd's
 * API: attach, ask for the exit, start; then copy its stdin to the
 * container and the container's output frames to its stdout and stderr,
 * until the stream ends; and it exits with the container's status. The
 * docker CLI was a Go process of about 40 MB for each live sandbox and
 * 0.1-0.15 CPU-s to start (docs/PERFORMANCE.md); this is the worker's own
 * binary, run again (/proc/self/exe: the same build as the worker, even if
 * a newer one was installed since).
 */
#define _GNU_SOURCE
#include "launch.h"
#include "demux.h"
#include "docker.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* What the CLI exits with when dockerd would not start the container. */
#define ATTACH_FAILED 125

/* The container's output, cut into stdout and stderr: false when either
 * of ours is gone (its reader left). */
static bool write_frames(struct demux *d, const char *p, size_t n)
{
	while (n > 0) {
		int fd;
		const char *data;
		size_t len;
		size_t used = demux_feed(d, p, n, &fd, &data, &len);
		if (len > 0 && !fd_write_all(fd == 1 ? 1 : 2, data, len))
			return false;
		p += used;
		n -= used;
	}
	return true;
}

/*
 * Copy stdin to the stream and the stream's frames out, until the stream
 * ends. stdin's bytes wait in `pending` while the container is not taking
 * them, so that its output is still read meanwhile (the agent answers as
 * it reads: neither side may wait on the other). At stdin's end the stream
 * is half-closed: the container's stdin ends (the create's StdinOnce).
 */
static void relay(int stream)
{
	struct demux d = {0};
	char pending[65536];
	size_t off = 0, len = 0;
	bool stdin_open = true;
	for (;;) {
		struct pollfd p[2] = {{.fd = stream, .events = POLLIN | (len > off ? POLLOUT : 0)},
				      {.fd = stdin_open && len == off ? 0 : -1, .events = POLLIN}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (p[1].revents) {
			ssize_t r = read(0, pending, sizeof pending);
			if (r > 0) {
				off = 0;
				len = (size_t)r;
			} else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
				stdin_open = false;
				shutdown(stream, SHUT_WR);
			}
		}
		if (p[0].revents & POLLOUT) {
			ssize_t w = send(stream, pending + off, len - off, MSG_NOSIGNAL);
			if (w > 0)
				off += (size_t)w;
			else if (w < 0 && errno != EAGAIN && errno != EINTR)
				return; /* dockerd closed it */
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			char chunk[65536];
			ssize_t r = read(stream, chunk, sizeof chunk);
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
				return;
			if (r > 0 && !write_frames(&d, chunk, (size_t)r))
				return;
		}
	}
}

int sandbox_attach(const char *docker_socket, const char *name, int64_t deadline)
{
	struct conf c = {.docker_socket = (char *)docker_socket}; /* all dockerd's API needs */
	struct buf why = {0}, wait = {0};
	int wait_fd = -1;
	/* A reader that leaves ends the copy (fd_write_all fails), not us: the
	 * container's status is still what we exit with. */
	signal(SIGPIPE, SIG_IGN);
	/* Its name in ps and top, where the command line says /proc/self/exe;
	 * only a name: nothing is lost if it is refused. */
	(void)prctl(PR_SET_NAME, "isobox-attach");
	if (!docker_plain_name(name)) {
		fprintf(stderr, "not a name of ours: %.100s\n", name);
		return ATTACH_FAILED;
	}
	int stream = launch_attach_start(&c, name, deadline, &why, &wait_fd, &wait);
	if (stream < 0) {
		fprintf(stderr, "%s\n", why.data ? why.data : "dockerd did not start the container");
		buf_free(&why);
		return ATTACH_FAILED;
	}
	relay(stream);
	close(stream);
	/* The stream has ended; dockerd answers the wait when the container
	 * has exited (a program may close its output and go on: the wait is
	 * the end, as for the CLI). */
	for (;;) {
		struct pollfd p = {.fd = wait_fd, .events = POLLIN};
		if (poll(&p, 1, -1) < 0 && errno == EINTR)
			continue;
		char chunk[4096];
		ssize_t r = read(wait_fd, chunk, sizeof chunk);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0 || wait.len + (size_t)r > 65536)
			break;
		buf_append(&wait, chunk, (size_t)r);
	}
	close(wait_fd);
	int code = launch_exit_code(&wait);
	buf_free(&wait);
	return code >= 0 ? code : ATTACH_FAILED;
}
