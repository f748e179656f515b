"""ui/server/prepare.py: the served process imports the app and loads its kernels before the first visit."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from ui.server import prepare
from ui.kit.spec import ROOT


def test_app_modules_are_what_app_py_imports():
    mods = prepare.app_modules()
    # the environment (a thread-safe Numba layer, one BLAS thread), then the wait, before anything else
    assert mods[:4] == ["ui.server", "ui.server.start", "ui.server", "ui.server.prepare"]
    for m in ("streamlit", "ui.server.runs", "ui.teaching.classroom", "ui.kit.nav", "sim.warm"):
        assert m in mods
    assert "ui.kit.nav.PAGES" in mods  # a name, not a module: import_app skips it


def test_wait_without_start_returns_at_once(monkeypatch):
    monkeypatch.setattr(prepare, "_thread", None)
    assert prepare.wait(timeout=0.0) is True


def test_a_fresh_process_imports_every_page_in_the_background():
    """In a new interpreter (nothing imported yet): start() imports app.py's modules and every
    page module in a thread; wait() returns once they are there."""
    code = textwrap.dedent("""
        import sys
        from ui.server import prepare
        assert "pages.hemisphere.page" not in sys.modules
        prepare.start()
        assert prepare.wait(120)
        from ui.kit import files
        from ui.kit.nav import PAGES
        missing = [e.stem for e in PAGES if files.module_name(e.stem) not in sys.modules]
        assert not missing, missing
        assert "ui.teaching.classroom" in sys.modules and prepare.timings["imports_cpu_s"] > 0
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]


def test_load_kernels_leaves_out_modules_whose_child_failed(monkeypatch):
    """A module whose background compilation failed is not compiled in the server's thread."""
    from sim import warm

    asked = []
    monkeypatch.setattr(warm, "failed", lambda: frozenset({"attention"}))
    monkeypatch.setattr(warm, "warm", lambda only=None, **k: asked.append(list(only)))
    prepare.load_kernels()
    assert asked and "attention" not in asked[0] and "two_point" in asked[0]


def test_load_kernels_survives_an_error(monkeypatch):
    from sim import warm

    def boom(**k):
        raise RuntimeError("no cache")

    monkeypatch.setattr(warm, "warm", boom)
    prepare.load_kernels()  # logged, not raised: the kernels load on first use instead
    assert "kernels_cpu_s" in prepare.timings
