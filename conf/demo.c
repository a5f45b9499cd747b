/* demo.c: the `demo:` section of isobox.yaml (demo.h). */
#define _GNU_SOURCE
#include "demo.h"
#include "lib/json.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define SITEVERIFY "https://challenges.cloudflare.com/turnstile/v0/siteverify"

bool demo_url_safe(const char *url)
{
	if (!strncasecmp(url, "https://", 8))
		return url[8] != '\0' && !strpbrk(url, " \r\n");
	if (strncasecmp(url, "http://", 7))
		return false;
	/* Plain http sends the secret in clear: only to this machine. */
	const char *host = url + 7;
	static const char *const loopback[] = {"127.", "[::1]", "localhost", NULL};
	for (size_t i = 0; loopback[i]; i++) {
		size_t n = strlen(loopback[i]);
		if (strncasecmp(host, loopback[i], n))
			continue;
		const char *rest = host + n;
		if (loopback[i][n - 1] == '.')
			rest += strspn(rest, "0123456789.");
		/* The name ends there: "localhost.evil.example" is not loopback. */
		return *rest == ':' || *rest == '/' || *rest == '\0';
	}
	return false;
}

static bool get_text(const cJSON *o, const char *key, const char *what, char **out, struct fault *f)
{
	const char *s;
	if (!json_string(cJSON_GetObjectItemCaseSensitive(o, key), what, &s, f))
		return false;
	if (!s[0] || strlen(s) > 512 || strpbrk(s, "\r\n\"\\<>"))
		return fail(f, E_INVALID_VALUE, "%s must be 1-512 characters, without quotes, <, > or "
			    "line breaks", what);
	*out = xstrdup(s);
	return true;
}

/* demo.turnstile: the site key, the secret, and how to ask siteverify. */
static bool parse_turnstile(const cJSON *o, const char *base_dir, struct demo *d, struct fault *f)
{
	static const char *const keys[] = {"siteKey", "secretFile", "hostname", "verifyUrl", "timeoutMs", NULL};
	const cJSON *url = cJSON_GetObjectItemCaseSensitive(o, "verifyUrl");
	const cJSON *timeout = cJSON_GetObjectItemCaseSensitive(o, "timeoutMs");
	const char *secret_file;
	if (!o)
		return fail(f, E_MISSING_FIELD, "demo.enabled needs demo.turnstile (siteKey, secretFile, hostname)");
	if (!json_object(o, "demo.turnstile", f) || !json_known_keys(o, keys, "demo.turnstile", f) ||
	    !get_text(o, "siteKey", "demo.turnstile.siteKey", &d->site_key, f) ||
	    !get_text(o, "hostname", "demo.turnstile.hostname", &d->hostname, f) ||
	    !json_string(cJSON_GetObjectItemCaseSensitive(o, "secretFile"), "demo.turnstile.secretFile",
			 &secret_file, f) ||
	    (url && !get_text(o, "verifyUrl", "demo.turnstile.verifyUrl", &d->verify_url, f)) ||
	    (timeout && !json_int(timeout, "demo.turnstile.timeoutMs", 100, 60000, &d->timeout_ms, f)))
		return false;
	if (!d->verify_url)
		d->verify_url = xstrdup(SITEVERIFY);
	if (!demo_url_safe(d->verify_url))
		return fail(f, E_INVALID_VALUE, "demo.turnstile.verifyUrl must be https:// (http:// only to "
			    "this machine: it carries the secret)");
	char err[400];
	autofree char *path = path_join(base_dir, secret_file);
	if (!read_secret(path, 1024, &d->secret, err, sizeof err))
		return fail(f, E_INVALID_VALUE, "demo.turnstile.secretFile %s", err);
	if (!d->secret[0])
		return fail(f, E_INVALID_VALUE, "demo.turnstile.secretFile %s is empty", path);
	return true;
}

bool demo_parse(const cJSON *o, const char *base_dir, const struct limits *server_ceilings,
		struct demo *d, struct fault *f)
{
	static const char *const keys[] = {"enabled", "turnstile", "concurrentExecutions",
		"runsPerMinutePerAddress", "ceilings", NULL};
	/* Small by default: a demo is for trying, not for work. */
	*d = (struct demo){.timeout_ms = 5000, .runs_per_minute_per_address = 6,
			   .share = {.concurrent_executions = 2}};
	d->ceilings = *server_ceilings;
	if (d->ceilings.wall_time_ms > 5000)
		d->ceilings.wall_time_ms = 5000;
	if (d->ceilings.cpus > 0.5)
		d->ceilings.cpus = 0.5;
	const cJSON *v;
	if (!o)
		return true;
	if (!json_object(o, "demo", f) || !json_known_keys(o, keys, "demo", f) ||
	    ((v = cJSON_GetObjectItemCaseSensitive(o, "enabled")) && !json_bool(v, "demo.enabled", &d->enabled, f)))
		return false;
	if (!d->enabled)
		return true;
	if (((v = cJSON_GetObjectItemCaseSensitive(o, "concurrentExecutions")) &&
	     !json_int(v, "demo.concurrentExecutions", 1, 1 << 20, &d->share.concurrent_executions, f)) ||
	    ((v = cJSON_GetObjectItemCaseSensitive(o, "runsPerMinutePerAddress")) &&
	     !json_int(v, "demo.runsPerMinutePerAddress", 1, 1 << 20, &d->runs_per_minute_per_address, f)))
		return false;
	struct limits asked = {0};
	unsigned set = 0;
	if ((v = cJSON_GetObjectItemCaseSensitive(o, "ceilings")) &&
	    !limits_parse(v, "demo.ceilings", &asked, &set, f))
		return false;
	if (set & LIMIT_COMPILE)
		return fail(f, E_INVALID_VALUE, "demo.ceilings: compileTimeMs is the language's, not a ceiling");
	/* Each at most the server's: the demo only ever narrows. */
	static const struct limits no_floor = {0};
	d->ceilings = limits_apply(&d->ceilings, &asked, set, &no_floor, server_ceilings);
	/* The tenant "demo" asks for nothing else: the demo routes run one
	 * program each, without network (share.network stays false). */
	return parse_turnstile(cJSON_GetObjectItemCaseSensitive(o, "turnstile"), base_dir, d, f);
}

void demo_free(struct demo *d)
{
	if (d->secret)
		explicit_bzero(d->secret, strlen(d->secret));
	free(d->secret);
	free(d->site_key);
	free(d->verify_url);
	free(d->hostname);
	*d = (struct demo){0};
}
