/*
 * errors.h: what each fault code (conf/lib/fault.h) means over HTTP. The one
 * place where a status is chosen: lower layers report a code, fcgi/ answers.
 */
#ifndef ISOBOX_ERRORS_H
#define ISOBOX_ERRORS_H

#include "../conf/lib/fault.h"
#include <stdbool.h>

struct error_info {
	const char *name;  /* the API's code: "bad_json" */
	int status;        /* the HTTP status */
	int piston_status; /* on the Piston route (Piston answers 400 to a bad job) */
	bool server_side;  /* counted as a sandbox failure in /metrics, not a rejection */
	int retry_after;   /* seconds for the Retry-After header; 0: none (respond.c
			      sends it; rate_limited computes its own) */
};

/* Every code has a row (a unit test checks it); out of range: internal. */
const struct error_info *error_info(enum fault_code code);
/* The status a code is answered with, on a Piston route or on ours. */
int error_status(enum fault_code code, bool piston);
/* The code of an API name ("bad_json"); E_INTERNAL for none. */
enum fault_code error_code(const char *name);

/* The whole table as JSON lines, for the docs' tests (isobox-fcgi --errors). */
void errors_print(void);

#endif
