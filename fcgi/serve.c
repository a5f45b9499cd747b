/* serve.c: the request loop of a worker process, and config reloads between requests. */
#define _GNU_SOURCE
#include "serve.h"
#include "admin.h"
#include "routes.h"
#include "scoreboard.h"
#include "../sandbox/sandbox.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <stdio.h>
#include <string.h>

/*
 * A write to the web server that makes no progress for this long fails, and
 * the run is killed as for a departed client. libfcgi writes block, and a
 * reader that stops reading (a stalled SSE client behind the server) would
 * otherwise hold the worker forever. Streams send a heartbeat every second,
 * so a healthy path never stalls this long.
 */
#define CLIENT_WRITE_TIMEOUT_S 5
/* The same for reads: a request body that trickles in must not hold a
 * worker (and its execution slot) until the master's hang backstop. */
#define CLIENT_READ_TIMEOUT_S 10

/* Bounds on reading what a CGI request left unread (see drain_cgi_body). */
#define CGI_DRAIN_MAX_BYTES (64 << 20)
#define CGI_DRAIN_IDLE_MS 1000

static volatile sig_atomic_t reload_requested;

static void on_hup(int sig)
{
	(void)sig;
	reload_requested = 1;
}

static void on_term(int sig)
{
	(void)sig;
	sandbox_stop_requested = 1; /* a run in progress is killed */
	FCGX_ShutdownPending();     /* accept() stops waiting */
}

/* Between requests only: a request in flight keeps the config it began with. */
static void maybe_reload(struct worker *w)
{
	if (!reload_requested)
		return;
	reload_requested = 0;
	if (worker_load(w, w->reload_error, sizeof w->reload_error)) {
		w->reload_error[0] = '\0';
		log_msg("reloaded %s (%zu language versions)", w->conf_path, w->reg.n);
	} else {
		log_msg("reload failed, keeping the previous config: %s", w->reload_error);
	}
}

void serve_install_handlers(void)
{
	/* SIGHUP only marks a reload for between requests (and is held while
	 * one is served: worker_serve). SIGTERM without SA_RESTART: a blocking
	 * poll() in a run must see the stop. */
	struct sigaction sa = {.sa_handler = on_hup, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGHUP, &sa, NULL) < 0)
		die("sigaction: %s", strerror(errno));
	sa.sa_handler = on_term;
	sa.sa_flags = 0;
	if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0)
		die("sigaction: %s", strerror(errno));
	signal(SIGPIPE, SIG_IGN);
}

/* Recycle after pool.maxRequests, php-fpm style; only with a master to
 * start the replacement. */
static bool should_recycle(const struct worker *w)
{
	return w->pooled && w->conf.pool.max_requests > 0 && w->served >= w->conf.pool.max_requests;
}

int serve_fastcgi(struct worker *w)
{
	FCGX_Request req;
	serve_install_handlers();
	if (FCGX_Init() != 0)
		die("FCGX_Init failed");
	FCGX_InitRequest(&req, w->listen_fd, 0);
	/*
	 * A reload happens between requests, so SIGHUP is held while one is
	 * served: a socket read or write with a timeout is never restarted
	 * after a handler (SA_RESTART or not), and libfcgi would take the
	 * EINTR for a broken connection. It arrives at the next accept.
	 */
	sigset_t hup;
	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	while (!sandbox_stop_requested && !should_recycle(w) && FCGX_Accept_r(&req) >= 0) {
		if (sigprocmask(SIG_BLOCK, &hup, NULL) < 0) /* EINVAL/EFAULT only: a bug */
			die("sigprocmask: %s", strerror(errno));
		maybe_reload(w);
		struct timeval wt = {.tv_sec = CLIENT_WRITE_TIMEOUT_S};
		struct timeval rt = {.tv_sec = CLIENT_READ_TIMEOUT_S};
		if (setsockopt(req.ipcFd, SOL_SOCKET, SO_SNDTIMEO, &wt, sizeof wt) < 0 ||
		    setsockopt(req.ipcFd, SOL_SOCKET, SO_RCVTIMEO, &rt, sizeof rt) < 0)
			log_msg("cannot bound reads and writes to the web server: %s", strerror(errno));
		/* Published for the master's hang backstop (pool.c). */
		scoreboard_busy(w->board, w->slot, now_ms() + admin_hang_bound_ms(w));
		struct http_io io = {.fcgi = &req};
		route_request(w, &io);
		FCGX_Finish_r(&req);
		sandbox_settle(); /* the clean-up, after the answer */
		scoreboard_busy(w->board, w->slot, 0);
		if (sigprocmask(SIG_UNBLOCK, &hup, NULL) < 0)
			die("sigprocmask: %s", strerror(errno));
	}
	FCGX_Free(&req, 1);
	if (should_recycle(w)) {
		log_msg("worker %d recycled after %lld requests", (int)getpid(), (long long)w->served);
		return WORKER_EXIT_RECYCLED;
	}
	return 0;
}

/*
 * Apache's mod_cgi and mod_cgid write the whole request body before they
 * read the answer: an answer given without reading the body (413 on the
 * stated length, 404, 415, ...) would end there in a broken pipe and no
 * response at all. So read what is left, once the (small) answer is written.
 * Bounded in bytes, and by a pause, in case a server never closes stdin.
 */
static void drain_cgi_body(void)
{
	char chunk[16384];
	size_t total = 0;
	struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
	while (total < CGI_DRAIN_MAX_BYTES) {
		int ready = poll(&pfd, 1, CGI_DRAIN_IDLE_MS);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0)
			return;
		ssize_t got = read(STDIN_FILENO, chunk, sizeof chunk);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return;
		total += (size_t)got;
	}
	log_msg("CGI request body over %d bytes left unread", CGI_DRAIN_MAX_BYTES);
}

void serve_cgi(struct worker *w)
{
	serve_install_handlers();
	struct http_io io = {0};
	route_request(w, &io);
	drain_cgi_body();
	fflush(stdout);
	sandbox_settle();
}
