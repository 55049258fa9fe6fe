"""
The build backend of the quota-guard client (PEP 517, named in pyproject.toml with backend-path).

Why not setuptools, flit or hatchling: the client is one module with no dependencies, and must be
installable offline with `pip install --no-build-isolation`. In a fresh venv nothing but pip is
there to build with: Python 3.12 and later put no setuptools in a venv, and before them the
setuptools they put there (older than 70.1) cannot build a wheel without the `wheel` package. This
backend needs only the standard library: it writes the one-module wheel (and an sdist) that those
tools would, from the [project] table of pyproject.toml. It is not installed with the client.
"""

import base64
import hashlib
import io
import os
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))


def _toml():
    try:
        import tomllib  # Python 3.11+
    except ImportError:
        try:
            import tomli as tomllib
        except ImportError:  # pip carries a copy, and pip is what runs this backend
            from pip._vendor import tomli as tomllib
    with open(os.path.join(HERE, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def _project():
    data = _toml()
    p = data["project"]
    module = data["tool"]["quota-guard"]["module"]
    return p["name"], p["version"], p, module


def _dist(name):
    return name.replace("-", "_")


def _metadata():
    name, version, p, _ = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Summary: {p['description']}",
        f"Requires-Python: {p['requires-python']}",
        f"License: {p['license']['text']}",
        f"Description-Content-Type: {p['readme']['content-type']}",
        "",
        p["readme"]["text"],
        "",
    ]
    return "\n".join(lines).encode()


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _wheel(wheel_directory, files):
    name, version, _, _ = _project()
    info = f"{_dist(name)}-{version}.dist-info"
    files = dict(files)
    files[f"{info}/METADATA"] = _metadata()
    files[f"{info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: quota-guard build_backend\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n"
    ).encode()
    record = [_record_line(path, data) for path, data in files.items()]
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    filename = f"{_dist(name)}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            z.writestr(zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return filename


def _read(name):
    with open(os.path.join(HERE, name), "rb") as f:
        return f.read()


def get_requires_for_build_wheel(config_settings=None):
    return []


get_requires_for_build_sdist = get_requires_for_build_editable = get_requires_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    module = _project()[3]
    return _wheel(wheel_directory, {f"{module}.py": _read(f"{module}.py")})


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """An editable install: a .pth file that puts this directory on sys.path."""
    name = _project()[0]
    return _wheel(wheel_directory, {f"{_dist(name)}.pth": (HERE + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    name, version, _, module = _project()
    base = f"{_dist(name)}-{version}"
    filename = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as t:
        for path in ("pyproject.toml", "build_backend.py", f"{module}.py"):
            data = _read(path)
            entry = tarfile.TarInfo(f"{base}/{path}")
            entry.size = len(data)
            entry.mode = 0o644
            t.addfile(entry, io.BytesIO(data))
        pkg_info = _metadata()
        entry = tarfile.TarInfo(f"{base}/PKG-INFO")
        entry.size = len(pkg_info)
        entry.mode = 0o644
        t.addfile(entry, io.BytesIO(pkg_info))
    return filename
