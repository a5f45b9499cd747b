/*
 * workdir.c: the per-request code directory.
 *
 * The worker writes the request's files into a fresh directory under
 * conf.work_dir, which docker mounts read-only at /src. No sandbox can write
 * there, and every path is opened relative to a directory fd with O_NOFOLLOW
 * anyway, so the host never follows a link that untrusted code planted.
 */
#define _GNU_SOURCE
#include "workdir.h"
#include "owner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_DEPTH 8

bool sandbox_valid_path(const char *name, size_t max_len, struct fault *f)
{
	size_t len = strlen(name), depth = 1;
	if (len == 0)
		return fail(f, E_BAD_FILE_NAME, "file name is empty");
	if (len > max_len)
		return fail(f, E_BAD_FILE_NAME, "file name is longer than %zu bytes", max_len);
	if (name[0] == '/')
		return fail(f, E_BAD_FILE_NAME, "file name \"%.64s\" is absolute", name);
	for (const char *p = name; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch < 0x20 || ch == 0x7f || ch == '\\')
			return fail(f, E_BAD_FILE_NAME,
				    "a file name has a control character or backslash");
		depth += ch == '/';
	}
	if (depth > MAX_DEPTH)
		return fail(f, E_BAD_FILE_NAME, "file name \"%.64s\" is nested too deep", name);
	/* Each component: not empty, not "." or "..", and nothing a tool could
	 * read as an option: "-x", "@file" (more options from a file, for gcc,
	 * g++, rustc and javac), or "+x" (bash, whose run command gets the
	 * entry file's name as it is: `bash +v` reads the script from stdin). */
	for (const char *p = name; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return fail(f, E_BAD_FILE_NAME,
				    "file name \"%.64s\" has an empty, \".\" or \"..\" part", name);
		if (p[0] == '-' || p[0] == '@' || p[0] == '+')
			return fail(f, E_BAD_FILE_NAME,
				    "file name \"%.64s\" has a part starting with '%c'", name, p[0]);
		p += n;
		if (*p == '/' && !*++p)
			return fail(f, E_BAD_FILE_NAME, "file name \"%.64s\" ends with '/'", name);
	}
	return true;
}

/* Write one file at a relative path below dirfd, making directories on the way. */
static bool write_file(int dirfd, const struct sandbox_file *file)
{
	char *path = xstrdup(file->name), *p = path, *slash;
	int fd = dup(dirfd);
	bool ok = fd >= 0;
	while (ok && (slash = strchr(p, '/'))) {
		*slash = '\0';
		if (mkdirat(fd, p, 0755) < 0 && errno != EEXIST)
			ok = false;
		int sub = ok ? openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		close(fd);
		fd = sub;
		ok = fd >= 0;
		p = slash + 1;
	}
	if (ok) {
		int out = openat(fd, p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		ok = out >= 0 && fd_write_all(out, file->data, file->len);
		if (out >= 0 && close(out) < 0)
			ok = false;
	}
	if (fd >= 0)
		close(fd);
	free(path);
	return ok;
}

bool workdir_create(const struct conf *c, const struct sandbox_job *job, char **dir_out,
		    struct fault *f)
{
	char *dir = xasprintf("%s/%s.%s.XXXXXX", c->work_dir, c->instance, sandbox_owner_id());
	*dir_out = NULL;
	if (!mkdtemp(dir)) {
		fail(f, E_SANDBOX_UNAVAILABLE, "cannot make a work directory: %s", strerror(errno));
		free(dir);
		return false;
	}
	autoclose int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* Readable by the sandbox user (65534); writable by nobody but us. */
	bool ok = dirfd >= 0 && fchmod(dirfd, 0755) == 0;
	for (size_t i = 0; ok && i < job->n_files; i++)
		ok = write_file(dirfd, &job->files[i]);
	if (!ok) {
		fail(f, E_SANDBOX_UNAVAILABLE, "cannot write the code: %s", strerror(errno));
		workdir_remove(dir);
		free(dir);
		return false;
	}
	*dir_out = dir;
	return true;
}

static void remove_at(int parent, const char *name, int depth)
{
	if (unlinkat(parent, name, 0) == 0 || errno != EISDIR || depth > MAX_DEPTH + 1)
		return;
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			remove_at(dirfd(d), e->d_name, depth + 1);
	closedir(d);
	if (unlinkat(parent, name, AT_REMOVEDIR) < 0)
		log_msg("cannot remove %s: %s", name, strerror(errno));
}

void workdir_remove(const char *path)
{
	autofree char *copy = xstrdup(path);
	char *slash = strrchr(copy, '/');
	if (!slash || !slash[1])
		return;
	*slash = '\0';
	autoclose int parent = open(copy[0] ? copy : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parent >= 0)
		remove_at(parent, slash + 1, 0);
}
