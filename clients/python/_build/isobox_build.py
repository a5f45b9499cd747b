"""The PEP 517 build backend of the isobox client, standard library only.

pip builds a package in an isolated environment into which it first
installs the backend named in pyproject.toml; with setuptools or hatchling
that is a download, which fails on a host without access to PyPI. This
backend is in the tree (backend-path), needs nothing (requires = []), and
does the little a pure-Python package of one directory needs: a wheel of
isobox/*.py with its metadata from pyproject.toml's [project], an editable
wheel (a .pth naming this directory), and an sdist.
"""
import base64
import hashlib
import io
import json
import os
import re
import tarfile
import time
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "isobox"
TAG = "py3-none-any"
# Fixed times make the same tree give the same archives.
EPOCH = time.mktime((2020, 1, 1, 0, 0, 0, 0, 0, -1))
ZIP_TIME = (2020, 1, 1, 0, 0, 0)


# -- pyproject.toml ------------------------------------------------------------

_TOKEN = re.compile(r'''[ \t\r]*(?:(?P<string>"(?:[^"\\\n]|\\.)*")|(?P<punct>[\[\]{}=,])|(?P<key>[A-Za-z0-9_-]+)|(?P<nl>\n)|(?P<comment>\#[^\n]*))''')


def read_project(text, use_tomllib=True):
    """The [project] table of pyproject.toml. With Python 3.11+, tomllib
    reads it; before, a reader of the subset that file uses (strings,
    arrays of strings, inline tables of strings, comments)."""
    if use_tomllib:
        try:
            import tomllib
        except ImportError:
            pass
        else:
            return tomllib.loads(text)["project"]
    match = re.search(r"^\[project\][ \t]*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if not match:
        raise ValueError("pyproject.toml has no [project] table")
    tokens = _tokens(match.group(1))
    project = {}
    while tokens:
        kind, value = tokens.pop(0)
        if kind == "nl":
            continue
        if kind != "key" or tokens.pop(0) != ("punct", "="):
            raise ValueError(f"pyproject.toml [project]: cannot read near {value!r}")
        project[value] = _value(tokens)
        if tokens and tokens.pop(0)[0] != "nl":
            raise ValueError(f"pyproject.toml [project]: one key a line ({value})")
    return project


def _tokens(text):
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"pyproject.toml [project]: cannot read {text[pos:pos + 30]!r}")
        pos = m.end()
        kind = m.lastgroup
        if kind == "string":
            out.append(("string", _unescape(m.group(kind))))
        elif kind != "comment":
            out.append((kind, m.group(kind)))
    return out


def _unescape(quoted):
    return json.loads(quoted)         # TOML's basic strings escape as JSON does


def _value(tokens):
    kind, value = tokens.pop(0)
    if kind == "string":
        return value
    if (kind, value) == ("punct", "["):
        items = []
        while True:
            while tokens[0][0] == "nl":
                tokens.pop(0)
            if tokens[0] == ("punct", "]"):
                tokens.pop(0)
                return items
            items.append(_value(tokens))
            while tokens[0][0] == "nl":
                tokens.pop(0)
            if tokens[0] == ("punct", ","):
                tokens.pop(0)
    if (kind, value) == ("punct", "{"):
        table = {}
        while tokens[0] != ("punct", "}"):
            key = tokens.pop(0)
            if key[0] != "key" or tokens.pop(0) != ("punct", "="):
                raise ValueError("pyproject.toml [project]: bad inline table")
            table[key[1]] = _value(tokens)
            if tokens[0] == ("punct", ","):
                tokens.pop(0)
        tokens.pop(0)
        return table
    raise ValueError(f"pyproject.toml [project]: cannot read value {value!r}")


def _project():
    with open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8") as f:
        project = read_project(f.read())
    if project.get("dependencies"):
        raise ValueError("the isobox client has no dependencies: keep it so")
    with open(os.path.join(HERE, PACKAGE, "__init__.py"), encoding="utf-8") as f:
        version = re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)
    if version != project["version"]:
        raise ValueError(f"version {project['version']} in pyproject.toml, {version} in "
                         f"{PACKAGE}/__init__.py: make them one")
    return project


def _metadata(project):
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}"]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    if "license" in project:
        lines.append(f"License: {project['license'].get('text', '')}")
    if "keywords" in project:
        lines.append("Keywords: " + ",".join(project["keywords"]))
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    body = ""
    if "readme" in project:
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(HERE, project["readme"]), encoding="utf-8") as f:
            body = f.read()
    return ("\n".join(lines) + "\n\n" + body).encode()


def _dist_info(project):
    return f"{project['name']}-{project['version']}.dist-info"


def _package_files():
    """isobox/*.py, relative to HERE, sorted."""
    names = sorted(n for n in os.listdir(os.path.join(HERE, PACKAGE))
                   if n.endswith(".py") or n == "py.typed")
    return [f"{PACKAGE}/{n}" for n in names]


# -- PEP 517 hooks -------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    project = _project()
    name = _dist_info(project)
    os.makedirs(os.path.join(metadata_directory, name), exist_ok=True)
    for file, data in _dist_info_files(project):
        with open(os.path.join(metadata_directory, name, file), "wb") as f:
            f.write(data)
    return name


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = []
    for rel in _package_files():
        with open(os.path.join(HERE, rel), "rb") as f:
            files.append((rel, f.read()))
    return _write_wheel(wheel_directory, _project(), files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel whose one file, a .pth, puts this directory on sys.path."""
    return _write_wheel(wheel_directory, _project(), [(f"_{PACKAGE}_editable.pth", (HERE + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    base = f"{project['name']}-{project['version']}"
    rels = ["pyproject.toml", "_build/isobox_build.py"] + _package_files()
    if "readme" in project:
        rels.append(project["readme"])
    path = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel in sorted(rels):
            with open(os.path.join(HERE, rel), "rb") as f:
                _add(tar, f"{base}/{rel}", f.read())
        _add(tar, f"{base}/PKG-INFO", _metadata(project))
    return base + ".tar.gz"


# -- archives ------------------------------------------------------------------

def _dist_info_files(project):
    wheel = f"Wheel-Version: 1.0\nGenerator: isobox_build\nRoot-Is-Purelib: true\nTag: {TAG}\n"
    return [("METADATA", _metadata(project)), ("WHEEL", wheel.encode()),
            ("top_level.txt", (PACKAGE + "\n").encode())]


def _write_wheel(wheel_directory, project, files):
    info = _dist_info(project)
    files = files + [(f"{info}/{name}", data) for name, data in _dist_info_files(project)]
    record = io.StringIO()
    for rel, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.write(f"{rel},sha256={digest},{len(data)}\n")
    record.write(f"{info}/RECORD,,\n")
    files.append((f"{info}/RECORD", record.getvalue().encode()))
    name = f"{project['name']}-{project['version']}-{TAG}.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as zf:
        for rel, data in files:
            entry = zipfile.ZipInfo(rel, ZIP_TIME)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(entry, data)
    return name


def _add(tar, name, data):
    entry = tarfile.TarInfo(name)
    entry.size = len(data)
    entry.mtime = EPOCH
    entry.mode = 0o644
    tar.addfile(entry, io.BytesIO(data))
