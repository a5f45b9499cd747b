/*
 * keys.h: the operator's key commands (isobox-fcgi --new-key, --revoke-key,
 * --list-keys), which edit the keys file that conf/tenants.h reads.
 */
#ifndef ISOBOX_KEYS_H
#define ISOBOX_KEYS_H

#include "../conf/conf.h"

/* Make a key for tenant and print it, once, on stdout: 0, or 1 with why
 * on stderr. Makes the secret file first if there is none. */
int keys_new(const char *conf_path, const struct conf *c, const char *tenant);
/* Take the key with this id out of the keys file. */
int keys_revoke(const struct conf *c, const char *id);
/* The keys' ids, tenants and creation times (never a hash). */
int keys_list(const struct conf *c);

#endif
