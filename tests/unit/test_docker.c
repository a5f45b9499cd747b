#define _GNU_SOURCE
/*
 * dockerd's API for lists, events and kills (sandbox/docker.c): the
 * filters' URL encoding, the events' and the list's readers, and the
 * requests themselves against a stand-in dockerd (a unix socket in a
 * temporary directory whose child process answers as dockerd does over
 * HTTP/1.0: the body, then the connection closed). No docker.
 */
#include "tap.h"
#include "../../sandbox/docker.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* What a query string's %XX stand for, to check an encoding by its meaning. */
static char *url_decode(const char *s)
{
	char *out = xstrdup(s), *o = out;
	for (; *s; s++) {
		unsigned v;
		if (*s == '%' && sscanf(s + 1, "%2x", &v) == 1) {
			*o++ = (char)v;
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return out;
}

/* Do filters (pairs) encode, unreserved bytes alone, to the JSON want? */
static bool filters_mean(const char *const pairs[], const char *want)
{
	autofree char *enc = docker_filters(pairs);
	autofree char *json = url_decode(enc);
	bool plain = strspn(enc, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~%") == strlen(enc);
	cJSON *got = cJSON_Parse(json), *expected = cJSON_Parse(want);
	bool same = got && expected && cJSON_Compare(got, expected, true);
	cJSON_Delete(got);
	cJSON_Delete(expected);
	return plain && same;
}

UNIT_TEST(test_docker_query)
{
	static const struct {
		const char *in, *out;
	} enc[] = {
		{"isobox-main-0a1b._~Z", "isobox-main-0a1b._~Z"},
		{"{\"a\":[\"b c\"]}", "%7B%22a%22%3A%5B%22b%20c%22%5D%7D"},
		{"x=y&z/%+", "x%3Dy%26z%2F%25%2B"},
		{"\xc3\xa9\n", "%C3%A9%0A"},
		{"", ""},
	};
	for (size_t i = 0; i < sizeof enc / sizeof enc[0]; i++) {
		autofree char *got = docker_url_encode(enc[i].in);
		is_str(got, enc[i].out, "docker query: \"%s\" encoded", enc[i].out);
	}
	ok(filters_mean((const char *const[]){"container", "isobox-main-ab", "event", "oom", NULL},
			"{\"container\":[\"isobox-main-ab\"],\"event\":[\"oom\"]}"),
	   "docker query: the OOM event's filters");
	ok(filters_mean((const char *const[]){"label", "isobox.instance=main", "label", "isobox.kind=session", NULL},
			"{\"label\":[\"isobox.instance=main\",\"isobox.kind=session\"]}"),
	   "docker query: a key named twice has both values");
	ok(filters_mean((const char *const[]){"volume", "/srv/v ol\"\\/x", NULL}, "{\"volume\":[\"/srv/v ol\\\"\\\\/x\"]}"),
	   "docker query: a path's quote, backslash and space survive");
	ok(filters_mean((const char *const[]){NULL}, "{}"), "docker query: no pairs, no filters");
}

UNIT_TEST(test_docker_events)
{
	static const char die[] = "{\"status\":\"die\",\"Type\":\"container\",\"Action\":\"die\",\"time\":1}\n";
	static const char oom[] = "{\"status\":\"oom\",\"Type\":\"container\",\"Action\":\"oom\",\"time\":1}";
	autofree char *both = xasprintf("%s%s\n", die, oom);
	autofree char *last = xasprintf("%s%s", die, oom); /* no newline at the end */
	autofree char *broken = xasprintf("{\"Action\":\n%s", oom);
	ok(docker_events_saw(both, strlen(both), "oom"), "docker events: an oom after a die is seen");
	ok(docker_events_saw(last, strlen(last), "oom"), "docker events: the last line needs no newline");
	ok(docker_events_saw(broken, strlen(broken), "oom"), "docker events: a broken line is passed over");
	ok(!docker_events_saw(die, strlen(die), "oom"), "docker events: a die alone is no oom");
	ok(!docker_events_saw("", 0, "oom"), "docker events: none, no oom");
	ok(!docker_events_saw("{\"status\":\"oom\"}\n", 17, "oom"), "docker events: only Action says");
	ok(!docker_events_saw(oom, 30, "oom"), "docker events: a cut event is none");
}

/* Part of a /containers/json answer from dockerd 20.10, and odd ones. */
static const char list_json[] =
	"[{\"Id\":\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\","
	"\"Names\":[\"/isobox-main-00aa\"],\"Image\":\"sha256:1\",\"State\":\"exited\",\"Status\":\"Exited (0)\","
	"\"Labels\":{\"isobox.instance\":\"main\",\"isobox.kind\":\"cold\",\"isobox.owner\":\"12.34\"}},"
	"{\"Id\":\"fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210\","
	"\"Names\":[\"/web/db\",\"/isobox-main-s1\"],\"State\":\"dead\",\"Labels\":{\"isobox.session\":7}},"
	"{\"Id\":\"0123\",\"Names\":[\"/\"],\"State\":3},"
	"{\"Id\":\"0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF\",\"Names\":\"/x\"}]";

UNIT_TEST(test_docker_listed)
{
	cJSON *list = cJSON_Parse(list_json);
	const cJSON *a = cJSON_GetArrayItem(list, 0), *b = cJSON_GetArrayItem(list, 1);
	const cJSON *c = cJSON_GetArrayItem(list, 2), *d = cJSON_GetArrayItem(list, 3);
	is_str(docker_listed_id(a), "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	       "docker list: the id");
	is_str(docker_listed_name(a), "isobox-main-00aa", "docker list: the name without its '/'");
	is_str(docker_listed_state(a), "exited", "docker list: the state");
	is_str(docker_listed_label(a, "isobox.owner"), "12.34", "docker list: a label");
	is_str(docker_listed_label(a, "isobox.session"), "", "docker list: a label it has not is empty");
	is_str(docker_listed_name(b), "isobox-main-s1", "docker list: a link's name is passed over");
	is_str(docker_listed_state(b), "dead", "docker list: a dead one says so");
	is_str(docker_listed_label(b, "isobox.session"), "", "docker list: a label that is no string is empty");
	ok(!docker_listed_id(c) && !docker_listed_name(c), "docker list: a short id and a bare '/' are none");
	is_str(docker_listed_state(c), "", "docker list: a state that is no string is empty");
	ok(!docker_listed_id(d), "docker list: an id in capitals is none (dockerd writes lower case)");
	ok(!docker_listed_name(d) && !strcmp(docker_listed_label(d, "x"), ""),
	   "docker list: no names array, no labels: none and empty");
	ok(!docker_listed_id(NULL) && !docker_listed_name(NULL) && !strcmp(docker_listed_state(NULL), ""),
	   "docker list: nothing, none");
	cJSON_Delete(list);
}

/* Answer each request as dockerd would; its first line goes to log_fd. */
static void serve(int listener, int log_fd)
{
	for (;;) {
		int fd = accept(listener, NULL, NULL);
		if (fd < 0)
			continue;
		char req[2048] = "";
		ssize_t got = read(fd, req, sizeof req - 1);
		req[got > 0 ? got : 0] = '\0';
		dprintf(log_fd, "%.*s\n", (int)strcspn(req, "\r\n"), req);
		static const char head[] = "HTTP/1.0 200 OK\r\nApi-Version: 1.41\r\nContent-Type: application/json\r\n\r\n";
		if (!strncmp(req, "GET /containers/json?", 21))
			dprintf(fd, "%s%s\n", head, list_json);
		else if (!strncmp(req, "GET /events?", 12))
			dprintf(fd, "%s{\"Action\":\"die\"}\n%s", head,
				strstr(req, "isobox-t-oom") ? "{\"Action\":\"oom\"}\n" : "");
		else if (!strncmp(req, "POST /containers/isobox-t-run/kill ", 35))
			dprintf(fd, "HTTP/1.0 204 No Content\r\n\r\n");
		else
			dprintf(fd, "HTTP/1.0 404 Not Found\r\n\r\n{\"message\":\"no\"}");
		close(fd);
	}
}

UNIT_TEST(test_docker_api_calls)
{
	char dir[] = "/tmp/isobox-docker.XXXXXX";
	ok(mkdtemp(dir) != NULL, "docker API: a temporary directory");
	autofree char *sock = xasprintf("%s/docker.sock", dir);
	int listener = socket(AF_UNIX, SOCK_STREAM, 0), logp[2];
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
	ok(listener >= 0 && bind(listener, (struct sockaddr *)&a, sizeof a) == 0 && listen(listener, 16) == 0 &&
	   pipe(logp) == 0, "docker API: a stand-in dockerd listens");
	pid_t server = fork();
	if (server == 0) {
		close(logp[0]);
		serve(listener, logp[1]);
		_exit(0);
	}
	close(logp[1]);
	close(listener);
	struct conf c = {.docker = "/bin/false", .docker_socket = sock};

	cJSON *list = docker_list(&c, (const char *const[]){"label", "isobox.instance=t", NULL}, true, now_ms() + 5000);
	ok(cJSON_GetArraySize(list) == 4, "docker API: the list, whole");
	cJSON_Delete(list);
	list = docker_list(&c, NULL, false, now_ms() + 5000);
	ok(list != NULL, "docker API: a list without filters");
	cJSON_Delete(list);
	time_t since = time(NULL);
	ok(docker_oom_seen(&c, "isobox-t-oom", since, now_ms() + 5000), "docker API: an OOM event is seen");
	ok(!docker_oom_seen(&c, "isobox-t-run", since, now_ms() + 5000), "docker API: no OOM event, none seen");
	struct docker_kill k = {0};
	docker_kill_ask(&c, "isobox-t-run", &k);
	ok(k.asked && k.fd >= 0 && k.pid == -1, "docker API: a kill asked on the socket, no process");
	docker_kill_wait(&k, now_ms() + 5000);
	ok(!k.asked, "docker API: its answer read, the kill is none again");

	kill(server, SIGKILL);
	waitpid(server, NULL, 0);
	char log[4096] = "";
	ssize_t got = read(logp[0], log, sizeof log - 1);
	log[got > 0 ? got : 0] = '\0';
	close(logp[0]);
	ok(strstr(log, "GET /containers/json?all=1&filters=%7B%22label%22%3A%5B%22isobox.instance%3Dt%22%5D%7D "
		       "HTTP/1.0\n") != NULL, "docker API: the list asks for all, by the encoded filters");
	ok(strstr(log, "GET /containers/json?all=0 HTTP/1.0\n") != NULL, "docker API: running ones, no filters");
	autofree char *events = xasprintf("GET /events?since=%lld&until=", (long long)since - 1);
	ok(strstr(log, events) && strstr(log, "&filters=%7B%22container%22%3A%5B%22isobox-t-oom%22%5D%2C%22event%22"
					     "%3A%5B%22oom%22%5D%7D HTTP/1.0\n"),
	   "docker API: the events from a second before the start, of the container's oom");
	ok(strstr(log, "POST /containers/isobox-t-run/kill HTTP/1.0\n") != NULL, "docker API: the kill's request");

	/* dockerd out of reach: a list has no fallback, a kill is a process. */
	unlink(sock);
	ok(!docker_list(&c, NULL, true, now_ms() + 5000), "docker API: no socket, no list");
	c.docker = "/bin/true";
	docker_kill_ask(&c, "isobox-t-run", &k);
	ok(k.asked && k.fd == -1 && k.pid > 0, "docker API: no socket, a docker kill process");
	docker_kill_wait(&k, now_ms() + 5000);
	ok(!k.asked, "docker API: the process waited for, the kill is none again");
	c.docker = "/bin/false";
	ok(!docker_oom_seen(&c, "isobox-t-oom", since, now_ms() + 5000), "docker API: no socket, a failed CLI saw none");
	rmdir(dir);
}
