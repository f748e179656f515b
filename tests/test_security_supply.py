"""Supply chain: hashed lock files for the app and the test set, installs from them with
``--require-hashes`` (Makefile, Dockerfile), every direct import declared, the image's base pinned by
digest and its Debian packages by version, and the environment the tests run in is the lock."""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

LOCKS = {"runtime": "requirements.lock", "dev": "requirements-dev.lock", "uv": "requirements-uv.lock"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(name: str) -> dict[str, tuple[str, list[str]]]:
    """{package: (version, [sha256 hashes])} of a ``pip-compile``/``uv pip compile`` lock file."""
    text = (ROOT / name).read_text()
    out = {}
    for entry in re.split(r"\n(?=\S)", text):
        entry = entry.strip()
        if not entry or entry.startswith("#"):
            continue
        m = re.match(r"([A-Za-z0-9_.\-]+)==([^\s;\\]+)", entry)
        assert m, f"{name}: not an exact pin: {entry.splitlines()[0]!r}"
        hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})", entry)
        out[_norm(m.group(1))] = (m.group(2), hashes)
    return out


def _pins(req: str) -> dict[str, str]:
    out = {}
    for ln in (ROOT / req).read_text().splitlines():
        ln = ln.split("#", 1)[0].strip()
        if ln and not ln.startswith("-"):
            name, _, ver = ln.partition("==")
            assert ver, f"{req}: {ln!r} is not pinned"
            out[_norm(name)] = ver.strip()
    return out


@pytest.mark.parametrize("lock", sorted(LOCKS.values()))
def test_lock_files_pin_every_package_with_hashes(lock):
    pkgs = read_lock(lock)
    assert pkgs
    for name, (ver, hashes) in pkgs.items():
        assert hashes, f"{lock}: {name}=={ver} has no hash"


def test_locks_agree_with_the_requirements():
    rt, dev = read_lock(LOCKS["runtime"]), read_lock(LOCKS["dev"])
    for name, ver in _pins("requirements.txt").items():
        assert rt.get(name, (None,))[0] == ver, f"requirements.lock: {name} is not {ver}"
    for name, ver in _pins("requirements-dev.txt").items():
        assert dev.get(name, (None,))[0] == ver, f"requirements-dev.lock: {name} is not {ver}"
    for name, (ver, hashes) in rt.items():
        assert dev.get(name, (None, []))[0] == ver, f"the test set runs another {name} than the app"
    assert set(_pins("requirements-uv.txt")) <= set(read_lock(LOCKS["uv"]))


def _third_party_imports() -> set[str]:
    stdlib = set(sys.stdlib_module_names)
    local = {"sim", "ui", "pages", "views", "app", "tests", "bench", "scripts"}
    mods = set()
    files = [
        ROOT / "app.py",
        *sorted((ROOT / "sim").glob("*.py")),
        *sorted((ROOT / "ui").glob("*.py")),
        *sorted((ROOT / "pages").glob("*.py")),
        *sorted((ROOT / "views").glob("*.py")),
    ]
    for f in files:
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for n in names:
                top = n.split(".")[0]
                if top not in stdlib and top not in local and top != "__future__":
                    mods.add(top)
    return mods


def test_every_direct_import_of_the_app_is_declared():
    """A module the app imports itself is a declared requirement, not a transitive accident
    (``llvmlite`` in sim/attention.py was not)."""
    dists = md.packages_distributions()
    declared = set(_pins("requirements.txt"))
    missing = {m: dists.get(m) for m in _third_party_imports() if not {_norm(d) for d in dists.get(m, [m])} & declared}
    assert not missing, f"imported but not in requirements.txt: {missing}"


def test_the_installed_environment_is_the_lock():
    """``pip freeze`` of the environment the tests run in: every package is in the dev lock (or is the
    installer, in its own lock) at the locked version; nothing floats."""
    allowed = {**read_lock(LOCKS["dev"]), **read_lock(LOCKS["uv"])}
    out = subprocess.run(
        [sys.executable, "-m", "pip", "freeze", "--all"], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    extra, wrong = [], []
    for ln in out.splitlines():
        if not ln or ln.startswith("#") or "==" not in ln:
            extra.append(ln) if ln and not ln.startswith("#") else None
            continue
        name, ver = ln.split("==", 1)
        name = _norm(name)
        if name in ("pip", "setuptools", "wheel"):  # the venv's own bootstrap, not the app's
            continue
        if name not in allowed:
            extra.append(ln)
        elif allowed[name][0] != ver:
            wrong.append(f"{ln} (lock: {allowed[name][0]})")
    assert not extra and not wrong, f"not in the lock: {extra}; other version than the lock: {wrong}"


def _recipe(target: str) -> str:
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    m = re.search(rf"(?m)^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", text)
    assert m, f"no Makefile target {target}"
    return m.group(1)


def test_makefile_installs_from_the_locks_with_hashes():
    text = (ROOT / "Makefile").read_text()
    assert re.search(r"(?m)^LOCK\s*:=\s*requirements\.lock$", text)
    assert re.search(r"(?m)^DEV_LOCK\s*:=\s*requirements-dev\.lock$", text)
    uv_install = re.search(r"(?m)^UV_INSTALL\s*=(.*)$", text).group(1)
    assert "--require-hashes" in uv_install
    assert "-r $(LOCK)" in _recipe("$(VENV)/.installed")
    assert "-r $(DEV_LOCK)" in _recipe("$(VENV)/.installed-dev")
    boot = _recipe("$(UV)")
    assert "--require-hashes" in boot and "$(UV_LOCK)" in boot
    lock = _recipe("lock")
    assert lock.count("pip compile") == 3 and "$(LOCK_FLAGS)" in lock
    assert "--generate-hashes" in re.search(r"(?m)^LOCK_FLAGS\s*=(.*)$", text).group(1)
    assert "requirements.txt" not in _recipe("$(VENV)/.installed") + _recipe("$(VENV)/.installed-dev")
    # run and test depend on the installs above
    assert re.search(r"(?m)^warm: \$\(VENV\)/\.installed$", text)
    assert re.search(r"(?m)^test: (prereqs-test )?\$\(VENV\)/\.installed-dev$", text)


def test_dockerfile_pins_base_packages_and_hashes():
    text = (ROOT / "Dockerfile").read_text()
    base = re.search(r"(?m)^ARG BASE=(\S+)$", text)
    assert base and re.search(r"@sha256:[0-9a-f]{64}$", base.group(1)), "the base image is not pinned by digest"
    assert re.search(r"(?m)^FROM \$\{BASE\}$", text)
    joined = text.replace("\\\n", " ")
    for cmd in re.findall(r"apt-get install ([^&\n]*)", joined):
        pkgs = [w.strip("\"'") for w in cmd.split() if not w.startswith("-")]
        assert pkgs and all(re.fullmatch(r"[a-z0-9.+\-]+=\S+", p) for p in pkgs), f"unpinned apt packages: {pkgs}"
    for var in re.findall(r"=\$\{(\w+)\}", joined):
        assert re.search(rf"(?m)^ARG {var}=\S+$", text), f"{var} has no default version"
    pips = re.findall(r"pip install ([^&\n]*)", joined)
    assert pips and all("--require-hashes" in p and "requirements.lock" in p for p in pips), pips
    assert "requirements.txt" not in joined.split("# ")[0] or "COPY requirements.txt" not in joined
    ignore = (ROOT / ".dockerignore").read_text().split()
    assert "requirements.lock" not in ignore and "requirements*" not in ignore
