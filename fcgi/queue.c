/*
 * queue.c: the length of a listening socket's accept queue: requests the
 * web server has handed over that no worker has taken yet (queue.h).
 */
#define _GNU_SOURCE
#include "queue.h"
#include "../conf/lib/base.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>

#define TCP_LISTEN_STATE 10 /* TCP_LISTEN in the kernel's state numbers */

/* Unix sockets: ask sock_diag about this socket's inode; for a listening
 * socket its "read queue" is the number of pending connections. */
static int unix_queue(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -1;
	autoclose int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -1;
	struct timeval tv = {.tv_usec = 200 * 1000};
	if (setsockopt(nl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0)
		return -1; /* unbounded, the read below could hold the request */
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req req;
	} msg = {
		.nlh = {.nlmsg_len = sizeof msg, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST},
		.req = {.sdiag_family = AF_UNIX, .udiag_states = 1u << TCP_LISTEN_STATE,
			.udiag_ino = (unsigned)st.st_ino, .udiag_show = UDIAG_SHOW_RQLEN,
			.udiag_cookie = {~0u, ~0u}},
	};
	if (send(nl, &msg, sizeof msg, 0) != (ssize_t)sizeof msg)
		return -1;
	char buf[1024] __attribute__((aligned(4)));
	ssize_t n = recv(nl, buf, sizeof buf, 0);
	if (n <= 0)
		return -1;
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	if (!NLMSG_OK(h, (size_t)n) || h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
		return -1;
	struct unix_diag_msg *m = NLMSG_DATA(h);
	int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
	for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == UNIX_DIAG_RQLEN && RTA_PAYLOAD(a) >= sizeof(struct unix_diag_rqlen))
			return (int)((struct unix_diag_rqlen *)RTA_DATA(a))->udiag_rqueue;
	return -1;
}

int fcgi_queue_length(int fd)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof addr;
	int listening = 0;
	socklen_t olen = sizeof listening;
	if (fd < 0 || getsockname(fd, (struct sockaddr *)&addr, &len) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &olen) < 0 || !listening)
		return -1;
	if (addr.ss_family == AF_UNIX)
		return unix_queue(fd);
	/* TCP: on a listening socket, tcpi_unacked is the accept queue. */
	struct tcp_info ti;
	socklen_t tlen = sizeof ti;
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tlen) < 0)
		return -1;
	return (int)ti.tcpi_unacked;
}
