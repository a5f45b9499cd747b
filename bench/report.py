"""What the benchmarks share: their statistics, and writing their table
into a doc."""
import os
import platform
import statistics
import sys


def host():
    """What a table's figures were measured on, for its note."""
    with open("/var/lib/isobox/platform") as f:
        return f"{os.cpu_count()} cores, {platform.machine()}, runsc platform {f.readline().strip()}"


def median_ms(seconds):
    return statistics.median(seconds) * 1000


def p90_ms(seconds):
    s = sorted(seconds)
    return s[int(0.9 * (len(s) - 1))] * 1000


def write_section(path, name, text):
    """Replace what stands between <!-- NAME BENCH --> and <!-- /NAME BENCH -->
    in the file at path with text."""
    begin, end = f"<!-- {name} BENCH -->", f"<!-- /{name} BENCH -->"
    with open(path) as f:
        doc = f.read()
    if begin not in doc or end not in doc:
        sys.exit(f"{path} has no {begin} ... {end} markers")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(head + begin + "\n" + text.rstrip("\n") + "\n" + end + tail)
