/* base.c: logging, fatal errors, allocation, buffers. */
#define _GNU_SOURCE
#include "base.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

PRINTF(1, 0) static void vlog(const char *fmt, va_list ap)
{
	char line[1024];
	/* RFC 3339 UTC with milliseconds: the log has no other clock, and
	 * rotated files are read side by side with Caddy's and dockerd's. */
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	int n = (int)strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
	n += snprintf(line + n, sizeof line - (size_t)n, ".%03ldZ isobox[%d]: ",
		      ts.tv_nsec / 1000000, (int)getpid());
	vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	/* One write per line, so lines from several workers never interleave. */
	size_t len = strnlen(line, sizeof line - 2);
	line[len++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, len);
	(void)w;
}

void log_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
	exit(1);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

PRINTF(1, 0) static char *xvasprintf(const char *fmt, va_list ap)
{
	char *s;
	if (vasprintf(&s, fmt, ap) < 0)
		die("out of memory");
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

static int64_t clock_ms(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

int64_t wall_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}

/* Field 22 of /proc/PID/stat: its start time in clock ticks since boot. */
static bool start_time(pid_t pid, unsigned long long *out)
{
	char path[64], data[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	autoclose int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, data, sizeof data - 1);
	if (n <= 0)
		return false;
	data[n] = '\0';
	char *p = strrchr(data, ')'); /* the command name may hold spaces */
	if (!p)
		return false;
	for (int field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p && sscanf(p + 1, "%llu", out) == 1;
}

const char *process_id(void)
{
	static char id[48];
	static pid_t for_pid;
	pid_t self = getpid();
	if (for_pid != self) { /* a fork is another process */
		unsigned long long st = 0;
		start_time(self, &st);
		snprintf(id, sizeof id, "%d.%llu", (int)self, st);
		for_pid = self;
	}
	return id;
}

bool process_alive(const char *id)
{
	int pid;
	unsigned long long want, have;
	if (sscanf(id, "%d.%llu", &pid, &want) != 2 || pid <= 0)
		return false;
	return start_time(pid, &have) && have == want;
}

void buf_append(struct buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		b->data = xrealloc(b->data, cap);
		b->cap = cap;
	}
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	autofree char *s = xvasprintf(fmt, ap);
	va_end(ap);
	buf_append(b, s, strlen(s));
}

void buf_free(struct buf *b)
{
	free(b->data);
	*b = (struct buf){0};
}

bool read_file(const char *path, size_t max, struct buf *out, char *err, size_t errlen)
{
	autoclose int fd = open(path, O_RDONLY | O_CLOEXEC);
	char chunk[8192];
	ssize_t n = 0;
	if (fd < 0)
		goto fail;
	buf_append(out, "", 0);
	while ((n = read(fd, chunk, sizeof chunk)) > 0) {
		if (out->len + (size_t)n > max) {
			snprintf(err, errlen, "%s: larger than %zu bytes", path, max);
			buf_free(out);
			return false;
		}
		buf_append(out, chunk, (size_t)n);
	}
	if (n == 0)
		return true;
fail:
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
	buf_free(out);
	return false;
}

bool read_secret(const char *path, size_t max, char **out, char *err, size_t errlen)
{
	struct buf text = {0};
	struct stat st;
	autoclose int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return false;
	}
	if (st.st_mode & 0007) {
		snprintf(err, errlen, "%s is readable by anyone: chmod 0640 it", path);
		return false;
	}
	if (!read_file(path, max, &text, err, errlen))
		return false;
	while (text.len && (text.data[text.len - 1] == '\n' || text.data[text.len - 1] == '\r'))
		text.len--;
	*out = xstrndup(text.data, text.len);
	explicit_bzero(text.data, text.len);
	buf_free(&text);
	return true;
}

void strv_push(struct strv *s, const char *str)
{
	if (s->n + 2 > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->v = xrealloc(s->v, s->cap * sizeof *s->v);
	}
	s->v[s->n++] = xstrdup(str);
	s->v[s->n] = NULL;
}

void strv_pushf(struct strv *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	autofree char *str = xvasprintf(fmt, ap);
	va_end(ap);
	strv_push(s, str);
}

void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	*s = (struct strv){0};
}

char *path_join(const char *dir, const char *path)
{
	if (path[0] == '/' || !dir || !dir[0])
		return xstrdup(path);
	return xasprintf("%s/%s", dir, path);
}

bool fd_hung_up(int fd)
{
	struct pollfd p = {.fd = fd};
	return fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

int unix_request(const char *path, const char *request)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	size_t n = strlen(request);
	if (strlen(path) >= sizeof a.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(a.sun_path, path, strlen(path));
	/* Non-blocking: a daemon too busy to accept (its backlog full) is
	 * an error at once, not a wait without a deadline; the request fits a
	 * fresh socket's buffer whole. */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 || write(fd, request, n) != (ssize_t)n) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

ssize_t read_by(int fd, int64_t deadline, void *buf, size_t len)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int64_t left = deadline - now_ms();
		int ready = left > 0 ? poll(&p, 1, (int)left) : 0;
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		ssize_t r = read(fd, buf, len);
		if (r >= 0 || (errno != EINTR && errno != EAGAIN))
			return r;
	}
}

bool fd_write_all(int fd, const void *p, size_t n)
{
	const char *at = p;
	while (n > 0) {
		ssize_t w = write(fd, at, n);
		if (w < 0 && errno == EAGAIN)
			poll(&(struct pollfd){.fd = fd, .events = POLLOUT}, 1, -1);
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (w <= 0)
			return false;
		at += w;
		n -= (size_t)w;
	}
	return true;
}

ssize_t read_line_by(int fd, int64_t deadline, char *buf, size_t len)
{
	size_t got = 0;
	buf[0] = '\0';
	while (got < len - 1 && !memchr(buf, '\n', got)) {
		ssize_t r = read_by(fd, deadline, buf + got, len - 1 - got);
		if (r < 0 && errno == ETIMEDOUT)
			return -1;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
	return (ssize_t)got;
}

void random_hex(char *out, size_t n)
{
	unsigned char rnd[64];
	if (n > sizeof rnd || getrandom(rnd, n, 0) != (ssize_t)n)
		die("getrandom failed");
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", rnd[i]);
}
