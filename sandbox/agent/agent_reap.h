/*
 * agent_reap.h: `isobox-agent reap NONCE ARGV...`, the reporter that is the
 * first process of a cold or warm sandbox (agent_reap.c says why).
 */
#ifndef ISOBOX_AGENT_REAP_H
#define ISOBOX_AGENT_REAP_H

/* argv[0] is "reap". Runs until ARGV's process ends; never returns. */
_Noreturn void reap_main(int argc, char **argv);

#endif
