"""Attacks on the kernel's surface: the system calls and socket families a
code runner never needs, 32-bit entry points, and who the program is on the
host. On gVisor they reach the Sentry, which implements few of them; on the
runc backend (docs/BACKENDS.md) they reach the host's kernel, and isobox's
seccomp allow list (deploy/seccomp-runc.json) and the sandbox's own user
namespace (sandbox/runc/) must refuse them. Each test asserts the outcome of
the backend the suite runs on (--backend)."""
import threading

import pytest

from conftest import SUITE, execute, run_ok
from test_attacks_egress import job_container, sandbox_pid, sh

attack = pytest.mark.attack

C_HEAD = ('#define _GNU_SOURCE\n#include <errno.h>\n#include <stdio.h>\n#include <string.h>\n'
          '#include <unistd.h>\n#include <sys/syscall.h>\n#include <sys/socket.h>\n'
          '#define T(n, ...) do { errno = 0; long r = syscall(__VA_ARGS__); '
          'printf("%s %s\\n", n, r < 0 ? strerrorname_np(errno) : "OK"); } while (0)\n')


def runc():
    return SUITE["backend"] == "runc"


def outcomes(body):
    run = run_ok(C_HEAD + body, language="c")
    return dict(line.split() for line in run["stdout"].splitlines())


@attack("io_uring, AIO, process_vm_readv, name_to_handle_at, fanotify, vmsplice",
        "runc: each EPERM (not in the allow list: the host's kernel never sees them); gVisor: io_uring and "
        "AIO are the Sentry's own (they reach no host kernel code), the rest refused")
def test_kernel_surface_outside_the_allow_list():
    got = outcomes('int main(void) { char z[256] = {0}; struct iovec v = {z, 8};\n'
                   '  T("io_uring_setup", SYS_io_uring_setup, 4, z);\n'
                   '  T("io_setup", SYS_io_setup, 4, z);\n'
                   '  T("process_vm_readv", SYS_process_vm_readv, getppid(), &v, 1, &v, 1, 0);\n'
                   '  T("name_to_handle_at", SYS_name_to_handle_at, -100, "/", z, z, 0);\n'
                   '  T("fanotify_init", SYS_fanotify_init, 0, 0);\n'
                   '  T("vmsplice", SYS_vmsplice, 1, &v, 1, 0); }')
    assert len(got) == 6, got
    if runc():
        assert set(got.values()) == {"EPERM"}, got
    else:
        del got["io_uring_setup"], got["io_setup"]
        assert "OK" not in got.values(), got


@attack("socket families a program never needs: vsock, AF_ALG (kernel crypto), AF_KEY, DECnet, AX.25",
        "EPERM on runc (only unix, inet, inet6, netlink); gVisor does not have them (EAFNOSUPPORT)")
def test_socket_families():
    got = outcomes('int main(void) {\n'
                   '  int fam[] = {40, 38, 15, 12, 3}; const char *n[] = {"vsock", "alg", "key", "decnet", "ax25"};\n'
                   '  for (int i = 0; i < 5; i++) { errno = 0; int s = socket(fam[i], SOCK_DGRAM, 0);\n'
                   '    if (s < 0) { errno = 0; s = socket(fam[i], SOCK_SEQPACKET, 0); }\n'
                   '    printf("%s %s\\n", n[i], s < 0 ? strerrorname_np(errno) : "OK"); }\n'
                   '  int u = socket(AF_UNIX, SOCK_STREAM, 0), i4 = socket(AF_INET, SOCK_DGRAM, 0);\n'
                   '  printf("unix_inet %s\\n", u >= 0 && i4 >= 0 ? "OK" : strerrorname_np(errno)); }')
    assert got.pop("unix_inet") == "OK", got  # what programs do need still works
    assert len(got) == 5 and "OK" not in got.values(), got
    if runc():
        assert set(got.values()) == {"EPERM"}, got


@attack("32-bit system calls (int 0x80) around the 64-bit filter",
        "no 32-bit call runs: runc's filter has no 32-bit architecture (the call fails or the process dies); "
        "gVisor's ptrace platform does not serve them either")
def test_32_bit_syscalls():
    status, run = execute({"language": "c", "code":
                   '#include <stdio.h>\nint main(void) { long r;\n'
                   '  __asm__ volatile ("int $0x80" : "=a"(r) : "a"(20) : "memory");\n'  # getpid
                   '  printf("%ld\\n", r); fflush(stdout);\n'
                   '  __asm__ volatile ("int $0x80" : "=a"(r) : "a"(1), "b"(42) : "memory");\n'  # exit(42)
                   '  printf("survived %ld\\n", r); return 0; }'})
    assert status == 200, run
    out, code = run["run"]["stdout"], run["run"]["exitCode"]
    # Either the call fails (a negative errno) or the process is killed
    # (128 + signal); it never exits with the 42 that a served exit(42) gives.
    assert code != 42, run
    if out:
        first = int(out.splitlines()[0])
        assert first < 0, run  # a pid would be > 0


@attack("a new user namespace by clone(CLONE_NEWUSER) and unshare",
        "EPERM from the seccomp profile (gVisor's and runc's), never a namespace where the program is root")
def test_new_user_namespace():
    got = outcomes('#include <sched.h>\n#include <signal.h>\n#include <sys/wait.h>\n'
                   'int main(void) {\n'
                   '  T("clone_newuser", SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);\n'
                   '  T("unshare_newuser", SYS_unshare, CLONE_NEWUSER);\n'
                   '  T("unshare_newnet", SYS_unshare, CLONE_NEWNET);\n'
                   '  T("setns", SYS_setns, 0, 0); }')
    assert got == {"clone_newuser": "EPERM", "unshare_newuser": "EPERM",
                   "unshare_newnet": "EPERM", "setns": "EPERM"}, got


@attack("who the program is on the host: its uid map, and the uid of its process seen from the host",
        "runc: uid 65534 inside is host uid 165534 (no host user), root inside is host root only "
        "for runc's set-up, nothing else mapped; gVisor: the program is not a host process at all")
def test_program_uid_on_the_host():
    marker = "uidmark"
    # Pids of its own: a cold run on every pass (a warm sandbox, which takes
    # any memory, has no code mount for job_container to find).
    body = {"language": "python", "limits": {"wallTimeMs": 20000, "memoryBytes": 200 << 20, "pids": 64},
            "files": [{"name": "main.py", "content":
                       "import os, time\nprint(open('/proc/self/uid_map').read().split(), os.getuid(), flush=True)\n"
                       "time.sleep(8)\n"},
                      {"name": marker, "content": "x"}]}
    result = {}
    t = threading.Thread(target=lambda: result.update(r=execute(body, timeout=120)[1]))
    t.start()
    try:
        cid, _ = job_container(marker)
        pid = sandbox_pid(cid)
        status = open(f"/proc/{pid}/status").read()
        uids = next(line.split()[1:] for line in status.splitlines() if line.startswith("Uid:"))
        exe = sh("readlink", f"/proc/{pid}/exe", check=False).stdout.strip()
    finally:
        t.join()
    run = result["r"]["run"]
    assert run["exitCode"] == 0, run
    inside = run["stdout"].split("] ")
    if runc():
        assert uids == ["165534"] * 4, (uids, exe)
        assert run["stdout"].startswith("['0', '0', '1', '65534', '165534', '1'] 65534"), run
    else:
        assert "runsc" in exe and "python" not in exe, exe  # the Sentry, not the program
    assert inside[-1].strip() == "65534", run
