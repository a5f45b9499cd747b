/*
 * base.h: the few helpers every layer uses.
 *
 * die() and the x*alloc() family are for the truly fatal (start-up errors,
 * out of memory): a worker that cannot allocate has nothing better to do.
 * Everything that can go wrong because of a request is reported through a
 * struct fault (fault.h) instead, and answered.
 */
#ifndef ISOBOX_BASE_H
#define ISOBOX_BASE_H

#include "fault.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define PRINTF(a, b) __attribute__((format(printf, a, b)))

void log_msg(const char *fmt, ...) PRINTF(1, 2);
_Noreturn void die(const char *fmt, ...) PRINTF(1, 2);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) PRINTF(1, 2);

/* Milliseconds on the monotonic clock. */
int64_t now_ms(void);

/* n random bytes as 2n lowercase hex digits and a NUL into out (2n + 1
 * bytes): ids, ETags, nonces. getrandom cannot fail for so few bytes. */
void random_hex(char *out, size_t n);
/* Milliseconds since the epoch (the wall clock): for times that outlive
 * the process, such as a session's creation. */
int64_t wall_ms(void);

/* "PID.STARTTIME" of this process: a name that no later process gets, even
 * when the kernel gives its pid again (the start time, in clock ticks since
 * boot, differs). Who made a container or a work dir (sandbox/owner.h),
 * and who holds a mark in the store (conf/store/store.h). */
const char *process_id(void);
/* Is the process named by process_id() still running? */
bool process_alive(const char *id);

/* Cleanup attributes: the variable is released when it goes out of scope. */
static inline void free_ptr(void *p) { free(*(void **)p); }
static inline void close_fd(int *fd) { if (*fd >= 0) close(*fd); *fd = -1; }
#define autofree __attribute__((cleanup(free_ptr)))
#define autoclose __attribute__((cleanup(close_fd)))

/* Has the other end of this connection hung up (-1: no connection)? Asked
 * with no events: a peer that only has nothing more to send is not gone. */
bool fd_hung_up(int fd);

/* One request to a local daemon (isobox-volumed, dockerd): connect to the
 * unix socket at path and write request whole. The connection's fd
 * (close-on-exec, non-blocking: read it after poll), or -1 with errno set. */
int unix_request(const char *path, const char *request);
/* One read of fd once it is readable, by deadline: the bytes read, 0 at
 * its end, -1 with errno (ETIMEDOUT: the deadline came first). Signals
 * and spurious wake-ups are waited through. */
ssize_t read_by(int fd, int64_t deadline, void *buf, size_t len);
/* Write all n bytes of p to fd, through signals (and, for a non-blocking
 * fd, waiting until it takes more): false when it will not take them. */
bool fd_write_all(int fd, const void *p, size_t n);
/* Read from fd until a newline, the end, an error or len - 1 bytes, by
 * deadline: the bytes read, NUL-terminated in buf; -1 if the deadline
 * came first. */
ssize_t read_line_by(int fd, int64_t deadline, char *buf, size_t len);

/* A growable byte buffer. Always NUL-terminated after data[len]. */
struct buf {
	char *data;
	size_t len, cap;
};
void buf_append(struct buf *b, const void *p, size_t n);
void buf_printf(struct buf *b, const char *fmt, ...) PRINTF(2, 3);
void buf_free(struct buf *b);
/* Resolve `path` against `dir` unless it is absolute. */
char *path_join(const char *dir, const char *path);

/* Read a whole file (at most max bytes) into *out; on failure *out is left empty. */
bool read_file(const char *path, size_t max, struct buf *out, char *err, size_t errlen);
/* A secret's file (a password, a key): not a symlink, not readable by
 * anyone (0640 at most), at most max bytes; *out is its text without the
 * trailing newlines (the caller frees it, wiping it first). */
bool read_secret(const char *path, size_t max, char **out, char *err, size_t errlen);

/* A NULL-terminated vector of owned strings (an argv). */
struct strv {
	char **v;
	size_t n, cap;
};
void strv_push(struct strv *s, const char *str);
void strv_pushf(struct strv *s, const char *fmt, ...) PRINTF(2, 3);
void strv_free(struct strv *s);

#endif
