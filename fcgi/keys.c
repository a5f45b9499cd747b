/*
 * keys.c: the key commands (keys.h). The keys file is changed under its
 * own lock: a new key is one line appended (written whole, then synced);
 * a revocation writes the file again to a new one and renames it over the
 * old, so that a worker reloading then reads the old or the new file. Files are made 0640, readable by the group the
 * workers run in (isobox) and no one else.
 */
#define _GNU_SOURCE
#include "keys.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define WORKER_GROUP "isobox"

static void to_worker_group(int fd)
{
	struct group *g = getuid() == 0 ? getgrnam(WORKER_GROUP) : NULL;
	if (g && fchown(fd, 0, g->gr_gid) < 0)
		fprintf(stderr, "cannot give the file to group %s: %s\n", WORKER_GROUP, strerror(errno));
	fchmod(fd, 0640);
}

/* The keys file, locked (made if missing): an fd, or -1 with why said. */
static int lock_keys(const struct conf *c)
{
	int fd = open(c->tenants.keys_file, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		fprintf(stderr, "%s: %s\n", c->tenants.keys_file, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	to_worker_group(fd);
	return fd;
}

int keys_new(const char *conf_path, const struct conf *c, const char *tenant)
{
	struct fault f = {0};
	if (!tenant_name_valid(tenant) || !strcmp(tenant, TENANT_LOCAL)) {
		fprintf(stderr, "a tenant name is [a-z0-9][a-z0-9_-]*, at most %d, and not \"%s\" "
			"(the keyless caller)\n", TENANT_NAME_MAX, TENANT_LOCAL);
		return 1;
	}
	struct conf fresh = {0};
	char err[512];
	if (!c->tenants.has_secret) {
		if (!tenants_make_secret(c->tenants.secret_file, &f)) {
			fprintf(stderr, "%s\n", f.message);
			return 1;
		}
		autoclose int fd = open(c->tenants.secret_file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			to_worker_group(fd);
		fprintf(stderr, "made the key secret %s\n", c->tenants.secret_file);
		if (!conf_load(conf_path, &fresh, err, sizeof err)) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		c = &fresh;
	}
	char key[KEY_TEXT_LEN + 1], line[256];
	/* A new id, unlike every id there (one twice makes the file an error). */
	bool taken;
	do {
		tenants_new_key(&c->tenants, tenant, key, line, sizeof line);
		taken = false;
		for (size_t i = 0; i < c->tenants.n_keys; i++)
			taken |= !strncmp(c->tenants.keys[i].id, key + 4, KEY_ID_LEN);
	} while (taken);
	int fd = lock_keys(c);
	bool ok = fd >= 0 && lseek(fd, 0, SEEK_END) >= 0 &&
		  write(fd, line, strlen(line)) == (ssize_t)strlen(line) && fsync(fd) == 0;
	if (fd >= 0 && !ok)
		fprintf(stderr, "%s: %s\n", c->tenants.keys_file, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (ok) {
		printf("%s\n", key);
		fprintf(stderr, "key %.8s for tenant %s: shown this once, kept nowhere; "
			"it works once the pool reloads (SIGHUP)\n", line, tenant);
	}
	conf_free(&fresh);
	return ok ? 0 : 1;
}

int keys_revoke(const struct conf *c, const char *id)
{
	int fd = lock_keys(c);
	if (fd < 0)
		return 1;
	struct buf old = {0}, kept = {0};
	char err[300];
	bool found = false, ok = read_file(c->tenants.keys_file, 16 << 20, &old, err, sizeof err);
	for (char *line = old.data, *next; ok && line && *line; line = next) {
		next = strchr(line, '\n');
		size_t len = next ? (size_t)(++next - line) : strlen(line);
		bool match = len > strlen(id) && !strncmp(line, id, strlen(id)) && line[strlen(id)] == ' ';
		found |= match;
		if (!match)
			buf_append(&kept, line, len);
	}
	autofree char *tmp = xasprintf("%s.new", c->tenants.keys_file);
	if (ok && found) {
		int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0640);
		ok = out >= 0 && (kept.len == 0 || write(out, kept.data, kept.len) == (ssize_t)kept.len) &&
		     fsync(out) == 0;
		if (out >= 0) {
			to_worker_group(out);
			close(out);
		}
		ok = ok && rename(tmp, c->tenants.keys_file) == 0;
		if (!ok)
			fprintf(stderr, "%s: %s\n", c->tenants.keys_file, strerror(errno));
	} else if (!ok) {
		fprintf(stderr, "%s\n", err);
	} else {
		fprintf(stderr, "no key %s in %s\n", id, c->tenants.keys_file);
		ok = false;
	}
	if (ok)
		fprintf(stderr, "key %s revoked: it stops working when the pool reloads (SIGHUP)\n", id);
	close(fd);
	buf_free(&old);
	buf_free(&kept);
	return ok ? 0 : 1;
}

int keys_list(const struct conf *c)
{
	struct buf text = {0};
	char err[300];
	if (access(c->tenants.keys_file, F_OK) != 0)
		return 0;
	if (!read_file(c->tenants.keys_file, 16 << 20, &text, err, sizeof err)) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	for (char *line = text.data; line && *line;) {
		char *next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char id[32], tenant[80], hash[80], created[80];
		if (line[0] != '#' && sscanf(line, "%31s %79s %79s %79s", id, tenant, hash, created) == 4)
			printf("%s %s %s\n", id, tenant, created);
		line = next;
	}
	buf_free(&text);
	return 0;
}
