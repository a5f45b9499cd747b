"""What users hit first in every language: output that arrives as the
program writes its lines (no flush by hand), and everyday tools that work
(`ls -la`, `stat`, `cp -a`...) with nothing on stderr: the 2024 runsc
answers ls's lgetxattr wrongly (EBADF on symlinks, EACCES on unreadable
directories), and deploy/images/lib/preload.c says ENOTSUP instead)."""
import concurrent.futures
import re

import streaming
from conftest import URL, execute

# Three lines a second apart, written the way the language's users write
# them, never flushed by hand.
SPACED = {
    "python": "import time\nfor i in range(3):\n    print('line', i)\n    time.sleep(1)",
    "python-slim": "import time\nfor i in range(3):\n    print('line', i)\n    time.sleep(1)",
    "javascript": ("const nap = ms => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);\n"
                   "for (let i = 0; i < 3; i++) { console.log('line ' + i); nap(1000); }"),
    "typescript": ("const nap = (ms: number): void => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms); };\n"
                   "for (let i: number = 0; i < 3; i++) { console.log('line ' + i); nap(1000); }"),
    "ruby": '3.times { |i| puts "line #{i}"; sleep 1 }',
    "bash": 'for i in 0 1 2; do echo "line $i"; sleep 1; done',
    "php": '<?php for ($i = 0; $i < 3; $i++) { echo "line $i\\n"; sleep(1); }',
    "lua": 'for i = 0, 2 do print("line " .. i); os.execute("sleep 1") end',
    "perl": 'for my $i (0..2) { print "line $i\\n"; sleep 1; }',
    "c": ('#include <stdio.h>\n#include <unistd.h>\n'
          'int main(void) { for (int i = 0; i < 3; i++) { printf("line %d\\n", i); sleep(1); } return 0; }'),
    "cpp": ('#include <chrono>\n#include <iostream>\n#include <thread>\n'
            'int main() { for (int i = 0; i < 3; i++) { std::cout << "line " << i << "\\n";'
            ' std::this_thread::sleep_for(std::chrono::seconds(1)); } }'),
    "go": ('package main\nimport (\n\t"fmt"\n\t"time"\n)\n'
           'func main() { for i := 0; i < 3; i++ { fmt.Printf("line %d\\n", i); time.Sleep(time.Second) } }'),
    "rust": ('use std::{thread, time};\n'
             'fn main() { for i in 0..3 { println!("line {}", i); thread::sleep(time::Duration::from_secs(1)); } }'),
    "java": ('public class Main { public static void main(String[] a) throws Exception {'
             ' for (int i = 0; i < 3; i++) { System.out.print("line " + i + "\\n"); Thread.sleep(1000); } } }'),
}

# The languages kept as files (language_programs.py) stream their spaced.EXT
# as a step of the session test_language_checks boots for them anyway: a
# sandbox boot fewer for each.


def streamed(language):
    """The stream of one language's SPACED program. Its wall time is the
    ceiling's 20 s: a JVM's start with three shards on two cores (Groovy's
    passed 15 s once) must not end the run before its lines."""
    return streaming.collect({"language": language, "code": SPACED[language],
                              "limits": {"wallTimeMs": 20000}}, URL)[1]


def test_lines_arrive_as_written_without_a_flush():
    """Every language, two at a time (the spacing is the programs' own
    sleep, not CPU: a compile next door does not bunch the lines)."""
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        got = dict(zip(sorted(SPACED), ex.map(streamed, sorted(SPACED))))
    for language, evs in got.items():
        streaming.assert_spaced(language, evs)


def test_stdout_and_stderr_keep_the_order_written():
    """Two pipes: the order across them holds when writes are apart in
    time (docs/API.md says how far apart); here 0.3 s."""
    code = ("import sys, time\nfor i in range(3):\n    print('out', i)\n    time.sleep(0.3)\n"
            "    print('err', i, file=sys.stderr)\n    time.sleep(0.3)")
    resp, evs = streaming.collect({"language": "python", "code": code}, URL)
    seen = [streaming.chunk_bytes(d).decode().strip() for _, n, d in evs if n in ("stdout", "stderr")]
    assert seen == ["out 0", "err 0", "out 1", "err 1", "out 2", "err 2"], seen


# 36 everyday commands in bash; each line's output is asserted.
TOOLS_SCRIPT = r"""set -u
cd /tmp && mkdir t && cd t
printf 'b\na\nc\n' > f.txt
echo "ls-la: $(ls -la | awk 'NR>1 {print $1, $NF}' | tr '\n' ' ')"
echo "stat: $(stat -c '%s %F %a' f.txt)"
touch -d '2020-01-02 03:04:05' old.txt
echo "touch-d: $(date -r old.txt -u +%Y-%m-%dT%H:%M:%S)"
echo "find-newer: $(find . -newer old.txt -name '*.txt' | sort | tr '\n' ' ')"
echo "du-h: $(du -h f.txt | cut -f1)"
mkdir src && echo x > src/y && chmod 750 src && cp -a src dst
echo "cp-a: $(cat dst/y) $(stat -c %a dst)"
mv dst moved && echo "mv: $(ls -d moved)"
tar -cf a.tar src && rm -r src && tar -xf a.tar && echo "tar: $(tar -tf a.tar | sort | tr '\n' ' ')$(cat src/y)"
echo "sort: $(sort f.txt | tr '\n' ' ')"
sed -i 's/a/A/' f.txt && echo "sed-i: $(tr '\n' ' ' < f.txt)"
echo "grep-r: $(grep -r A . --include='*.txt')"
chmod 600 f.txt && echo "chmod: $(stat -c %a f.txt)"
ln -s f.txt link && echo "ln-s: $(readlink link)"
echo "readlink-f: $(readlink -f link)"
echo "df: $(df -P /tmp | awk 'NR==2 {print $6}')"
echo "head: $(seq 10 | head -n 2 | tr '\n' ' ')"
echo "tail: $(seq 10 | tail -n 2 | tr '\n' ' ')"
echo "wc: $(wc -l < f.txt)"
echo "xargs: $(printf '1\n2\n' | xargs echo n)"
echo "env: $(env | grep -c '^HOME=')"
echo "date: $(date -u -d @86400 +%F)"
echo "sha256sum: $(printf abc | sha256sum | cut -c1-16)"
echo "ls-l-root: $(ls -l / | grep -c ' box$')"
echo "ls-la-box: $(ls -la /box | grep -c ' main.sh$')"
echo "test: $([ -e f.txt ] && [ -L link ] && [ -d moved ] && echo yes)"
echo "rm-r: $(rm -r moved && ls -d moved 2>&1 | grep -c 'No such')"
echo "paste: $(paste -d, <(printf '1\n2\n') <(printf 'a\nb\n') | tr '\n' ' ')"
echo "uniq-c: $(printf 'a\na\nb\n' | uniq -c | awk '{print $1 $2}' | tr '\n' ' ')"
echo "basename: $(basename /a/b/c.txt .txt) $(dirname /a/b/c.txt)"
echo "mktemp: $(mktemp -d | grep -c '^/tmp/tmp\.')"
echo "ls-R: $(ls -R src | tr '\n' ' ')"
echo "install: $(install -m 640 f.txt g.txt && stat -c %a g.txt)"
echo "truncate: $(truncate -s 1K z && stat -c %s z)"
echo "id: $(id -u) $(whoami)"
echo "stat-L: $(stat -L -c %s link)"
echo "ls-lt: $(ls -lt --time-style=+%Y old.txt | awk '{print $6, $7}')"
"""

TOOLS_EXPECTED = {
    "ls-la": "drwxr-xr-x . drwxrwxrwt .. -rw-r--r-- f.txt",
    "stat": "6 regular file 644",
    "touch-d": "2020-01-02T03:04:05",
    "find-newer": "./f.txt",
    "du-h": re.compile(r"\d+(\.\d+)?[KMG]?"),
    "cp-a": "x 750",
    "mv": "moved",
    "tar": "src/ src/y x",
    "sort": "a b c",
    "sed-i": "b A c",
    "grep-r": "./f.txt:A",
    "chmod": "600",
    "ln-s": "f.txt",
    "readlink-f": "/tmp/t/f.txt",
    "df": "/tmp",
    "head": "1 2",
    "tail": "9 10",
    "wc": "3",
    "xargs": "n 1 2",
    "env": "1",
    "date": "1970-01-02",
    "sha256sum": "ba7816bf8f01cfea",
    "ls-l-root": "1",
    "ls-la-box": "1",
    "test": "yes",
    "rm-r": "1",
    "paste": "1,a 2,b",
    "uniq-c": "2a 1b",
    "basename": "c /a/b",
    "mktemp": "1",
    "ls-R": "src: y",
    "install": "640",
    "truncate": "1024",
    "id": "65534 nobody",
    "stat-L": "6",
    "ls-lt": "2020 old.txt",
}


def check_lines(stdout):
    got = dict(line.split(": ", 1) if ": " in line else (line.rstrip(":"), "")
               for line in stdout.splitlines())
    assert set(got) == set(TOOLS_EXPECTED), stdout
    for name, want in TOOLS_EXPECTED.items():
        value = got[name].strip()
        if isinstance(want, str):
            assert value == want, (name, value)
        else:
            assert want.fullmatch(value), (name, value)


def test_everyday_tools_in_bash():
    # About 110 programs started: 2-3 s idle, three times that loaded.
    status, r = execute({"language": "bash", "code": TOOLS_SCRIPT, "limits": {"wallTimeMs": 20000}})
    assert status == 200, r
    assert r["run"]["stderr"] == "" and r["run"]["exitCode"] == 0, r["run"]
    check_lines(r["run"]["stdout"])


def test_the_36_tools_under_python_subprocess():
    """The whole list again, started by python's subprocess (an agent's
    usual way), so that each tool is python's grandchild."""
    code = ("import subprocess, sys\n"
            "p = subprocess.run(['bash', '-c', sys.stdin.read()], capture_output=True, text=True)\n"
            "sys.stdout.write(p.stdout); sys.stderr.write(p.stderr); sys.exit(p.returncode)\n")
    status, r = execute({"language": "python", "code": code, "limits": {"wallTimeMs": 20000}, "stdin": TOOLS_SCRIPT.replace(
        "ls -la /box | grep -c ' main.sh$'", "ls -la /box | grep -c ' main.py$'")})
    assert status == 200, r
    assert r["run"]["stderr"] == "" and r["run"]["exitCode"] == 0, r["run"]
    check_lines(r["run"]["stdout"])


def test_everyday_tools_through_python_subprocess():
    """The same script's commands, each run by python's subprocess with an
    argv (no shell between), the way agents' tools call them."""
    code = ("import subprocess, sys\n"
            "def run(*argv):\n"
            "    p = subprocess.run(argv, capture_output=True, text=True)\n"
            "    print(argv[0], p.returncode, p.stdout.strip().replace('\\n', ' '), p.stderr.strip())\n"
            "open('/tmp/f.txt', 'w').write('hi\\n')\n"
            "run('ls', '-la', '/box')\n"
            "run('stat', '-c', '%s %F', '/tmp/f.txt')\n"
            "run('cp', '-a', '/tmp/f.txt', '/tmp/g.txt')\n"
            "run('touch', '-d', '2001-02-03', '/tmp/g.txt')\n"
            "run('find', '/tmp', '-newer', '/tmp/g.txt', '-name', '*.txt')\n"
            "run('du', '-sh', '/box')\n"
            "run('ls', '-l', '--time-style=+%Y', '/tmp/g.txt')\n"
            "run('readlink', '-f', '/box/main.py')\n"
            "run('sha256sum', '/tmp/f.txt')\n")
    status, r = execute({"language": "python", "code": code})
    assert status == 200 and r["run"]["exitCode"] == 0, r
    lines = r["run"]["stdout"].splitlines()
    assert re.fullmatch(r"ls 0 total \d+ drwx.* \. .* \.\. .* main\.py ?", lines[0]), lines[0]
    assert lines[1:] [:3] == ["stat 0 3 regular file ", "cp 0  ", "touch 0  "], lines
    assert lines[4] == "find 0 /tmp/f.txt ", lines[4]
    assert re.fullmatch(r"du 0 \d+(\.\d+)?[KMG]?\t/box ", lines[5]), lines[5]
    assert re.fullmatch(r"ls 0 -rw-r--r-- 1 nobody nogroup 3 2001 /tmp/g\.txt ", lines[6]), lines[6]
    assert lines[7] == "readlink 0 /box/main.py ", lines[7]
    assert lines[8].startswith("sha256sum 0 98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4"), lines[8]


# In every image, by each language's own way of running a command: `ls -la
# /box` started directly (every image has the fix), then everyday file
# tools through the image's own shell, with nothing on stderr and exit 0
# (the xattr answers of this runsc that preload.c mends). One run per
# language: a boot is what the suite's time is made of.
TOOLS = ("ls -l / >/dev/null && stat /box >/dev/null && cp -a /box /tmp/c && find /box -ls >/dev/null && "
         "tar -cf /tmp/a.tar -C /box . && tar -tf /tmp/a.tar >/dev/null && echo clean")
LIST_AND_TOOLS = {
    "python": f"import subprocess\nsubprocess.run(['ls', '-la', '/box'], check=True)\n"
              f"subprocess.run(['sh', '-c', '{TOOLS}'], check=True)",
    "python-slim": f"import subprocess\nsubprocess.run(['ls', '-la', '/box'], check=True)\n"
                   f"subprocess.run(['sh', '-c', '{TOOLS}'], check=True)",
    "javascript": ("const cp = require('child_process');\n"
                   "process.stdout.write(cp.execFileSync('ls', ['-la', '/box']));\n"
                   f"process.stdout.write(cp.execFileSync('sh', ['-c', '{TOOLS}']));"),
    "typescript": ("import { execFileSync } from 'child_process';\n"
                   "process.stdout.write(execFileSync('ls', ['-la', '/box']));\n"
                   f"process.stdout.write(execFileSync('sh', ['-c', '{TOOLS}']));"),
    "ruby": f"system('ls', '-la', '/box', exception: true)\nsystem('sh', '-c', '{TOOLS}', exception: true)",
    "bash": f"set -e\nls -la /box\n{TOOLS}",
    "php": f"<?php passthru('ls -la /box', $rc); if ($rc) exit($rc); passthru('{TOOLS}', $rc); exit($rc);",
    "lua": f"if not os.execute('ls -la /box') then os.exit(1) end\nos.exit(os.execute('{TOOLS}') and 0 or 1)",
    "perl": f"system('ls', '-la', '/box') == 0 or exit(1);\nexit(system('sh', '-c', '{TOOLS}') >> 8);",
    "c": ('#include <stdlib.h>\nint main(void) { if (system("ls -la /box") != 0) return 1;'
          f' return system("{TOOLS}") != 0; }}'),
    "cpp": ('#include <cstdlib>\nint main() { if (std::system("ls -la /box") != 0) return 1;'
            f' return std::system("{TOOLS}") != 0; }}'),
    "go": ('package main\nimport (\n\t"os"\n\t"os/exec"\n)\n'
           'func run(name string, args ...string) { c := exec.Command(name, args...); c.Stdout = os.Stdout;'
           ' c.Stderr = os.Stderr; if c.Run() != nil { os.Exit(1) } }\n'
           f'func main() {{ run("ls", "-la", "/box"); run("sh", "-c", "{TOOLS}") }}'),
    "rust": ('use std::process::Command;\n'
             'fn run(name: &str, args: &[&str]) { if !Command::new(name).args(args).status().unwrap().success()'
             ' { std::process::exit(1); } }\n'
             f'fn main() {{ run("ls", &["-la", "/box"]); run("sh", &["-c", "{TOOLS}"]); }}'),
    "java": ('public class Main { static void run(String... cmd) throws Exception {'
             ' Process p = new ProcessBuilder(cmd).inheritIO().start(); if (p.waitFor() != 0) System.exit(1); }'
             ' public static void main(String[] a) throws Exception {'
             f' run("ls", "-la", "/box"); run("sh", "-c", "{TOOLS}"); }} }}'),
}


def test_ls_la_and_file_tools_work_in_every_image():
    def run(language):
        return execute({"language": language, "code": LIST_AND_TOOLS[language]}, timeout=120)
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        got = dict(zip(sorted(LIST_AND_TOOLS), ex.map(run, sorted(LIST_AND_TOOLS))))
    for language, (status, r) in got.items():
        assert status == 200, (language, r)
        run = r["run"]
        assert (run["exitCode"], run["stderr"]) == (0, ""), (language, run)
        lines = run["stdout"].splitlines()
        assert re.fullmatch(r"total \d+", lines[0]) and re.match(r"d\S+ +\d+ root +root .* \.$", lines[1]), \
            (language, lines)
        assert any(line.endswith(" ..") for line in lines), (language, lines)
        assert lines[-1] == "clean", (language, lines)
