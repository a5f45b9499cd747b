/* agent_wire.h: the session agent's side of the protocol (agent_wire.c, sandbox/frame.h). */
#ifndef ISOBOX_AGENT_WIRE_H
#define ISOBOX_AGENT_WIRE_H

#include "agent_base.h"

bool write_all(int fd, const void *p, size_t n);
/* One answer: "KIND TAG [CODE] LEN" LF, then p[0..n). */
void send_frame(const char *kind, const char *tag, int code, const void *p, size_t n);
/* The end of a file request: 0 and p, or w's errno and message. */
void send_end(const char *tag, const struct why *w, const void *p, size_t n);
size_t in_some(char *p, size_t n);
void in_exact(char *p, size_t n);
void in_line(char *line, size_t max);
/* The next n request bytes into fd (-1: read and drop them). */
bool in_copy(int fd, unsigned long long n, const char *name, struct why *w);
bool in_buffered(void); /* more of the request stream is read already */
bool decimal(const char *s, unsigned long long max, unsigned long long *v);
unsigned long long number(const char *s, unsigned long long max);
int split(char *line, char **w, int max);
bool valid_tag(const char *s);

#endif
