/* agent_files.h: the workspace and the file requests of the session agent (agent_files.c). */
#ifndef ISOBOX_AGENT_FILES_H
#define ISOBOX_AGENT_FILES_H

#include "agent_base.h"
#include <sys/stat.h>

extern int ws_fd; /* the workspace, opened by main */

bool valid_path(const char *p, size_t n, struct why *w);
bool in_path(char *p, unsigned long long len, struct why *w);
int open_parent(char *path, bool make, const char **leaf, struct why *w);
int open_file(char *path, int flags, bool make, struct stat *st, struct why *w);
bool receive_file(char *path, unsigned long long len, unsigned long long n, struct why *w);
void put_request(const char *tag, unsigned long long path_len, unsigned long long data_len);
void get_request(const char *tag, unsigned long long max, unsigned long long path_len);
void list_request(const char *tag, unsigned long long path_len);
void del_request(const char *tag, unsigned long long path_len);

#endif
