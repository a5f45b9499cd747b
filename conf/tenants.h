/*
 * tenants.h: who is calling, and what each caller may use.
 *
 * A caller is a tenant. It proves which with `Authorization: Bearer <key>`;
 * a request from an address in auth.anonymous may come without a key, as
 * the tenant "local". What a tenant may use (struct tenant_limits) comes
 * from tenants.yaml, else the `tenants:` section of isobox.yaml.
 *
 * Keys: "ibx_<id>_<secret>", 8 hex digits of id (not secret: it names the
 * key, to find it and revoke it) and 64 of secret. The keys file holds one
 * line per key, "<id> <tenant> <hash> <created>", where the hash is a
 * BLAKE2b MAC of the whole key under the server's secret (the secret file,
 * made once per deployment). The key itself is printed once, when it is
 * made, and never kept, logged or counted.
 *
 * Ownership: a struct tenants owns everything in it; tenants_free
 * releases it. It is part of struct conf, loaded and reloaded with it.
 */
#ifndef ISOBOX_TENANTS_H
#define ISOBOX_TENANTS_H

#include "lib/base.h"
#include "access.h"
#include <cjson/cJSON.h>

#define TENANT_NAME_MAX 63
#define TENANT_LOCAL "local"
#define KEY_ID_LEN 8
#define KEY_HASH_LEN 32
#define KEY_TEXT_LEN (4 + KEY_ID_LEN + 1 + 64) /* "ibx_" id "_" secret */

/* What a tenant may use. Counts of 0 mean no limit of the tenant's own
 * (the server's own bounds still hold). */
struct tenant_limits {
	int64_t concurrent_executions; /* running at once, on every worker */
	int64_t requests_per_minute;
	int64_t sessions;              /* open at once */
	int64_t session_memory_bytes;  /* the memory limits of its open sessions, summed */
	int64_t memory_bytes;          /* its memory store: keys and values */
	int64_t memory_keys;
	int64_t volumes;
	int64_t volume_bytes;          /* the sizes of its volumes, summed */
	bool network;                  /* may it ask for "network": true */
};

struct tenant {
	char *name;
	struct tenant_limits limits;
};

struct tenant_key {
	char id[KEY_ID_LEN + 1];
	char *tenant;
	unsigned char hash[KEY_HASH_LEN];
};

struct tenants {
	struct cidr_list anonymous;   /* may call without a key, as "local" */
	char *keys_file, *secret_file, *tenants_file;
	struct tenant_limits defaults;
	struct tenant *v;             /* named in tenants.yaml */
	size_t n;
	struct tenant_key *keys;
	size_t n_keys;
	unsigned char secret[32];
	bool has_secret;
};

/*
 * The `auth:` and `tenants:` sections of isobox.yaml (either may be NULL:
 * the defaults), and the files they name, relative to base_dir. A missing
 * keys or tenants file is empty; a keys file without a secret, or any
 * line or entry that does not parse, is an error: never a silently open
 * door.
 */
bool tenants_parse(const cJSON *auth, const cJSON *defaults, const char *base_dir,
		   struct tenants *t, struct fault *f);
void tenants_free(struct tenants *t);

/* The limits of the tenant `name` (the defaults if tenants.yaml does not
 * name it). */
const struct tenant_limits *tenants_limits(const struct tenants *t, const char *name);

/*
 * Whose key is this? The tenant's name (borrowed from t), or NULL for a
 * key that is malformed, unknown or revoked. The comparison takes the same
 * time whatever the key.
 */
const char *tenants_check_key(const struct tenants *t, const char *key);

/* Is name a valid tenant name ([a-z0-9][a-z0-9_-]*, at most 63)? */
bool tenant_name_valid(const char *name);

/*
 * Make a key for tenant: its text (out, KEY_TEXT_LEN + 1) and the line
 * for the keys file (line, at most 200). The secret must be loaded.
 */
void tenants_new_key(const struct tenants *t, const char *tenant, char *out, char *line,
		     size_t line_len);

/* Make a new random secret file at path (0640, never overwriting). */
bool tenants_make_secret(const char *path, struct fault *f);

#endif
