/*
 * volumed.c: isobox-volumed, the one piece of isobox that runs as root.
 *
 *   isobox-volumed --dir DIR --socket PATH --user USER
 *
 * A volume's size is a hard quota only if the kernel enforces it, and the
 * kernel enforces a filesystem's size: each volume is an ext4 image file
 * (DIR/<id>.img, space reserved with fallocate) loop-mounted at DIR/<id>
 * (DIR is root's alone, 0700),
 * which docker binds into a sandbox at /memory. Mounting needs root, and
 * the workers have no privilege at all, so this small daemon does it for
 * them, and nothing else:
 *
 *   create <id> <bytes> <backend>
 *                         make, format and mount a volume whose root is
 *                         the backend's sandbox user's (../uids.h) -> "ok"
 *   remove <id>           unmount it and delete its image -> "ok"
 *   usage <id>            "ok <used bytes> <size bytes> <backend>" of its
 *                         filesystem; the backend whose user owns its root
 *                         ("none": neither's)
 *
 * one request per connection, one line, answered "ok ..." or "err <why>".
 * Only USER (the workers) and root may connect (SO_PEERCRED). An id is 32
 * lowercase hex digits made by the worker: no path or option ever comes
 * from a caller. The image is written only by the kernel's ext4 (sandboxes
 * see the mounted filesystem, never the image), so mounting it again after
 * a reboot mounts nothing a sandbox made. Programs run with argv arrays,
 * never a shell.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../uids.h"

#define ID_LEN 32
#define MIN_BYTES (16LL << 20)
#define MAX_BYTES (1LL << 40)

/* Whose a volume's root is: the sandbox user's host id on each backend. */
static const struct {
	const char *backend;
	unsigned id;
} owners[] = {{"gvisor", SANDBOX_ID}, {"runc", RUNC_HOST_ID}};

static const char *dir;
static uid_t worker_uid;

static void vsay(const char *fmt, va_list ap)
{
	fputs("isobox-volumed: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

static _Noreturn void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	exit(1);
}

/* Fill why and return false, so that a step can `return because(...)`. */
static bool because(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return false;
}

static bool valid_id(const char *id)
{
	size_t n = 0;
	for (; id[n]; n++)
		if (!((id[n] >= '0' && id[n] <= '9') || (id[n] >= 'a' && id[n] <= 'f')))
			return false;
	return n == ID_LEN;
}

/* Run argv (a fixed program with our own arguments) and wait: its exit
 * status, or -1. Its output goes to our log. */
static int run(char *const argv[])
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, 0);
		closefrom(3);
		execv(argv[0], argv);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool mounted(const char *path)
{
	struct stat here, parent;
	char up[512];
	snprintf(up, sizeof up, "%s/..", path);
	return stat(path, &here) == 0 && stat(up, &parent) == 0 && here.st_dev != parent.st_dev;
}

static bool mount_image(const char *img, const char *at, char *why, size_t n)
{
	if (mkdir(at, 0755) < 0 && errno != EEXIST)
		return because(why, n, "mkdir: %s", strerror(errno));
	if (mounted(at))
		return true;
	/* mount(8) sets the loop device up, with autoclear: it goes with the
	 * unmount. */
	char *const argv[] = {"/usr/bin/mount", "-t", "ext4", "-o", "loop,nosuid,nodev,noatime",
			      (char *)img, (char *)at, NULL};
	if (run(argv) != 0)
		return because(why, n, "mount failed");
	return true;
}

static void paths(const char *id, char img[512], char at[512])
{
	snprintf(img, 512, "%s/%s.img", dir, id);
	snprintf(at, 512, "%s/%s", dir, id);
}

static bool create(const char *id, long long bytes, const char *backend, char *why, size_t n)
{
	char img[512], at[512], root_owner[64] = "";
	paths(id, img, at);
	if (bytes < MIN_BYTES || bytes > MAX_BYTES)
		return because(why, n, "size out of range");
	for (size_t i = 0; i < sizeof owners / sizeof owners[0]; i++)
		if (!strcmp(backend, owners[i].backend))
			snprintf(root_owner, sizeof root_owner, "nodiscard,root_owner=%u:%u", owners[i].id, owners[i].id);
	if (!root_owner[0])
		return because(why, n, "no such backend");
	int fd = open(img, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return because(why, n, "image: %s", strerror(errno));
	/* Reserved now, so that the host's disk never promises more than it
	 * has (and mkfs must not discard: on a file that punches holes). */
	int rc = posix_fallocate(fd, 0, bytes);
	close(fd);
	char *const mkfs[] = {"/usr/sbin/mkfs.ext4", "-q", "-F", "-m", "0", "-E", root_owner,
			      img, NULL};
	if (rc != 0)
		snprintf(why, n, "no room for %lld bytes: %s", bytes, strerror(rc));
	else if (run(mkfs) != 0)
		snprintf(why, n, "mkfs.ext4 failed");
	else if (mount_image(img, at, why, n)) {
		/* mkfs's lost+found (root's, unreadable in the sandbox): a new
		 * volume is empty. Nothing but mkfs has written there yet. */
		char lf[600];
		snprintf(lf, sizeof lf, "%s/lost+found", at);
		rmdir(lf);
		return true;
	}
	unlink(img);
	rmdir(at);
	return false;
}

static bool remove_volume(const char *id, char *why, size_t n)
{
	char img[512], at[512];
	paths(id, img, at);
	if (mounted(at) && umount2(at, UMOUNT_NOFOLLOW) < 0)
		return errno == EBUSY ? because(why, n, "busy") : because(why, n, "umount: %s", strerror(errno));
	if (unlink(img) < 0 && errno != ENOENT)
		return because(why, n, "image: %s", strerror(errno));
	rmdir(at);
	return true;
}

/* The mount point itself is the volume's root: lstat follows nothing that
 * a sandbox made. A sandbox may chmod its root, never chown it. */
static bool usage(const char *id, long long *used, long long *size, const char **backend, char *why, size_t n)
{
	char img[512], at[512];
	struct statvfs st;
	struct stat root;
	paths(id, img, at);
	if (!mounted(at) || statvfs(at, &st) < 0 || lstat(at, &root) < 0)
		return because(why, n, "not mounted");
	*size = (long long)st.f_blocks * (long long)st.f_frsize;
	*used = (long long)(st.f_blocks - st.f_bfree) * (long long)st.f_frsize;
	*backend = "none";
	for (size_t i = 0; i < sizeof owners / sizeof owners[0]; i++)
		if (root.st_uid == owners[i].id && root.st_gid == owners[i].id)
			*backend = owners[i].backend;
	return true;
}

/* One request on fd: read its line, act, answer. */
static void serve(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof cred;
	char line[160] = "", reply[300] = "", why[256] = "", id[64] = "", verb[16] = "", backend[16] = "";
	const char *owner = "";
	struct timeval tv = {.tv_sec = 5};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    (cred.uid != worker_uid && cred.uid != 0))
		return;
	ssize_t got = 0, r;
	while (got < (ssize_t)sizeof line - 1 && !strchr(line, '\n') &&
	       (r = read(fd, line + got, sizeof line - 1 - got)) > 0)
		got += r;
	line[got] = '\0';
	long long bytes = 0, used = 0, size = 0;
	int fields = sscanf(line, "%15s %63s %lld %15s", verb, id, &bytes, backend);
	bool ok = false;
	if (fields < 2 || !valid_id(id))
		snprintf(why, sizeof why, "bad request");
	else if (!strcmp(verb, "create") && fields == 4)
		ok = create(id, bytes, backend, why, sizeof why);
	else if (!strcmp(verb, "remove"))
		ok = remove_volume(id, why, sizeof why);
	else if (!strcmp(verb, "usage"))
		ok = usage(id, &used, &size, &owner, why, sizeof why);
	else
		snprintf(why, sizeof why, "bad request");
	if (ok && !strcmp(verb, "usage"))
		snprintf(reply, sizeof reply, "ok %lld %lld %s\n", used, size, owner);
	else
		snprintf(reply, sizeof reply, ok ? "ok\n" : "err %s\n", why);
	if (write(fd, reply, strlen(reply)) < 0)
		say("could not answer: %s", strerror(errno));
	if (!ok)
		say("%s %s: %s", verb, valid_id(id) ? id : "?", why);
}

/* After a reboot or a restart: every volume's filesystem mounted again. */
static void mount_all(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		char id[ID_LEN + 1], img[512], at[512], why[256];
		if (n != ID_LEN + 4 || strcmp(e->d_name + ID_LEN, ".img"))
			continue;
		memcpy(id, e->d_name, ID_LEN);
		id[ID_LEN] = '\0';
		if (!valid_id(id))
			continue;
		paths(id, img, at);
		if (!mount_image(img, at, why, sizeof why))
			say("cannot mount %s: %s", img, why);
	}
	if (d)
		closedir(d);
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *user = NULL;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--dir"))
			dir = argv[i + 1];
		else if (!strcmp(argv[i], "--socket"))
			sock = argv[i + 1];
		else if (!strcmp(argv[i], "--user"))
			user = argv[i + 1];
		else
			die("usage: isobox-volumed --dir DIR --socket PATH --user USER");
	}
	if (!dir || !sock || !user || dir[0] != '/' || strlen(dir) > 300)
		die("usage: isobox-volumed --dir DIR --socket PATH --user USER");
	if (geteuid() != 0)
		die("runs as root: it mounts the volumes' filesystems");
	struct passwd *pw = getpwnam(user);
	if (!pw)
		die("no user %s", user);
	worker_uid = pw->pw_uid;
	signal(SIGPIPE, SIG_IGN);
	umask(022);
	/* Only root (dockerd, us) looks inside: the tenants' files are in
	 * there, and their ids are in /proc/mounts for anyone to read. */
	if ((mkdir(dir, 0700) < 0 && errno != EEXIST) || chmod(dir, 0700) < 0)
		die("%s: %s", dir, strerror(errno));
	mount_all();

	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(sock) >= sizeof a.sun_path)
		die("--socket: the path is too long");
	memcpy(a.sun_path, sock, strlen(sock));
	int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct stat st;
	if (lstat(sock, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(sock); /* a stale one of an earlier run */
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    chown(sock, 0, pw->pw_gid) < 0 || chmod(sock, 0660) < 0 ||
	    listen(lfd, SOMAXCONN) < 0) /* every worker may ask at once; a full backlog fails a request at once */
		die("%s: %s", sock, strerror(errno));
	say("serving on %s for %s, volumes in %s", sock, user, dir);
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EINTR)
				say("accept: %s", strerror(errno));
			continue;
		}
		serve(fd);
		close(fd);
	}
}
