/* worker.c: what a worker process holds: its settings and registry. */
#include "worker.h"

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
	conf_free(&w->conf);
	registry_free(&w->reg);
	w->conf = c;
	w->reg = r;
	return true;
}

void worker_free(struct worker *w)
{
	conf_free(&w->conf);
	registry_free(&w->reg);
}
