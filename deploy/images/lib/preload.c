/*
 * preload.c: built by deploy/images/build.sh into every image as
 * /usr/local/lib/isobox/preload.so and named in /etc/ld.so.preload.
 *
 * Why: coreutils 9.1 (ls -l, stat, cp -a, ...) asks statx() and fstatat()
 * for AT_NO_AUTOMOUNT, and the runsc we ship refuses that flag with
 * EINVAL, so `ls -la` fails in every image. A sandbox has no automount
 * points, so the flag cannot change an answer there: these wrappers drop
 * it and make the system call. Nothing else is changed, and no hardening
 * flag is touched (this runs as the program, inside the sandbox).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
