#define _GNU_SOURCE
/* Listing containers (sandbox/docker_list.c): the API's JSON and the CLI's
 * lines read into one shape; the query sent to a stand-in dockerd; and the
 * CLI (a shell stand-in) when the socket cannot be reached. No docker. */
#include "tap.h"
#include "fixtures.h"
#include "../../sandbox/docker_list.h"

#include <signal.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char LISTED[] =
	"[{\"Id\":\"" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" "\","
	"\"Names\":[\"/isobox-main-1\"],\"State\":\"running\","
	"\"Labels\":{\"isobox.instance\":\"main\",\"isobox.kind\":\"session\",\"isobox.owner\":\"12.34\","
	"\"isobox.session\":\"h-0123\"}},"
	"{\"Id\":\"bbb\",\"Names\":[\"isobox-main-2\"],\"State\":\"dead\",\"Labels\":null},"
	"{\"Names\":[\"/no-id\"]},"
	"{\"Id\":\"ccc\",\"State\":7,\"Labels\":{\"isobox.kind\":5}}]";

/* Answer one request with LISTED; its first line goes to log_fd. */
static void serve_once(int listener, int log_fd)
{
	int fd = accept(listener, NULL, NULL);
	char req[2048] = "";
	ssize_t got = read(fd, req, sizeof req - 1);
	char *eol = got > 0 ? strstr(req, "\r\n") : NULL;
	if (eol)
		dprintf(log_fd, "%.*s\n", (int)(eol - req), req);
	dprintf(fd, "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n%s\n", LISTED);
	close(fd);
}

UNIT_TEST(test_docker_list)
{
	struct docker_list l = {0};
	ok(docker_list_parse_json(LISTED, sizeof LISTED - 1, &l) && l.n == 3,
	   "docker list: three entries with an id, of four (%zu)", l.n);
	ok(l.n == 3 && strlen(l.v[0].id) == 64 && !strcmp(l.v[0].name, "isobox-main-1") &&
	   !strcmp(l.v[0].state, "running") && !strcmp(l.v[0].kind, "session") && !strcmp(l.v[0].owner, "12.34") &&
	   !strcmp(l.v[0].session, "h-0123"), "docker list: the full id, the name without its '/', state, labels");
	ok(l.n == 3 && !strcmp(l.v[1].name, "isobox-main-2") && !strcmp(l.v[1].state, "dead") && !*l.v[1].kind &&
	   !*l.v[1].owner, "docker list: no labels read as empty ones");
	ok(l.n == 3 && !strcmp(l.v[2].id, "ccc") && !*l.v[2].name && !*l.v[2].state && !*l.v[2].kind,
	   "docker list: fields of the wrong type read as empty");
	docker_list_free(&l);
	ok(!docker_list_parse_json("{\"message\":\"x\"}", 15, &l) && l.n == 0 &&
	   !docker_list_parse_json("[{\"Id\":", 7, &l) && l.n == 0, "docker list: an error object or cut JSON is no list");

	char cli[] = "id1\tisobox-main-1\trunning\tcold\t10.20\t\n"
		     "\n"
		     "id2\t\texited\t\t\n"
		     "id3\n"
		     "\tno-id\trunning\tcold\t1.2\t\n";
	ok(docker_list_parse_cli(cli, &l) && l.n == 3, "docker list: CLI lines with an id (%zu)", l.n);
	ok(l.n == 3 && !strcmp(l.v[0].id, "id1") && !strcmp(l.v[0].kind, "cold") && !strcmp(l.v[0].owner, "10.20") &&
	   !*l.v[0].session && !strcmp(l.v[1].state, "exited") && !*l.v[1].name && !*l.v[1].kind &&
	   !strcmp(l.v[2].id, "id3") && !*l.v[2].state, "docker list: empty CLI fields stay in their place");
	docker_list_free(&l);

	/* The API: the query a stand-in dockerd is sent. */
	char dir[] = "/tmp/isobox-list.XXXXXX";
	autofree char *sock = NULL;
	int log_fd;
	pid_t server = fixture_dockerd(dir, serve_once, &sock, &log_fd);
	ok(server > 0, "docker list: a stand-in dockerd listens");
	struct conf c = {.docker = "/bin/false", .docker_socket = sock};
	const char *filters[] = {"label=isobox.instance=main", "label=isobox.kind=session", "volume=/v/a b", NULL};
	ok(docker_list(&c, filters, true, now_ms() + 5000, &l) && l.n == 3, "docker list: through the API");
	docker_list_free(&l);
	waitpid(server, NULL, 0);
	char req[1024] = "";
	ssize_t got = read(log_fd, req, sizeof req - 1);
	req[got > 0 ? got : 0] = '\0';
	close(log_fd);
	ok(!strcmp(req, "GET /containers/json?all=1&filters=%7B%22label%22%3A%5B%22isobox.instance%3Dmain%22%2C"
			"%22isobox.kind%3Dsession%22%5D%2C%22volume%22%3A%5B%22%2Fv%2Fa%20b%22%5D%7D HTTP/1.0\n"),
	   "docker list: the filters as dockerd's JSON, percent-encoded (%s)", req);

	/* No socket: the CLI, with the same filters as its words. */
	unlink(sock);
	autofree char *script = xasprintf("%s/docker", dir);
	FILE *f = fopen(script, "w");
	ok(f != NULL, "docker list: a stand-in CLI");
	if (f) {
		fprintf(f, "#!/bin/sh\n[ \"$*\" = 'ps --no-trunc --format={{.ID}}\t{{.Names}}\t{{.State}}\t"
			   "{{.Label \"isobox.kind\"}}\t{{.Label \"isobox.owner\"}}\t{{.Label \"isobox.session\"}} "
			   "--filter volume=/v/x' ] || exit 1\nprintf 'id9\\tisobox-main-9\\trunning\\tcold\\t1.2\\t\\n'\n");
		fclose(f);
		chmod(script, 0700);
	}
	c.docker = script;
	const char *volume[] = {"volume=/v/x", NULL};
	ok(docker_list(&c, volume, false, now_ms() + 5000, &l) && l.n == 1 && !strcmp(l.v[0].id, "id9") &&
	   !strcmp(l.v[0].name, "isobox-main-9"), "docker list: without the API, the CLI's running ones");
	docker_list_free(&l);
	ok(!docker_list(&c, filters, true, now_ms() + 5000, &l) && l.n == 0, "docker list: a CLI that fails: no list");
	docker_list_free(&l);
	unlink(script);
	rmdir(dir);
}
