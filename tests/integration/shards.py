"""Which integration tests run where when a pass runs in shards
(tests/passes.sh, what `make test` does).

When the suite was smaller its tests waited on sandboxes more than they
used the CPU: two modules against two isobox instances took the time of
one (test_languages beside test_piston + test_attacks +
test_runtime_behaviour, 193 s for both against 198 s and 190 s alone).
Today the host is 85-99% busy while A, B and C run (docs/PERFORMANCE.md,
"The test suite's time"): a fourth shard would not help, fewer sandbox
boots do.

Each pass runs shards A, B and C at once, each against an isobox of its
own on the same dockerd (A the main one; B and C second installs,
tests/lane.sh), then shard H alone against the main one, the others
stopped. `make test` runs the warm and runc passes at once, on five
isoboxes (tests/passes.sh warm+runc): the warm pass's A, whose tests read
the main one's paths like the runc pass's A, runs after them.

H holds the tests marked `alone`: they change what every isobox on the host
shares (dockerd, the images lock, the egress firewall, isobox.slice's
limits) or look at the whole host (nothing left). A module or a test says
so itself, with the reason: `pytestmark = pytest.mark.alone("why")` or
`@pytest.mark.alone("why")`.

The rest go by module. A module runs on one shard only: A for those that
read the main instance's own paths (its store, volumes, logs), build on
its conf (the cluster) or compare its answers with the docs' examples
(which name it), and those that start web servers of their own;
B and C balanced by the time their modules took (bin/durations-*.txt),
and A topped up from them with modules that hold no attack: those run on
the cold pass only, while an attack module in A would also run in the
warm pass's A, which runs after the others (tests/passes.sh).
A module in no shard is an error at collection, in every run: adding one
means choosing its shard here.
"""

SHARDS = {
    "A": ["test_pool.py", "test_volumes.py", "test_memory.py", "test_logs.py", "test_cluster.py",
          "test_cluster_queue.py", "test_webservers.py", "test_slow_clients.py", "test_api_docs.py",
          "test_demo.py", "test_piston.py", "test_execute.py", "test_playground.py", "test_mcp.py",
          "test_stream.py", "test_web_errors.py", "test_outputs.py"],
    "B": ["test_languages.py", "test_warm.py", "test_clients.py", "test_sessions.py", "test_attacks_warm.py",
          "test_attacks_steps.py", "test_attacks_sessions.py", "test_attacks_kernel.py", "test_versions.py",
          "test_attacks_stream.py", "test_status_socket.py", "test_metrics.py", "test_sandbox_inside.py"],
    "C": ["test_request_id.py", "test_bad_input.py", "test_cgi.py", "test_attacks_langs.py", "test_attacks.py",
          "test_runtime_behaviour.py", "test_container_spec.py", "test_attacks_limits.py", "test_tenants.py",
          "test_attacks_requests.py", "test_attacks_egress.py", "test_attacks_families.py",
          "test_language_checks.py"],
}
_LISTED = [m for modules in SHARDS.values() for m in modules]
assert len(_LISTED) == len(set(_LISTED)), "a module in two shards"
ALONE = "H"
CHOICES = ("all", *SHARDS, ALONE)


def shard_of(item):
    """The shard an item runs on, or None for a module in no shard."""
    if item.get_closest_marker("alone"):
        return ALONE
    for name, modules in SHARDS.items():
        if item.path.name in modules:
            return name
    return None


def unplaced(items):
    """The modules with a test that no shard runs."""
    return sorted({i.path.name for i in items if shard_of(i) is None})


def select(items, shard):
    """The items of this shard ("all": every one)."""
    return list(items) if shard == "all" else [i for i in items if shard_of(i) == shard]
