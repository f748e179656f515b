"""Streamlit's internals behind one door (``ui/streamlit_internals.py``): no private Streamlit or
Plotly name anywhere else in the app, every one of them in the table, the table's fingerprints match
the installed packages, an unverified Streamlit stops the server unless overridden, and each
replacement applies through Streamlit's own path (its app factory, a real AppSession method, the
real PagesManager)."""

from __future__ import annotations

import ast
import re
import importlib.util
from pathlib import Path
from types import SimpleNamespace
from unittest.mock import MagicMock

import pytest

from tests.conftest import ROOT
from ui import streamlit_internals as internals

DOOR = ROOT / "ui" / "streamlit_internals.py"
#: Streamlit's documented modules (everything else under ``streamlit.`` is private)
PUBLIC_STREAMLIT = {
    "streamlit",
    "streamlit.errors",
    "streamlit.components.v1",
    "streamlit.testing.v1",
    "streamlit.column_config",
    "streamlit.navigation",
}
#: Plotly's documented modules the app uses
PUBLIC_PLOTLY = {
    "plotly",
    "plotly.graph_objects",
    "plotly.colors",
    "plotly.io",
    "plotly.express",
    "plotly.subplots",
    "plotly.basedatatypes",
}


#: private names of other libraries, each with where and why
OTHER_LIBRARIES = {"_launch_threads": "numba: ui/server/start.py loads the threading layer at start (its own loader)"}


def _app_files() -> list[Path]:
    return [ROOT / "app.py", *sorted((ROOT / "ui").rglob("*.py")), *sorted((ROOT / "pages").rglob("*.py"))]


def _project_names() -> set[str]:
    """Every private name the project defines itself (functions, classes, variables, attributes it
    assigns, parameters, modules): such a name is the project's own, not a library's."""
    names = set()
    files = _app_files() + sorted((ROOT / "sim").rglob("*.py"))
    for f in files:
        names.add(f.stem)
        for n in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(n.name)
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
            elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and not _in_door_list(f):
                names.add(n.attr)
            elif isinstance(n, ast.arg):
                names.add(n.arg)
            elif isinstance(n, ast.alias):
                names.add((n.asname or n.name).split(".")[0])
    return {n for n in names if n.startswith("_")} | set(OTHER_LIBRARIES)


def _in_door_list(f: Path) -> bool:
    return f == DOOR


def _private_uses(f: Path, own: set[str]) -> list[str]:
    """Private library names used in ``f``: non-public ``streamlit.``/``plotly.`` imports, and
    ``x._name`` / ``getattr(x, "_name")`` where ``_name`` is no name of the project's."""
    out = []
    rel = f.relative_to(ROOT)
    for n in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
        mods = []
        if isinstance(n, ast.Import):
            mods = [a.name for a in n.names]
        elif isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
            mods = [n.module] + [
                f"{n.module}.{a.name}"
                for a in n.names
                if importlib.util.find_spec(n.module) is not None
                and n.module in ("streamlit", "plotly")
                and _is_module(f"{n.module}.{a.name}")
            ]
        for m in mods:
            top = m.split(".")[0]
            if (top == "streamlit" and m not in PUBLIC_STREAMLIT) or (top == "plotly" and m not in PUBLIC_PLOTLY):
                out.append(f"{rel}:{n.lineno}: import {m}")
        if isinstance(n, ast.Attribute) and n.attr.startswith("_") and not n.attr.startswith("__"):
            if n.attr not in own and ast.unparse(n.value) not in ("self", "cls"):
                out.append(f"{rel}:{n.lineno}: {ast.unparse(n)}")
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id in ("getattr", "setattr", "hasattr")
            and len(n.args) >= 2
            and isinstance(n.args[1], ast.Constant)
            and isinstance(n.args[1].value, str)
        ):
            name = n.args[1].value
            if name.startswith("_") and not name.startswith("__") and name not in own:
                out.append(f"{rel}:{n.lineno}: {n.func.id}(..., {name!r})")
    return out


def _is_module(dotted: str) -> bool:
    try:
        return importlib.util.find_spec(dotted) is not None
    except (ImportError, ValueError):
        return False


def test_no_private_streamlit_or_plotly_name_outside_the_door():
    own = _project_names()
    bad = [u for f in _app_files() if f != DOOR for u in _private_uses(f, own)]
    assert bad == [], "private library names outside ui/streamlit_internals.py:\n" + "\n".join(bad)


def test_the_scan_finds_what_it_looks_for(tmp_path):
    f = ROOT / "ui" / "streamlit_internals.py"
    found = _private_uses(f, _project_names())
    text = " ".join(found)
    for needle in ("_data_validator", "_frame_objs", "_props", "_session_id", "_websocket", "scriptrunner_utils"):
        assert needle in text, needle


def test_every_private_name_of_the_door_is_in_its_table():
    """What the door itself touches (private attributes and non-public modules) is named by an
    entry of the table (its target, what it relies on, or its reason)."""
    table = " ".join(f"{e.target} {e.source} {e.why}" for e in internals.TABLE)
    own = {n for n in _project_names() if n in DOOR.read_text(encoding="utf-8")} - {
        "_data_validator",
        "_data",
        "_layout",
        "_frame_objs",
        "_props",
        "_session_id",
        "_websocket",
    }
    for use in _private_uses(DOOR, own):
        name = use.split(": ", 1)[1]
        key = name.split("import ", 1)[1] if name.startswith("import ") else re.findall(r"_\w+", name)[-1]
        assert key in table, f"{use}: not in TABLE"


def test_the_table_is_complete_and_well_formed():
    names = [e.name for e in internals.TABLE]
    assert len(names) == len(set(names))
    for e in internals.TABLE:
        assert e.kind in ("replace", "read") and e.why and len(e.fingerprint) == 16, e
        assert e.verified == "1.67.0" or e.verified.startswith("plotly "), e
    replaced = {e.target.rsplit(".", 1)[-1] for e in internals.TABLE if e.kind == "replace"}
    assert replaced == {
        "uses_pages_directory",
        "_handle_clear_cache_request",
        "handle_backmsg",
        "_run_script",
        "_get_uvicorn_config_kwargs",
        "create_streamlit_middleware",
        "create_streamlit_routes",
        "execute_deferred",
        "_get_inactive_file_ids",
    }
    assert internals.VERIFIED == ("1.67.0",)


def test_fingerprints_match_the_installed_packages():
    got = {e.name: internals.fingerprint_now(e.name) for e in internals.TABLE}
    assert {n: v for n, v in got.items() if v != internals.ENTRIES[n].fingerprint} == {}
    assert internals.mismatches() == []


def test_an_unverified_streamlit_is_refused_unless_overridden(monkeypatch):
    assert internals.check_version("1.67.0", {}) is None
    with pytest.raises(SystemExit) as exc:
        internals.check_version("9.9.9", {})
    assert "9.9.9" in str(exc.value) and internals.UNVERIFIED_ENV in str(exc.value)
    msg = internals.check_version("9.9.9", {internals.UNVERIFIED_ENV: "1"})
    assert "9.9.9" in msg and "unverified" in msg and "every replacement's fingerprint matches" in msg, msg
    # a fingerprint that differs: named in the warning, and that replacement is skipped
    wrong = internals.ENTRIES["clear_cache"].__class__(
        **{**internals.ENTRIES["clear_cache"].__dict__, "fingerprint": "0" * 16}
    )
    monkeypatch.setitem(internals.ENTRIES, "clear_cache", wrong)
    monkeypatch.setattr(internals, "TABLE", [wrong if e.name == "clear_cache" else e for e in internals.TABLE])
    internals.fingerprint_ok.cache_clear()
    try:
        msg = internals.check_version("9.9.9", {internals.UNVERIFIED_ENV: "1"})
        assert "clear_cache" in msg and "_handle_clear_cache_request" in msg
        from streamlit.runtime.app_session import AppSession

        # as Streamlit has it (another test on this worker may have installed the replacement already)
        monkeypatch.setattr(
            AppSession, "_handle_clear_cache_request", internals.original(AppSession._handle_clear_cache_request)
        )
        before = AppSession._handle_clear_cache_request
        assert internals.replace("clear_cache", lambda orig: lambda self: None) is False
        assert AppSession._handle_clear_cache_request is before and "clear_cache" in internals.NOT_APPLIED
    finally:
        internals.NOT_APPLIED.pop("clear_cache", None)
        monkeypatch.undo()
        internals.fingerprint_ok.cache_clear()


def test_the_sign_in_routes_and_budgets_are_in_streamlits_own_app(monkeypatch):
    """Streamlit's app factory (``create_starlette_app``) builds the served app with the sign-in
    routes, the chart asset route and the browser-cookie middleware; a sign-in post reaches ours."""
    from starlette.testclient import TestClient
    from streamlit.runtime.runtime import Runtime
    from streamlit.web.server.starlette import starlette_app, starlette_server

    from ui.server import adapters, budgets

    for mod, name in (
        (starlette_app, "create_streamlit_routes"),
        (starlette_app, "create_streamlit_middleware"),
        (starlette_server, "_get_uvicorn_config_kwargs"),
    ):
        monkeypatch.setattr(
            mod,
            name,
            getattr(internals.original(getattr(mod, name)), "__wrapped__", internals.original(getattr(mod, name))),
        )
    monkeypatch.setattr(Runtime, "handle_backmsg", internals.original(Runtime.handle_backmsg))
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    monkeypatch.setattr(ScriptRunner, "_run_script", internals.original(ScriptRunner._run_script))
    adapters.install_guards(budgets.Guard())
    adapters.install_signin_routes()
    adapters.install_signin_routes()  # once
    assert starlette_app.create_streamlit_routes.__door__ == "routes"
    assert internals.original(starlette_app.create_streamlit_routes).__module__ == starlette_app.__name__
    app = starlette_app.create_starlette_app(MagicMock())
    paths = [getattr(r, "path", "") for r in app.routes]
    assert "/_app/signin" in paths and "/_app/signout" in paths
    assert any(m.cls is budgets.BrowserCookie for m in app.user_middleware)
    assert Runtime.handle_backmsg.__door__ == "backmsg" and ScriptRunner._run_script.__door__ == "run_script"
    assert starlette_server._get_uvicorn_config_kwargs.__door__ == "uvicorn_kwargs"
    for name in ("routes", "middleware", "backmsg", "run_script", "uvicorn_kwargs"):
        assert internals.APPLIED.get(name), name
    r = TestClient(app, base_url="http://app.test").post("/_app/signin", data={"key": "x"}, follow_redirects=False)
    assert r.status_code in (403, 429) and budgets.BROWSER_COOKIE in r.headers.get("set-cookie", "")


def test_the_pages_directory_flag_on_the_real_pages_manager(monkeypatch):
    from streamlit.runtime.pages_manager import PagesManager

    from ui.server import adapters

    monkeypatch.setattr(PagesManager, "uses_pages_directory", True)
    assert internals.uses_pages_directory() is True
    adapters.leave_mpa_v1()
    assert PagesManager.uses_pages_directory is False and internals.uses_pages_directory() is False


def test_the_page_intent_on_a_real_pages_manager(tmp_path):
    from streamlit.runtime.pages_manager import PagesManager

    main = tmp_path / "app.py"
    main.write_text("")
    mgr = PagesManager(str(main))
    mgr.set_script_intent("", "nosuchpage")
    ctx = SimpleNamespace(pages_manager=mgr)
    assert internals.intended_page(ctx) == ("nosuchpage", "")
    internals.clear_intent(ctx)
    assert internals.intended_page(ctx) == ("", "")
    assert internals.intended_page(SimpleNamespace()) is None


def test_the_reads():
    import plotly.graph_objects as go
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_run_yield_check

    assert internals.run_yield_check is get_run_yield_check
    assert internals.run_ctx() is None and internals.session_id() is None  # outside a run
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]), frames=[go.Frame(name="a")])
    traces, layout, frames = internals.figure_parts(fig)
    assert list(traces[0]["x"]) == [1, 2] and frames == [{"name": "a"}]
    v = internals.data_validator(fig)
    internals.set_data_validator(fig, v)
    assert internals.data_validator(fig) is v and hasattr(v, "validate_coerce")


def test_apptest_is_not_a_plain_streamlit_run():
    """AppTest runs app.py with a Streamlit runtime but no server: nothing of a plain ``streamlit
    run`` may happen there (no late replacements, no kernels compiled in the background)."""
    from harness.apptest import app_test
    from sim import _ready, warm

    at = app_test("home")
    assert not at.exception
    assert not internals.server_running()
    assert warm._background is None and not _ready.pending()
    assert "running_app" not in internals.APPLIED
