/* queue.h: how many connections wait on a listening socket for a worker. */
#ifndef ISOBOX_QUEUE_H
#define ISOBOX_QUEUE_H

/*
 * The accept queue of a listening socket (unix: from the kernel's
 * sock_diag; TCP: TCP_INFO), or -1 if it cannot be told (not a listening
 * socket, fd < 0, a kernel without sock_diag).
 */
int fcgi_queue_length(int fd);

#endif
