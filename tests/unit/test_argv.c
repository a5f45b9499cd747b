/* The docker argv: every hardening flag, on every run. */
#include "tap.h"
#include "fixtures.h"
#include "../../sandbox/spec.h"
#include "../../sandbox/sandbox.h"

static bool has(const struct strv *a, const char *arg)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->v[i], arg))
			return true;
	return false;
}

UNIT_TEST(test_argv)
{
	struct conf c;
	struct registry r;
	struct strv a = {0};
	fixture_load(&c, &r);

	struct sandbox_job job = fixture_python_job(&r);
	argv_cold(&c, &job, "isobox-main-1.2-abcd", "1.2", "/var/lib/isobox/work/x", &a);

	is_str(a.v[0], c.docker, "argv: the docker client from conf");
	bool unlabelled = true;
	for (size_t i = 0; i < a.n; i++)
		unlabelled &= strncmp(a.v[i], "--label=isobox.request=", 23) != 0;
	ok(unlabelled, "argv: no request label without a request");
	is_str(a.v[1], "run", "argv: docker run");
	ok(has(&a, "--runtime=runsc-untrusted"), "argv: gVisor runtime");
	ok(has(&a, "--network=none"), "argv: network none");
	ok(has(&a, "--read-only"), "argv: read-only root filesystem");
	ok(has(&a, "--user=65534:65534"), "argv: user 65534");
	ok(has(&a, "--cap-drop=ALL"), "argv: all capabilities dropped");
	ok(has(&a, "--security-opt=no-new-privileges"), "argv: no-new-privileges");
	ok(has(&a, "--security-opt=seccomp=/var/lib/isobox/sandbox/seccomp.json"),
	   "argv: isobox's seccomp profile (no user namespaces inside gVisor)");
	ok(has(&a, "--mount=type=bind,src=/var/lib/isobox/sandbox/resolv.conf,dst=/etc/resolv.conf,readonly"),
	   "argv: a run without network sees a resolv.conf naming no resolver, read-only");
	ok(has(&a, "--memory=104857600"), "argv: memory limit");
	ok(has(&a, "--memory-swap=104857600"), "argv: memory-swap equal to memory (no swap)");
	ok(has(&a, "--cpus=0.500"), "argv: cpus");
	ok(has(&a, "--ulimit=nproc=32:32"), "argv: process limit as nproc");
	ok(has(&a, "--pids-limit=1024"), "argv: pids backstop from conf");
	ok(has(&a, "--ulimit=core=0:0"), "argv: no core dumps");
	ok(has(&a, "--tmpfs=/tmp:rw,nosuid,nodev,size=67108864,mode=1777"), "argv: small /tmp tmpfs");
	ok(has(&a, "--tmpfs=/box:rw,nosuid,nodev,exec,size=67108864,mode=1777"), "argv: work dir tmpfs");
	ok(has(&a, "--mount=type=bind,src=/var/lib/isobox/work/x,dst=/src,readonly"),
	   "argv: code mounted read-only");
	ok(has(&a, "--log-driver=none"), "argv: no log driver output on disk");
	ok(has(&a, "--cgroup-parent=/isobox.slice"), "argv: cgroup parent");
	ok(has(&a, "--name=isobox-main-1.2-abcd"), "argv: unique container name");
	ok(has(&a, "--label=isobox.instance=main") && has(&a, "--label=isobox.owner=1.2"),
	   "argv: instance and owner labels for the reaper");
	ok(has(&a, "--pull=never"), "argv: never pulls");
	ok(has(&a, "--env=PYTHONDONTWRITEBYTECODE=1"), "argv: language env");
	ok(!has(&a, "--privileged") && index_of(&a, "--env=HOSTNAME") < 0, "argv: never privileged");
	int img = index_of(&a, TEST_ID_PY);
	ok(img > 0, "argv: image by pinned ID");
	bool flags_before_image = true;
	for (int i = 2; i < img; i++)
		flags_before_image = flags_before_image && a.v[i][0] == '-' && a.v[i][1] == '-';
	ok(flags_before_image, "argv: nothing but --flags before the image");
	ok(img > 0 && (size_t)img + 9 < a.n + 1 && !strcmp(a.v[img + 1], "/bin/sh") &&
	   !strcmp(a.v[img + 2], "-c") && !strcmp(a.v[img + 4], "isobox"),
	   "argv: fixed entry script");
	ok(img > 0 && !strcmp(a.v[img + 5], "ab12"), "argv: the nonce of the reporter's end marks, first");
	ok(img > 0 && !strcmp(a.v[img + 6], "32"), "argv: the process limit, for the script's ulimit");
	ok(strstr(a.v[img + 3], "exec /isobox-agent/isobox-agent reap \"$n\" \"$@\"") != NULL,
	   "argv: the reporter starts the program");
	bool agent_ro = false;
	for (size_t i = 0; i < a.n; i++)
		agent_ro |= strstr(a.v[i], ",dst=/isobox-agent,readonly") != NULL;
	ok(agent_ro, "argv: the agent, whose reporter it is, mounted read-only");
	ok(img > 0 && !strcmp(a.v[img + 7], "0"), "argv: no compile words for an interpreter");
	ok(img > 0 && !strcmp(a.v[img + 8], "python3") && !strcmp(a.v[img + 9], "app.py"),
	   "argv: run template with {file} = entry file");
	ok(img > 0 && !strcmp(a.v[img + 10], "--flag") && !strcmp(a.v[img + 11], "$(rm -rf /)") &&
	   !strcmp(a.v[img + 12], "a b") && a.v[img + 13] == NULL,
	   "argv: user args last, verbatim, one element each");
	ok(!strstr(a.v[img + 3], "app.py") && !strstr(a.v[img + 3], "rm -rf"),
	   "argv: nothing from the request in the shell script");
	strv_free(&a);

	/* A compiled language: K compile words, then the run words. */
	struct language cc = *job.lang;
	struct strv compile = {0}, run = {0};
	strv_push(&compile, "gcc");
	strv_push(&compile, "-o");
	strv_push(&compile, "/box/{file:base}");
	strv_push(&compile, "{files:.c}");
	strv_push(&run, "/box/{file:base}");
	cc.compile = compile;
	cc.run = run;
	struct sandbox_file cfiles[] = {{.name = "src/prog.c"}, {.name = "util.h"}, {.name = "util.c"}};
	struct sandbox_job cjob = {.lang = &cc, .files = cfiles, .n_files = 3, .args = job.args, .n_args = 1,
				   .limits = job.limits};
	argv_cold(&c, &cjob, "n", "o", "/d", &a);
	img = index_of(&a, TEST_ID_PY);
	ok(img > 0 && !strcmp(a.v[img + 7], "5"), "argv: compile word count (%s)", img > 0 ? a.v[img + 7] : "-");
	ok(has(&a, "--ulimit=nproc=64:64") && img > 0 && !strcmp(a.v[img + 6], "32"),
	   "argv: a compiler gets compilePids (64), the program its own pids (32)");
	ok(strstr(a.v[img + 3], "ulimit -p \"$p\"") != NULL, "argv: the script lowers the limit before the program");
	ok(img > 0 && !strcmp(a.v[img + 8], "gcc") && !strcmp(a.v[img + 10], "/box/prog") &&
	   !strcmp(a.v[img + 11], "./src/prog.c") && !strcmp(a.v[img + 12], "./util.c"),
	   "argv: {file:base} and {files:.c} (headers left out), files as ./name for the compiler");
	ok(img > 0 && !strcmp(a.v[img + 13], "/box/prog") && !strcmp(a.v[img + 14], "--flag") &&
	   a.v[img + 15] == NULL, "argv: run words, then user args");
	strv_free(&a);

	/* A compile word that is only {file} is a path too; in the run
	 * command the name stays as it is (it cannot start with '-' or '@'). */
	free(compile.v[3]);
	compile.v[3] = xstrdup("{file}");
	free(run.v[0]);
	run.v[0] = xstrdup("{file}");
	cc.compile = compile;
	cc.run = run;
	argv_cold(&c, &cjob, "n", "o", "/d", &a);
	img = index_of(&a, TEST_ID_PY);
	ok(img > 0 && !strcmp(a.v[img + 11], "./src/prog.c") && !strcmp(a.v[img + 12], "src/prog.c"),
	   "argv: {file} is ./name when compiling, name when running");
	strv_free(&a);

	/* {file:stem}: the entry's path without its extension, in a word. */
	free(run.v[0]);
	run.v[0] = xstrdup("/box/out/{file:stem}.js");
	cc.run = run;
	argv_cold(&c, &cjob, "n", "o", "/d", &a);
	img = index_of(&a, TEST_ID_PY);
	ok(img > 0 && !strcmp(a.v[img + 12], "/box/out/src/prog.js"), "argv: {file:stem} keeps the directory");
	strv_free(&a);
	strv_free(&compile);
	strv_free(&run);

	/* A volume: its mount point (never its image) at /memory. */
	job.volume = "0123456789abcdef0123456789abcdef";
	job.volume_ro = true;
	argv_cold(&c, &job, "n", "o", "/d", &a);
	int at = index_of(&a, "--mount=type=bind,src=/var/lib/isobox/volumes/0123456789abcdef0123456789abcdef,"
			  "dst=/memory,readonly");
	ok(at > 0 && at < index_of(&a, TEST_ID_PY), "argv: a volume at /memory, read-only, before the image");
	strv_free(&a);
	job.volume_ro = false;
	argv_cold(&c, &job, "n", "o", "/d", &a);
	ok(index_of(&a, "--mount=type=bind,src=/var/lib/isobox/volumes/0123456789abcdef0123456789abcdef,"
		    "dst=/memory") > 0, "argv: a volume, read-write");
	strv_free(&a);
	job.volume = NULL;
	argv_cold(&c, &job, "n", "o", "/d", &a);
	bool none = true;
	for (size_t i = 0; i < a.n; i++)
		none &= !strstr(a.v[i], "/memory");
	ok(none, "argv: no volume, no /memory");
	strv_free(&a);
	job.request_id = "0f9b6c1e";
	argv_cold(&c, &job, "n", "o", "/d", &a);
	ok(has(&a, "--label=isobox.request=0f9b6c1e"), "argv: a cold run's sandbox says which request it serves");
	strv_free(&a);
	argv_outputs(&c, &job, "n", "o", &a);
	ok(has(&a, "--label=isobox.request=0f9b6c1e"), "argv: ...and the sandbox that collects its outputs");
	strv_free(&a);
	registry_free(&r);
	conf_free(&c);
}
