/* workdir.h: the code directory of a sandbox (workdir.c). */
#ifndef ISOBOX_SANDBOX_WORKDIR_H
#define ISOBOX_SANDBOX_WORKDIR_H

#include "sandbox.h"

/*
 * Make <work_dir>/<instance>.<owner>.XXXXXX holding the job's
 * files, written with O_NOFOLLOW|O_EXCL into a directory nothing else
 * writes. *dir_out gets its full path.
 */
bool workdir_create(const struct conf *c, const struct sandbox_job *job, char **dir_out,
		    struct fault *f);
/* Remove a tree the worker made (no symlink is ever followed). */
void workdir_remove(const char *path);

#endif
