"""scripts/check_prereqs.sh says in words what a machine lacks before `make run` / `make test` can set up."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "check_prereqs.sh"


def _run(tmp_path, tools=(), python=None, root="/", test=True):
    """The script with a PATH holding only the basic tools plus ``tools`` (name -> exit code stub)."""
    bin_ = tmp_path / "bin"
    bin_.mkdir(exist_ok=True)
    for t in ("bash", "uname", "grep", "ls", "id", "env"):
        (bin_ / t).symlink_to(shutil.which(t))
    for name in tools:
        (bin_ / name).write_text("#!/bin/sh\nexit 0\n")
        (bin_ / name).chmod(0o755)
    py = python or os.path.realpath(sys.executable)
    args = [str(bin_ / "bash"), str(SCRIPT), *(["--test"] if test else []), py]
    env = {"PATH": str(bin_), "PREREQ_ROOT": root if root != "/" else ""}
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=60)


def test_nothing_missing_passes(tmp_path):
    # a folder holding libgomp stands for the system's
    (tmp_path / "libs" / "usr" / "lib" / "x86_64-linux-gnu").mkdir(parents=True)
    (tmp_path / "libs" / "usr" / "lib" / "x86_64-linux-gnu" / "libgomp.so.1").write_text("")
    out = _run(tmp_path, tools=(), test=False, root=str(tmp_path / "libs"))
    assert out.returncode == 0, out.stderr


def test_missing_openmp_chromium_and_no_installer_are_named(tmp_path):
    out = _run(tmp_path, tools=(), root=str(tmp_path / "nothing"))
    assert out.returncode == 1
    assert "libgomp1" in out.stderr and "apt-get install libgomp1" in out.stderr
    assert "chromium and redis-server" in out.stderr  # no apt-get on this PATH to install them


def test_a_wrong_python_is_named(tmp_path):
    out = _run(tmp_path, python=str(tmp_path / "python3.9"), test=False)
    assert out.returncode == 1 and "Python 3.11" in out.stderr
