/* respond.c: answering a request that failed (respond.h). */
#include "respond.h"
#include "encode.h"
#include "errors.h"

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

void respond_fault(struct request *rq, const char *extra_headers)
{
	bool piston = request_is_piston(rq);
	cJSON *body = fault_to_json(&rq->fault);
	/* Piston clients read {"message": ...}; ours read {"error": {...}}. */
	if (piston)
		json_add_bytes(body, "message", rq->fault.message, strlen(rq->fault.message));
	http_send_json(&rq->io, error_status(rq->fault.code, piston), extra_headers, body);
	cJSON_Delete(body);
}
