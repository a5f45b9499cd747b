/*
 * deadline.c: how long each part of a run may take, and so the longest a
 * whole run can take. The constants are in deadline.h; this is where they
 * are summed, so that adding a docker call means changing one bound here
 * (and its unit test), not a hang margin elsewhere.
 */
#include "deadline.h"

/* The sandbox's own end (a session's), if it comes first. */
static int64_t within_end(const struct exec_clock *t, int64_t deadline)
{
	return t->end_by_ms && t->end_by_ms < deadline ? t->end_by_ms : deadline;
}

int64_t exec_deadline(const struct conf *c, const struct limits *l, const struct decoder *d,
		      const struct exec_clock *t)
{
	if (!t->up_ms)
		return within_end(t, t->spawned_ms + c->sandbox.start_timeout_ms);
	/*
	 * Once the sandbox is up, its whole life is bounded from that moment,
	 * whatever it prints: code that runs during a compile can forge the
	 * entry script's records, and a forged record may only shorten a
	 * phase, never lengthen the life.
	 */
	int64_t life = t->up_ms + l->compile_time_ms + l->wall_time_ms + START_ALLOWANCE_MS;
	int64_t phase;
	if (d->program_started)
		phase = t->phase_ms + l->wall_time_ms;
	else if (decoder_compiling(d))
		phase = t->phase_ms + l->compile_time_ms;
	else /* compiled: the entry script starts the program at once */
		phase = t->phase_ms + START_ALLOWANCE_MS;
	return within_end(t, phase < life ? phase : life);
}

int64_t sandbox_bound_ms(const struct conf *c, const struct limits *l)
{
	return c->sandbox.start_timeout_ms + l->compile_time_ms + l->wall_time_ms + START_ALLOWANCE_MS +
	       DRAIN_AFTER_KILL_MS + COLLECT_MS + OUTPUTS_MS + REMOVE_MS;
}

int64_t file_request_ms(size_t moved)
{
	return FILE_REQUEST_MS + (int64_t)(moved >> 22) * FILE_REQUEST_MS_PER_4MIB;
}

int64_t sandbox_call_bound_ms(const struct conf *c)
{
	int64_t files = file_request_ms((size_t)c->sessions.max_file_bytes);
	return (files > VOLUMED_MS ? files : VOLUMED_MS) + REMOVE_MS;
}
