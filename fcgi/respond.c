/* respond.c: answering a request that failed (respond.h). */
#include "respond.h"
#include "encode.h"
#include "errors.h"

#include <stdlib.h>
#include <string.h>

cJSON *fault_to_json(const struct fault *f)
{
	cJSON *body = cJSON_CreateObject();
	cJSON *err = cJSON_AddObjectToObject(body, "error");
	cJSON_AddStringToObject(err, "code", error_info(f->code)->name);
	/* Messages may quote what the client sent: keep the JSON valid UTF-8. */
	json_add_bytes(err, "message", f->message, strlen(f->message));
	return body;
}

void respond_json(struct request *rq, int status, cJSON *o)
{
	http_send_json(&rq->io, status, "", o);
	cJSON_Delete(o);
}

void respond_fault(struct request *rq, const char *extra_headers)
{
	bool piston = request_is_piston(rq);
	cJSON *body = fault_to_json(&rq->fault);
	cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(body, "error"), "requestId", rq->id);
	/* Piston clients read {"message": ...}; ours read {"error": {...}}. */
	if (piston)
		json_add_bytes(body, "message", rq->fault.message, strlen(rq->fault.message));
	/* When to try again, from the code's row (errors.c), unless the caller
	 * knows better (a rate limit's own wait). */
	int retry = error_info(rq->fault.code)->retry_after;
	char *headers = retry > 0 && !strstr(extra_headers, "Retry-After:") ?
		xasprintf("%sRetry-After: %d\r\n", extra_headers, retry) : NULL;
	http_send_json(&rq->io, error_status(rq->fault.code, piston), headers ? headers : extra_headers,
		       body);
	free(headers);
	cJSON_Delete(body);
}
