/* worker.c: what a worker process holds: its settings and registry. */
#include "worker.h"
#include "../conf/store/store.h"

#include <string.h>

bool worker_load(struct worker *w, char *err, size_t errlen)
{
	struct conf c;
	struct registry r;
	if (!conf_load(w->conf_path, &c, err, errlen))
		return false;
	if (!registry_load(c.registry, c.images_lock, &r, err, errlen)) {
		conf_free(&c);
		return false;
	}
	if (!registry_fits(&r, &c, err, errlen)) {
		registry_free(&r);
		conf_free(&c);
		return false;
	}
	if (!store_conf_same(&w->conf.store, &c.store)) {
		store_close(w->store);
		w->store = NULL;
	}
	conf_free(&w->conf);
	registry_free(&w->reg);
	w->conf = c;
	w->reg = r;
	return true;
}

void worker_describe_runtime(struct worker *w)
{
	char err[256];
	if (!sandbox_runtime_describe(&w->conf, &w->runtime, err, sizeof err))
		log_msg("sandbox runtime unknown: %s", err);
	else if (w->runtime.platform[0])
		log_msg("sandbox runtime: %s %s, platform %s", w->runtime.program, w->runtime.version,
			w->runtime.platform);
	else
		log_msg("sandbox runtime: %s %s", w->runtime.program, w->runtime.version);
}

struct store *worker_store(struct worker *w, struct fault *f)
{
	if (!w->store)
		w->store = store_open(&w->conf.store, w->conf.instance, f);
	return w->store;
}

void worker_free(struct worker *w)
{
	store_close(w->store);
	w->store = NULL;
	conf_free(&w->conf);
	registry_free(&w->reg);
}
