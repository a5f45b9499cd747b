"""Every language through the running service: one program per language
and version that shows the whole contract of a run (hello, stdin, args, a
file sent with it, a second source file, stderr and its exit code), and for
compiled ones a compile error (diagnostics in compile.stderr, no run).

One run per language checks what five did before: each run is a sandbox
boot, about 2.9 CPU-s of this 2-core host for a python hello, and the
suite's time is the sum of its boots (docs/PERFORMANCE.md, the suite)."""
import pytest

import language_programs
from conftest import OTHER_VERSIONS, execute, request

# name: the files (the first is the entry point) of a program that prints
# "hello", then its stdin's line and its args, then data.txt's first line,
# then twice(21) from its second file, then "oops" on stderr, and exits 3.
PROGRAMS = {
    "python": [("main.py", 'import sys\nfrom util import twice\nprint("hello")\n'
                           'print(sys.stdin.read().strip(), *sys.argv[1:])\n'
                           'print(open("data.txt").readline().strip())\nprint(twice(21))\n'
                           'print("oops", file=sys.stderr)\nsys.exit(3)'),
               ("util.py", "def twice(x):\n    return 2 * x\n")],
    "javascript": [("main.js", 'const fs = require("fs");\nconst { twice } = require("./util");\n'
                               'console.log("hello");\n'
                               'console.log([fs.readFileSync(0, "utf8").trim(), ...process.argv.slice(2)].join(" "));\n'
                               'console.log(fs.readFileSync("data.txt", "utf8").split("\\n")[0]);\n'
                               'console.log(twice(21));\nconsole.error("oops");\nprocess.exit(3)'),
                   ("util.js", "exports.twice = (x) => 2 * x;\n")],
    "typescript": [("main.ts", 'import * as fs from "fs";\nimport { twice } from "./util";\n'
                               'const greet: string = "hello";\nconsole.log(greet);\n'
                               'const s: string = fs.readFileSync(0, "utf8").trim();\n'
                               'console.log([s, ...process.argv.slice(2)].join(" "));\n'
                               'console.log(fs.readFileSync("data.txt", "utf8").split("\\n")[0]);\n'
                               'console.log(twice(21));\nconst code: number = 3;\n'
                               'console.error("oops");\nprocess.exit(code)'),
                   ("util.ts", "export function twice(x: number): number { return 2 * x; }\n")],
    "ruby": [("main.rb", "require_relative 'util'\nputs \"hello\"\nputs ([STDIN.read.strip] + ARGV).join(\" \")\n"
                         "puts File.readlines(\"data.txt\").first.strip\nputs twice(21)\n"
                         "STDERR.puts \"oops\"\nexit 3"),
             ("util.rb", "def twice(x) = 2 * x\n")],
    "bash": [("main.sh", 'source ./util.sh\necho hello\nread -r line; echo "$line" "$@"\nhead -n 1 data.txt\n'
                         'twice 21\necho oops >&2; exit 3'),
             ("util.sh", "twice() { echo $(( 2 * $1 )); }\n")],
    "php": [("main.php", '<?php require \'util.php\';\necho "hello\\n";\n'
                         'echo implode(" ", array_merge([trim(stream_get_contents(STDIN))], array_slice($argv, 1))), "\\n";\n'
                         'echo trim(file("data.txt")[0]), "\\n";\necho twice(21), "\\n";\n'
                         'fwrite(STDERR, "oops\\n"); exit(3);'),
            ("util.php", "<?php function twice($x) { return 2 * $x; }")],
    "lua": [("main.lua", 'local util = require(\'util\')\nprint("hello")\n'
                         'print(io.read("l") .. " " .. table.concat(arg, " "))\n'
                         'print(io.open("data.txt"):read("l"))\nprint(util.twice(21))\n'
                         'io.stderr:write("oops\\n")\nos.exit(3)'),
            ("util.lua", "return { twice = function(x) return 2 * x end }")],
    "perl": [("main.pl", 'use lib \'.\';\nuse Util;\nprint "hello\\n";\n'
                         'my $l = <STDIN>; chomp $l; print join(" ", $l, @ARGV), "\\n";\n'
                         'open(my $f, "<", "data.txt") or die; my $d = <$f>; print $d;\n'
                         'print Util::twice(21), "\\n";\nprint STDERR "oops\\n"; exit 3;'),
             ("Util.pm", "package Util;\nsub twice { return 2 * $_[0]; }\n1;\n")],
    "c": [("main.c", '#include <stdio.h>\n#include "util.h"\nint main(int argc, char **argv) {\n  char b[64];\n'
                     '  puts("hello");\n  if (!fgets(b, sizeof b, stdin)) return 1;\n'
                     '  for (char *p = b; *p; p++) if (*p == \'\\n\') *p = 0;\n  printf("%s", b);\n'
                     '  for (int i = 1; i < argc; i++) printf(" %s", argv[i]);\n  printf("\\n");\n'
                     '  FILE *f = fopen("data.txt", "r");\n  if (!f || !fgets(b, sizeof b, f)) return 1;\n'
                     '  fputs(b, stdout);\n  printf("%d\\n", twice(21));\n  fflush(stdout);\n'
                     '  fputs("oops\\n", stderr);\n  return 3;\n}'),
          ("util.h", "int twice(int x);\n"),
          ("util.c", '#include "util.h"\nint twice(int x) { return 2 * x; }\n')],
    "cpp": [("main.cpp", '#include <fstream>\n#include <iostream>\n#include <string>\n#include "util.hpp"\n'
                         'int main(int argc, char **argv) {\n  std::cout << "hello" << std::endl;\n'
                         '  std::string s; std::getline(std::cin, s); std::cout << s;\n'
                         '  for (int i = 1; i < argc; i++) std::cout << " " << argv[i];\n  std::cout << std::endl;\n'
                         '  std::ifstream f("data.txt"); std::string l; std::getline(f, l); std::cout << l << "\\n";\n'
                         '  std::cout << twice(21) << std::endl;\n  std::cerr << "oops\\n";\n  return 3;\n}'),
            ("util.hpp", "int twice(int x);\n"),
            ("util.cpp", '#include "util.hpp"\nint twice(int x) { return 2 * x; }\n')],
    "go": [("main.go", 'package main\nimport (\n  "bufio"\n  "fmt"\n  "os"\n  "strings"\n)\nfunc main() {\n'
                       '  fmt.Println("hello")\n  s, _ := bufio.NewReader(os.Stdin).ReadString(\'\\n\')\n'
                       '  fmt.Println(strings.Join(append([]string{strings.TrimSpace(s)}, os.Args[1:]...), " "))\n'
                       '  b, err := os.ReadFile("data.txt")\n  if err != nil { panic(err) }\n'
                       '  fmt.Println(strings.SplitN(string(b), "\\n", 2)[0])\n  fmt.Println(twice(21))\n'
                       '  fmt.Fprintln(os.Stderr, "oops")\n  os.Exit(3)\n}'),
           ("util.go", "package main\nfunc twice(x int) int { return 2 * x }\n")],
    "rust": [("main.rs", 'mod util;\nuse std::io::Read;\nfn main() {\n  println!("hello");\n'
                         '  let mut s = String::new();\n  std::io::stdin().read_to_string(&mut s).unwrap();\n'
                         '  let mut v = vec![s.trim().to_string()];\n  v.extend(std::env::args().skip(1));\n'
                         '  println!("{}", v.join(" "));\n  let d = std::fs::read_to_string("data.txt").unwrap();\n'
                         '  println!("{}", d.lines().next().unwrap());\n  println!("{}", util::twice(21));\n'
                         '  eprintln!("oops");\n  std::process::exit(3);\n}'),
             ("util.rs", "pub fn twice(x: i32) -> i32 { 2 * x }\n")],
    "java": [("Main.java", 'import java.nio.file.*;\nimport java.util.*;\n'
                           'public class Main { public static void main(String[] a) throws Exception {\n'
                           '  System.out.println("hello");\n  String s = new Scanner(System.in).nextLine().trim();\n'
                           '  List<String> v = new ArrayList<>(List.of(s)); v.addAll(Arrays.asList(a));\n'
                           '  System.out.println(String.join(" ", v));\n'
                           '  System.out.println(Files.readAllLines(Path.of("data.txt")).get(0));\n'
                           '  System.out.println(Util.twice(21));\n  System.err.println("oops");\n  System.exit(3);\n} }'),
             ("Util.java", "public class Util { static int twice(int x) { return 2 * x; } }")],
}

# name: hello world, on its own (the aliases, the compilers' least memory)
HELLO = {
    'python': 'print("hello")',
    'javascript': 'console.log("hello")',
    'typescript': 'const greet: string = "hello";\nconsole.log(greet)',
    'ruby': 'puts "hello"',
    'bash': 'echo hello',
    'php': '<?php echo "hello\\n";',
    'lua': 'print("hello")',
    'perl': 'print "hello\\n";',
    'c': '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }',
    'cpp': '#include <iostream>\nint main() { std::cout << "hello" << std::endl; }',
    'go': 'package main\nimport "fmt"\nfunc main() { fmt.Println("hello") }',
    'rust': 'fn main() { println!("hello"); }',
    'java': 'public class Main { public static void main(String[] a) { System.out.println("hello"); } }',
}

COMPILE_ERRORS = {
    "c": ("int main(void) { return undefined_name; }", "undefined_name"),
    "cpp": ("int main() { return undefined_name; }", "undefined_name"),
    "go": ("package main\nfunc main() { undefinedName() }", "undefined: undefinedName"),
    "rust": ("fn main() { undefined_name(); }", "undefined_name"),
    "java": ("public class Main { public static void main(String[] a) { undefinedName(); } }",
             "undefinedName"),
    "typescript": ("const x: number = ;", "error TS1109: Expression expected."),
}

# The languages whose programs are files (language_programs.py) compile
# errors in their session test (test_language_checks.py), not here.
COMPILED = set(COMPILE_ERRORS) | language_programs.COMPILED

EVERY = [(name, None) for name in sorted(PROGRAMS) + language_programs.LANGUAGES] + OTHER_VERSIONS


def label(case):
    name, version = case
    return f"{name}@{version}" if version else name


def run(language, code=None, files=None, version=None, **extra):
    body = {"language": language, **extra}
    if version:
        body["version"] = version
    if files is not None:
        body["files"] = [{"name": n, "content": c} for n, c in files]
    else:
        body["code"] = code
    status, result = execute(body, timeout=120)
    assert status == 200, result
    if version:  # the pinned version ran, not the default
        assert result["version"].startswith(version + "."), result
    if language in COMPILED:
        assert "compile" in result, result
        assert result["compile"]["exitCode"] == 0, result["compile"]
    return result


@pytest.mark.parametrize("case", EVERY, ids=label)
def test_a_program_gets_its_stdin_args_and_files_and_ends_as_it_says(case):
    language, version = case
    if language in PROGRAMS:
        files, want = PROGRAMS[language], language_programs.CONTRACT
    else:
        files, want = language_programs.contract(language)
    files = files + [("data.txt", "first line\nsecond\n")]
    result = run(language, files=files, version=version, stdin=want["stdin"], args=want["args"])
    assert ("compile" in result) == (language in COMPILED), result
    assert result["run"]["stdout"] == want["stdout"], result
    assert result["run"]["stderr"] == want["stderr"], result
    assert result["run"]["exitCode"] == want["exitCode"] and result["run"]["timedOut"] is False, result


@pytest.mark.parametrize("case", [c for c in EVERY if c[0] in COMPILE_ERRORS], ids=label)
def test_compile_error_has_diagnostics_and_no_run(case):
    language, version = case
    code, needle = COMPILE_ERRORS[language]
    body = {"language": language, "code": code, **({"version": version} if version else {})}
    status, result = execute(body, timeout=120)
    assert status == 200, result
    assert "run" not in result, result
    compile = result["compile"]
    assert compile["exitCode"] != 0
    assert needle in compile["stderr"] + compile["stdout"], compile


def test_runtime_error_has_stderr():
    result = run("javascript", "throw new Error('boom')")
    assert result["run"]["exitCode"] == 1 and "Error: boom" in result["run"]["stderr"]


def test_go_std_is_prewarmed():
    """The standard library in the image is up to date for the sandbox's
    build settings, so a build never recompiles it (asked of `go list`
    from inside the sandbox), and nothing is ever downloaded."""
    code = ('package main\nimport (\n  "fmt"\n  "os"\n  "os/exec"\n)\n'
            'func main() {\n  out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Stale}}",'
            ' "fmt", "net/http", "encoding/json").CombinedOutput()\n'
            '  fmt.Print(string(out)); if err != nil { os.Exit(1) }\n}')
    # go list reads the whole std's build cache: 7 s of CPU under the suite's load.
    result = run("go", code, limits={"wallTimeMs": 20000})
    assert result["run"]["stdout"] == "fmt false\nnet/http false\nencoding/json false\n", result


def test_go_builds_a_module_offline():
    """A go.mod makes a module build: a package in a subdirectory, imported
    by its module path, from the standard library only, with no network;
    a module that needs a download fails to compile, naming it (nothing is
    fetched: GOPROXY=off)."""
    files = [("main.go", 'package main\nimport (\n  "fmt"\n  "example.com/app/greet"\n)\n'
                         'func main() { fmt.Println(greet.Hello("module")) }'),
             ("go.mod", "module example.com/app\n\ngo 1.24\n"),
             ("greet/greet.go", 'package greet\nimport "strings"\n'
                                'func Hello(n string) string { return "hello " + strings.ToUpper(n) }\n')]
    result = run("go", files=files)
    assert result["run"]["stdout"] == "hello MODULE\n", result
    files[1] = ("go.mod", "module example.com/app\n\ngo 1.24\n\nrequire github.com/google/uuid v1.6.0\n")
    files[0] = ("main.go", 'package main\nimport "github.com/google/uuid"\nfunc main() { println(uuid.NewString()) }')
    status, result = execute({"language": "go", "files": [{"name": n, "content": c} for n, c in files]}, timeout=120)
    assert status == 200 and "run" not in result and result["compile"]["exitCode"] != 0, result
    assert "github.com/google/uuid" in result["compile"]["stderr"] + result["compile"]["stdout"], result["compile"]


CARGO_TOML = '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'


def test_rust_builds_a_cargo_project_offline():
    """A Cargo.toml makes a cargo build, offline: the common crates come from
    Debian's (serde with derive, serde_json, rand, regex, itertools), a
    module in src/ is found, and the one program it builds runs with stdin
    and args. A crate Debian does not give fails to compile, naming it
    (nothing is fetched); a project of two programs is refused, saying so."""
    deps = ('serde = { version = "1", features = ["derive"] }\nserde_json = "1"\nrand = "0.8"\n'
            'regex = "1"\nitertools = "0.13"\n')
    main = ('mod util;\nuse itertools::Itertools;\nuse serde::{Deserialize, Serialize};\n'
            '#[derive(Serialize, Deserialize)]\nstruct Line { words: Vec<String>, digits: bool }\n'
            'fn main() {\n    let mut s = String::new();\n    std::io::stdin().read_line(&mut s).unwrap();\n'
            '    let words: Vec<String> = s.split_whitespace().chain(std::env::args().skip(1).collect::<Vec<_>>()'
            '.iter().map(|a| a.as_str())).map(String::from).collect();\n'
            '    let digits = regex::Regex::new(r"^\\d+$").unwrap().is_match(&words[0]);\n'
            '    let line: Line = serde_json::from_str(&serde_json::to_string(&Line { words, digits }).unwrap()).unwrap();\n'
            '    let roll: u8 = rand::random::<u8>() % 1;\n'
            '    println!("{} {} {}", util::shout(&line.words.iter().join(",")), line.digits, roll);\n}\n')
    files = [("src/main.rs", main), ("src/util.rs", "pub fn shout(s: &str) -> String { s.to_uppercase() }\n"),
             ("Cargo.toml", CARGO_TOML + deps)]
    result = run("rust", files=files, stdin="42 apples\n", args=["pears"])
    assert result["run"]["stdout"] == "42,APPLES,PEARS true 0\n", result
    assert result["compile"]["stderr"] == "", result["compile"]

    files = [("src/main.rs", "fn main() { tokio::spawn(async {}); }"), ("Cargo.toml", CARGO_TOML + 'tokio = "1"\n')]
    status, result = execute({"language": "rust", "files": [{"name": n, "content": c} for n, c in files]},
                             timeout=120)
    assert status == 200 and "run" not in result and result["compile"]["exitCode"] != 0, result
    assert "tokio" in result["compile"]["stderr"], result["compile"]

    files = [("src/bin/a.rs", "fn main() {}"), ("src/bin/b.rs", "fn main() {}"), ("Cargo.toml", CARGO_TOML)]
    status, result = execute({"language": "rust", "files": [{"name": n, "content": c} for n, c in files]},
                             timeout=120)
    assert status == 200 and "run" not in result and result["compile"]["exitCode"] == 1, result
    assert "cargo built 2 programs" in result["compile"]["stderr"], result["compile"]


def test_lua_os_execute_reports_the_exit_status():
    """os.execute of a command that exits non-zero says how it ended, not a
    stale errno from the start of its shell (clone3's ENOSYS: preload.c)."""
    result = run("lua", 'print(os.execute("exit 3"))\nprint(os.execute("true"))')
    assert result["run"]["stdout"] == "nil\texit\t3\ntrue\texit\t0\n", result


def test_compile_time_limit_is_enforced():
    """A compile that runs on (constexpr evaluation: g++ needs ~8 s here to
    give up) is stopped at the compile time asked for, with no run."""
    code = ("constexpr long f() {\n  long s = 0;\n"
            "  for (long i = 0; i < 200000; i++)\n    for (long j = 0; j < 200000; j++) s += j;\n"
            "  return s;\n}\nconstexpr long v = f();\nint main() { return v == 0; }\n")
    status, result = execute({"language": "cpp", "code": code,
                              "limits": {"compileTimeMs": 2000}}, timeout=120)
    assert status == 200, result
    assert result["compile"]["timedOut"] is True, result["compile"]
    assert "run" not in result
    assert 1900 <= result["compile"]["durationMs"] <= 4000
    assert result["limits"]["compileTimeMs"] == 2000


def test_compile_oom_is_reported_on_the_compile():
    status, result = execute({"language": "c", "code": '#include "/dev/zero"\nint main(void) {}'},
                             timeout=120)
    assert status == 200, result
    assert result["compile"]["oomKilled"] is True, result["compile"]
    assert "run" not in result


@pytest.mark.parametrize("language", sorted(COMPILE_ERRORS))
def test_too_little_memory_is_raised_to_what_the_compiler_needs(language):
    """Below its least memory a compiler thrashes until the compile time runs
    out (rustc at 96 MiB, tsc at 128: 20 s, nothing said). A request for the
    conf's floor (32 MiB) is raised to the language's minMemoryBytes, which
    /runtimes lists and the result's limits report, and hello world builds."""
    _, _, body = request("GET", "/runtimes")
    least = next(r["minMemoryBytes"] for r in body["runtimes"] if r["language"] == language and r["default"])
    assert 32 << 20 < least < body["ceilings"]["memoryBytes"]
    result = run(language, HELLO[language], limits={"memoryBytes": 32 << 20})
    assert result["limits"]["memoryBytes"] == least, result["limits"]
    assert result["compile"]["timedOut"] is False and result["run"]["stdout"] == "hello\n", result


def test_every_version_is_tested():
    """Each version that /runtimes lists besides a default runs the programs
    above (OTHER_VERSIONS), and each is built."""
    status, _, body = request("GET", "/runtimes")
    assert status == 200
    others = {r["id"] for r in body["runtimes"] if not r["default"]}
    assert others == {f"{n}@{v}" for n, v in OTHER_VERSIONS}, others
    assert all(r["available"] for r in body["runtimes"] if not r["default"])
    assert sum(r["default"] for r in body["runtimes"]) == len({r["language"] for r in body["runtimes"]})


def test_runtimes_lists_every_language_with_real_versions():
    """Every language the registry has is built and tested here: one that
    lacks a program (PROGRAMS or programs/NAME/) fails this test."""
    status, _, body = request("GET", "/runtimes")
    assert status == 200
    by_name = {r["language"]: r for r in body["runtimes"] if r["default"]}
    assert set(PROGRAMS) | set(language_programs.LANGUAGES) | {"python-slim"} == set(by_name)
    for name, r in by_name.items():
        assert r["available"] is True, name
        assert r["version"][0].isdigit(), r
        assert r["sample"].strip(), r  # the playground starts from it
        # A compiled language has a compile error to show (COMPILED).
        assert ("compileTimeMs" in r["limits"]) == (name in COMPILED), r
    aliases = {a: r["language"] for r in body["runtimes"] for a in r["aliases"]}
    for alias, name in [("js", "javascript"), ("node", "javascript"), ("ts", "typescript"),
                        ("rb", "ruby"), ("golang", "go"), ("rs", "rust"), ("c++", "cpp"),
                        ("sh", "bash"), ("py", "python"), ("py3", "python")]:
        assert aliases.get(alias) == name, alias


# Every alias's language is checked above (/runtimes) and in the request
# parser's unit tests; these run end to end, an interpreted and a compiled one.
@pytest.mark.parametrize("alias,name", [("sh", "bash"), ("rs", "rust")])
def test_aliases_execute(alias, name):
    status, result = execute({"language": alias, "code": HELLO[name]}, timeout=120)
    assert status == 200 and result["language"] == name
    assert result["run"]["stdout"] == "hello\n"


def test_typescript_type_errors_are_compile_errors():
    """tsc checks the types: a type error stops the run with tsc's message,
    and /runtimes reports TypeScript's version (not a bundler's)."""
    status, result = execute({"language": "typescript", "code": 'const n: number = "not a number";\nconsole.log(n)'},
                             timeout=120)
    assert status == 200 and "run" not in result, result
    out = result["compile"]["stdout"] + result["compile"]["stderr"]
    assert result["compile"]["exitCode"] != 0 and "error TS2322" in out, result["compile"]
    assert "Type 'string' is not assignable to type 'number'" in out, out
    status, _, body = request("GET", "/runtimes")
    ts = next(r for r in body["runtimes"] if r["language"] == "typescript")
    assert ts["version"].startswith("4.9.") and "note" not in ts, ts
