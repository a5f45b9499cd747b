"""The same promises attacked from the other runtimes: Node.js, TypeScript,
Ruby, Go, Rust, Java, C++, PHP, Perl and Lua (test_attacks.py has bash, C and Python).
A runtime brings its own way to fork, allocate, write files or open sockets
(libuv, the JVM, Go's scheduler, Ruby's fork retries), and each attack
asserts the outcome that the promise implies for that runtime. Rows go to
docs/AUDIT.md through the same `attack` marker (conftest.py)."""
import json
import re
import socket
import subprocess

import pytest

from conftest import each_version, execute, healthy, own_mounts_removed, pinned, run_ok, workers

attack = pytest.mark.attack

# What every sandbox's environment is (test_sandbox_inside has the Python
# one); a runtime may add its own (Go's from the registry), nothing else.
SANDBOX_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/box", "LANG": "C.UTF-8",
               "TMPDIR": "/tmp", "HOSTNAME": "isobox", "PWD": "/box"}
HOST_NEEDLES = ["/var/lib/isobox", "/var/lib/docker", "docker", "isobox.slice", "/opt/isobox",
                "ISOBOX_", "SPAWN", "/root", "overlay2"]
WRITE_TARGETS = ["/x", "/etc/x", "/usr/x", "/src/x", "/var/tmp/x"]


def env_pairs(text):
    """NUL-separated NAME=value pairs (as /proc/PID/environ) as a dict."""
    return dict(kv.split("=", 1) for kv in text.split("\0") if kv)


def assert_writes_refused(lines, eacces="13", erofs="30"):
    """One 'path errno' line per WRITE_TARGETS entry: EACCES where the
    directory is root's, EROFS where only the read-only mount stops it."""
    got = dict(line.split(" ", 1) for line in lines)
    assert sorted(got) == sorted(WRITE_TARGETS), got
    assert all(v in (eacces, erofs) for v in got.values()), got
    assert got["/var/tmp/x"] == erofs, got  # world-writable dir: the ro mount refuses


# --- processes: RLIMIT_NPROC from every runtime's own spawn path -------------

@each_version("javascript", "Node.js: child_process.spawn loop (libuv)",
              "spawn emits EAGAIN before the process limit (16); node goes on")
def test_node_spawn_loop(version):
    run = run_ok("const cp = require('child_process');\nlet n = 0;\n"
                 "function next() {\n  const c = cp.spawn('sleep', ['30']);\n"
                 "  c.on('error', (e) => { console.log(n, e.code); process.exit(0); });\n"
                 "  if (c.pid) { n++; setImmediate(next); }\n}\nnext();",
                 language="javascript", limits={"pids": 16, "wallTimeMs": 8000}, **pinned(version))
    n, code = run["stdout"].split()
    assert code == "EAGAIN" and 0 < int(n) < 16, run


@attack("Ruby: fork loop (Ruby retries EAGAIN forever), then fork(2) raw through Fiddle",
        "forks stall below the process limit (16); the raw fork(2) fails with EAGAIN")
def test_ruby_fork_loop():
    # Kernel#fork sleeps a second and retries on EAGAIN, for ever: a watchdog
    # thread reports how far it got and tries the bare system call once.
    run = run_ok("require 'fiddle'\nn = 0\nThread.new do\n  sleep 3\n"
                 "  fork2 = Fiddle::Function.new(Fiddle::Handle::DEFAULT['fork'], [], Fiddle::TYPE_INT)\n"
                 "  r = fork2.call\n  sleep 30 if r == 0\n"
                 "  puts \"#{n} #{r} #{SystemCallError.new(nil, Fiddle.last_error).class}\"\n"
                 "  $stdout.flush\n"
                 "  exit!(0)\nend\nloop { fork { sleep 30 }; n += 1 }",
                 language="ruby", limits={"pids": 16, "wallTimeMs": 8000})
    n, rc, err = run["stdout"].split()
    assert (rc, err) == ("-1", "Errno::EAGAIN") and 0 < int(n) < 16, run


@attack("Go: os/exec Start loop", "Start fails with EAGAIN before the process limit (24)")
def test_go_exec_loop():
    run = run_ok('package main\n\nimport (\n\t"errors"\n\t"fmt"\n\t"os/exec"\n\t"syscall"\n)\n\n'
                 'func main() {\n\tn := 0\n\tfor {\n\t\tc := exec.Command("sleep", "30")\n'
                 '\t\tif err := c.Start(); err != nil {\n'
                 '\t\t\tfmt.Println(n, errors.Is(err, syscall.EAGAIN))\n\t\t\treturn\n\t\t}\n'
                 '\t\tn++\n\t}\n}\n', language="go", limits={"pids": 24, "wallTimeMs": 8000})
    n, eagain = run["stdout"].split()
    assert eagain == "true" and 0 < int(n) < 24, run


@attack("Rust: std::process::Command spawn loop", "spawn fails with EAGAIN (11) before the process limit (16)")
def test_rust_command_loop():
    run = run_ok("use std::process::Command;\nfn main() {\n    let mut kids = Vec::new();\n"
                 "    loop {\n        match Command::new(\"sleep\").arg(\"30\").spawn() {\n"
                 "            Ok(c) => kids.push(c),\n"
                 "            Err(e) => { println!(\"{} {}\", kids.len(), e.raw_os_error().unwrap_or(-1)); break; }\n"
                 "        }\n    }\n}\n", language="rust", limits={"pids": 16, "wallTimeMs": 8000})
    n, err = run["stdout"].split()
    assert err == "11" and 0 < int(n) < 16, run


@attack("Rust at the lowest pids (8): rustc runs a dozen threads, then the program spawns",
        "the compile succeeds (it gets sandbox.compilePids); the program's RLIMIT_NPROC is 8, the sandbox's "
        "first process (the reporter) one of them, and the program's seventh process fails with EAGAIN (11)")
def test_rust_compiles_at_the_lowest_pids_and_the_program_gets_only_them():
    body = {"language": "rust", "limits": {"pids": 8, "wallTimeMs": 8000},
            "code": "use std::process::Command;\nfn main() {\n    let mut kids = Vec::new();\n"
                    "    loop {\n        match Command::new(\"sleep\").arg(\"30\").spawn() {\n"
                    "            Ok(c) => kids.push(c),\n"
                    "            Err(e) => { println!(\"{} {}\", kids.len(), e.raw_os_error().unwrap_or(-1)); break; }\n"
                    "        }\n    }\n}\n"}
    status, result = execute(body)
    assert status == 200 and result["compile"]["exitCode"] == 0, result
    assert result["limits"]["pids"] == 8, result["limits"]
    assert result["run"]["stdout"].split() == ["6", "11"], result["run"]


@each_version("java", "Java: Runtime.exec loop",
              "EAGAIN before the process limit (40, JVM threads included): the spawn's IOException (error 11), "
              "or the JVM's own thread (each child gets a reaper thread) that cannot start")
def test_java_exec_loop(version):
    # Each exec is a process and then a reaper thread; which of the two
    # meets the limit first depends on how many threads the JVM has
    # started by then (its compiler threads come and go), so both are
    # the limit holding: 3 of 8 runs end at the thread, on either launch path.
    run = run_ok("import java.util.ArrayList;\npublic class Main {\n"
                 "    public static void main(String[] args) throws Exception {\n"
                 "        ArrayList<Process> kids = new ArrayList<>();\n"
                 "        try {\n            for (;;) kids.add(Runtime.getRuntime().exec(new String[]{\"sleep\", \"30\"}));\n"
                 "        } catch (java.io.IOException | OutOfMemoryError e) {\n"
                 "            System.out.println(kids.size() + \" \" + e.getMessage());\n        }\n"
                 "        System.exit(0);\n    }\n}\n",
                 language="java", limits={"pids": 40, "wallTimeMs": 15000}, **pinned(version))
    # The JVM logs each thread it cannot start on stdout first ("[1.2s]...");
    # Java 21's spawn message goes on with lines of advice after its first.
    n, message = re.findall(r"(?m)^(\d+) (.+)$", run["stdout"])[-1]
    assert 0 < int(n) < 40, run
    spawn = re.search(r"error[=:] ?11\b", message)  # 17: "error=11, ..."; 21: "posix_spawn failed, error: 11 (...)"
    assert spawn or ("unable to create native thread" in message
                     and "pthread_create failed (EAGAIN)" in run["stdout"]), run


@attack("PHP: pcntl_fork loop", "pcntl_fork returns -1 with EAGAIN (11) before the process limit (16)")
def test_php_pcntl_fork_loop():
    run = run_ok("<?php\n$n = 0;\nfor (;;) {\n  $pid = pcntl_fork();\n"
                 "  if ($pid === 0) { sleep(30); exit(0); }\n"
                 "  if ($pid < 0) { echo $n, ' ', pcntl_get_last_error(), \"\\n\"; exit(0); }\n  $n++;\n}\n",
                 language="php", limits={"pids": 16, "wallTimeMs": 8000})
    n, err = run["stdout"].split()
    assert err == "11" and 0 < int(n) < 16, run


@attack("Perl: fork loop", "fork returns undef with EAGAIN (11) before the process limit (16)")
def test_perl_fork_loop():
    run = run_ok("my $n = 0;\nwhile (1) {\n  my $pid = fork();\n"
                 "  if (!defined $pid) { printf \"%d %d\\n\", $n, $!+0; last }\n"
                 "  if ($pid == 0) { sleep 30; exit 0 }\n  $n++;\n}\n",
                 language="perl", limits={"pids": 16, "wallTimeMs": 8000})
    n, err = run["stdout"].split()
    assert err == "11" and 0 < int(n) < 16, run


@attack("Lua: os.execute('sleep 30 &') loop (Lua has no fork of its own)",
        "the shell cannot fork any more before the process limit (16); os.execute reports failure")
def test_lua_execute_loop():
    run = run_ok("local n = 0\nwhile n < 100 do\n  local ok, how, code = os.execute('sleep 30 &')\n"
                 "  if not ok then print(n, how, code) break end\n  n = n + 1\nend\n",
                 language="lua", limits={"pids": 16, "wallTimeMs": 8000})
    n, how, code = run["stdout"].split()
    assert how == "exit" and code != "0" and 0 < int(n) < 16, run
    assert "Cannot fork" in run["stderr"], run


@attack("C++: std::thread bomb (threads are tasks too)",
        "std::system_error EAGAIN (11) before the process limit (16), threads and main together")
def test_cpp_thread_bomb():
    run = run_ok("#include <chrono>\n#include <cstdio>\n#include <system_error>\n#include <thread>\n"
                 "#include <vector>\nint main() {\n    std::vector<std::thread> threads;\n    try {\n"
                 "        for (;;) threads.emplace_back([] { std::this_thread::sleep_for(std::chrono::seconds(30)); });\n"
                 "    } catch (const std::system_error &e) {\n"
                 "        std::printf(\"%zu %d\\n\", threads.size(), e.code().value());\n"
                 "        std::fflush(stdout);\n        std::_Exit(0);\n    }\n}\n",
                 language="cpp", limits={"pids": 16, "wallTimeMs": 8000})
    n, err = run["stdout"].split()
    assert err == "11" and 0 < int(n) < 16, run


@attack("Node.js: process.kill(-1, 'SIGKILL')",
        "kills the sandbox's other processes only; node goes on; the workers live")
def test_node_kill_everything():
    before = sorted(workers())
    run = run_ok("const cp = require('child_process');\nlet dead = 0;\n"
                 "for (let i = 0; i < 2; i++) cp.spawn('sleep', ['30']).on('exit', (code, sig) => {\n"
                 "  console.log('child', sig); if (++dead === 2) console.log('after'); });\n"
                 "setTimeout(() => process.kill(-1, 'SIGKILL'), 300);",
                 language="javascript", limits={"wallTimeMs": 10000})
    assert run["stdout"] == "child SIGKILL\nchild SIGKILL\nafter\n" and not run["timedOut"], run
    assert sorted(workers()) == before and healthy()


# --- memory: each runtime's allocator against the cgroup ---------------------

@each_version("javascript", "Node.js: Buffer.alloc bomb (off the V8 heap)",
              "oomKilled at memoryBytes (64 MiB), exit 137")
def test_node_buffer_bomb(version):
    run = run_ok("const a = [];\nfor (;;) a.push(Buffer.alloc(1 << 20, 1));",
                 language="javascript", limits={"memoryBytes": 64 << 20}, **pinned(version))
    assert run["oomKilled"] is True and run["exitCode"] == 137, run


# 128 MiB: Go 1.24's compiler (Debian 13) needs more than 64 MiB of the
# same limit to build the program (at 64 it thrashes to the compile time
# limit); 96 MiB builds it.
@attack("Go: 64 goroutines each allocating and touching 1 MiB slices", "oomKilled at memoryBytes (128 MiB), exit 137")
def test_go_goroutine_bomb():
    run = run_ok('package main\n\nimport "time"\n\nvar sink = make(chan []byte)\n\n'
                 'func main() {\n\tfor i := 0; i < 64; i++ {\n\t\tgo func() {\n'
                 '\t\t\tvar keep [][]byte\n\t\t\tfor {\n\t\t\t\tb := make([]byte, 1<<20)\n'
                 '\t\t\t\tfor j := range b {\n\t\t\t\t\tb[j] = 1\n\t\t\t\t}\n'
                 '\t\t\t\tkeep = append(keep, b)\n\t\t\t\tif len(keep) < 0 {\n\t\t\t\t\tsink <- b\n\t\t\t\t}\n'
                 '\t\t\t}\n\t\t}()\n\t}\n\ttime.Sleep(30 * time.Second)\n}\n',
                 language="go", limits={"memoryBytes": 128 << 20, "wallTimeMs": 10000})
    assert run["oomKilled"] is True and run["exitCode"] == 137 and not run["timedOut"], run


@each_version("java", "Java: growing heap of long[] arrays",
              "the JVM sizes its heap from the cgroup (1/4 of 128 MiB): OutOfMemoryError, exit 1, not oomKilled")
def test_java_heap_bomb(version):
    run = run_ok("import java.util.ArrayList;\npublic class Main {\n"
                 "    public static void main(String[] args) {\n"
                 "        ArrayList<long[]> keep = new ArrayList<>();\n"
                 "        for (;;) keep.add(new long[1 << 17]);\n    }\n}\n",
                 language="java", limits={"memoryBytes": 128 << 20}, **pinned(version))
    assert run["exitCode"] == 1 and run["oomKilled"] is False, run
    assert "java.lang.OutOfMemoryError: Java heap space" in run["stderr"], run


@attack("Java: off-heap bomb with sun.misc.Unsafe.allocateMemory + setMemory (past the JVM's own limits)",
        "oomKilled at memoryBytes (128 MiB), exit 137 (gVisor's own 2, seen 1 run in 5, is reported as the kill it was)")
def test_java_unsafe_bomb():
    run = run_ok("import java.lang.reflect.Field;\npublic class Main {\n"
                 "    public static void main(String[] args) throws Exception {\n"
                 "        Field f = sun.misc.Unsafe.class.getDeclaredField(\"theUnsafe\");\n"
                 "        f.setAccessible(true);\n"
                 "        sun.misc.Unsafe u = (sun.misc.Unsafe) f.get(null);\n"
                 "        for (;;) { long p = u.allocateMemory(1 << 20); u.setMemory(p, 1 << 20, (byte) 1); }\n"
                 "    }\n}\n", language="java", limits={"memoryBytes": 128 << 20})
    # The sentry's own status when the OOM killer takes one of its
    # processes (2) is not the program's: supervise.c's inspect() says 137.
    assert run["oomKilled"] is True and run["exitCode"] == 137 and run["signal"] == "SIGKILL", run
    assert not run["timedOut"], run


@attack("PHP: str_repeat bomb (the CLI has memory_limit -1)", "oomKilled at memoryBytes (64 MiB), exit 137")
def test_php_memory_bomb():
    run = run_ok("<?php\necho ini_get('memory_limit'), \"\\n\";\n$a = [];\n"
                 "for (;;) $a[] = str_repeat('x', 1 << 20);\n",
                 language="php", limits={"memoryBytes": 64 << 20})
    assert run["stdout"] == "-1\n", run  # no PHP limit: the cgroup is what stops it
    assert run["oomKilled"] is True and run["exitCode"] == 137, run


@attack("Ruby: growing array of 1 MiB strings", "oomKilled at memoryBytes (64 MiB), exit 137")
def test_ruby_memory_bomb():
    run = run_ok("a = []\nloop { a << ('x' * (1 << 20)) }", language="ruby",
                 limits={"memoryBytes": 64 << 20})
    assert run["oomKilled"] is True and run["exitCode"] == 137, run


# --- read-only filesystem ------------------------------------------------------

@each_version("javascript", "Node.js: fs.writeFileSync to / /etc /usr /src /var/tmp",
              "EACCES or EROFS each; /var/tmp EROFS")
def test_node_write_outside_tmp(version):
    run = run_ok("const fs = require('fs');\n"
                 f"for (const p of {WRITE_TARGETS!r})" " {\n"
                 "  try { fs.writeFileSync(p, 'x'); console.log(p + ' WROTE'); }\n"
                 "  catch (e) { console.log(p + ' ' + e.code); }\n}", language="javascript", **pinned(version))
    assert_writes_refused(run["stdout"].splitlines(), eacces="EACCES", erofs="EROFS")


@attack("TypeScript (tsc, then Node.js): fs.writeFileSync to / /etc /usr /src /var/tmp",
        "EACCES or EROFS each; /var/tmp EROFS")
def test_typescript_write_outside_tmp():
    run = run_ok("import * as fs from 'fs';\n"
                 f"const targets: string[] = {WRITE_TARGETS!r};\n"
                 "for (const p of targets) {\n"
                 "  try { fs.writeFileSync(p, 'x'); console.log(`${p} WROTE`); }\n"
                 "  catch (e: any) { console.log(`${p} ${e.code}`); }\n}\n", language="typescript")
    assert run["stdout"] and run["exitCode"] == 0, run
    assert_writes_refused(run["stdout"].splitlines(), eacces="EACCES", erofs="EROFS")


@attack("Ruby: File.write to / /etc /usr /src /var/tmp", "Errno::EACCES or Errno::EROFS each; /var/tmp EROFS")
def test_ruby_write_outside_tmp():
    run = run_ok(f"{WRITE_TARGETS!r}.each do |p|\n"
                 "  begin\n    File.write(p, 'x'); puts \"#{p} WROTE\"\n"
                 "  rescue SystemCallError => e\n    puts \"#{p} #{e.class}\"\n  end\nend", language="ruby")
    assert_writes_refused(run["stdout"].splitlines(), eacces="Errno::EACCES", erofs="Errno::EROFS")


@attack("Rust: std::fs::write to / /etc /usr /src /var/tmp", "EACCES (13) or EROFS (30) each; /var/tmp EROFS")
def test_rust_write_outside_tmp():
    targets = ", ".join(f'"{p}"' for p in WRITE_TARGETS)
    run = run_ok("fn main() {\n" f"    for p in [{targets}] " "{\n"
                 "        match std::fs::write(p, \"x\") {\n"
                 "            Ok(_) => println!(\"{} WROTE\", p),\n"
                 "            Err(e) => println!(\"{} {}\", p, e.raw_os_error().unwrap_or(-1)),\n"
                 "        }\n    }\n}\n", language="rust")
    assert_writes_refused(run["stdout"].splitlines())


@attack("PHP, Perl, Lua: write to / /etc /usr /src /var/tmp", "EACCES or EROFS each; /var/tmp EROFS")
def test_scripting_writes_outside_tmp():
    targets = ", ".join(f"'{p}'" for p in WRITE_TARGETS)
    php = run_ok("<?php\nforeach ([" + targets + "] as $p) {\n"
                 "  $r = @file_put_contents($p, 'x');\n"
                 "  echo $p, ' ', $r === false ? error_get_last()['message'] : 'WROTE', \"\\n\";\n}\n",
                 language="php")
    php_lines = [line.split(" ", 1)[0] + " " + ("30" if "Read-only file system" in line else
                                                  "13" if "Permission denied" in line else line)
                 for line in php["stdout"].splitlines()]
    assert_writes_refused(php_lines)
    perl = run_ok(f"for my $p ({targets}) " "{\n"
                  "  if (open(my $fh, '>', $p)) { print \"$p WROTE\\n\" } else { printf \"%s %d\\n\", $p, $!+0 }\n}\n",
                  language="perl")
    assert_writes_refused(perl["stdout"].splitlines())
    lua = run_ok("for _, p in ipairs({" + targets + "}) do\n"
                 "  local f, err, code = io.open(p, 'w')\n"
                 "  print(p .. ' ' .. (f and 'WROTE' or tostring(code)))\nend\n", language="lua")
    assert_writes_refused(lua["stdout"].splitlines())


# --- privilege -------------------------------------------------------------------

@attack("Ruby: Process::Sys.setuid(0) and Process::UID.change_privilege(0)", "Errno::EPERM both; still uid 65534")
def test_ruby_setuid():
    run = run_ok("['Process::Sys.setuid(0)', 'Process::UID.change_privilege(0)'].each do |call|\n"
                 "  begin\n    eval(call); puts 'ROOT'\n"
                 "  rescue SystemCallError => e\n    puts e.class\n  end\nend\nputs Process.euid",
                 language="ruby")
    assert run["stdout"].split() == ["Errno::EPERM", "Errno::EPERM", "65534"], run


@attack("Go: syscall.Mount, remount /, Setuid(0), Setgid(0), Setgroups, chroot, AF_PACKET and raw sockets",
        "EPERM each")
def test_go_privileged_syscalls():
    run = run_ok('package main\n\nimport (\n\t"fmt"\n\t"syscall"\n)\n\n'
                 'func show(what string, err error) {\n\tif err == nil {\n\t\tfmt.Println(what, "OK")\n'
                 '\t} else if e, ok := err.(syscall.Errno); ok && e == syscall.EPERM {\n'
                 '\t\tfmt.Println(what, "EPERM")\n\t} else {\n\t\tfmt.Println(what, err)\n\t}\n}\n\n'
                 'func main() {\n'
                 '\tshow("mount", syscall.Mount("none", "/mnt", "tmpfs", 0, ""))\n'
                 '\tshow("remount", syscall.Mount("none", "/", "", syscall.MS_REMOUNT|syscall.MS_BIND, ""))\n'
                 '\tshow("setuid", syscall.Setuid(0))\n\tshow("setgid", syscall.Setgid(0))\n'
                 '\tshow("setgroups", syscall.Setgroups([]int{0}))\n\tshow("chroot", syscall.Chroot("/tmp"))\n'
                 '\t_, err := syscall.Socket(syscall.AF_PACKET, syscall.SOCK_RAW, 0x0300)\n\tshow("packet", err)\n'
                 '\t_, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_ICMP)\n'
                 '\tshow("raw", err)\n}\n', language="go")
    got = dict(line.split(" ", 1) for line in run["stdout"].splitlines())
    assert got == {k: "EPERM" for k in ["mount", "remount", "setuid", "setgid", "setgroups",
                                         "chroot", "packet", "raw"]}, run


@attack("PHP posix_setuid(0) and Perl `$< = 0`", "refused with EPERM (1); still uid 65534")
def test_php_perl_setuid():
    php = run_ok("<?php\nvar_dump(posix_setuid(0));\necho posix_get_last_error(), ' ', posix_geteuid(), \"\\n\";",
                 language="php")
    assert php["stdout"].split() == ["bool(false)", "1", "65534"], php
    perl = run_ok("$< = 0; $> = 0;\nprintf \"%d %d %d\\n\", $!+0, $<, $>;", language="perl")
    assert perl["stdout"] == "1 65534 65534\n", perl


# --- information: only the sandbox's environment and mounts -------------------------

@attack("Node.js: read /proc/1/environ, /proc/self/environ, /proc/self/mountinfo, /proc/mounts, process.env",
        "exactly the sandbox's environment; no host path, no docker or worker detail "
        "(runc: but the host paths of its own mounts, in the kernel's mount table)")
def test_node_reads_nothing_of_the_host():
    run = run_ok("const fs = require('fs');\nconst out = {env: process.env};\n"
                 "for (const p of ['/proc/1/environ', '/proc/self/environ', '/proc/self/mountinfo', "
                 "'/proc/mounts', '/proc/self/cgroup', '/proc/1/cmdline'])\n"
                 "  try { out[p] = fs.readFileSync(p, 'latin1'); } catch (e) { out[p] = e.code; }\n"
                 "console.log(JSON.stringify(out));", language="javascript")
    got = json.loads(run["stdout"])
    # The registry's env for javascript: npm's settings (registry.yaml).
    want = dict(SANDBOX_ENV, NPM_CONFIG_CACHE="/tmp/.npm", NPM_CONFIG_UPDATE_NOTIFIER="false",
                NPM_CONFIG_FUND="false", NPM_CONFIG_AUDIT="false")
    assert got["env"] == want, got["env"]
    assert env_pairs(got["/proc/1/environ"]) == want == env_pairs(got["/proc/self/environ"])
    assert " /box " in got["/proc/self/mountinfo"]  # the read really happened
    text = json.dumps({k: own_mounts_removed(v) if isinstance(v, str) else v for k, v in got.items()})
    for needle in HOST_NEEDLES:
        assert needle not in text, needle


@attack("PHP getenv() and /proc/self/environ; Perl %ENV; Lua /proc/self/environ",
        "exactly the sandbox's environment in each")
def test_scripting_environment_is_the_sandboxs():
    php = run_ok("<?php\necho json_encode(getenv()), \"\\n\", file_get_contents('/proc/self/environ');",
                 language="php")
    listed, raw = php["stdout"].split("\n", 1)
    assert json.loads(listed) == SANDBOX_ENV and env_pairs(raw) == SANDBOX_ENV, php
    # Perl and Lua also get what makes their output line-buffered
    # (registry.yaml): files in the image, nothing of the host.
    perl = run_ok('print join("\\0", map { "$_=$ENV{$_}" } sort keys %ENV);', language="perl")
    assert env_pairs(perl["stdout"]) == dict(SANDBOX_ENV, PERL5OPT="-MIsoboxSync",
                                             PERL5LIB="/usr/local/lib/isobox/perl"), perl
    lua = run_ok("io.write(io.open('/proc/self/environ'):read('a'))", language="lua")
    assert env_pairs(lua["stdout"]) == dict(SANDBOX_ENV, LD_PRELOAD="/usr/libexec/coreutils/libstdbuf.so",
                                            _STDBUF_O="L"), lua


# --- network: off, whatever the runtime's socket API ----------------------------------

class HostListener:
    """A TCP listener on every host address (0.0.0.0): a connection from a
    sandbox would land here. Knows the host's non-loopback IPv4 addresses."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("0.0.0.0", 0))
        self.sock.listen(16)
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]
        out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"],
                             check=True, capture_output=True, text=True).stdout
        self.addrs = sorted({line.split()[3].split("/")[0] for line in out.splitlines()})

    def accepted(self):
        try:
            self.sock.accept()[0].close()
            return True
        except BlockingIOError:
            return False


@pytest.fixture
def host_listener():
    listener = HostListener()
    try:
        assert listener.addrs, "the host has no global IPv4 address to probe"
        yield listener
    finally:
        listener.sock.close()


# Connect to each of {hosts} on {port}; print "address errno" (or CONNECTED).
NET_PROBES = {
    "javascript": ("const net = require('net');\nfor (const h of {hosts}) {{\n"
                   "  const s = net.connect({{host: h, port: {port}}});\n"
                   "  s.setTimeout(3000, () => {{ console.log(h + ' TIMEOUT'); s.destroy(); }});\n"
                   "  s.on('connect', () => {{ console.log(h + ' CONNECTED'); s.destroy(); }});\n"
                   "  s.on('error', (e) => console.log(h + ' ' + -e.errno));\n}}"),
    "ruby": ("require 'socket'\n{hosts}.each do |h|\n  begin\n"
             "    Socket.tcp(h, {port}, connect_timeout: 3).close; puts \"#{{h}} CONNECTED\"\n"
             "  rescue SystemCallError => e\n    puts \"#{{h}} #{{e.errno}}\"\n"
             "  rescue IOError\n    puts \"#{{h}} TIMEOUT\"\n  end\nend"),
    "go": ('package main\n\nimport (\n\t"errors"\n\t"fmt"\n\t"net"\n\t"syscall"\n\t"time"\n)\n\n'
           'func main() {{\n\tfor _, h := range []string{{{hosts_go}}} {{\n'
           '\t\tc, err := net.DialTimeout("tcp", net.JoinHostPort(h, "{port}"), 3*time.Second)\n'
           '\t\tvar e syscall.Errno\n\t\tswitch {{\n\t\tcase err == nil:\n\t\t\tc.Close()\n'
           '\t\t\tfmt.Println(h, "CONNECTED")\n\t\tcase errors.As(err, &e):\n\t\t\tfmt.Println(h, int(e))\n'
           '\t\tdefault:\n\t\t\tfmt.Println(h, "OTHER")\n\t\t}}\n\t}}\n}}\n'),
    "perl": ("use IO::Socket::INET;\nfor my $h ({hosts_pl}) {{\n"
             "  my $s = IO::Socket::INET->new(PeerAddr => $h, PeerPort => {port}, Proto => 'tcp', Timeout => 3);\n"
             "  printf \"%s %s\\n\", $h, $s ? 'CONNECTED' : $!+0;\n}}\n"),
}
NET_OUTCOME = ("EHOSTUNREACH/ENETUNREACH for every host address, ECONNREFUSED on the sandbox's "
               "own loopback; nothing reaches the host listener")


@pytest.mark.parametrize("language", [
    pytest.param(lang, marks=attack(f"{name}: TCP connect to every host address and 127.0.0.1 "
                                    "(a host listener waits on all of them)", NET_OUTCOME))
    for lang, name in [("javascript", "Node.js net.connect"), ("ruby", "Ruby Socket.tcp"),
                       ("go", "Go net.DialTimeout"), ("perl", "Perl IO::Socket::INET")]])
def test_connect_to_the_host(language, host_listener):
    hosts = ["127.0.0.1"] + host_listener.addrs
    code = NET_PROBES[language].format(
        hosts=repr(hosts).replace("'", '"'), port=host_listener.port,
        hosts_go=", ".join(f'"{h}"' for h in hosts), hosts_pl=", ".join(f"'{h}'" for h in hosts))
    run = run_ok(code, language=language, limits={"wallTimeMs": 10000})
    got = dict(line.split() for line in run["stdout"].splitlines())
    # 127.0.0.1 is the sandbox's own loopback: the host listens there, the sandbox does not.
    assert got.pop("127.0.0.1", None) == "111", run
    assert sorted(got) == host_listener.addrs and set(got.values()) <= {"113", "101"}, run
    assert not host_listener.accepted()
