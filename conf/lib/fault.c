/* fault.c: filling a struct fault (see fault.h). */
#include "fault.h"

#include <stdarg.h>
#include <stdio.h>

bool fail(struct fault *f, enum fault_code code, const char *fmt, ...)
{
	va_list ap;
	f->code = code;
	va_start(ap, fmt);
	vsnprintf(f->message, sizeof f->message, fmt, ap);
	va_end(ap);
	return false;
}
