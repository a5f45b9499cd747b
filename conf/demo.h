/*
 * demo.h: the public demo (docs/DEPLOY.md, "A public demo"): the `demo:`
 * section of isobox.yaml.
 *
 * When it is on, a caller with neither a key nor an anonymous address may
 * still run a program through the demo routes (POST /execute and Piston's
 * execute), if it brings a Cloudflare Turnstile token that siteverify
 * accepts for this site. Such a run belongs to the tenant "demo": no
 * network, no sessions, volumes or memory, ceilings of its own, a few
 * programs at once in all and a few a minute from each client address.
 *
 * Ownership: a struct demo owns its strings, the secret included;
 * demo_free wipes the secret and frees them. It is part of struct conf.
 */
#ifndef ISOBOX_DEMO_H
#define ISOBOX_DEMO_H

#include "lib/base.h"
#include "limits.h"
#include "tenants.h"
#include <cjson/cJSON.h>

#define TENANT_DEMO "demo"
/* Turnstile's tokens are at most 2048 characters (Cloudflare's docs). */
#define DEMO_TOKEN_MAX 2048

struct demo {
	bool enabled;
	char *site_key;    /* public: the playground's widget asks with it */
	char *secret;      /* Turnstile's secret key, read from secretFile */
	char *verify_url;  /* siteverify; http:// only to a loopback address */
	char *hostname;    /* the site's name, as siteverify must report it */
	int64_t timeout_ms; /* one siteverify call, whole */
	int64_t runs_per_minute_per_address;
	struct tenant_limits share; /* the tenant "demo": concurrentExecutions */
	struct limits ceilings;     /* a demo run's, each at most the server's */
};

/*
 * The `demo:` section (NULL: off), its secret file relative to base_dir
 * (0640 at most: never readable by anyone), the ceilings clamped to the
 * server's. An enabled demo without a site key, a secret, a hostname or
 * with a verifyUrl that could leak the secret is an error.
 */
bool demo_parse(const cJSON *o, const char *base_dir, const struct limits *server_ceilings,
		struct demo *d, struct fault *f);
void demo_free(struct demo *d);

/* May verify_url carry the secret: https://, or http:// to 127.0.0.0/8,
 * [::1] or localhost (a stand-in, for tests)? Pure. */
bool demo_url_safe(const char *url);

#endif
