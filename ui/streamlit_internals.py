"""Streamlit's (and Plotly's) internals behind one door: every private name the app uses is here.

The bottom layer: this module imports nothing from the project. :data:`TABLE` lists each private
piece the app replaces or reads: the dotted target, why (one line), the version it was verified on,
and a fingerprint of what it relies on (the sha256 of that definition's source text in the
installed package, read from the file, so a test's stand-in does not change it). The rest of the
app goes through the small functions below (``intended_page``, ``clear_intent``, ``run_yield_check``,
``data_validator`` ...) instead of touching private names; ``tests/test_streamlit_internals.py``
fails on a private Streamlit/Plotly name used anywhere else in app.py, ui/ or pages/.

Replacements are installed with :func:`replace` (the replacement logic stays in
``ui.server.adapters``): it checks the fingerprint, installs once, and records the outcome in
:data:`APPLIED` / :data:`NOT_APPLIED`. The served process calls :func:`check_version` before
Streamlit starts: an unverified Streamlit stops it, unless ``APP_STREAMLIT_UNVERIFIED=1`` (then it
warns and names each replacement whose fingerprint differs: those are not applied). A plain
``streamlit run app.py`` never calls it; its reads fall back to "nothing known" (None) when a name
is gone.

Public alternative noted: Streamlit 1.67 has ``st.App`` (``streamlit.starlette.App``) that takes
extra ``routes=`` and ``middleware=`` for an ASGI deployment (uvicorn ``module:app``). The app is
started with ``streamlit run`` (its CLI, config and file watcher), so the routes and the browser
cookie middleware are still added through Streamlit's app factory; moving to ``st.App`` would drop
entries ``routes`` and ``middleware`` from the table but changes how every deployment starts.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import inspect
import logging
import os
from dataclasses import dataclass

#: the Streamlit versions every entry of :data:`TABLE` was checked against
VERIFIED = ("1.67.0",)
#: set to 1 to run on an unverified Streamlit anyway (replacements whose fingerprint differs are skipped)
UNVERIFIED_ENV = "APP_STREAMLIT_UNVERIFIED"
log = logging.getLogger("ui.streamlit_internals")


@dataclass(frozen=True)
class Entry:
    """One private piece of a library that the app replaces (``kind="replace"``) or reads."""

    name: str  #: short key (what :func:`replace` and the accessors use)
    target: str  #: dotted path of what is replaced or read
    kind: str  #: "replace" or "read"
    why: str  #: one line
    fingerprint: str  #: sha256 (16 hex) of the source of ``relies_on`` in the verified version
    relies_on: str = ""  #: the definition whose source is fingerprinted (default: ``target``)
    verified: str = "1.67.0"  #: the Streamlit version it was checked on (Plotly entries: plotly's)

    @property
    def source(self) -> str:
        return self.relies_on or self.target


#: the table, one entry a paragraph: ``name kind verified fingerprint``, then the target (``<- what
#: the fingerprint covers`` when it is not the target itself), then why; ``~rt.`` is
#: ``streamlit.runtime.``, ``~ctx.`` its script-run context module, ``~st.`` Streamlit's Starlette server
_TABLE = """
pages_directory  replace  1.67.0  dc280178951d8504
    ~rt.pages_manager.PagesManager.uses_pages_directory  <- ~rt.pages_manager.PagesManager
    a pages/ folder makes the first session a legacy (v1) multipage run until st.navigation ran once
clear_cache  replace  1.67.0  1550750d640752f4
    ~rt.app_session.AppSession._handle_clear_cache_request
    any websocket client could empty every session's st.cache_data/st.cache_resource
backmsg  replace  1.67.0  f8523b8631669c56
    ~rt.runtime.Runtime.handle_backmsg
    message budgets, widget-state cleaning, stale fragment reruns dropped (websocket entry)
run_script  replace  1.67.0  b83129f64595c0cb
    ~rt.scriptrunner.script_runner.ScriptRunner._run_script
    a queued fragment rerun runs on the page shown; notes each run's origin for bursts
uvicorn_kwargs  replace  1.67.0  40282eb42b52ec66
    ~st.starlette_server._get_uvicorn_config_kwargs
    caps inbound websocket frames (ws_max_size) before uvicorn buffers them; each connection without Nagle (http)
middleware  replace  1.67.0  545ede9dd6518e1c
    ~st.starlette_app.create_streamlit_middleware
    adds the browser cookie middleware that names a browser for its message budget
routes  replace  1.67.0  3caa04acf55738ae
    ~st.starlette_app.create_streamlit_routes
    adds the instructor sign-in/sign-out routes and the chart asset route
execute_deferred  replace  1.67.0  8aa885bf502620f8
    ~rt.media_file_manager.MediaFileManager.execute_deferred
    notes a download made on click so that it is kept until fetched
inactive_files  replace  1.67.0  22d464e5dd23d560
    ~rt.media_file_manager.MediaFileManager._get_inactive_file_ids
    keeps fresh on-click downloads out of the files another run's cleanup deletes
run_ctx  read  1.67.0  affa911b131ad9da
    ~ctx.get_script_run_ctx
    this thread's run: its session id and page script hash (runs, budgets, nav)
run_ctx_fields  read  1.67.0  3d9a6846af125987
    ~ctx.ScriptRunContext
    ScriptRunContext.session_id, .page_script_hash and .pages_manager
page_intent  read  1.67.0  0594f39257b129e1
    ~rt.pages_manager.PagesManager.intended_page_name  <- ~rt.pages_manager.PagesManager.set_script_intent
    an unknown URL path opens the home page without Streamlit's English dialog (set_script_intent)
yield_check  read  1.67.0  5b0dc9d655ca954f
    ~ctx.get_run_yield_check
    long computations end when a newer rerun is pending (sim's stopping hook)
runner_session  read  1.67.0  fccaa8328b7eb80f
    ~rt.scriptrunner.script_runner.ScriptRunner._session_id  <- ~rt.scriptrunner.script_runner.ScriptRunner.__init__
    which session a script run belongs to (in the run_script replacement)
client_websocket  read  1.67.0  61295a0d040eb9ff
    ~st.starlette_websocket.StarletteSessionClient._websocket <- ~st.starlette_websocket.StarletteSessionClient.__init__
    closes a browser's websocket over its budget with code 1008 and a reason
running_app  read  1.67.0  9ac1368f83fd511f
    ~st.starlette_app.create_starlette_app
    a plain `streamlit run app.py`: the sign-in and chart routes are added to the running Starlette app
middleware_stack  read  1.67.0  2b5f0a4acd3a4f78
    starlette.applications.Starlette.middleware_stack  <- starlette.applications.Starlette.__call__
    a plain `streamlit run app.py`: text assets compressed by a middleware put around the built stack (Starlette 1.10.0)
cli  read  1.67.0  0271ac060c50952a
    streamlit.web.cli.main
    the served process runs `streamlit run app.py [options]` in-process
plotly_validator  read  plotly=7.1.0  24ce53a1b69e102b
    plotly.basedatatypes.BaseFigure._data_validator  <- plotly.basedatatypes.BaseFigure.add_traces
    add_trace without per-property validation when validation is off (ui.kit.frozen)
plotly_parts  read  plotly=7.1.0  cd22a8ceb0025daf
    plotly.basedatatypes.BaseFigure._data  <- plotly.basedatatypes.BaseFigure.to_dict
    to_dict without its deep copy: _data, _layout, _frame_objs, frame._props (ui.kit.frozen)
"""
_ABBREV = {
    "~st.": "streamlit.web.server.starlette.",
    "~ctx.": "streamlit.runtime.scriptrunner_utils.script_run_context.",
    "~rt.": "streamlit.runtime.",
}


def _expand(dotted: str) -> str:
    for short, full in _ABBREV.items():
        if dotted.startswith(short):
            return full + dotted[len(short) :]
    return dotted


def _parse(text: str) -> list[Entry]:
    """The entries of :data:`_TABLE` (three lines each: head, target, why)."""
    out, blocks, cur = [], [], []
    for line in text.strip().splitlines():
        if not line.startswith(" ") and cur:
            blocks.append(cur)
            cur = []
        cur.append(line.strip())
    blocks.append(cur)
    for head, where, why in blocks:
        name, kind, verified, fp = head.split()
        target, _, relies = (x.strip() for x in where.partition("<-"))
        out.append(
            Entry(name, _expand(target), kind, why, fp, _expand(relies) if relies else "", verified.replace("=", " "))
        )
    return out


TABLE: list[Entry] = _parse(_TABLE)
ENTRIES = {e.name: e for e in TABLE}
#: what :func:`replace` did: name -> True (installed) / the reason it was not
APPLIED: dict[str, bool] = {}
NOT_APPLIED: dict[str, str] = {}


# --------------------------------------------------------------------------- fingerprints
def _split(dotted: str):
    """``(module, [qualname parts])`` for the longest importable module prefix of ``dotted``."""
    parts = dotted.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            return importlib.import_module(".".join(parts[:i])), parts[i:]
        except ImportError:
            continue
    raise ImportError(dotted)


@functools.lru_cache(maxsize=32)
def _tree(path: str):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return text, ast.parse(text)


def source_text(dotted: str) -> str | None:
    """The source text of a definition (class, function, method, class attribute) as the installed
    package's file has it; None when it is gone."""
    try:
        mod, qual = _split(dotted)
        text, tree = _tree(inspect.getsourcefile(mod))
    except (ImportError, OSError, TypeError):
        return None
    node = tree
    for name in qual:
        found = None
        for child in getattr(node, "body", ()):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and child.name == name:
                found = child
            elif isinstance(child, ast.AnnAssign) and getattr(child.target, "id", None) == name:
                found = child
            elif isinstance(child, ast.Assign) and any(getattr(t, "id", None) == name for t in child.targets):
                found = child
        if found is None:
            return None
        node = found
    return ast.get_source_segment(text, node)


def fingerprint_now(name: str) -> str | None:
    """The fingerprint of entry ``name``'s definition in the installed package (None: it is gone)."""
    src = source_text(ENTRIES[name].source)
    return None if src is None else hashlib.sha256(src.encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=64)
def fingerprint_ok(name: str) -> bool:
    return fingerprint_now(name) == ENTRIES[name].fingerprint


def mismatches() -> list[Entry]:
    """The entries whose fingerprint differs from the installed packages."""
    return [e for e in TABLE if not fingerprint_ok(e.name)]


# --------------------------------------------------------------------------- the version check
def streamlit_version() -> str:
    from importlib.metadata import version

    return version("streamlit")


def check_version(version: str | None = None, environ=os.environ) -> str | None:
    """None on a verified Streamlit. Otherwise stop (``SystemExit`` with the version and how to go
    on), or, with ``APP_STREAMLIT_UNVERIFIED=1``, return (and log) a warning naming the
    replacements that will not apply."""
    version = version or streamlit_version()
    if version in VERIFIED:
        return None
    if environ.get(UNVERIFIED_ENV, "").strip().lower() not in ("1", "true", "yes", "on"):
        raise SystemExit(
            f"ui.server: Streamlit {version} is not one this app was verified on ({', '.join(VERIFIED)}); "
            f"it replaces private pieces of Streamlit (ui/streamlit_internals.py). Install a verified one "
            f"(pip install streamlit=={VERIFIED[-1]}), or set {UNVERIFIED_ENV}=1 to start anyway (the "
            f"replacements whose fingerprint differs are then skipped), or run `streamlit run app.py`."
        )
    off = [e for e in mismatches() if e.kind == "replace"]
    msg = f"Streamlit {version} is unverified ({UNVERIFIED_ENV}=1): " + (
        "every replacement's fingerprint matches."
        if not off
        else "these replacements do not apply (their fingerprint differs): "
        + "; ".join(f"{e.name} ({e.target}: {e.why})" for e in off)
    )
    log.warning(msg)
    return msg


# --------------------------------------------------------------------------- replacing
def _owner(target: str):
    mod, qual = _split(target)
    owner = mod
    for name in qual[:-1]:
        owner = getattr(owner, name)
    return owner, qual[-1]


def replace(name: str, wrap) -> bool:
    """Install ``wrap(original)`` in place of entry ``name``'s target, once; False (and the reason
    in :data:`NOT_APPLIED`) when its fingerprint differs from the verified one."""
    entry = ENTRIES[name]
    assert entry.kind == "replace", name
    owner, attr = _owner(entry.target)
    current = getattr(owner, attr)
    if getattr(current, "__door__", None) == name:
        return True
    if not fingerprint_ok(name):
        NOT_APPLIED[name] = f"{entry.target} differs from the verified Streamlit {entry.verified}"
        log.warning("not applied: %s (%s)", name, NOT_APPLIED[name])
        return False
    new = wrap(current)
    new.__door__ = name
    new.__streamlit_original__ = current
    setattr(owner, attr, new)
    APPLIED[name] = True
    NOT_APPLIED.pop(name, None)
    return True


def original(obj):
    """What :func:`replace` replaced with ``obj`` (``obj`` itself when it is no replacement)."""
    return getattr(obj, "__streamlit_original__", obj)


# --------------------------------------------------------------------------- flags and reads
def uses_pages_directory() -> bool | None:
    """Streamlit's process-wide "legacy multipage app" flag (None when this Streamlit has none)."""
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - another Streamlit
        return None
    return getattr(PagesManager, "uses_pages_directory", None)


def set_uses_pages_directory(value: bool) -> bool:
    """Set that flag; False when this Streamlit's PagesManager is not the verified one."""
    if not fingerprint_ok("pages_directory"):
        NOT_APPLIED["pages_directory"] = "PagesManager differs from the verified one"
        return False
    from streamlit.runtime.pages_manager import PagesManager

    PagesManager.uses_pages_directory = value
    APPLIED["pages_directory"] = True
    return True


def run_ctx():
    """This thread's Streamlit run context, or None (no run, no Streamlit)."""
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

        return get_script_run_ctx(suppress_warning=True)
    except Exception:  # noqa: BLE001 - no Streamlit, another Streamlit
        return None


def session_id(ctx=None) -> str | None:
    """The session id of ``ctx`` (default: this thread's run), or None."""
    return getattr(ctx if ctx is not None else run_ctx(), "session_id", None)


def page_script_hash(ctx) -> str | None:
    try:
        return ctx.page_script_hash if ctx is not None else None
    except Exception:  # noqa: BLE001 - no page yet
        return None


def intended_page(ctx=None) -> tuple[str, str] | None:
    """``(intended page name, intended script hash)`` of the run's first request, or None."""
    try:
        mgr = (ctx if ctx is not None else run_ctx()).pages_manager
        return mgr.intended_page_name, mgr.intended_page_script_hash
    except AttributeError:  # no run context (bare mode) or another Streamlit
        return None


def clear_intent(ctx=None) -> None:
    """Make the run resolve to the default page (an empty intent shows no "not found" dialog)."""
    (ctx if ctx is not None else run_ctx()).pages_manager.set_script_intent("", "")


def _no_yield_check():
    return None


try:  # the run's own stop/rerun check (what Streamlit's cache waits call)
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_run_yield_check as run_yield_check
except ImportError:  # pragma: no cover - another Streamlit: no stopping points, runs go to their end
    run_yield_check = _no_yield_check


def runner_session_id(runner) -> str | None:
    """The session a ScriptRunner runs for."""
    return getattr(runner, "_session_id", None)


def client_websocket(client):
    """The websocket of a session client (None for another kind of client)."""
    return getattr(client, "_websocket", None)


def run_cli(args: list[str]) -> None:
    """``streamlit <args>`` in this process."""
    from streamlit.web import cli

    cli.main(args, prog_name="streamlit")


def data_validator(fig):
    """A Plotly figure's trace validator (what ``add_trace`` validates new traces with)."""
    return fig._data_validator


def set_data_validator(fig, validator) -> None:
    fig._data_validator = validator


def figure_parts(fig) -> tuple[list, object, list]:
    """``(traces, layout, frames' property dicts)`` of a Plotly figure, not copied."""
    return fig._data, fig._layout, [f._props for f in fig._frame_objs]


def add_routes_now(routes: list) -> bool:
    """Put ``routes`` first in the running server's Starlette application (a plain ``streamlit run
    app.py``, where nothing was installed before the server started: it is found among the live
    objects, once). False when there is none, or this Streamlit builds it differently."""
    app = _running_app()
    if app is None:
        return False
    have = {getattr(r, "path", None) for r in app.router.routes}
    app.router.routes[:0] = [r for r in routes if getattr(r, "path", None) not in have]
    APPLIED["running_app"] = True
    return True


def _running_app():
    """The running server's Starlette application (found among the live objects), or None."""
    if not fingerprint_ok("running_app"):
        NOT_APPLIED["running_app"] = "create_starlette_app differs from the verified one"
        return None
    import gc

    from starlette.applications import Starlette

    apps = [o for o in gc.get_objects() if isinstance(o, Starlette)]
    if len(apps) != 1:
        NOT_APPLIED["running_app"] = f"{len(apps)} Starlette applications in this process"
        return None
    return apps[0]


def wrap_running_app(middleware) -> bool:
    """Put ``middleware`` (an ASGI middleware class) outside the running server's middleware stack,
    once (a plain ``streamlit run app.py``: the stack was built before the app's code ran, and
    Starlette refuses ``add_middleware`` then). False when there is no running application, or
    this Starlette builds its stack differently (``middleware_stack``: the verified entry)."""
    app = _running_app()
    if app is None or not fingerprint_ok("middleware_stack"):
        NOT_APPLIED["middleware_stack"] = "no running application, or Starlette.__call__ differs"
        return False
    stack = app.middleware_stack
    if stack is None:  # not built yet: it is built on the first request
        stack = app.middleware_stack = app.build_middleware_stack()
    if isinstance(stack, middleware):
        return True
    app.middleware_stack = middleware(stack)
    APPLIED["middleware_stack"] = True
    return True


def _started_servers() -> list:
    """The started uvicorn servers of this process (found among the live objects); ``[]`` when
    uvicorn was never imported."""
    import sys

    if "uvicorn" not in sys.modules:
        return []
    import gc

    from uvicorn import Server

    return [o for o in gc.get_objects() if isinstance(o, Server) and getattr(o, "started", False)]


def server_running() -> bool:
    """Whether this process serves the app over HTTP: a started uvicorn server (what ``streamlit
    run`` runs). False under AppTest, which runs the script with a runtime of its own but no server,
    and in bare scripts. (``streamlit.runtime.exists()`` is True under AppTest too.)"""
    return bool(_started_servers())


def listening_sockets() -> list:
    """The listening sockets of the started uvicorn servers in this process (a plain ``streamlit run
    app.py``, where the server was built before the app's code ran); ``[]`` when none runs."""
    return [sock for o in _started_servers() for srv in (o.servers or ()) for sock in (srv.sockets or ())]
