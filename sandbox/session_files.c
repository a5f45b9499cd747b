/*
 * session_files.c: files in and out of a session's /workspace or a
 * volume's /memory (sandbox.h, struct files_place), through the agent
 * (frame.h: put, get, list, del): a session's own, or for a volume one in
 * a short-lived sandbox with the volume mounted (volume.c). The host never
 * opens a path in either: the agent does, inside the sandbox, with
 * O_NOFOLLOW on every component, so a link that sandboxed code made is
 * reported, not followed.
 */
#define _GNU_SOURCE
#include "session_files.h"
#include "agent_io.h"
#include "deadline.h"
#include "frame.h"
#include "session_store.h"
#include "volume.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool session_agent_call(const struct conf *c, const char *tenant, const char *id, struct agent_call *call,
			int64_t deadline, struct fault *f)
{
	struct session_handle h;
	int in_fd, out_fd;
	if (!session_open(c, tenant, id, &h, f))
		return false;
	if (!session_pipes(&h, &in_fd, &out_fd, f)) {
		session_close(&h, false);
		return false;
	}
	const char *why = NULL;
	bool ok = agent_converse(in_fd, out_fd, call, deadline, &why);
	close(in_fd);
	close(out_fd);
	if (!ok) {
		session_close(&h, false);
		session_end(c, id, h.s.container, why, true);
		return fail(f, E_SESSION_EXPIRED, "session %s has ended: %s", id, why);
	}
	session_close(&h, true);
	return true;
}

/* A session's agent, or a volume's in a sandbox of its own. */
static bool call_agent(const struct conf *c, const struct files_place *p, struct agent_call *call,
		       size_t moved, struct fault *f)
{
	int64_t deadline = now_ms() + file_request_ms(moved);
	if (!p->session)
		return volume_agent_call(c, p->lang, p->volume, call, deadline, f);
	return session_agent_call(c, p->tenant, p->session, call, deadline, f);
}

/* The agent's errno, as the API's error. */
static bool agent_error(const struct files_place *p, const struct agent_call *call, const char *path,
			struct fault *f)
{
	const char *msg = call->reply.data ? call->reply.data : "";
	switch (call->code) {
	case ENOENT:
		return fail(f, E_FILE_NOT_FOUND, "no file \"%.200s\" in %s", path,
			    p->session ? "/workspace" : "the volume");
	case ELOOP:
		return fail(f, E_NOT_A_FILE, "\"%.200s\" is or goes through a symbolic link: links are "
			    "never followed (%.100s)", path, msg);
	case ENOTDIR:
		return fail(f, E_NOT_A_FILE, "\"%.200s\" is not a directory or goes through something that is "
			    "not one (%.100s)", path, msg);
	case EISDIR:
	case EINVAL:
	case ENXIO: /* an older agent (a session from before an upgrade) opened a socket or a FIFO */
		return fail(f, E_NOT_A_FILE, "\"%.200s\" is not a regular file (%.100s)", path, msg);
	case EFBIG:
		return fail(f, E_FILE_TOO_LARGE, "\"%.200s\" is over the %s", path, "download cap (sessions.maxFileBytes)");
	case ENOSPC:
	case EDQUOT:
		if (!p->session)
			return fail(f, E_QUOTA_EXCEEDED, "the volume is full (its sizeBytes)");
		return fail(f, E_WORKSPACE_FULL, "/workspace is full (sessions.workspaceBytes)");
	default:
		return fail(f, E_SANDBOX_FAILED, "the agent could not do it: %.200s", msg);
	}
}

static void file_request(struct agent_call *call, const char *op, const char *path, const char *extra)
{
	frame_new_tag(call->tag);
	buf_printf(&call->request, "%s %s %s%zu", op, call->tag, extra, strlen(path));
}

bool files_put(const struct conf *c, const struct files_place *p, const char *path, const char *data,
	       size_t len, struct fault *f)
{
	struct agent_call call = {0};
	frame_new_tag(call.tag);
	buf_printf(&call.request, "put %s %zu %zu\n", call.tag, strlen(path), len);
	buf_append(&call.request, path, strlen(path));
	buf_append(&call.request, data, len);
	bool ok = call_agent(c, p, &call, len, f) && (call.code == 0 || agent_error(p, &call, path, f));
	agent_call_free(&call);
	return ok;
}

bool files_get(const struct conf *c, const struct files_place *p, const char *path, struct buf *out,
	       struct fault *f)
{
	struct agent_call call = {.data_max = (size_t)c->sessions.max_file_bytes};
	char max[32];
	snprintf(max, sizeof max, "%zu ", call.data_max);
	file_request(&call, "get", path, max);
	buf_printf(&call.request, "\n%s", path);
	bool ok = call_agent(c, p, &call, call.data_max, f) && (call.code == 0 || agent_error(p, &call, path, f));
	if (ok) {
		*out = call.data;
		call.data = (struct buf){0};
	}
	agent_call_free(&call);
	return ok;
}

bool files_list(const struct conf *c, const struct files_place *p, const char *path,
		struct session_entry **out, size_t *n, struct fault *f)
{
	struct agent_call call = {0};
	*out = NULL;
	*n = 0;
	file_request(&call, "list", path, "");
	buf_printf(&call.request, "\n%s", path);
	bool ok = call_agent(c, p, &call, 0, f) && (call.code == 0 || agent_error(p, &call, path, f)) &&
		  session_parse_listing(call.reply.data, call.reply.len,
					(size_t)c->sessions.max_list_entries, out, n, f);
	agent_call_free(&call);
	return ok;
}

bool files_delete(const struct conf *c, const struct files_place *p, const char *path, struct fault *f)
{
	struct agent_call call = {0};
	file_request(&call, "del", path, "");
	buf_printf(&call.request, "\n%s", path);
	bool ok = call_agent(c, p, &call, 0, f) && (call.code == 0 || agent_error(p, &call, path, f));
	agent_call_free(&call);
	return ok;
}

void session_entries_free(struct session_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(e[i].name);
	free(e);
}

bool session_parse_listing(const char *p, size_t len, size_t max, struct session_entry **out,
			   size_t *n, struct fault *f)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	while (len > 0) {
		const char *lf = memchr(p, '\n', len < 128 ? len : 128);
		char head[128], type;
		long long size, mtime;
		unsigned long namelen;
		int used = 0;
		if (lf) {
			memcpy(head, p, (size_t)(lf - p));
			head[lf - p] = '\0';
		}
		if (!lf || sscanf(head, "%c %lld %lld %lu%n", &type, &size, &mtime, &namelen, &used) != 4 ||
		    used != lf - p || !strchr("fdlo", type) || size < 0 || namelen == 0 ||
		    namelen > len - (size_t)(lf - p) - 1) {
			session_entries_free(*out, *n);
			*out = NULL;
			*n = 0;
			return fail(f, E_SANDBOX_FAILED, "the session's agent sent a listing that is not in the protocol");
		}
		const char *name = lf + 1;
		if (memchr(name, '\0', namelen) || memchr(name, '/', namelen)) {
			session_entries_free(*out, *n);
			*out = NULL;
			*n = 0;
			return fail(f, E_SANDBOX_FAILED, "the session's agent sent a bad name in a listing");
		}
		if (*n < max) {
			if (*n == cap)
				*out = xrealloc(*out, (cap = cap ? 2 * cap : 32) * sizeof **out);
			(*out)[(*n)++] = (struct session_entry){.name = xstrndup(name, namelen), .type = type,
								.size = size, .mtime = mtime};
		}
		size_t step = (size_t)(lf - p) + 1 + namelen;
		p += step;
		len -= step;
	}
	return true;
}
