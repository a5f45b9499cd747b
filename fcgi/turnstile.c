/* turnstile.c: one question to Cloudflare's siteverify (turnstile.h). */
#define _GNU_SOURCE
#include "turnstile.h"
#include "../conf/lib/json.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

/* siteverify's answer is a small JSON object; more is not its answer. */
#define ANSWER_MAX 16384

void turnstile_init(void)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		die("libcurl's global set-up failed");
}

/* The error codes siteverify gave, as one short line. */
static void codes_of(const cJSON *root, char *out, size_t len)
{
	const cJSON *codes = cJSON_GetObjectItemCaseSensitive(root, "error-codes");
	const cJSON *c;
	size_t used = 0;
	out[0] = '\0';
	if (!cJSON_IsArray(codes))
		codes = NULL;
	cJSON_ArrayForEach(c, codes) {
		if (!cJSON_IsString(c) || used + 2 >= len)
			continue;
		int n = snprintf(out + used, len - used, "%s%.40s", used ? ", " : "", c->valuestring);
		used = n > 0 && (size_t)n < len - used ? used + (size_t)n : len - 1;
	}
	if (!out[0])
		snprintf(out, len, "none given");
}

bool turnstile_judge(const struct demo *d, long status, const char *body, size_t len, struct fault *f)
{
	cJSON *root = NULL;
	struct fault parse = {0};
	if (status != 200 || !json_parse_strict(body, len, 256, &root, &parse) || !cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return fail(f, E_TURNSTILE_UNAVAILABLE, "Turnstile's siteverify answered %ld, not its JSON; "
			    "retry shortly", status);
	}
	const cJSON *success = cJSON_GetObjectItemCaseSensitive(root, "success");
	const char *hostname = json_text(root, "hostname");
	bool ok = false;
	char codes[160];
	codes_of(root, codes, sizeof codes);
	if (!cJSON_IsBool(success))
		fail(f, E_TURNSTILE_UNAVAILABLE, "Turnstile's siteverify answered without \"success\"; retry shortly");
	else if (!cJSON_IsTrue(success))
		fail(f, E_TURNSTILE_FAILED, "the Turnstile token was refused (%s): solve the challenge again "
		     "for a new one (each token works once, for 5 minutes)", codes);
	/* A token solved on another site that uses the same key is not ours. */
	else if (!hostname || strcasecmp(hostname, d->hostname))
		fail(f, E_TURNSTILE_FAILED, "the Turnstile token was solved on %.100s, not on this "
		     "demo's site", hostname ? hostname : "no site");
	else
		ok = true;
	cJSON_Delete(root);
	return ok;
}

/* The answer, kept up to ANSWER_MAX; past it the transfer stops. */
static size_t keep(char *data, size_t size, size_t n, void *ctx)
{
	struct buf *answer = ctx;
	size_t len = size * n;
	if (answer->len + len > ANSWER_MAX)
		return 0;
	buf_append(answer, data, len);
	return len;
}

/* secret=...&response=...&remoteip=..., escaped. */
static char *form(CURL *curl, const struct demo *d, const char *token, const char *remote_ip)
{
	char *secret = curl_easy_escape(curl, d->secret, 0);
	char *response = curl_easy_escape(curl, token, 0);
	char *ip = curl_easy_escape(curl, remote_ip, 0);
	char *body = NULL;
	if (secret && response && ip)
		body = xasprintf("secret=%s&response=%s%s%s", secret, response, ip[0] ? "&remoteip=" : "", ip);
	if (secret)
		explicit_bzero(secret, strlen(secret));
	curl_free(secret);
	curl_free(response);
	curl_free(ip);
	return body;
}

bool turnstile_verify(const struct demo *d, const char *token, const char *remote_ip, struct fault *f)
{
	struct buf answer = {0};
	long status = 0;
	CURL *curl = curl_easy_init();
	char *body = curl ? form(curl, d, token, remote_ip) : NULL;
	if (!body) {
		if (curl)
			curl_easy_cleanup(curl);
		return fail(f, E_INTERNAL, "could not prepare the Turnstile check");
	}
	curl_easy_setopt(curl, CURLOPT_URL, d->verify_url);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)d->timeout_ms);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, (long)d->timeout_ms);
	/* No signals (a worker's own handlers), no redirects (the secret
	 * goes to the URL named, nowhere else), only these protocols. */
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https,http");
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, keep);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "isobox");
	CURLcode rc = curl_easy_perform(curl);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(curl);
	explicit_bzero(body, strlen(body));
	free(body);
	bool ok;
	if (rc != CURLE_OK) {
		log_msg("demo: Turnstile's siteverify: %s", curl_easy_strerror(rc));
		ok = fail(f, E_TURNSTILE_UNAVAILABLE, "Turnstile's siteverify did not answer in %lld ms "
			  "(%s); retry shortly", (long long)d->timeout_ms, curl_easy_strerror(rc));
	} else {
		ok = turnstile_judge(d, status, answer.data ? answer.data : "", answer.len, f);
	}
	buf_free(&answer);
	return ok;
}
