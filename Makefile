# isobox: see README.md. The set-up targets run as root on a Debian 12 host;
# building and `make check` need neither root nor docker.
#
#   make              build bin/isobox-fcgi
#   make check        build, unit tests, the layer check: no root, no docker,
#                     no apt (`make deps` as root installs the build packages);
#                     `make test` runs it as nobody too (check-unprivileged)
#   make run          set up the host, build images, start the pool behind Caddy
#   make test         the same set-up, then every test; ends with the time of
#                     each step against its budget (TEST_BUDGET below) and a
#                     check that docs/AUDIT.md is current
#   make integration  the integration tests against the service that runs
#                     (ISOBOX_URL, PREFIX, ...: tests/integration/conftest.py),
#                     without installing or restarting anything; then the
#                     attacks again with the warm pool on (--sandbox-path=warm)
#                     and on the runc backend (--backend=runc), those two at
#                     once; each pass in shards side by side against isobox
#                     instances of their own, and the shards that must be
#                     alone on the host last (tests/passes.sh). They write
#                     the table of attacks to bin/AUDIT.md, and every
#                     test's time to bin/durations-PASS-SHARD.txt
#   make audit        copy bin/AUDIT.md (from the last whole run of the three
#                     passes) over docs/AUDIT.md, to commit
#   make images-pins  record the images' Debian package versions (this host's
#                     image lock) in deploy/images/packages.pins, to commit
#   make stop         stop what `make run` started
#   make cluster      the set-up, then a cluster on this machine: Redis, three
#                     isobox hosts and a balancer (deploy/cluster.sh); its URL last
#   make cluster-stop remove the cluster
#   make egress       (re)install the egress firewall from the installed conf
#   make asan         unit tests under ASan + UBSan
#   make fuzz         libFuzzer on the parsers, FUZZ_SECONDS each (default 60)
#   make agent-test   the session agent and kernel as processes (no docker)
#   make asan-test    the integration tests against an ASan+UBSan worker

PORT     ?= 8090
POOL     ?= 4
PREFIX   ?= /opt/isobox
CC       ?= cc
CFLAGS   ?= -O2 -g
# isobox's version: the commit's date and id, "-dirty" when the tree has
# changes, "unknown" outside git. isobox-fcgi --version, /healthz and
# /metrics (isobox_build_info) say it; bin/version makes a new one rebuild.
ISOBOX_VERSION := $(shell v=$$(git log -1 --format=%cd-%h --date=format:%Y%m%d 2>/dev/null) && \
                    { git diff --quiet HEAD -- 2>/dev/null || v=$$v-dirty; echo $$v; } || echo unknown)
# Always on, whatever CFLAGS a caller gives (the sanitizer builds do).
WFLAGS   := -std=c11 -Wall -Wextra -Werror -Wshadow -Wformat=2 -D_FORTIFY_SOURCE=2 \
            -fstack-protector-strong -fPIE -DISOBOX_DEFAULT_CONF='"$(PREFIX)/conf/isobox.yaml"' \
            -DISOBOX_VERSION='"$(ISOBOX_VERSION)"'
LDFLAGS  += -pie -Wl,-z,relro,-z,now
LDLIBS   := -lfcgi -lcjson -lyaml -lcap-ng -lsqlite3 -lhiredis -lsodium -lcurl -lm

LIB_SRC  := conf/lib/base.c conf/lib/fault.c conf/lib/json.c conf/lib/yaml_tree.c conf/limits.c conf/cidr.c conf/access.c conf/tenants.c conf/demo.c \
            conf/store/store.c conf/store/rules.c conf/store/sqlite.c conf/store/sqlite_ops.c conf/store/sqlite_memory.c conf/store/sqlite_volumes.c conf/store/sqlite_sessions.c \
            conf/store/redis.c conf/store/redis_ops.c conf/store/redis_memory.c conf/store/redis_volumes.c conf/store/redis_sessions.c conf/store/queue.c conf/conf.c \
            registry/registry.c \
            sandbox/spec.c sandbox/spec_render.c sandbox/subproc.c sandbox/workdir.c sandbox/owner.c sandbox/decoder.c sandbox/deadline.c \
            sandbox/cgroup.c sandbox/docker.c sandbox/docker_list.c sandbox/removal.c sandbox/launch.c sandbox/attach.c sandbox/demux.c sandbox/supervise.c sandbox/exec_cold.c sandbox/exec_warm.c sandbox/exec_session.c sandbox/lifecycle.c sandbox/reap.c sandbox/runtime.c sandbox/egress.c sandbox/warm.c \
            sandbox/frame.c sandbox/agent_io.c sandbox/outputs.c sandbox/session.c sandbox/session_store.c sandbox/session_files.c sandbox/session_commands.c sandbox/volume.c \
            fcgi/http.c fcgi/reqlog.c fcgi/errors.c fcgi/encode.c fcgi/result.c fcgi/sse.c fcgi/stream.c fcgi/request.c fcgi/respond.c fcgi/execute.c fcgi/semver.c \
            fcgi/piston.c fcgi/piston_result.c fcgi/routes.c fcgi/worker.c fcgi/serve.c fcgi/pool.c fcgi/scoreboard.c fcgi/metrics.c fcgi/queue.c \
            fcgi/admin.c fcgi/health.c fcgi/mcp.c fcgi/mcp_tools.c fcgi/mcp_call.c fcgi/mcp_commands.c fcgi/sessions.c fcgi/job.c fcgi/auth.c fcgi/keys.c fcgi/memory.c fcgi/volumes.c fcgi/files.c fcgi/commands.c fcgi/front.c fcgi/runner.c fcgi/turnstile.c \
            fcgi/assets.c
MAIN_SRC := fcgi/main.c
UNIT_SRC := $(wildcard tests/unit/test_*.c) tests/unit/fixtures.c tests/unit/main.c
HEADERS  := $(wildcard conf/*.h conf/lib/*.h conf/store/*.h registry/*.h sandbox/*.h fcgi/*.h tests/unit/*.h) bin/assets_data.h
# Served by the worker from inside its binary (fcgi/assets.c).
ASSETS   := fcgi/www/index.html docs/openapi.yaml docs/llms.txt

comma        := ,
FUZZERS      := request config output decoder frame semver demux turnstile
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS  := -std=c11 -Wall -Wextra -Werror -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
                -DISOBOX_DEFAULT_CONF='"$(PREFIX)/conf/isobox.yaml"'

export PORT POOL PREFIX

.PHONY: FORCE all deps docs check check-unprivileged no-docker-steps unit asan asan-test fuzz agent-test setup images images-later images-pins install egress start run stop cluster cluster-stop test integration audit clean

all: bin/isobox-fcgi bin/isobox-agent bin/isobox-volumed bin/isobox-runc

bin/version: FORCE
	@mkdir -p bin && { [ "$$(cat $@ 2>/dev/null)" = "$(ISOBOX_VERSION)" ] || echo "$(ISOBOX_VERSION)" > $@; }

bin/isobox-fcgi: $(LIB_SRC) $(MAIN_SRC) $(HEADERS) bin/version
	@mkdir -p bin
	$(CC) $(WFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(LIB_SRC) $(MAIN_SRC) $(LDLIBS)

# The session agent runs inside sandboxes of every image: static, libc only.
AGENT_SRC := $(sort $(wildcard sandbox/agent/*.c))
bin/isobox-agent: $(AGENT_SRC) $(wildcard sandbox/agent/*.h) sandbox/agent_protocol.h
	@mkdir -p bin
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -Wshadow -static -o $@ $(AGENT_SRC)

# The volumes' root daemon: one file, libc only (sandbox/volumed/volumed.c).
bin/isobox-volumed: sandbox/volumed/volumed.c sandbox/uids.h
	@mkdir -p bin
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -Wshadow -D_FORTIFY_SOURCE=2 -fstack-protector-strong -o $@ $<

# The runc backend's OCI runtime (sandbox/runc/): called by containerd, cJSON only.
RUNC_SRC := sandbox/runc/isobox-runc.c sandbox/runc/runc_spec.c
bin/isobox-runc: $(RUNC_SRC) sandbox/runc/runc_spec.h sandbox/uids.h
	@mkdir -p bin
	$(CC) $(WFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(RUNC_SRC) -lcjson

bin/unit-tests: $(LIB_SRC) $(UNIT_SRC) $(HEADERS) sandbox/runc/runc_spec.c sandbox/runc/runc_spec.h
	@mkdir -p bin
	$(CC) $(WFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(LIB_SRC) sandbox/runc/runc_spec.c $(UNIT_SRC) $(LDLIBS)

# The served files as C arrays, made with xxd -i (fcgi/assets.c includes them).
bin/assets_data.h: $(ASSETS)
	@mkdir -p bin
	{ for f in $(ASSETS); do xxd -i $$f || exit 1; done; } > $@.raw
	sed -e 's/^unsigned char/static const unsigned char/' -e '/_len = /d' $@.raw > $@.tmp
	rm -f $@.raw && mv $@.tmp $@

# Build dependencies only (the full host set-up is `make setup`).
deps:
	@bash deploy/setup.sh --build-deps

unit: bin/unit-tests
	bin/unit-tests

check: unit all
	python3 tests/layers.py
	python3 tests/languages_doc.py check

# The docs' lists of languages, from registry/registry.yaml (make check
# fails when they are stale).
docs:
	python3 tests/languages_doc.py write

# `make check` as a user who is not root, in a copy of the tracked tree:
# proves that building and the unit tests need no root, docker or apt.
check-unprivileged:
	@dir=$$(mktemp -d /tmp/isobox-check.XXXXXX) && trap 'rm -rf "$$dir"' EXIT && \
	  git ls-files -z | xargs -0 cp --parents -t "$$dir" && chown -R nobody "$$dir" && \
	  runuser -u nobody -- env -i PATH=/usr/bin:/bin HOME="$$dir" $(MAKE) -s -C "$$dir" check >"$$dir.log" 2>&1 && \
	  { tail -2 "$$dir.log"; rm -f "$$dir.log"; } || { tail -40 "$$dir.log"; rm -f "$$dir.log"; exit 1; }

asan:
	$(MAKE) -B bin/unit-tests CC=clang \
	  CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
	bin/unit-tests
	$(MAKE) -B bin/unit-tests

# The whole integration suite against a sanitizer build of the worker; any
# report in the pool's log fails it. The normal build is put back after.
asan-test: run
	$(MAKE) -B bin/isobox-fcgi CC=clang \
	  CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
	$(MAKE) install start
	@: > /var/log/isobox/isobox.log
	/usr/bin/python3 -m pytest -q tests/integration; status=$$?; \
	  if grep -E 'Sanitizer|runtime error' /var/log/isobox/isobox.log; then status=1; fi; \
	  $(MAKE) -B bin/isobox-fcgi && $(MAKE) install start; exit $$status

# The library is compiled once for all the fuzzers (instrumented, without
# libFuzzer's main), then each fuzzer is its own file linked to it.
FUZZ_OBJ := $(patsubst %.c,bin/fuzzobj/%.o,$(LIB_SRC) tests/unit/fixtures.c)
bin/fuzzobj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	clang $(subst -fsanitize=fuzzer$(comma),-fsanitize=fuzzer-no-link$(comma),$(FUZZ_CFLAGS)) -c -o $@ $<

bin/fuzz-%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ)
	clang $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_OBJ) $(LDLIBS)

# Each fuzzer starts from the seed corpus in the tree and keeps what it
# finds in bin/corpus-NAME; a crash stops make with the input saved in bin/.
fuzz: $(FUZZERS:%=bin/fuzz-%)
	@for f in $(FUZZERS); do \
	  mkdir -p bin/corpus-$$f; \
	  echo "fuzz $$f: $(FUZZ_SECONDS) s"; \
	  bin/fuzz-$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=0 -artifact_prefix=bin/crash-$$f- \
	    bin/corpus-$$f tests/fuzz/corpus/$$f 2>bin/fuzz-$$f.log || { tail -40 bin/fuzz-$$f.log; exit 1; }; \
	  grep -E '^#[0-9]+[[:space:]]+DONE' bin/fuzz-$$f.log | tail -1; \
	done

# What to install (deploy/setup.sh): what serving needs (make run), with
# --test what the tests need too (make test), with --cluster Redis.
SETUP_OPTIONS ?=

setup:
	bash deploy/setup.sh $(SETUP_OPTIONS)

# Images. `make run` builds the most used languages' default versions at
# once, and in the background after the pool has started the versions
# beside them (registry.yaml's `versions`) and the languages marked
# `later: true` (deploy/images/later.sh: the pool reloads when
# they are in; a request for one before is 503 image_not_built with
# Retry-After). `make test` builds every image before it tests
# (IMAGES_LATER= empty). Every build holds the one build lock.
IMAGES_LATER ?= $(shell awk '/^  - name:/ { image = "" } /^    image:/ { image = $$2 } /^    later: true/ { print image } \
			    /^ *- {version: "[^"]*", image: / { sub(/.*image: /, ""); sub(/[,}].*/, ""); print }' registry/registry.yaml)
IMAGES_NOW   := $(filter-out $(IMAGES_LATER),$(basename $(notdir $(wildcard deploy/images/*.recipe))))
BUILD_LOCK   := $${ISOBOX_STATE:-/var/lib/isobox}/images.build.lock

images: setup
	mkdir -p $${ISOBOX_STATE:-/var/lib/isobox}
	flock $(BUILD_LOCK) bash deploy/images/build.sh $(IMAGES_NOW)

images-later:
	@bash deploy/images/later.sh $(IMAGES_LATER)

# The packages the images were built from (this host's image lock), into
# deploy/images/packages.pins, to commit: a fresh host then builds the same.
images-pins:
	@lock=$${ISOBOX_IMAGES_LOCK:-$${ISOBOX_STATE:-/var/lib/isobox}/images.lock}; pins=deploy/images/packages.pins; \
	  [ -r "$$lock" ] || { echo "images-pins: no image lock at $$lock (build the images first)" >&2; exit 1; }; \
	  sed -n 's/^  \([a-z0-9.-]*\): {.*suite: "\([a-z]*\)", packages: "\([^"]*\)"}$$/\1 \2 \3/p' "$$lock" >$$pins.lock; \
	  [ -s $$pins.lock ] || { rm -f $$pins.lock; echo "images-pins: $$lock names no image's packages" >&2; exit 1; }; \
	  touch $$pins; \
	  { echo "# The Debian packages of each image: NAME SUITE PACKAGE=VERSION... deploy/images/build.sh"; \
	    echo "# installs these while the mirror has them. Written by \`make images-pins\`."; \
	    awk 'FNR == NR { print; built[$$1] = 1; next } /^#/ || ($$1 in built) { next } { print }' \
		$$pins.lock $$pins | sort; } >$$pins.new && \
	  rm -f $$pins.lock && mv $$pins.new $$pins && \
	  echo "$$pins: $$(grep -vc '^#' $$pins) images (those the lock does not name are kept as they were)"

install: bin/isobox-fcgi bin/isobox-agent bin/isobox-volumed bin/isobox-runc
	install -d -m 0755 $(PREFIX)/bin $(PREFIX)/conf $(PREFIX)/registry $(PREFIX)/caddy
	install -m 0755 bin/isobox-fcgi $(PREFIX)/bin/isobox-fcgi.new
	mv -f $(PREFIX)/bin/isobox-fcgi.new $(PREFIX)/bin/isobox-fcgi
	install -m 0755 bin/isobox-volumed $(PREFIX)/bin/isobox-volumed.new
	mv -f $(PREFIX)/bin/isobox-volumed.new $(PREFIX)/bin/isobox-volumed
	install -m 0755 bin/isobox-runc $(PREFIX)/bin/isobox-runc.new
	mv -f $(PREFIX)/bin/isobox-runc.new $(PREFIX)/bin/isobox-runc
	install -m 0644 conf/isobox.yaml $(PREFIX)/conf/isobox.yaml
	@# The session agent, next to the scripts that deploy/setup.sh installs (warm.agentDir).
	agents=$$(bin/isobox-fcgi --conf conf/isobox.yaml --print-conf | sed -n 's/^agent_dir=//p'); \
	  if [ -n "$$agents" ]; then install -d -m 0755 $$agents && \
	  install -m 0755 bin/isobox-agent $$agents/isobox-agent.new && mv -f $$agents/isobox-agent.new $$agents/isobox-agent; fi
	install -m 0644 registry/registry.yaml $(PREFIX)/registry/registry.yaml
	install -m 0644 deploy/caddy/Caddyfile $(PREFIX)/caddy/Caddyfile
	install -m 0644 deploy/caddy/Caddyfile.demo $(PREFIX)/caddy/Caddyfile.demo
	install -d -m 0755 $(PREFIX)/deploy
	install -m 0755 deploy/egress.sh $(PREFIX)/deploy/egress.sh
	install -d -m 0755 $(PREFIX)/deploy/apache $(PREFIX)/deploy/lighttpd
	install -m 0644 deploy/apache/isobox-errors.conf $(PREFIX)/deploy/apache/isobox-errors.conf
	install -m 0644 deploy/lighttpd/isobox-errors.lua $(PREFIX)/deploy/lighttpd/isobox-errors.lua
	@# logrotate for pool.sh's log dir (ISOBOX_LOG), named after it: a second pool gets its own file.
	log=$${ISOBOX_LOG:-/var/log/isobox}; sed "s|^/var/log/isobox/|$$log/|" deploy/logrotate/isobox > bin/logrotate.tmp && \
	  install -m 0644 bin/logrotate.tmp /etc/logrotate.d/$$(basename $$log) && rm -f bin/logrotate.tmp

# The egress network and firewall, from the installed conf (deploy/egress.sh).
egress: install
	bash $(PREFIX)/deploy/egress.sh install

start:
	bash deploy/pool.sh restart

run: setup images install egress start images-later
	@echo "isobox is serving on http://127.0.0.1:$(PORT)"

stop:
	bash tests/passes.sh stop
	bash deploy/pool.sh stop

cluster: SETUP_OPTIONS = --cluster
cluster: run
	@bash deploy/cluster.sh start

cluster-stop:
	bash deploy/cluster.sh stop

# The time budget of `make test` on our build hosts (Debian 12 VMs, 2 cores,
# runsc on ptrace; `make run` done before, so the images are built), in
# whole minutes per step; tests/timed.sh prints each step's time beside its
# budget at the end (and at a failure). Goal: all of `make test` under 35
# min, and well inside CI's 90 as the languages and features grow. Measured
# on 5205737 (issue 33): cold pass 27-48 min, warm 4.5-8.5, runc 10-11, the
# whole 45 min; on da9e59f, a freshly booted host: cold 31, warm 4, runc 10,
# the whole 67 with every image built (19 of it); on 11cebef (December
# 2026): cold 31.7, warm 7.9, runc 9.5, the whole 53.7; on 88900d6, the
# warm and runc passes at once: cold 29.5, warm+runc 12.1, the whole 46.1;
# on a8f26a4, the H shards last with the steps that use no docker beside
# them, and no network set up for sandboxes without one: cold (A, B, C)
# 21.3, warm+runc 8.1, alone 9.8, the whole 40.5; on edd969b, every sandbox
# so: cold 19.9, warm+runc 7.2, alone 9.3, the whole 37.7.
# The passes are over budget; bin/durations-PASS-SHARD.txt lists every test's time,
# slowest first, and each module's, to study. Each pass runs in shards at
# once (tests/passes.sh), which helped while the tests waited more than
# they computed (the cold pass once 16 min, against 34 unsharded); today
# the host is 85-99% busy while A, B and C run (about 2.9 CPU-s for each
# sandbox booted: the boot, what the program does, what the test does), so
# the cold pass takes as long as its CPU-seconds (docs/PERFORMANCE.md, "The
# test suite's time"; the durations files give each test's). The warm and
# runc passes, one after the other, left the host partly idle; they run
# at once now. The shards that must be alone on the host (H) leave it
# 20-60% busy: the steps that use no docker run beside them.
#   run         the set-up when it is done already (setup.sh, images kept)
#   check       make check
#   npm         the npm installs of the integration tests' clients
#   cold        the cold pass's shards A, B and C at once (the warm pool off)
#   warm+runc   at once: the attacks a warm sandbox can take, again, the
#               pool on; and the attacks on the sandbox again, on the runc
#               backend (an attack that neither pass changes,
#               same_for_every_sandbox in tests/integration/conftest.py,
#               runs on the cold pass only)
#   alone       every pass's shard H in turn (tests/passes.sh alone), and
#               beside it, not added to the total:
#     check-unprivileged  make check again as nobody, in a copy
#     fuzz                each fuzzer for FUZZ_SECONDS=10
#     agent-test          tests/agent
TEST_BUDGET ?= run=2 check=2 npm=1 cold=15 warm+runc=8 alone=7 check-unprivileged=2 fuzz=3 agent-test=1
TIMES       := bin/test-times.txt
export TEST_BUDGET TIMES

test:
	@mkdir -p bin && rm -f $(TIMES)
	@tests/timed.sh run $(MAKE) run IMAGES_LATER= SETUP_OPTIONS=--test
	@tests/timed.sh check $(MAKE) -j2 check
	@$(MAKE) integration KEEP_TIMES=1 BESIDE_ALONE="$(MAKE) -s no-docker-steps"
	@tests/timed.sh audit python3 tests/audit.py check
	@tests/timed.sh --summary

# The steps of `make test` that need neither docker nor isobox: they run
# beside the integration tests that must be alone on the host
# (tests/passes.sh alone), in the CPU those leave idle, and touch nothing
# those tests change.
no-docker-steps:
	@tests/timed.sh --beside check-unprivileged $(MAKE) check-unprivileged
	@tests/timed.sh --beside fuzz $(MAKE) -j2 fuzz FUZZ_SECONDS=10
	@tests/timed.sh --beside agent-test $(MAKE) agent-test

# docs/AUDIT.md from the last whole run of the three passes (bin/AUDIT.md),
# on purpose: a test run itself changes no tracked file.
audit:
	python3 tests/audit.py update

# The session agent and the python kernel, driven as processes (no docker).
agent-test:
	/usr/bin/python3 -m pytest -q tests/agent

integration:
	@mkdir -p bin && { [ -n "$(KEEP_TIMES)" ] || rm -f $(TIMES); } && rm -f bin/durations-*.txt bin/test-*.log
	@tests/timed.sh npm sh -c '(cd tests/integration/sse && npm install --no-audit --no-fund --silent) && \
	  (cd tests/integration/js && npm install --no-audit --no-fund --silent)'
	@# The cold pass's shards A, B and C at once; then the warm and runc
	@# passes' at once: the attacks again on the warm path, those whose runs
	@# a warm sandbox can take by the record of the cold pass
	@# (docs/AUDIT.md, warm column), and the attacks on the sandbox again on
	@# the runc backend (runc column); then every pass's tests that must be
	@# alone on the host, and beside them the command BESIDE_ALONE names, if
	@# any (tests/passes.sh, tests/integration/shards.py).
	@tests/timed.sh cold bash tests/passes.sh shared cold
	@tests/timed.sh warm+runc bash tests/passes.sh shared warm+runc
	@tests/timed.sh alone bash tests/passes.sh alone $(BESIDE_ALONE)
	@[ -n "$(KEEP_TIMES)" ] || tests/timed.sh --summary

clean:
	rm -rf bin
