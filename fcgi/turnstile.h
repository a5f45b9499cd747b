/*
 * turnstile.h: is a demo caller's Cloudflare Turnstile token good? One
 * POST to siteverify (conf/demo.h), bounded in time and size.
 *
 * The secret goes only in that POST's body, to the URL the conf names;
 * the token is never logged or echoed back (it is the caller's).
 */
#ifndef ISOBOX_TURNSTILE_H
#define ISOBOX_TURNSTILE_H

#include "../conf/conf.h"

/* Once, before any worker starts (libcurl's global set-up). */
void turnstile_init(void);

/* Ask siteverify about `token` from `remote_ip`. false with f: 403
 * turnstile_failed (refused, or for another site), 503
 * turnstile_unavailable (no answer in time, or not in its shape). */
bool turnstile_verify(const struct demo *d, const char *token, const char *remote_ip, struct fault *f);

/* What siteverify's answer (its HTTP status and body) says: pure. */
bool turnstile_judge(const struct demo *d, long status, const char *body, size_t len, struct fault *f);

#endif
