/*
 * preload.c: built by deploy/images/build.sh into every image as
 * /usr/local/lib/isobox/preload.so and named in /etc/ld.so.preload.
 * It changes no hardening flag (it runs as the program, inside the
 * sandbox) and only answers what runsc answers wrongly:
 *
 * - Extended attributes. The runsc we install (2024-07-29) answers
 *   lgetxattr(..., "security.selinux") with EBADF on a symlink and EACCES
 *   on a directory the program cannot read, where Linux says there is no
 *   such attribute (ENODATA) or that the file system keeps none (ENOTSUP);
 *   ls -l then prints an error per symlink. Those two errors become ENOTSUP
 *   for the path calls (a bad fd given to fgetxattr stays EBADF). Our
 *   seccomp profile cannot do this: this runsc answers every
 *   SCMP_ACT_ERRNO with EPERM, which ls prints too.
 * - statx and fstatat with AT_NO_AUTOMOUNT, which Debian 12's own runsc
 *   (2022, what deploy/setup.sh falls back to without bookworm-backports)
 *   refuses with EINVAL, so that `ls -l` and `stat` fail there. A sandbox
 *   has no automount points, so the flag cannot change an answer: the
 *   wrappers drop it. The 2024 runsc does not need them.
 * - errno after system(). glibc (Debian 13's) starts the shell with clone3
 *   and falls back to clone on ENOSYS, which our seccomp profile answers
 *   for clone3 (its flags are in memory, where a filter cannot see them).
 *   A system() that ran its command then leaves errno at ENOSYS, and Lua's
 *   os.execute, which reads errno, reports "Function not implemented" for
 *   every command that exits non-zero. A call that ran keeps errno.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buf)
{
	return (int)syscall(SYS_statx, dirfd, path, flags & ~AT_NO_AUTOMOUNT, mask, buf);
}

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "fstatat below assumes struct stat is the kernel's (x86_64, aarch64)"
#endif

/* struct stat is the kernel's here, and fstatat is newfstatat. */
int fstatat(int dirfd, const char *path, struct stat *buf, int flags)
{
	return (int)syscall(SYS_newfstatat, dirfd, path, buf, flags & ~AT_NO_AUTOMOUNT);
}

int fstatat64(int dirfd, const char *path, struct stat64 *buf, int flags)
{
	return (int)syscall(SYS_newfstatat, dirfd, path, buf, flags & ~AT_NO_AUTOMOUNT);
}

/* EBADF and EACCES from a path call mean "no attribute here" (see above). */
static ssize_t no_attribute(ssize_t r)
{
	if (r < 0 && (errno == EBADF || errno == EACCES))
		errno = ENOTSUP;
	return r;
}

ssize_t getxattr(const char *path, const char *name, void *value, size_t size)
{
	return no_attribute(syscall(SYS_getxattr, path, name, value, size));
}

ssize_t lgetxattr(const char *path, const char *name, void *value, size_t size)
{
	return no_attribute(syscall(SYS_lgetxattr, path, name, value, size));
}

ssize_t listxattr(const char *path, char *list, size_t size)
{
	return no_attribute(syscall(SYS_listxattr, path, list, size));
}

ssize_t llistxattr(const char *path, char *list, size_t size)
{
	return no_attribute(syscall(SYS_llistxattr, path, list, size));
}

int system(const char *command)
{
	static int (*real)(const char *);
	if (!real)
		real = (int (*)(const char *))dlsym(RTLD_NEXT, "system");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	int saved = errno;
	int r = real(command);
	if (r != -1)
		errno = saved;
	return r;
}
