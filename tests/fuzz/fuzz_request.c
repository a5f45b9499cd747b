/* libFuzzer: POST /execute bodies through the parser, the validator, the
 * clamping and the container spec (rendered as the docker argv), and the same bytes as a Piston body
 * through its translation first. Nothing may crash or leak, an accepted
 * request must respect every ceiling, and a refusal is a 4xx. */
#include "../unit/fixtures.h"
#include "../../fcgi/errors.h"
#include "../../fcgi/piston.h"
#include "../../fcgi/request.h"

#include <stdlib.h>

static struct conf conf;
static struct registry reg;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fixture_load(&conf, &reg);
	return 0;
}

static void refused_4xx(const struct fault *f)
{
	int status = error_info(f->code)->status;
	if (!f->code || status < 400 || status > 499)
		abort(); /* a refusal is always a 4xx with a code */
}

static void check(const char *body, size_t size)
{
	struct request rq = {0};
	buf_append(&rq.body, body, size);
	if (request_parse_execute(&rq, &conf, &reg)) {
		const struct limits *l = &rq.job.limits, *hi = &conf.ceilings, *lo = &conf.floors;
		if (l->memory_bytes > hi->memory_bytes || l->memory_bytes < lo->memory_bytes ||
		    l->cpus > hi->cpus || l->pids > hi->pids || l->output_bytes > hi->output_bytes ||
		    l->wall_time_ms > hi->wall_time_ms || rq.job.n_files == 0)
			abort();
		struct fault f;
		for (size_t i = 0; i < rq.job.n_files; i++)
			if (!sandbox_valid_path(rq.job.files[i].name, 255, &f))
				abort();
		struct strv argv = {0};
		argv_cold(&conf, &rq.job, "isobox-fuzz", "1.1", "/nonexistent", &argv);
		strv_free(&argv);
	} else {
		refused_4xx(&rq.fault);
	}
	request_free(&rq);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check((const char *)data, size);
	struct buf in = {0}, out = {0};
	struct fault f = {0};
	buf_append(&in, data, size);
	if (piston_translate(&in, &reg, (size_t)conf.request.max_json_values, &out, &f))
		check(out.data, out.len);
	else
		refused_4xx(&f);
	buf_free(&in);
	buf_free(&out);
	return 0;
}
