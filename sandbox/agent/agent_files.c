/*
 * agent_files.c: paths under the workspace, and the file requests (put,
 * get, list, del) of the session agent (agent.c). Everything in the
 * workspace may have been made by the untrusted code: no symbolic link is
 * ever followed, and no FIFO, socket or device is ever opened (open_as).
 * Each component is opened with O_NOFOLLOW and, because this gVisor
 * follows a final link for O_DIRECTORY|O_NOFOLLOW, without O_DIRECTORY,
 * its type checked with fstat.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_files.h"
#include "agent_wire.h"

int ws_fd = -1;

/* --- Paths under the workspace ------------------------------------------ */

/* Relative, no empty, "." or ".." component, no NUL: what a worker may name. */
bool valid_path(const char *p, size_t n, struct why *w)
{
	if (n == 0 || strlen(p) != n)
		return set_why(w, EINVAL, "an empty path or one holding a NUL");
	for (const char *c = p;;) {
		size_t k = strcspn(c, "/");
		if (k == 0 || (k == 1 && c[0] == '.') || (k == 2 && c[0] == '.' && c[1] == '.'))
			return set_why(w, EINVAL, "%s: not a plain relative path", p);
		if (!c[k])
			return true;
		c += k + 1;
	}
}

/* A path from the request (len bytes), NUL-terminated into p: valid? */
bool in_path(char *p, unsigned long long len, struct why *w)
{
	in_exact(p, (size_t)len);
	p[len] = '\0';
	return valid_path(p, (size_t)len, w);
}

/* What a file of type t (S_IFMT bits) is, in a message. */
static const char *kind_of(mode_t t)
{
	switch (t & S_IFMT) {
	case S_IFREG: return "a regular file";
	case S_IFDIR: return "a directory";
	case S_IFLNK: return "a symbolic link";
	case S_IFIFO: return "a named pipe (FIFO)";
	case S_IFSOCK: return "a socket";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	default: return "a special file";
	}
}

/* shown is of type t where a want was asked for: the errno tells the
 * worker which case it is (a link first: it is never followed). */
static bool wrong_type(struct why *w, mode_t t, mode_t want, const char *shown)
{
	t &= S_IFMT;
	int err = t == S_IFLNK ? ELOOP : want == S_IFDIR ? ENOTDIR : t == S_IFDIR ? EISDIR : EINVAL;
	return set_why(w, err, "%s: is %s, not %s", shown, kind_of(t), kind_of(want));
}

/* Opens name in dir as a want (S_IFREG or S_IFDIR) with flags: -1 and *w
 * if it is anything else. Its type is looked at first, so that a FIFO, a
 * socket or a device is never opened (that can block, fail with ENXIO or
 * act on a device); one swapped in meanwhile is caught by O_NONBLOCK (no
 * wait for a FIFO's other end) and fstat before any read, write or
 * truncation. O_NOFOLLOW, and not O_DIRECTORY, which follows a final link
 * in gVisor. */
static int open_as(int dir, const char *name, int flags, mode_t want, struct stat *st, const char *shown,
		   struct why *w)
{
	if (!fstatat(dir, name, st, AT_SYMLINK_NOFOLLOW) && (st->st_mode & S_IFMT) != want)
		return wrong_type(w, st->st_mode, want, shown), -1;
	int fd = openat(dir, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0) {
		/* What it is now says more than ELOOP. ENXIO comes from a FIFO,
		 * a socket or a device only: one was there, swapped in and out. */
		int err = errno;
		if (!fstatat(dir, name, st, AT_SYMLINK_NOFOLLOW) && (st->st_mode & S_IFMT) != want)
			return wrong_type(w, st->st_mode, want, shown), -1;
		if (err == ENXIO)
			return wrong_type(w, 0, want, shown), -1;
		return set_why(w, err, "%s: %s", shown, strerror(err)), -1;
	}
	if (fstat(fd, st))
		set_why(w, errno, "%s: %s", shown, strerror(errno));
	else if ((st->st_mode & S_IFMT) != want)
		wrong_type(w, st->st_mode, want, shown);
	else
		return fd;
	close(fd);
	return -1;
}

/* Opens the directory name in dir (made if missing and make). */
static int open_dir_at(int dir, const char *name, bool make, const char *shown, struct why *w)
{
	struct stat st;
	struct why first = {0};
	int fd = open_as(dir, name, O_RDONLY, S_IFDIR, &st, shown, &first);
	if (fd < 0 && make && first.err == ENOENT) {
		if (mkdirat(dir, name, 0755) && errno != EEXIST)
			return set_why(w, errno, "%s: %s", shown, strerror(errno)), -1;
		return open_as(dir, name, O_RDONLY, S_IFDIR, &st, shown, w);
	}
	if (fd < 0 && !w->err)
		*w = first;
	return fd;
}

/* The directory holding path's last component (*leaf), each component
 * opened as a directory, missing ones made if make. -1 and *w on failure. */
int open_parent(char *path, bool make, const char **leaf, struct why *w)
{
	int dir = fcntl(ws_fd, F_DUPFD_CLOEXEC, 0);
	char *c = path, *slash;
	if (dir < 0)
		set_why(w, errno, "%s", strerror(errno));
	for (; dir >= 0 && (slash = strchr(c, '/')); c = slash + 1) {
		*slash = '\0'; /* path now reads as the part walked: the message */
		int next = open_dir_at(dir, c, make, path, w);
		*slash = '/';
		close(dir);
		dir = next;
	}
	*leaf = c;
	return dir;
}

/* Opens path (valid) as a regular file with flags. O_TRUNC is done here,
 * once it is known to be one. */
int open_file(char *path, int flags, bool make, struct stat *st, struct why *w)
{
	const char *leaf;
	int dir = open_parent(path, make, &leaf, w);
	if (dir < 0)
		return -1;
	int fd = open_as(dir, leaf, flags & ~O_TRUNC, S_IFREG, st, path, w);
	close(dir);
	if (fd >= 0 && (flags & O_TRUNC) && ftruncate(fd, 0)) {
		set_why(w, errno, "%s: %s", path, strerror(errno));
		fd_close(&fd);
	}
	return fd;
}

/* The next n bytes of the request stream into the file path. */
bool receive_file(char *path, unsigned long long len, unsigned long long n, struct why *w)
{
	struct stat st;
	int fd = in_path(path, len, w) ? open_file(path, O_WRONLY | O_CREAT | O_TRUNC, true, &st, w) : -1;
	bool ok = in_copy(fd, n, path, w) && fd >= 0;
	fd_close(&fd);
	return ok;
}

void put_request(const char *tag, unsigned long long path_len, unsigned long long data_len)
{
	struct why w = {0};
	char path[MAX_PATH + 1];
	receive_file(path, path_len, data_len, &w);
	send_end(tag, &w, "", 0);
}

void get_request(const char *tag, unsigned long long max, unsigned long long path_len)
{
	static char b[AGENT_MAX_CHUNK];
	struct why w = {0};
	struct stat st = {0};
	char path[MAX_PATH + 1];
	int fd = in_path(path, path_len, &w) ? open_file(path, O_RDONLY, false, &st, &w) : -1;
	if (fd >= 0 && (unsigned long long)st.st_size > max)
		set_why(&w, EFBIG, "%s: %lld bytes, over %llu", path, (long long)st.st_size, max);
	/* Only the size that was checked is sent, should the file grow. */
	for (off_t left = st.st_size; !w.err && left > 0;) {
		ssize_t n = read(fd, b, left < AGENT_MAX_CHUNK ? (size_t)left : AGENT_MAX_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			set_why(&w, errno, "%s: %s", path, strerror(errno));
		if (n <= 0)
			break;
		send_frame("data", tag, -1, b, (size_t)n);
		left -= n;
	}
	fd_close(&fd);
	send_end(tag, &w, "", 0);
}

void list_request(const char *tag, unsigned long long path_len)
{
	struct why w = {0};
	char path[MAX_PATH + 1], line[80];
	struct buf out = {0};
	const char *leaf;
	int fd = -1;
	in_exact(path, (size_t)path_len);
	path[path_len] = '\0';
	if (path_len == 0 || !strcmp(path, ".")) { /* not a dup: readdir would move ws_fd */
		fd = open_dir_at(ws_fd, ".", false, ".", &w);
	} else if (valid_path(path, (size_t)path_len, &w)) {
		int dir = open_parent(path, false, &leaf, &w);
		if (dir >= 0)
			fd = open_dir_at(dir, leaf, false, path, &w);
		fd_close(&dir);
	}
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d && !w.err)
		set_why(&w, errno, "%s: %s", path, strerror(errno));
	for (struct dirent *e; d && (e = readdir(d));) {
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue; /* gone since readdir */
		char type = S_ISREG(st.st_mode) ? 'f' : S_ISDIR(st.st_mode) ? 'd' : S_ISLNK(st.st_mode) ? 'l' : 'o';
		int h = snprintf(line, sizeof line, "%c %lld %lld %zu\n", type, (long long)st.st_size,
				 (long long)st.st_mtime, strlen(e->d_name));
		buf_add(&out, line, (size_t)h);
		buf_add(&out, e->d_name, strlen(e->d_name));
	}
	if (d)
		closedir(d);
	else
		fd_close(&fd);
	send_end(tag, &w, out.p, out.len);
	free(out.p);
}

/* Removes name in dir: a file, a link, or a directory with all it holds,
 * entered only through O_NOFOLLOW. 0, or -1 with errno. */
static int remove_at(int dir, const char *name)
{
	if (!unlinkat(dir, name, 0))
		return 0;
	struct why ignored = {0};
	int err = errno, fd = err == EISDIR || err == EPERM ? open_dir_at(dir, name, false, name, &ignored) : -1;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		fd_close(&fd);
		errno = err; /* not a directory after all: why unlink failed */
		return -1;
	}
	/* Another pass if it is not empty yet: entries removed while it is
	 * read may make readdir skip some. */
	err = 0;
	for (int pass = 0; pass < 3; pass++, rewinddir(d)) {
		for (struct dirent *e; !err && (e = readdir(d));)
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && remove_at(dirfd(d), e->d_name))
				err = errno;
		if (!err && unlinkat(dir, name, AT_REMOVEDIR))
			err = errno;
		if (err != ENOTEMPTY)
			break;
		err = 0;
	}
	closedir(d);
	errno = err;
	return err ? -1 : 0;
}

void del_request(const char *tag, unsigned long long path_len)
{
	struct why w = {0};
	char path[MAX_PATH + 1];
	const char *leaf;
	int dir = in_path(path, path_len, &w) ? open_parent(path, false, &leaf, &w) : -1;
	if (dir >= 0 && remove_at(dir, leaf))
		set_why(&w, errno, "%s: %s", path, strerror(errno));
	fd_close(&dir);
	send_end(tag, &w, "", 0);
}
