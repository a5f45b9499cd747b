"""The promises attacked from the runtimes of the languages added from
Debian 13 (language_programs.py), one language for each family of
runtime: the JVM beyond Java (Clojure), .NET (Mono's C#), the BEAM
(Elixir), a Lisp (SBCL) and a native compiler with Unix bindings (OCaml).

Each program does what an escape or a denial of service would start with,
through its runtime's own API: write outside /box (/, /etc, /usr, /src and
the world-writable /var/tmp), read what /proc says of the mounts and of
pid 1, then start processes until it cannot. The promises: every write
is refused, /proc names nothing of the host, and the process limit ends the
spawning (the program goes on to print how far it got) long before the
wall time. Rows go to docs/AUDIT.md through the `attack` marker."""
import re

import pytest

from conftest import own_mounts_removed, run_ok
from test_attacks_langs import HOST_NEEDLES, WRITE_TARGETS

TARGETS = " ".join(WRITE_TARGETS)

# language: (program, pids). The JVM and Mono start threads of their own
# (GC, JIT, finalizer) that count against the same limit, so they get more.
PROGRAMS = {
    "clojure": ("(doseq [p (clojure.string/split \"" + TARGETS + "\" #\" \")]\n"
                "  (println p (try (spit p \"x\") \"WROTE\" (catch Exception e (.getMessage e)))))\n"
                ";; slurp asks FileInputStream.available(), which gVisor's /proc answers EINVAL\n"
                "(doseq [f [\"/proc/self/mountinfo\" \"/proc/1/cmdline\"]]\n"
                "  (println (String. (java.nio.file.Files/readAllBytes (java.nio.file.Path/of f (into-array String []))))))\n"
                "(let [n (atom 0)]\n"
                "  (try (while true (.start (ProcessBuilder. [\"sleep\" \"30\"])) (swap! n inc))\n"
                "    (catch Throwable e (println \"spawned\" @n \"then\" (.getMessage e)))))\n"
                "(System/exit 0)\n", 64),
    "csharp": ("using System;\nusing System.IO;\nusing System.Diagnostics;\n"
               "using System.Runtime.InteropServices;\nclass P {\n"
               "    // open(2) itself: Mono's File says 'denied' for EROFS as for EACCES.\n"
               "    [DllImport(\"libc\", SetLastError = true)] static extern int open(string path, int flags, int mode);\n"
               "    static void Main() {\n"
               "        foreach (var p in \"" + TARGETS + "\".Split(' ')) {\n"
               "            int fd = open(p, 0x41, 420);  // O_WRONLY | O_CREAT, 0644\n"
               "            Console.WriteLine(p + \" \" + (fd >= 0 ? \"WROTE\" : \"errno \" + Marshal.GetLastWin32Error()));\n"
               "        }\n"
               "        Console.WriteLine(File.ReadAllText(\"/proc/self/mountinfo\"));\n"
               "        Console.WriteLine(File.ReadAllText(\"/proc/1/cmdline\"));\n"
               "        int n = 0;\n"
               "        try { while (true) { Process.Start(\"sleep\", \"30\"); n++; } }\n"
               "        catch (Exception e) { Console.WriteLine(\"spawned \" + n + \" then \" + e.Message); }\n"
               "    }\n}\n", 64),
    "elixir": ("for p <- String.split(\"" + TARGETS + "\") do\n"
               "  case File.write(p, \"x\") do\n"
               "    :ok -> IO.puts(\"#{p} WROTE\")\n    {:error, r} -> IO.puts(\"#{p} #{r}\")\n  end\nend\n"
               "IO.puts(File.read!(\"/proc/self/mountinfo\"))\nIO.puts(File.read!(\"/proc/1/cmdline\"))\n"
               "Enum.reduce_while(Stream.iterate(0, &(&1 + 1)), 0, fn i, _ ->\n"
               "  try do\n    Port.open({:spawn_executable, \"/usr/bin/sleep\"}, args: [\"30\"])\n    {:cont, i + 1}\n"
               "  rescue\n    e -> IO.puts(\"spawned #{i} then #{Exception.message(e)}\"); {:halt, i}\n  end\nend)\n", 32),
    "commonlisp": ("(dolist (p '(" + " ".join(f'"{p}"' for p in WRITE_TARGETS) + "))\n"
                   "  (handler-case (with-open-file (f p :direction :output :if-exists :supersede)\n"
                   "                  (write-line \"x\" f) (format t \"~a WROTE~%\" p))\n"
                   "    (error (e) (format t \"~a ~a~%\" p (substitute #\\Space #\\Newline (princ-to-string e))))))\n"
                   "(dolist (f '(\"/proc/self/mountinfo\" \"/proc/1/cmdline\"))\n"
                   "  (with-open-file (s f) (loop for l = (read-line s nil) while l do (write-line l))))\n"
                   "(let ((n 0))\n"
                   "  (handler-case (loop (sb-ext:run-program \"/usr/bin/sleep\" '(\"30\") :wait nil) (incf n))\n"
                   "    (error (e) (format t \"spawned ~a then ~a~%\" n (substitute #\\Space #\\Newline (princ-to-string e))))))\n",
                   32),
    "ocaml": ("let read f = let ic = open_in f in let s = In_channel.input_all ic in close_in ic; s\n"
              "let () =\n  List.iter (fun p ->\n"
              "    match open_out p with\n    | oc -> close_out oc; Printf.printf \"%s WROTE\\n\" p\n"
              "    | exception Sys_error m -> Printf.printf \"%s %s\\n\" p m)\n"
              "    (String.split_on_char ' ' \"" + TARGETS + "\");\n"
              "  print_endline (read \"/proc/self/mountinfo\");\n  print_endline (read \"/proc/1/cmdline\");\n"
              "  let n = ref 0 in\n"
              "  (try while true do\n"
              "     match Unix.fork () with 0 -> Unix.sleep 30; exit 0 | _ -> incr n\n"
              "   done with Unix.Unix_error (e, _, _) ->\n"
              "     Printf.printf \"spawned %d then %s\\n\" !n (Unix.error_message e));\n  exit 0\n", 32),
}


def outcome(language):
    return ("every write refused (EACCES, or EROFS: /var/tmp); /proc names nothing of the host; "
            f"spawning fails before the process limit ({PROGRAMS[language][1]}), and the program goes on")


@pytest.mark.parametrize("language", [pytest.param(n, marks=pytest.mark.attack(
    f"{n}: writes outside /box, /proc, spawn loop through its runtime", outcome(n))) for n in sorted(PROGRAMS)])
def test_a_runtime_writes_reads_proc_and_spawns(language):
    code, pids = PROGRAMS[language]
    run = run_ok(code, language=language, limits={"pids": pids, "wallTimeMs": 20000})
    assert run["timedOut"] is False and run["exitCode"] == 0, run
    out = run["stdout"]
    for path in WRITE_TARGETS:
        line = re.search(rf"(?m)^{re.escape(path)} (.*)$", out)
        assert line and "WROTE" not in line.group(1), (path, out)
        refused = line.group(1).lower()
        read_only = "read-only" in refused or "erofs" in refused or refused == "errno 30"
        assert read_only or "denied" in refused or refused in ("eacces", "errno 13"), (path, refused)
        if path == "/var/tmp/x":  # world-writable: only the read-only mount stops it
            assert read_only, (path, refused)
    # The sandbox's own root mount names docker's paths on runc (as in
    # test_attacks_langs): what is left must name nothing of the host.
    assert " /box " in out  # mountinfo was read
    assert not [n for n in HOST_NEEDLES if n in own_mounts_removed(out)], out
    spawned = re.search(r"(?m)^spawned (\d+) then (.+)$", out)
    assert spawned and int(spawned.group(1)) < pids, out
