"""Helpers for the pool tests: read /metrics, restart the pool under test
with a changed conf (and put the original back)."""
import os
import re

from conftest import CONF, URL, pool_env, request, restart_pool  # noqa: F401 (re-exported)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def scrape(url=URL):
    """GET /metrics; return (raw text, {(name, frozenset(labels)): value})."""
    status, headers, text = request("GET", "/metrics", url=url, timeout=30)
    assert status == 200, text
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4"), headers["Content-Type"]
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        labels = frozenset(LABEL.findall(m.group(2) or ""))
        samples[(m.group(1), labels)] = float(m.group(3))
    return text, samples


def value(samples, name, **labels):
    """The sum of the samples of name that have these labels (and maybe
    more: language="python" sums its versions, as Prometheus's sum by
    would); an absent counter is 0."""
    want = frozenset(labels.items())
    return sum(v for (n, have), v in samples.items() if n == name and want <= have)


def deltas(before, after):
    """delta(name, **labels): how far a sample moved from before to after."""
    return lambda name, **labels: value(after, name, **labels) - value(before, name, **labels)


class ConfEdit:
    """Edit the installed conf (text replacements), restore it on close."""

    def __init__(self):
        with open(CONF) as f:
            self.original = f.read()

    def apply(self, *replacements):
        text = self.original
        for old, new in replacements:
            assert old in text, f"{old!r} not in {CONF}"
            text = text.replace(old, new)
        with open(CONF, "w") as f:
            f.write(text)

    def restore(self):
        with open(CONF, "w") as f:
            f.write(self.original)
