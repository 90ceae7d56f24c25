"""kcrt_build — the kcrt package's own PEP 517 build backend.

`pip install ./python` runs this in an isolated environment into which it
installs the backend's requirements: there are none, so the install works
offline on a machine with nothing but Debian's python3-pip. It writes a
pure-Python wheel: the kcrt/ sources, and kcrt/_where.py, which records
where the kc checkout that built it keeps its libkcrt (the last place the
package looks for the library; kcrt/_lib.py says the order).
"""
import base64
import hashlib
import os
import re
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
CHECKOUT = os.path.dirname(HERE)


def _project():
    text = open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8").read()
    section = text.split("[project]", 1)[1]

    def field(key):
        m = re.search(r'^%s\s*=\s*"([^"]*)"' % key, section, re.M)
        if not m:
            raise RuntimeError("pyproject.toml: [project] has no %s" % key)
        return m.group(1)

    return field("name"), field("version"), field("description"), field("requires-python")


def _metadata(name, version, description, requires):
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nRequires-Python: %s\n"
            "License: MIT\nRequires-Dist: numpy\n" % (name, version, description, requires))


def _where():
    build = os.environ.get("KCRT_BUILD_TREE") or os.path.join(CHECKOUT, "build")
    return ('"""Written by kcrt_build when the wheel was made: the kc build tree it came from."""\n'
            "BUILD_TREE = %r\n" % build)


def _files():
    """(name in the wheel, bytes) of the package."""
    out = []
    pkg = os.path.join(HERE, "kcrt")
    for root, dirs, files in os.walk(pkg):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py") and f != "_where.py":
                path = os.path.join(root, f)
                out.append((os.path.relpath(path, HERE).replace(os.sep, "/"), open(path, "rb").read()))
    out.append(("kcrt/_where.py", _where().encode()))
    return out


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name, version, description, requires = _project()
    info = os.path.join(metadata_directory, "%s-%s.dist-info" % (name, version))
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata(name, version, description, requires))
    return os.path.basename(info)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, version, description, requires = _project()
    wheel = "%s-%s-py3-none-any.whl" % (name, version)
    info = "%s-%s.dist-info" % (name, version)
    entries = _files() + [
        (info + "/METADATA", _metadata(name, version, description, requires).encode()),
        (info + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: kcrt_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
        (info + "/top_level.txt", b"kcrt\n"),
    ]
    record = [_record_line(n, d) for n, d in entries] + [info + "/RECORD,,"]
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in entries:
            z.writestr(n, d)
        z.writestr(info + "/RECORD", "\n".join(record) + "\n")
    return wheel


def build_sdist(sdist_directory, config_settings=None):
    import tarfile
    name, version, _, _ = _project()
    base = "%s-%s" % (name, version)
    path = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(path, "w:gz") as t:
        for rel in ["pyproject.toml", "_build/kcrt_build.py"] + [n for n, _ in _files() if n != "kcrt/_where.py"]:
            t.add(os.path.join(HERE, rel), arcname=base + "/" + rel)
    return os.path.basename(path)
