/*
 * types.h: the store's records and settings, shared by its face
 * (store.h) and its backends (sqlite*.c on SQLite, redis*.c on Redis).
 */
#ifndef ISOBOX_STORE_TYPES_H
#define ISOBOX_STORE_TYPES_H

#include "../lib/base.h"

enum store_backend { STORE_NONE, STORE_SQLITE, STORE_REDIS };

/* store: in isobox.yaml. Ownership: the strings are the struct's. */
struct store_conf {
	enum store_backend backend;
	char *path;           /* sqlite: the file */
	char *address;        /* redis: "unix:/path" or "host:port" */
	char *password_file;  /* redis: AUTH with what it holds; NULL: none */
	char *prefix;         /* redis: every key starts with it */
	int64_t timeout_ms;   /* redis: connecting, and each command */
};

/* How long a claim or a host's liveness lasts without renewal. */
#define STORE_LEASE_MS 10000
/* No run holds a running claim this long (its bound is minutes): an older
 * one lost its release, and the upkeep drops it (Redis). */
#define STORE_CLAIM_MAX_MS (15 * 60 * 1000)
/* The upkeep's view of a host's sessions may be this old by the time the
 * store hears it (a session being made is listed within its start time):
 * session claims younger than this, made or released, are left as they are. */
#define STORE_SESSION_GRACE_MS 60000

/* A session's claim (store.h): whose, and the memory it holds. */
struct session_claim {
	const char *id, *tenant;
	int64_t memory_bytes;
};

/* The memory store (store.h). */
struct memory_item {
	char *key;
	struct buf value;       /* empty for listings */
	char content_type[128];
	char etag[17];          /* 16 hex digits; quoted in HTTP */
	int64_t size;           /* bytes of the value */
	int64_t updated_ms;     /* wall clock */
	int64_t expires_ms;     /* 0: never */
};

/* A write's condition on what is there now (If-Match / If-None-Match). */
enum memory_cond {
	MEMORY_ANY,       /* no condition */
	MEMORY_IF_MATCH,  /* only if it is there with this etag */
	MEMORY_IF_EXISTS, /* only if it is there (If-Match: *) */
	MEMORY_IF_ABSENT, /* only if it is not (If-None-Match: *) */
};

struct memory_quota {
	int64_t bytes; /* keys and values of a tenant, summed */
	int64_t keys;
};

/* Volume records (store.h). */
#define VOLUME_ID_LEN 32
#define VOLUME_NAME_MAX 63

struct volume {
	char name[VOLUME_NAME_MAX + 1];
	char id[VOLUME_ID_LEN + 1];
	char state[16];       /* creating, ready, deleting */
	int64_t size_bytes;
	int64_t created_ms;   /* wall clock */
	char host[64];        /* the host whose disk holds its bytes (conf's instance) */
};

/* Who marks a volume in use (store.h): a worker's request, or a
 * session for its life. The letter is what the store keeps. */
enum volume_user { VOLUME_BY_WORKER = 'w', VOLUME_BY_SESSION = 's' };

#endif
