/* runc_spec.c: the OCI spec of a runc sandbox, changed (runc_spec.h). */
#define _GNU_SOURCE
#include "runc_spec.h"

#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

static bool refuse(char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "%s", why);
	return false;
}

static bool is_id(const cJSON *v, double id)
{
	return cJSON_IsNumber(v) && v->valuedouble == id;
}

/* [{"containerID": 0, "hostID": 0, "size": 1},
 *  {"containerID": 65534, "hostID": host_id, "size": 1}] */
static cJSON *mappings(unsigned host_id)
{
	cJSON *a = cJSON_CreateArray();
	const double pairs[2][2] = {{0, 0}, {SANDBOX_ID, host_id}};
	for (int i = 0; i < 2; i++) {
		cJSON *m = cJSON_CreateObject();
		cJSON_AddNumberToObject(m, "containerID", pairs[i][0]);
		cJSON_AddNumberToObject(m, "hostID", pairs[i][1]);
		cJSON_AddNumberToObject(m, "size", 1);
		cJSON_AddItemToArray(a, m);
	}
	return a;
}

static void replace(cJSON *obj, const char *key, cJSON *value)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	cJSON_AddItemToObject(obj, key, value);
}

/*
 * Docker mounts /dev/pts with gid=5 (tty), a group the namespace does not
 * map, which the kernel refuses (EINVAL). Without the option the ptys
 * belong to the namespace's root group, and a program can still open one.
 */
static void unmapped_gid_options(cJSON *mounts)
{
	cJSON *m;
	cJSON_ArrayForEach(m, mounts) {
		cJSON *opts = cJSON_GetObjectItemCaseSensitive(m, "options");
		for (int i = cJSON_GetArraySize(opts) - 1; i >= 0; i--) {
			const char *o = cJSON_GetStringValue(cJSON_GetArrayItem(opts, i));
			if (o && (!strncmp(o, "gid=", 4) || !strncmp(o, "uid=", 4)) &&
			    strcmp(o + 4, "0") && strcmp(o + 4, "65534"))
				cJSON_DeleteItemFromArray(opts, i);
		}
	}
}

static bool has_option(const cJSON *opts, const char *want)
{
	const cJSON *o;
	cJSON_ArrayForEach(o, opts) {
		if (cJSON_IsString(o) && !strcmp(o->valuestring, want))
			return true;
	}
	return false;
}

/*
 * runc gives a mount point back the mode its directory had in the image
 * after mounting over it: /box (0755 in our images) would lose its
 * mode=1777 and be root's alone. Each world-writable tmpfs is therefore
 * the sandbox user's own as well, whatever mode it ends with.
 */
static void tmpfs_for_the_sandbox(cJSON *mounts)
{
	cJSON *m;
	cJSON_ArrayForEach(m, mounts) {
		cJSON *opts = cJSON_GetObjectItemCaseSensitive(m, "options");
		const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "type"));
		if (!type || strcmp(type, "tmpfs") || !has_option(opts, "mode=1777") ||
		    has_option(opts, "uid=65534"))
			continue;
		cJSON_AddItemToArray(opts, cJSON_CreateString("uid=65534"));
		cJSON_AddItemToArray(opts, cJSON_CreateString("gid=65534"));
	}
}

bool runc_spec_userns(cJSON *spec, unsigned host_id, char *err, size_t errlen)
{
	if (host_id == 0 || host_id == SANDBOX_ID)
		return refuse(err, errlen, "the host id for uid 65534 must be neither 0 nor 65534");
	const cJSON *user = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(spec, "process"), "user");
	if (!is_id(cJSON_GetObjectItemCaseSensitive(user, "uid"), SANDBOX_ID) ||
	    !is_id(cJSON_GetObjectItemCaseSensitive(user, "gid"), SANDBOX_ID))
		return refuse(err, errlen, "not a sandbox: its user is not 65534:65534");
	const cJSON *groups = cJSON_GetObjectItemCaseSensitive(user, "additionalGids");
	const cJSON *g;
	cJSON_ArrayForEach(g, groups) {
		if (!is_id(g, SANDBOX_ID))
			return refuse(err, errlen, "not a sandbox: it has groups other than 65534");
	}
	cJSON *linux = cJSON_GetObjectItemCaseSensitive(spec, "linux");
	cJSON *ns = cJSON_GetObjectItemCaseSensitive(linux, "namespaces");
	if (!cJSON_IsArray(ns))
		return refuse(err, errlen, "no linux.namespaces in the spec");
	bool have_user = false;
	cJSON *n;
	cJSON_ArrayForEach(n, ns) {
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(n, "type");
		if (!cJSON_IsString(type) || strcmp(type->valuestring, "user"))
			continue;
		if (cJSON_GetObjectItemCaseSensitive(n, "path"))
			return refuse(err, errlen, "the spec joins a user namespace of another");
		have_user = true;
	}
	if (!have_user) {
		cJSON *u = cJSON_CreateObject();
		cJSON_AddStringToObject(u, "type", "user");
		cJSON_AddItemToArray(ns, u);
	}
	replace(linux, "uidMappings", mappings(host_id));
	replace(linux, "gidMappings", mappings(host_id));
	unmapped_gid_options(cJSON_GetObjectItemCaseSensitive(spec, "mounts"));
	tmpfs_for_the_sandbox(cJSON_GetObjectItemCaseSensitive(spec, "mounts"));
	/* Docker opens ICMP echo sockets to every group, 0-2147483647, which
	 * the kernel refuses in a namespace that maps two; the netns's own
	 * default is "1 0", none, as a sandbox without raw sockets expects. */
	cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(linux, "sysctl"),
						"net.ipv4.ping_group_range");

	/* The prestart hook charges socket buffers up to this limit. */
	const cJSON *limit = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(linux, "resources"), "memory"), "limit");
	if (!cJSON_IsNumber(limit) || limit->valuedouble <= 0)
		return refuse(err, errlen, "no memory limit in the spec: socket buffers would be unbounded");
	return true;
}

void runc_spec_keep_bind_flags(cJSON *spec, bool (*source_flags)(const char *path, unsigned long *flags))
{
	static const struct {
		unsigned long flag;
		const char *option;
	} kept[] = {{ST_NOSUID, "nosuid"}, {ST_NODEV, "nodev"}, {ST_NOEXEC, "noexec"},
		    {ST_NOATIME, "noatime"}, {ST_NODIRATIME, "nodiratime"}};
	cJSON *m;
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(spec, "mounts")) {
		cJSON *opts = cJSON_GetObjectItemCaseSensitive(m, "options");
		const char *source = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "source"));
		unsigned long flags;
		if (!source || !has_option(opts, "ro") || !(has_option(opts, "bind") || has_option(opts, "rbind")) ||
		    !source_flags(source, &flags))
			continue; /* unknown: runc's bind fails as it would have */
		for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
			if ((flags & kept[i].flag) && !has_option(opts, kept[i].option))
				cJSON_AddItemToArray(opts, cJSON_CreateString(kept[i].option));
		/* Neither noatime nor relatime: the source is strictatime, which
		 * a remount without a word for it would make relatime. */
		if (!(flags & (ST_NOATIME | ST_RELATIME)) && !has_option(opts, "strictatime"))
			cJSON_AddItemToArray(opts, cJSON_CreateString("strictatime"));
	}
}

void runc_spec_prestart_hook(cJSON *spec, const char *hook_path)
{
	cJSON *hooks = cJSON_GetObjectItemCaseSensitive(spec, "hooks");
	if (!cJSON_IsObject(hooks)) {
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "hooks");
		hooks = cJSON_AddObjectToObject(spec, "hooks");
	}
	cJSON *prestart = cJSON_GetObjectItemCaseSensitive(hooks, "prestart");
	if (!cJSON_IsArray(prestart)) {
		cJSON_DeleteItemFromObjectCaseSensitive(hooks, "prestart");
		prestart = cJSON_AddArrayToObject(hooks, "prestart");
	}
	const cJSON *h;
	cJSON_ArrayForEach(h, prestart) {
		const cJSON *path = cJSON_GetObjectItemCaseSensitive(h, "path");
		const cJSON *arg = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(h, "args"), 1);
		if (cJSON_IsString(path) && !strcmp(path->valuestring, hook_path) &&
		    cJSON_IsString(arg) && !strcmp(arg->valuestring, "--isobox-hook=prestart"))
			return; /* there already */
	}
	cJSON *hook = cJSON_CreateObject();
	cJSON_AddStringToObject(hook, "path", hook_path);
	const char *args[] = {"isobox-runc", "--isobox-hook=prestart"};
	cJSON_AddItemToObject(hook, "args", cJSON_CreateStringArray(args, 2));
	cJSON_AddItemToArray(prestart, hook);
}
