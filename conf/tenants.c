/*
 * tenants.c: the `auth:` and `tenants:` sections, the files they name
 * (keys, secret, tenants.yaml), and checking a key (tenants.h).
 */
#define _GNU_SOURCE
#include "tenants.h"
#include "lib/json.h"
#include "lib/yaml_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

bool tenant_name_valid(const char *name)
{
	size_t n = 0;
	for (; name[n]; n++) {
		char c = name[n];
		bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (n > 0 && (c == '-' || c == '_'));
		if (!ok)
			return false;
	}
	return n > 0 && n <= TENANT_NAME_MAX;
}

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static void hash_key(const unsigned char secret[32], const char *key, unsigned char out[KEY_HASH_LEN])
{
	crypto_generichash(out, KEY_HASH_LEN, (const unsigned char *)key, strlen(key), secret, 32);
}

static void to_hex(const unsigned char *in, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", in[i]);
}

static void from_hex(const char *in, size_t n, unsigned char *out)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		sscanf(in + 2 * i, "%2x", &v);
		out[i] = (unsigned char)v;
	}
}

/* What one tenant's entry says, on top of `base`. */
static bool parse_limits(const cJSON *o, const char *what, const struct tenant_limits *base,
			 struct tenant_limits *l, struct fault *f)
{
	static const char *const keys[] = {"concurrentExecutions", "requestsPerMinute", "sessions",
		"sessionMemoryBytes", "memoryBytes", "memoryKeys", "volumes", "volumeBytes", "network", NULL};
	struct {
		const char *key;
		int64_t *out;
	} ints[] = {
		{"concurrentExecutions", &l->concurrent_executions},
		{"requestsPerMinute", &l->requests_per_minute},
		{"sessions", &l->sessions},
		{"sessionMemoryBytes", &l->session_memory_bytes},
		{"memoryBytes", &l->memory_bytes},
		{"memoryKeys", &l->memory_keys},
		{"volumes", &l->volumes},
		{"volumeBytes", &l->volume_bytes},
	};
	*l = *base;
	if (!o)
		return true;
	if (!json_object(o, what, f) || !json_known_keys(o, keys, what, f))
		return false;
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, ints[i].key);
		char name[128];
		snprintf(name, sizeof name, "%s.%s", what, ints[i].key);
		if (v && !json_int(v, name, 0, (int64_t)1 << 50, ints[i].out, f))
			return false;
	}
	const cJSON *net = cJSON_GetObjectItemCaseSensitive(o, "network");
	return !net || json_bool(net, "network", &l->network, f);
}

static bool load_secret(struct tenants *t, struct fault *f)
{
	struct buf text = {0};
	char err[300];
	struct stat st;
	autoclose int fd = open(t->secret_file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || fail(f, E_INVALID_VALUE, "%s: %s", t->secret_file, strerror(errno));
	if (fstat(fd, &st) == 0 && (st.st_mode & 0007))
		return fail(f, E_INVALID_VALUE, "%s is readable by anyone: chmod 0640 it", t->secret_file);
	if (!read_file(t->secret_file, 256, &text, err, sizeof err))
		return fail(f, E_INVALID_VALUE, "%s", err);
	bool ok = (text.len == 64 || (text.len == 65 && text.data[64] == '\n')) && is_hex(text.data, 64);
	if (ok)
		from_hex(text.data, 32, t->secret);
	sodium_memzero(text.data, text.len);
	buf_free(&text);
	t->has_secret = ok;
	return ok || fail(f, E_INVALID_VALUE, "%s must hold 64 hex digits", t->secret_file);
}

/* One line of the keys file: "<id> <tenant> <hash> <created>". */
static bool parse_key_line(struct tenants *t, char *line, size_t lineno, struct fault *f)
{
	char id[32], tenant[80], hash[80], created[80];
	if (sscanf(line, "%31s %79s %79s %79s", id, tenant, hash, created) != 4 ||
	    strlen(id) != KEY_ID_LEN || !is_hex(id, KEY_ID_LEN) || !tenant_name_valid(tenant) ||
	    strlen(hash) != 2 * KEY_HASH_LEN || !is_hex(hash, 2 * KEY_HASH_LEN))
		return fail(f, E_INVALID_VALUE, "%s:%zu: expected \"<id> <tenant> <hash> <created>\"",
			    t->keys_file, lineno);
	for (size_t i = 0; i < t->n_keys; i++)
		if (!strcmp(t->keys[i].id, id))
			return fail(f, E_INVALID_VALUE, "%s:%zu: key %s twice", t->keys_file, lineno, id);
	t->keys = xrealloc(t->keys, (t->n_keys + 1) * sizeof *t->keys);
	struct tenant_key *k = &t->keys[t->n_keys++];
	snprintf(k->id, sizeof k->id, "%s", id);
	k->tenant = xstrdup(tenant);
	from_hex(hash, KEY_HASH_LEN, k->hash);
	return true;
}

static bool load_keys(struct tenants *t, struct fault *f)
{
	struct buf text = {0};
	char err[300];
	if (access(t->keys_file, F_OK) != 0 && errno == ENOENT)
		return true;
	if (!read_file(t->keys_file, 16 << 20, &text, err, sizeof err))
		return fail(f, E_INVALID_VALUE, "%s", err);
	bool ok = true;
	size_t lineno = 0;
	for (char *line = text.data, *next; ok && line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line += strspn(line, " \t");
		if (*line && *line != '#')
			ok = parse_key_line(t, line, lineno, f);
	}
	buf_free(&text);
	if (ok && t->n_keys && !t->has_secret)
		return fail(f, E_INVALID_VALUE, "%s has keys but %s is missing: the keys cannot be checked",
			    t->keys_file, t->secret_file);
	return ok;
}

static bool load_tenants(struct tenants *t, struct fault *f)
{
	char err[300];
	if (access(t->tenants_file, F_OK) != 0 && errno == ENOENT)
		return true;
	cJSON *root = yaml_load_file(t->tenants_file, err, sizeof err);
	if (!root)
		return fail(f, E_INVALID_VALUE, "%s", err);
	static const char *const top[] = {"tenants", NULL};
	const cJSON *all = cJSON_GetObjectItemCaseSensitive(root, "tenants");
	bool ok = json_object(root, t->tenants_file, f) && json_known_keys(root, top, t->tenants_file, f) &&
		  (!all || json_object(all, "tenants", f));
	const cJSON *e;
	if (ok && all)
		cJSON_ArrayForEach(e, all) {
			char what[128];
			snprintf(what, sizeof what, "tenants.%.60s", e->string);
			if (!tenant_name_valid(e->string)) {
				ok = fail(f, E_INVALID_VALUE, "%s: tenant names are [a-z0-9][a-z0-9_-]*, "
					  "at most %d", what, TENANT_NAME_MAX);
				break;
			}
			t->v = xrealloc(t->v, (t->n + 1) * sizeof *t->v);
			struct tenant *tn = &t->v[t->n++];
			tn->name = xstrdup(e->string);
			/* "local" starts from no limits of its own (see tenants_limits). */
			static const struct tenant_limits unlimited = {.network = true};
			if (!(ok = parse_limits(cJSON_IsNull(e) ? NULL : e, what,
						strcmp(tn->name, TENANT_LOCAL) ? &t->defaults : &unlimited,
						&tn->limits, f)))
				break;
		}
	cJSON_Delete(root);
	return ok;
}

bool tenants_parse(const cJSON *auth, const cJSON *defaults, const char *base_dir,
		   struct tenants *t, struct fault *f)
{
	static const char *const keys[] = {"anonymous", "keysFile", "secretFile", "tenantsFile", NULL};
	static const struct tenant_limits builtin = {
		.concurrent_executions = 4, .requests_per_minute = 600, .sessions = 4,
		.session_memory_bytes = (int64_t)2 << 30, .memory_bytes = 64 << 20,
		.memory_keys = 10000, .volumes = 4, .volume_bytes = (int64_t)1 << 30, .network = true};
	*t = (struct tenants){0};
	if (sodium_init() < 0)
		return fail(f, E_INTERNAL, "libsodium did not start");
	if (auth && (!json_object(auth, "auth", f) || !json_known_keys(auth, keys, "auth", f)))
		return false;
	const cJSON *anon = auth ? cJSON_GetObjectItemCaseSensitive(auth, "anonymous") : NULL;
	char why[160];
	if (anon) {
		if (!cidr_list_parse(anon, "auth.anonymous", &t->anonymous, f))
			return false;
	} else {
		t->anonymous = (struct cidr_list){.v = xcalloc(2, sizeof *t->anonymous.v), .n = 2};
		cidr_parse("127.0.0.1/32", &t->anonymous.v[0], why, sizeof why);
		cidr_parse("::1/128", &t->anonymous.v[1], why, sizeof why);
	}
	struct {
		const char *key, *def;
		char **out;
	} files[] = {
		{"keysFile", "keys", &t->keys_file},
		{"secretFile", "keys.secret", &t->secret_file},
		{"tenantsFile", "tenants.yaml", &t->tenants_file},
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		const cJSON *v = auth ? cJSON_GetObjectItemCaseSensitive(auth, files[i].key) : NULL;
		const char *s = files[i].def;
		if (v && !json_string(v, files[i].key, &s, f))
			return false;
		if (!s[0])
			return fail(f, E_INVALID_VALUE, "auth.%s must not be empty", files[i].key);
		*files[i].out = path_join(base_dir, s);
	}
	return parse_limits(defaults, "tenants", &builtin, &t->defaults, f) &&
	       load_secret(t, f) && load_keys(t, f) && load_tenants(t, f);
}

void tenants_free(struct tenants *t)
{
	free(t->anonymous.v);
	free(t->keys_file);
	free(t->secret_file);
	free(t->tenants_file);
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	for (size_t i = 0; i < t->n_keys; i++)
		free(t->keys[i].tenant);
	free(t->keys);
	sodium_memzero(t->secret, sizeof t->secret);
	*t = (struct tenants){0};
}

const struct tenant_limits *tenants_limits(const struct tenants *t, const char *name)
{
	static const struct tenant_limits unlimited = {.network = true};
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].name, name))
			return &t->v[i].limits;
	/* The anonymous caller is this machine's own user: bounded by the
	 * pool, not by a share, unless tenants.yaml names it. */
	return strcmp(name, TENANT_LOCAL) ? &t->defaults : &unlimited;
}

const char *tenants_check_key(const struct tenants *t, const char *key)
{
	static const unsigned char none[KEY_HASH_LEN];
	if (!t->has_secret || strlen(key) != KEY_TEXT_LEN || strncmp(key, "ibx_", 4) ||
	    key[4 + KEY_ID_LEN] != '_' || !is_hex(key + 4, KEY_ID_LEN) ||
	    !is_hex(key + 5 + KEY_ID_LEN, 64))
		return NULL;
	const struct tenant_key *found = NULL;
	for (size_t i = 0; i < t->n_keys; i++)
		if (!strncmp(t->keys[i].id, key + 4, KEY_ID_LEN))
			found = &t->keys[i];
	unsigned char h[KEY_HASH_LEN];
	hash_key(t->secret, key, h);
	/* Compared whether or not the id was found: the same work either way. */
	bool same = sodium_memcmp(h, found ? found->hash : none, KEY_HASH_LEN) == 0;
	return same && found ? found->tenant : NULL;
}

void tenants_new_key(const struct tenants *t, const char *tenant, char *out, char *line,
		     size_t line_len)
{
	unsigned char id[KEY_ID_LEN / 2], secret[32], h[KEY_HASH_LEN];
	char id_hex[KEY_ID_LEN + 1], secret_hex[65], hash_hex[2 * KEY_HASH_LEN + 1], when[32];
	randombytes_buf(id, sizeof id);
	randombytes_buf(secret, sizeof secret);
	to_hex(id, sizeof id, id_hex);
	to_hex(secret, sizeof secret, secret_hex);
	snprintf(out, KEY_TEXT_LEN + 1, "ibx_%s_%s", id_hex, secret_hex);
	hash_key(t->secret, out, h);
	to_hex(h, sizeof h, hash_hex);
	time_t now = time(NULL);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	snprintf(line, line_len, "%s %s %s %s\n", id_hex, tenant, hash_hex, when);
	sodium_memzero(secret, sizeof secret);
	sodium_memzero(secret_hex, sizeof secret_hex);
}

bool tenants_make_secret(const char *path, struct fault *f)
{
	unsigned char secret[32];
	char hex[66];
	randombytes_buf(secret, sizeof secret);
	to_hex(secret, sizeof secret, hex);
	strcat(hex, "\n");
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	bool ok = fd >= 0 && write(fd, hex, 65) == 65 && fsync(fd) == 0;
	int saved = errno;
	if (fd >= 0)
		close(fd);
	sodium_memzero(secret, sizeof secret);
	sodium_memzero(hex, sizeof hex);
	return ok || fail(f, E_INVALID_VALUE, "cannot make %s: %s", path, strerror(saved));
}
