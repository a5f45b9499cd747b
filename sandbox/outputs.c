/*
 * outputs.c: a cold run that returns the files it made ("outputs": globs
 * relative to its work dir, such as "*.csv").
 *
 * The work dir is a tmpfs inside the sandbox, gone when the container
 * stops, and the host must never read what sandboxed code wrote through a
 * path it could have planted a link in. So the sandbox runs the session
 * agent (sandbox/agent/agent.c) instead of the entry script, in /box: it
 * writes the code and runs the program exactly as a session step does
 * (exec_session: the same deadlines, output cap and interrupt), and then
 * the worker lists /box and reads each matching regular file through the
 * agent, which follows no link. Then stdin is closed and the agent exits.
 */
#define _GNU_SOURCE
#include "outputs.h"
#include "docker.h"
#include "session_files.h"
#include "owner.h"
#include "agent_io.h"
#include "deadline.h"
#include "exec_session.h"
#include "session.h"
#include "subproc.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OUTPUTS_MAX_DEPTH 8

struct collect {
	const struct conf *c;
	const struct sandbox_job *job;
	struct sandbox_result *res;
	int in_fd, out_fd;
	int64_t deadline;
	size_t bytes_left, listed;
	bool failed; /* the agent stopped answering: nothing more is asked */
};

bool outputs_match(const struct sandbox_job *job, const char *path)
{
	for (size_t i = 0; i < job->n_outputs; i++)
		if (fnmatch(job->outputs[i], path, FNM_PATHNAME | FNM_PERIOD) == 0)
			return true;
	return false;
}

/* One request to the agent: the end code, or -1 when it did not answer. */
static int ask(struct collect *k, struct agent_call *call)
{
	const char *why;
	if (k->failed || !agent_converse(k->in_fd, k->out_fd, call, k->deadline, &why)) {
		if (!k->failed)
			log_msg("outputs: the agent did not answer (%s)", why);
		k->failed = true;
		return -1;
	}
	return call->code;
}

static void take_file(struct collect *k, const char *path, int64_t size)
{
	struct sandbox_result *res = k->res;
	if ((int64_t)res->n_outputs >= k->c->request.max_output_files || size > (int64_t)k->bytes_left) {
		res->outputs_truncated = true;
		return;
	}
	struct agent_call call = {.data_max = k->bytes_left};
	frame_new_tag(call.tag);
	buf_printf(&call.request, "get %s %zu %zu\n%s", call.tag, k->bytes_left, strlen(path), path);
	int code = ask(k, &call);
	if (code == 0) {
		res->outputs = xrealloc(res->outputs, (res->n_outputs + 1) * sizeof *res->outputs);
		res->outputs[res->n_outputs++] = (struct sandbox_output){.name = xstrdup(path), .data = call.data};
		k->bytes_left -= call.data.len;
		call.data = (struct buf){0};
	} else if (code > 0) {
		res->outputs_truncated = true; /* it grew past what is left, or went away */
	}
	agent_call_free(&call);
}

/* Walk dir (relative to /box, "" for itself), depth first. */
static void walk(struct collect *k, const char *dir, int depth)
{
	struct agent_call call = {0};
	frame_new_tag(call.tag);
	buf_printf(&call.request, "list %s %zu\n%s", call.tag, strlen(dir), dir);
	struct session_entry *e = NULL;
	size_t n = 0;
	struct fault ignored;
	if (ask(k, &call) == 0 &&
	    !session_parse_listing(call.reply.data, call.reply.len, (size_t)k->c->sessions.max_list_entries,
				   &e, &n, &ignored))
		k->failed = true;
	agent_call_free(&call);
	for (size_t i = 0; i < n && !k->failed; i++) {
		char *path = dir[0] ? xasprintf("%s/%s", dir, e[i].name) : xstrdup(e[i].name);
		if (++k->listed > (size_t)k->c->sessions.max_list_entries)
			k->res->outputs_truncated = true;
		else if (e[i].type == 'd' && depth < OUTPUTS_MAX_DEPTH)
			walk(k, path, depth + 1);
		else if (e[i].type == 'f' && outputs_match(k->job, path))
			take_file(k, path, e[i].size);
		free(path);
	}
	session_entries_free(e, n);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct sandbox_output *)a)->name, ((const struct sandbox_output *)b)->name);
}

bool exec_outputs(const struct sandbox *sb, const struct sandbox_job *job,
		  const struct sandbox_sink *sink, struct sandbox_result *res, struct fault *f)
{
	const struct conf *c = sb->c;
	int fds[3];
	pid_t client = -1;
	struct container_spec spec;
	struct strv argv = {0};
	char id[65] = "";
	spec_outputs(c, job, sb->name, sandbox_owner_id(), &spec);
	bool ok = agent_client(c, job->lang->name, &spec, &argv, id, f) &&
		  agent_start(c, job->lang->name, argv.v, &client, fds, f);
	spec_free(&spec);
	strv_free(&argv);
	if (client < 0)
		return false;
	int in_fd = fds[0], out_fd = fds[1], err_fd = fds[2];
	if (ok) {
		char tag[AGENT_TAG_LEN + 1];
		frame_new_tag(tag);
		struct buf request = {0};
		session_step_request(job, false, tag, &request);
		/* Its sandbox is this run's alone: its cgroup's counts are the run's. */
		if (!id[0]) /* made by the docker client (its CLI's way): ask */
			docker_container_id(c, sb->name, now_ms() + OUTPUTS_MS, id, sizeof id);
		struct session_link link = {.tag = tag, .container_id = id, .one_run = true};
		frame_init(&link.frames, 0); /* a run's end frame has no payload */
		/* exec_session closes what it is given: it gets copies. */
		ok = exec_session(sb, &link, dup(in_fd), dup(out_fd), &request, job, false, sink, res, f);
		buf_free(&request);
		buf_free(&link.end_payload);
		if (ok && link.ended && !link.lost) {
			struct collect k = {.c = c, .job = job, .res = res, .in_fd = in_fd, .out_fd = out_fd,
					    .deadline = now_ms() + OUTPUTS_MS,
					    .bytes_left = (size_t)c->request.max_output_bytes};
			walk(&k, "", 0);
			res->outputs_truncated = res->outputs_truncated || k.failed;
			qsort(res->outputs, res->n_outputs, sizeof *res->outputs, by_name);
		}
	}
	/* End of its stdin: the agent exits, and the sandbox with it. */
	close(in_fd);
	close(out_fd);
	close(err_fd);
	if (subproc_wait(client, COLLECT_MS) < 0)
		log_msg("outputs: lost the client of %s", sb->name);
	return ok;
}
