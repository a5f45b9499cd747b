/*
 * frame.h: how the worker talks to a session's agent, and the decoder of
 * what the agent says.
 *
 * A session sandbox runs one agent as its first process
 * (sandbox/agent/agent.c, a static binary mounted read-only at
 * /isobox-agent). It reads requests on its stdin and answers on its stdout;
 * both are pipes that outlive any one worker (session.c). Requests are
 * served one at a time, in order.
 *
 * Requests (worker -> agent). One header line of ASCII words separated by
 * single spaces, ending in LF, at most 512 bytes; then exactly the payload
 * bytes that the header announces. TAG is 16 lowercase hex digits, chosen
 * by the worker for each request; every answer to it carries it.
 *
 *   run TAG NFILES NARGV STDINLEN        then NFILES times
 *                                          "NAMELEN DATALEN" LF NAME DATA,
 *                                        then NARGV times "LEN" LF ARG,
 *                                        then STDINLEN bytes of stdin.
 *       Write the files under /workspace (a name replaces the file of that
 *       name; directories are made), then run ARGV (argv[0] found on PATH)
 *       in /workspace in a new process group, with the stdin bytes then end
 *       of file on its stdin and pipes on its stdout and stderr. Ends when
 *       that process exits; what it left running in the background keeps
 *       running, its output is discarded.
 *   cell TAG CODELEN STDINLEN            then CODE, then STDIN.
 *       Kernel sessions: run CODE as a cell in the live interpreter.
 *   int TAG                              no payload.
 *       Interrupt the request TAG if it is still running: a run's process
 *       group is killed (SIGKILL); a cell gets SIGINT, and if it has not
 *       ended a second later the kernel is killed and started afresh.
 *       Ignored if TAG is not the request running.
 *   put TAG PATHLEN DATALEN              then PATH, then DATA.
 *   get TAG MAXLEN PATHLEN               then PATH. Refused (EFBIG) over MAXLEN.
 *   list TAG PATHLEN                     then PATH ("" or "." is /workspace).
 *   del TAG PATHLEN                      then PATH: a file, a link, or a
 *                                        directory with all it holds.
 *       PATH is relative to /workspace; the agent opens every component
 *       with O_NOFOLLOW, so no symbolic link is followed (ELOOP/ENOTDIR).
 *
 *   bg TAG NARGV STDINLEN OPEN           then NARGV times "LEN" LF ARG,
 *                                        then STDINLEN bytes of stdin.
 *       Start ARGV in /workspace in a session of its own, as a command
 *       that outlives requests (agent/agent_cmds.h); its id is TAG. Its
 *       stdin: the bytes then end of file, or with OPEN 1 (and STDINLEN
 *       0) a pipe for bgin. It answers at once: 0, or EBUSY when
 *       AGENT_MAX_COMMANDS are kept.
 *   bgin TAG ID LEN                      then LEN bytes (LEN at most
 *       AGENT_MAX_CHUNK): to command ID's stdin, as much as its pipe takes
 *       now; LEN 0 closes it. end: 0 and the count written as decimal
 *       text, or ESRCH (no such command), EPIPE (its stdin is closed).
 *   bgout TAG ID OUTFROM ERRFROM MAX     its stdout from byte OUTFROM and
 *       stderr from ERRFROM (or from the first byte kept), at most MAX
 *       (at most AGENT_COMMAND_LOG) of each. end 0 with
 *       "RUNNING CODE OUTSTART OUTLEN OUTTOTAL ERRSTART ERRLEN ERRTOTAL" LF
 *       then OUTLEN bytes of stdout and ERRLEN of stderr; RUNNING 1 or 0,
 *       CODE -1 while it runs, else its end status (agent_protocol.h).
 *   bgkill TAG ID SIG                    signal its process group.
 *   bgdel TAG ID                         kill it if it runs, forget it.
 *   bglist TAG                           end 0 with, per command,
 *       "ID RUNNING CODE OUTTOTAL ERRTOTAL ARGSLEN" LF then its argv,
 *       each argument ended by a NUL (ARGSLEN bytes in all).
 *
 * A new run or cell while another is running (its worker died) ends the
 * old one first, as `int` would, without an answer to it.
 *
 * Answers (agent -> worker). One header line, then the payload it
 * announces; LEN is at most AGENT_MAX_CHUNK except in "end".
 *
 *   ready                                once, when the agent (and its
 *                                          kernel) is up
 *   out TAG LEN, err TAG LEN             then LEN bytes: the program's
 *                                          stdout or stderr
 *   data TAG LEN                         then LEN bytes of the file (get)
 *   disp TAG LEN                         then LEN bytes: one display of the
 *                                          running cell, as it happens
 *                                          (kernel.py: an nbformat output as
 *                                          JSON); after the output it wrote
 *                                          before, as the cell made them
 *   end TAG CODE LEN                     then LEN bytes: the request is
 *                                          done. run: CODE is the end
 *                                          status (agent_protocol.h: the
 *                                          exit status, or 256 + N when
 *                                          killed by signal N), no
 *                                          payload. cell: 0 or 1 (the
 *                                          cell raised), or the kernel's
 *                                          end status when it died; the
 *                                          kernel's JSON as payload. File
 *                                          requests: 0, or an errno value
 *                                          with a message as payload; list
 *                                          answers its entries, each
 *                                          "TYPE SIZE MTIME NAMELEN" LF
 *                                          NAME, TYPE one of f d l o.
 *
 * The sandbox is untrusted: code in it can write forged answers (it can
 * reach the agent's stdout through /proc). A forgery can only misreport
 * its own session's step; the worker bounds every request by its own
 * clock and size caps, and a frame it cannot parse ends the session.
 */
#ifndef ISOBOX_SANDBOX_FRAME_H
#define ISOBOX_SANDBOX_FRAME_H

#include "../conf/lib/base.h"
#include "agent_protocol.h" /* the sizes the agent shares */

enum frame_kind {
	FRAME_MORE,    /* nothing to report for the bytes consumed */
	FRAME_READY,
	FRAME_OUT,     /* data, len: stdout (fd 1) or stderr (fd 2) */
	FRAME_DATA,    /* data, len: file contents */
	FRAME_END,     /* code; payload data, len (may come in pieces: more) */
	FRAME_DISPLAY, /* payload data, len, in pieces as FRAME_END's */
	FRAME_GARBLED, /* reason */
};

struct frame_event {
	enum frame_kind kind;
	char tag[AGENT_TAG_LEN + 1];
	int fd;
	long long code;
	const char *data; /* points into the bytes given to frame_feed */
	size_t len;
	bool more;        /* FRAME_END: more of its payload follows */
	const char *reason;
};

struct frame_decoder {
	char header[AGENT_MAX_HEADER + 1];
	size_t header_len;
	enum frame_kind body_kind; /* the frame whose payload is being read */
	char tag[AGENT_TAG_LEN + 1];
	int fd;
	long long code;
	unsigned long long body_left;
	unsigned long long end_max; /* the largest "end" or "disp" payload accepted */
	bool in_body, garbled;
};

void frame_init(struct frame_decoder *d, unsigned long long end_max);

/*
 * Decode p[0..n) read from the agent's stdout: returns the bytes consumed
 * and what they mean in *ev, the same loop as decoder_feed (decoder.h).
 * Pure. After FRAME_GARBLED everything is consumed and dropped.
 */
size_t frame_feed(struct frame_decoder *d, const char *p, size_t n, struct frame_event *ev);

/* A fresh request tag (16 hex digits and a NUL). */
void frame_new_tag(char out[AGENT_TAG_LEN + 1]);
/* Is s one (16 lowercase hex digits)? A command's id is its start's tag. */
bool frame_tag_valid(const char *s);

#endif
