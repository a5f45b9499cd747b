/*
 * session_commands.c: commands that outlive steps, in a session's sandbox
 * (sandbox.h), through its agent (frame.h: bg, bgin, bgout, bgkill, bgdel,
 * bglist). The agent keeps them and their output; this side asks, and
 * reads its answers as it reads everything from inside a sandbox: bounded,
 * checked field by field, anything out of the protocol an error.
 */
#define _GNU_SOURCE
#include "sandbox.h"
#include "deadline.h"
#include "frame.h"
#include "session_commands.h"
#include "session_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The agent's errno, as the API's error. */
static bool command_error(const struct agent_call *call, const char *id, struct fault *f)
{
	const char *msg = call->reply.data ? call->reply.data : "";
	switch (call->code) {
	case ESRCH:
		return fail(f, E_COMMAND_NOT_FOUND, "no command %s in this session", id);
	case EBUSY:
		return fail(f, E_TOO_MANY_COMMANDS, "the session keeps %d commands, running or ended: "
			    "delete one first", AGENT_MAX_COMMANDS);
	case EPIPE:
		return fail(f, E_STDIN_CLOSED, "the stdin of command %s is closed", id);
	default:
		return fail(f, E_SANDBOX_FAILED, "the agent could not do it: %.200s", msg);
	}
}

/* Send call (its request written after a fresh tag), 0 or the error. */
static bool ask(const struct conf *c, const char *tenant, const char *session, const char *id,
		struct agent_call *call, size_t moved, struct fault *f)
{
	int64_t deadline = now_ms() + file_request_ms(moved);
	return session_agent_call(c, tenant, session, call, deadline, f) &&
	       (call->code == 0 || command_error(call, id, f));
}

/* An id from the caller goes into a request header: only what a tag is. */
static bool known_shape(const char *id, struct fault *f)
{
	return frame_tag_valid(id) || fail(f, E_COMMAND_NOT_FOUND, "no command %.40s in this session", id);
}

bool command_start(const struct conf *c, const char *tenant, const char *session, char *const *argv,
		   size_t argc, const char *stdin_data, size_t stdin_len, bool stdin_open, char id[17],
		   struct fault *f)
{
	struct agent_call call = {0};
	size_t moved = stdin_len;
	frame_new_tag(call.tag);
	buf_printf(&call.request, "bg %s %zu %zu %d\n", call.tag, argc, stdin_len, stdin_open && !stdin_len);
	for (size_t i = 0; i < argc; i++) {
		buf_printf(&call.request, "%zu\n", strlen(argv[i]));
		buf_append(&call.request, argv[i], strlen(argv[i]));
		moved += strlen(argv[i]);
	}
	buf_append(&call.request, stdin_data, stdin_len);
	bool ok = ask(c, tenant, session, call.tag, &call, moved, f);
	if (ok)
		memcpy(id, call.tag, AGENT_TAG_LEN + 1);
	agent_call_free(&call);
	return ok;
}

/* "ID R CODE OUTBYTES ERRBYTES ARGSLEN" LF, then ARGSLEN bytes of NUL-ended args. */
static bool parse_entry(const char **p, size_t *len, struct session_command *cmd)
{
	const char *lf = memchr(*p, '\n', *len < 160 ? *len : 160);
	char head[160];
	int running, code, used = 0;
	unsigned long long out, err;
	size_t args;
	if (!lf)
		return false;
	memcpy(head, *p, (size_t)(lf - *p));
	head[lf - *p] = '\0';
	if (sscanf(head, "%16s %d %d %llu %llu %zu%n", cmd->id, &running, &code, &out, &err, &args, &used) != 6 ||
	    used != lf - *p || !frame_tag_valid(cmd->id) || (running != 0 && running != 1) ||
	    (running ? code != -1 : !agent_end_valid(code)) || args == 0 ||
	    args > *len - (size_t)(lf - *p) - 1 || lf[args] != '\0')
		return false;
	*cmd = (struct session_command){.running = running, .exit_code = running ? -1 : agent_end_exit_code(code),
					.signal = running ? 0 : agent_end_signal(code), .stdout_bytes = out,
					.stderr_bytes = err, .args = cmd->args};
	memcpy(cmd->id, head, AGENT_TAG_LEN);
	cmd->id[AGENT_TAG_LEN] = '\0';
	for (const char *a = lf + 1; a < lf + 1 + args; a += strlen(a) + 1)
		strv_push(&cmd->args, a);
	size_t step = (size_t)(lf - *p) + 1 + args;
	*p += step;
	*len -= step;
	return true;
}

bool session_parse_commands(const char *p, size_t len, struct session_command **out, size_t *n,
			    struct fault *f)
{
	*out = NULL;
	*n = 0;
	while (len > 0) {
		struct session_command cmd = {0};
		if (*n == AGENT_MAX_COMMANDS || !parse_entry(&p, &len, &cmd)) {
			strv_free(&cmd.args);
			session_commands_free(*out, *n);
			*out = NULL;
			*n = 0;
			return fail(f, E_SANDBOX_FAILED, "the session's agent sent a command list that is not in the protocol");
		}
		*out = xrealloc(*out, (*n + 1) * sizeof **out);
		(*out)[(*n)++] = cmd;
	}
	return true;
}

bool command_list(const struct conf *c, const char *tenant, const char *session,
		  struct session_command **out, size_t *n, struct fault *f)
{
	struct agent_call call = {.reply_max = (size_t)AGENT_MAX_COMMANDS * (160 + 64 * 1024)};
	*out = NULL;
	*n = 0;
	frame_new_tag(call.tag);
	buf_printf(&call.request, "bglist %s\n", call.tag);
	bool ok = ask(c, tenant, session, "", &call, 0, f) &&
		  session_parse_commands(call.reply.data, call.reply.len, out, n, f);
	agent_call_free(&call);
	return ok;
}

void session_commands_free(struct session_command *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		strv_free(&v[i].args);
	free(v);
}

/* "R CODE OUTFROM OUTLEN OUTTOTAL ERRFROM ERRLEN ERRTOTAL" LF, then the bytes. */
bool session_parse_output(const char *p, size_t len, size_t max, struct command_output *o)
{
	const char *lf = p ? memchr(p, '\n', len < 200 ? len : 200) : NULL;
	char head[200];
	int running, code, used = 0;
	unsigned long long from[2], total[2];
	size_t n[2];
	if (!lf)
		return false;
	memcpy(head, p, (size_t)(lf - p));
	head[lf - p] = '\0';
	if (sscanf(head, "%d %d %llu %zu %llu %llu %zu %llu%n", &running, &code, &from[0], &n[0], &total[0],
		   &from[1], &n[1], &total[1], &used) != 8 || used != lf - p ||
	    (running != 0 && running != 1) || (running ? code != -1 : !agent_end_valid(code)))
		return false;
	size_t body = len - (size_t)(lf - p) - 1;
	for (int i = 0; i < 2; i++)
		if (n[i] > max || from[i] > total[i] || n[i] > total[i] - from[i])
			return false;
	if (n[0] + n[1] != body)
		return false;
	*o = (struct command_output){.running = running, .exit_code = running ? -1 : agent_end_exit_code(code),
				     .signal = running ? 0 : agent_end_signal(code)};
	for (int i = 0; i < 2; i++) {
		o->from[i] = from[i];
		o->written[i] = total[i];
		buf_append(&o->out[i], lf + 1 + (i ? n[0] : 0), n[i]);
	}
	return true;
}

bool command_output(const struct conf *c, const char *tenant, const char *session, const char *id,
		    const uint64_t from[2], size_t max, struct command_output *o, struct fault *f)
{
	struct agent_call call = {.reply_max = 200 + 2 * max};
	*o = (struct command_output){0};
	if (!known_shape(id, f))
		return false;
	if (max > AGENT_COMMAND_LOG)
		max = AGENT_COMMAND_LOG;
	frame_new_tag(call.tag);
	buf_printf(&call.request, "bgout %s %s %llu %llu %zu\n", call.tag, id, (unsigned long long)from[0],
		   (unsigned long long)from[1], max);
	bool ok = ask(c, tenant, session, id, &call, 2 * max, f);
	if (ok && !session_parse_output(call.reply.data, call.reply.len, max, o)) {
		command_output_free(o);
		ok = fail(f, E_SANDBOX_FAILED, "the session's agent sent output that is not in the protocol");
	}
	agent_call_free(&call);
	return ok;
}

void command_output_free(struct command_output *o)
{
	buf_free(&o->out[0]);
	buf_free(&o->out[1]);
}

bool command_stdin(const struct conf *c, const char *tenant, const char *session, const char *id,
		   const char *data, size_t len, size_t *written, struct fault *f)
{
	struct agent_call call = {0};
	*written = 0;
	if (!known_shape(id, f))
		return false;
	if (len > AGENT_MAX_CHUNK)
		len = AGENT_MAX_CHUNK; /* a pipe's worth: the rest is the caller's to send again */
	frame_new_tag(call.tag);
	buf_printf(&call.request, "bgin %s %s %zu\n", call.tag, id, len);
	buf_append(&call.request, data, len);
	bool ok = ask(c, tenant, session, id, &call, len, f);
	unsigned long long n = 0;
	int used = 0;
	if (ok && (!call.reply.data || sscanf(call.reply.data, "%llu%n", &n, &used) != 1 ||
		   (size_t)used != call.reply.len || n > len))
		ok = fail(f, E_SANDBOX_FAILED, "the session's agent answered a write that is not in the protocol");
	*written = ok ? (size_t)n : 0;
	agent_call_free(&call);
	return ok;
}

bool command_kill(const struct conf *c, const char *tenant, const char *session, const char *id, int sig,
		  struct fault *f)
{
	struct agent_call call = {0};
	if (!known_shape(id, f))
		return false;
	frame_new_tag(call.tag);
	buf_printf(&call.request, "bgkill %s %s %d\n", call.tag, id, sig);
	bool ok = ask(c, tenant, session, id, &call, 0, f);
	agent_call_free(&call);
	return ok;
}

bool command_delete(const struct conf *c, const char *tenant, const char *session, const char *id,
		    struct fault *f)
{
	struct agent_call call = {0};
	if (!known_shape(id, f))
		return false;
	frame_new_tag(call.tag);
	buf_printf(&call.request, "bgdel %s %s\n", call.tag, id);
	bool ok = ask(c, tenant, session, id, &call, 0, f);
	agent_call_free(&call);
	return ok;
}
