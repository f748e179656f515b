"""One misbehaving client cannot take the server: the message budgets (``ui.server.serve.Guard``, time
passed in, no clock), widget states Streamlit never made, the inbound frame cap, and at most one
queued cold load per session (``ui.server.jobs``)."""

from __future__ import annotations

import threading
import time

import pytest

from streamlit.proto.BackMsg_pb2 import BackMsg

from ui.server import adapters, budgets, jobs


def _flood(g: budgets.Guard, sessions: int, per_s: float, seconds: float, client="c") -> dict:
    out = {"ok": 0, "later": 0, "close": 0}
    n = int(per_s * seconds)
    for i in range(n):
        now = i / per_s
        for s in range(sessions):
            verdict, _ = g.admit(f"s{s}", client, "rerun", now)
            out[verdict] += 1
    return out


def test_a_flood_from_one_browser_is_slowed_then_disconnected():
    g = budgets.Guard()
    got = _flood(g, sessions=4, per_s=20, seconds=30)
    # what passes is the browser's budget (burst + rate x time), whatever the number of tabs
    assert got["ok"] <= g.client.burst + g.client.rate * 30 + 1
    assert got["later"] > 0 and got["close"] >= 1


def test_a_hand_on_a_slider_is_never_slowed():
    g = budgets.Guard()
    got = _flood(g, sessions=1, per_s=2.5, seconds=600)  # a release every 0.4 s for ten minutes
    assert got == {"ok": 1500, "later": 0, "close": 0}
    g = budgets.Guard()
    got = _flood(g, sessions=1, per_s=10, seconds=1)  # a quick burst of ten
    assert got["later"] == 0 and got["close"] == 0


def test_other_browsers_keep_their_own_budget():
    g = budgets.Guard()
    _flood(g, sessions=4, per_s=20, seconds=5, client="attacker")
    assert g.admit("student", "another", "rerun", 5.0) == ("ok", 0.0)


def test_fragment_reruns_cost_less():
    g = budgets.Guard()
    got = {"ok": 0}
    for i in range(40):  # the class poll: fragment reruns every 0.25 s
        got["ok"] += g.admit("s", "c", "fragment", i * 0.25)[0] == "ok"
    assert got["ok"] == 40


def test_widget_states_with_foreign_ids_are_dropped():
    msg = BackMsg()
    ws = msg.rerun_script.widget_states
    for wid in ("_instructor", "$$ID-abc-beta", "", "x" * 10, "$$ID-" + "y" * 1000):
        w = ws.widgets.add()
        w.id = wid
        w.string_value = "forged"
    assert budgets.clean_widget_states(ws) == 4
    assert [w.id for w in ws.widgets] == ["$$ID-abc-beta"]


def test_inbound_frames_are_capped_before_buffering():
    from streamlit.web.server.starlette import starlette_server

    adapters.install_guards()
    assert starlette_server._get_uvicorn_config_kwargs()["ws_max_size"] <= budgets.INBOUND_MAX_BYTES
    assert budgets.INBOUND_MAX_BYTES <= 2**20


def test_one_queued_cold_load_per_session():
    gate = threading.Event()
    p = jobs.JobPool(n_workers=1, nice=0)
    p.submit("block", lambda progress: gate.wait(), None, "other")  # keeps the worker busy
    flood = [p.submit(("load", i), lambda progress: i, None, "attacker") for i in range(100)]
    assert p.status()["queued"] <= 1 + 1  # the other session's job may still be queued
    assert sum(j.state == "queued" for j in flood) == 1
    assert all(isinstance(j.error, jobs.Superseded) for j in flood[:-1] if j.state == "failed")
    mine = p.submit("student", lambda progress: "ok", None, "student")
    assert p.position(mine) <= 3
    gate.set()
    assert mine.done.wait(30) and mine.result == "ok"


def _held(gate: threading.Event, steps: list | None = None, value=None):
    """A job that waits for ``gate``, then reports progress (a checkpoint) and records a second step."""

    def fn(progress):
        assert gate.wait(30)
        progress(0.5)
        if steps is not None:
            steps.append(value)
        return value

    return fn


def _until(cond, timeout=60.0):
    import time

    t0 = time.monotonic()
    while not cond():
        assert time.monotonic() - t0 < timeout, "timed out"
        time.sleep(0.01)


def test_a_flooding_session_never_holds_two_workers():
    gate = threading.Event()
    p = jobs.JobPool(n_workers=2, nice=0)
    first = p.submit(("load", 0), _held(gate), None, "attacker")
    _until(lambda: first.state == "running")
    flood = [p.submit(("load", i), _held(gate), None, "attacker") for i in range(1, 60)]
    assert sum(j.state == "running" for j in flood) == 0  # the second worker stays free for others
    assert sum(j.state == "queued" for j in flood) == 1
    mine = p.submit("student", lambda progress: "ok", None, "student")
    assert mine.done.wait(30) and mine.result == "ok"  # at once, while the attacker's job runs
    assert first.state == "running"
    gate.set()


def test_sessions_are_served_in_turn_on_one_worker():
    gate, order = threading.Event(), []
    p = jobs.JobPool(n_workers=1, nice=0)
    first = p.submit(("load", 0), _held(gate, order, "a0"), None, "attacker")
    _until(lambda: first.state == "running")
    nxt = p.submit(("load", 1), _held(gate, order, "a1"), None, "attacker")  # queued before the student
    mine = p.submit("student", _held(gate, order, "student"), None, "student")
    assert p.position(mine) == 1 and p.position(nxt) == 2
    gate.set()
    assert nxt.done.wait(30) and mine.done.wait(30)
    assert mine.started < nxt.started  # the student's load first
    assert order == ["student", "a1"]  # a0 was left: see below


def test_a_running_load_nobody_waits_for_stops_at_its_next_step():
    gate, steps = threading.Event(), []
    p = jobs.JobPool(n_workers=1, nice=0)
    old = p.submit(("load", 0), _held(gate, steps, "old"), None, "s")
    _until(lambda: old.state == "running")
    new = p.submit(("load", 1), _held(gate, steps, "new"), None, "s")  # the student moved on
    assert new.state == "queued"  # waits for the old one to end
    gate.set()
    assert old.done.wait(30) and isinstance(old.error, jobs.Superseded)
    assert new.done.wait(30) and new.result == "new" and steps == ["new"]
    assert p.find(("load", 0)) is None  # not kept as a result


def test_a_running_load_someone_else_waits_for_is_finished():
    gate = threading.Event()
    p = jobs.JobPool(n_workers=1, nice=0)
    old = p.submit("shared", _held(gate, value=1), None, "s")
    _until(lambda: old.state == "running")
    assert p.submit("shared", _held(gate), None, "t") is old
    p.submit("other", _held(gate, value=2), None, "s")
    back = p.submit("mine", _held(gate, value=3), None, "u")
    p.submit(("u", 2), _held(gate), None, "u")  # u moves on from a queued job
    gate.set()
    assert old.done.wait(30) and old.result == 1  # t still waited for it
    assert back.done.wait(30) and isinstance(back.error, jobs.Superseded)


def test_coming_back_to_a_running_load_keeps_it():
    gate = threading.Event()
    p = jobs.JobPool(n_workers=1, nice=0)
    a = p.submit("a", _held(gate, value="a"), None, "s")
    _until(lambda: a.state == "running")
    b = p.submit("b", _held(gate, value="b"), None, "s")
    assert a.cancelled
    assert p.submit("a", _held(gate), None, "s") is a and not a.cancelled  # the slider went back
    assert b.done.wait(30) and isinstance(b.error, jobs.Superseded)  # dropped from the queue
    gate.set()
    assert a.done.wait(30) and a.result == "a"


def test_every_browser_gets_a_cookie_that_names_it():
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    app = Starlette(
        routes=[Route("/", lambda r: PlainTextResponse("ok"))], middleware=[Middleware(budgets.BrowserCookie)]
    )
    c = TestClient(app)
    first = c.get("/")
    assert budgets.BROWSER_COOKIE in first.headers["set-cookie"] and "httponly" in first.headers["set-cookie"].lower()
    assert "set-cookie" not in c.get("/").headers  # the browser keeps its cookie


def test_a_ceiling_per_address_for_clients_without_cookies():
    g = budgets.Guard()
    ok = 0
    for i in range(2000):  # 100 cookie-less sessions from one address, 20 messages each at once
        ok += g.admit(f"s{i % 100}", f"a|session:s{i % 100}", "rerun", 0.0, "a")[0] == "ok"
    assert ok <= g.address.burst


def test_a_slowed_browser_is_told_why(monkeypatch):
    from tests.conftest import app_test

    assert budgets.was_slowed() is False  # outside a run, nothing
    monkeypatch.setattr(budgets, "was_slowed", lambda: True)
    at = app_test("two_point", {"lang": "en"})
    assert any("being slowed down" in w.value for w in at.warning)


def test_forwarded_address_believed_from_listed_proxies_only():
    env = {budgets.TRUSTED_ENV: "10.213.0.10, 10.244.0.0/16, 172.18., not-an-address"}
    assert budgets._trusted("127.0.0.1", {}) and budgets._trusted("::1", {})
    assert budgets._trusted("10.213.0.10", env) and not budgets._trusted("10.213.0.100", env)  # exact
    assert budgets._trusted("10.244.3.9", env) and not budgets._trusted("10.245.0.1", env)  # network
    assert budgets._trusted("::ffff:10.244.3.9", env)
    assert budgets._trusted("172.18.0.4", env)  # a prefix
    assert not budgets._trusted("192.0.2.1", env) and not budgets._trusted("not-an-address", env)
    hdr = [("X-Real-IP", "198.51.100.7")]
    import os

    old = os.environ.get(budgets.TRUSTED_ENV)
    os.environ[budgets.TRUSTED_ENV] = "10.213.0.10"
    try:
        assert budgets.client_address(hdr, "10.213.0.10") == "198.51.100.7"
        assert budgets.client_address(hdr, "10.213.0.11") == "10.213.0.11"  # a forged header elsewhere
        # Envoy (deploy/k8s/gateway.yaml) appends the address it saw to X-Forwarded-For: the last
        # entry counts, what the client wrote before it does not; X-Real-IP (nginx) wins
        xff = [("X-Forwarded-For", "203.0.113.9, 198.51.100.20")]
        assert budgets.client_address(xff, "10.213.0.10") == "198.51.100.20"
        assert budgets.client_address(xff, "10.213.0.11") == "10.213.0.11"
        assert budgets.client_address(xff + hdr, "10.213.0.10") == "198.51.100.7"
        assert budgets.client_address([("X-Forwarded-For", " ")], "10.213.0.10") == "10.213.0.10"
    finally:
        if old is None:
            del os.environ[budgets.TRUSTED_ENV]
        else:
            os.environ[budgets.TRUSTED_ENV] = old


def test_the_served_entry_drops_foreign_widget_states_before_the_session_sees_them(monkeypatch):
    """The path a websocket message takes in the served process (``Runtime.handle_backmsg`` as
    :func:`ui.server.serve.install_guards` wraps it): a rerun carrying ``_instructor`` reaches the session
    without it, the widget states Streamlit made are kept."""
    from streamlit.runtime.runtime import Runtime
    from streamlit.web.server.starlette import starlette_app, starlette_server

    got = []
    monkeypatch.setattr(Runtime, "handle_backmsg", lambda self, sid, msg, client=None: got.append(msg))
    for mod, name in ((starlette_server, "_get_uvicorn_config_kwargs"), (starlette_app, "create_streamlit_middleware")):
        monkeypatch.setattr(mod, name, getattr(mod, name))  # restored after the test
    adapters.install_guards(budgets.Guard())
    msg = BackMsg()
    for wid in ("_instructor", "$$ID-abc-beta"):
        w = msg.rerun_script.widget_states.widgets.add()
        w.id, w.string_value = wid, "x"
    Runtime.handle_backmsg(object(), "session-1", msg, client=None)
    assert len(got) == 1
    assert [w.id for w in got[0].rerun_script.widget_states.widgets] == ["$$ID-abc-beta"]


def test_a_timed_fragment_rerun_during_a_full_run_is_dropped(monkeypatch):
    """The class poll (``st.fragment(run_every=...)``) asks for a fragment rerun every second. One
    asked for while the session's full run is in progress is dropped by the served entry (it would
    otherwise run the moment the full run ends, back to back with it: what left a student's page
    blank under the banner); a click inside a fragment (not timed), a full rerun, and a timed rerun
    of another session or after the full run pass. After a page switch, a timed request that
    still names the page left is dropped, a click's is moved to the page shown."""
    from streamlit.runtime.runtime import Runtime
    from streamlit.web.server.starlette import starlette_app, starlette_server

    from ui.server import runs

    got = []
    monkeypatch.setattr(Runtime, "handle_backmsg", lambda self, sid, msg, client=None: got.append((sid, msg)))
    for mod, name in ((starlette_server, "_get_uvicorn_config_kwargs"), (starlette_app, "create_streamlit_middleware")):
        monkeypatch.setattr(mod, name, getattr(mod, name))
    g = budgets.Guard()
    adapters.install_guards(g)

    def rerun(fragment: str = "", auto: bool = False, page: str = "") -> BackMsg:
        m = BackMsg()
        m.rerun_script.fragment_id = fragment
        m.rerun_script.is_auto_rerun = auto
        m.rerun_script.page_script_hash = page
        return m

    monkeypatch.setattr(runs, "_FULL", {"busy"})
    for sid, msg in (
        ("busy", rerun("poll", auto=True)),
        ("busy", rerun("box")),
        ("busy", rerun()),
        ("idle", rerun("poll", auto=True)),
    ):
        Runtime.handle_backmsg(object(), sid, msg, client=None)
    assert [(sid, m.rerun_script.fragment_id, m.rerun_script.is_auto_rerun) for sid, m in got] == [
        ("busy", "box", False),
        ("busy", "", False),
        ("idle", "poll", True),
    ]
    assert g.dropped_polls == 1
    runs._FULL.discard("busy")  # the full run has ended
    Runtime.handle_backmsg(object(), "busy", rerun("poll", auto=True), client=None)
    assert got[-1][0] == "busy" and g.dropped_polls == 1

    # the session was switched to another page (a push): requests still naming the old page
    monkeypatch.setattr(runs, "_PAGE", {"busy": "lesson"})
    got.clear()
    for msg in (
        rerun("poll", auto=True, page="home"),
        rerun("box", page="home"),
        rerun("poll", auto=True, page="lesson"),
        rerun("poll", auto=True),
    ):
        Runtime.handle_backmsg(object(), "busy", msg, client=None)
    assert [(m.rerun_script.fragment_id, m.rerun_script.page_script_hash) for _, m in got] == [
        ("box", "lesson"),
        ("poll", "lesson"),
        ("poll", ""),
    ], "a click is kept, on the page shown"
    assert g.dropped_polls == 2


def test_a_full_run_registers_its_session_while_it_lasts(monkeypatch):
    from ui.server import runs

    from types import SimpleNamespace

    monkeypatch.setattr(runs, "_run_ctx", lambda: SimpleNamespace(session_id="s1", page_script_hash="page-a"))
    assert not runs.in_full_run("s1")
    with runs.turn():
        assert runs.in_full_run("s1")
        with runs.released():  # waiting for a shared heavy job: still this run
            assert runs.in_full_run("s1")
    assert not runs.in_full_run("s1") and runs.page_of("s1") == "page-a"
    with pytest.raises(RuntimeError):
        with runs.turn():
            raise RuntimeError("a page that fails")
    assert not runs.in_full_run("s1")


def test_a_queued_fragment_rerun_runs_on_the_page_shown(monkeypatch):
    """A fragment rerun queued before a page switch (a push) runs on the page the session shows
    now, not on the page it was asked from; a full rerun, and a fragment of a session with no
    page yet, are left as they are."""
    from types import SimpleNamespace

    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData

    from ui.server import runs

    seen = []
    monkeypatch.setattr(ScriptRunner, "_run_script", lambda self, rd: seen.append(rd))
    adapters._fragments_on_the_page_shown()
    monkeypatch.setattr(runs, "_PAGE", {"s": "lesson"})
    me, other = SimpleNamespace(_session_id="s"), SimpleNamespace(_session_id="new")
    ScriptRunner._run_script(me, RerunData(fragment_id_queue=["poll"], page_script_hash="home"))
    ScriptRunner._run_script(me, RerunData(page_script_hash="home"))
    ScriptRunner._run_script(other, RerunData(fragment_id_queue=["poll"], page_script_hash="home"))
    assert [(r.fragment_id_queue, r.page_script_hash) for r in seen] == [
        (["poll"], "lesson"),
        ([], "home"),
        (["poll"], "home"),
    ]


def test_each_run_notes_whether_the_browser_asked_for_it(monkeypatch):
    """The same wrapper tells ``ui.server.runs`` where each run came from (for bursts, ``runs.settled``):
    a browser's rerun with widget values on the page shown carries them (as a hash of Streamlit's
    own WidgetStates proto); a fragment rerun, a server's own rerun (no widget values) and a
    navigation to another page carry none."""
    from types import SimpleNamespace

    from streamlit.proto.WidgetStates_pb2 import WidgetStates
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData

    from ui.server import runs

    seen = []
    monkeypatch.setattr(ScriptRunner, "_run_script", lambda self, rd: seen.append(runs._ORIGIN.values))
    adapters._fragments_on_the_page_shown()
    monkeypatch.setattr(runs, "_PAGE", {"s": "lesson"})
    ws = WidgetStates()
    w = ws.widgets.add()
    w.id, w.double_value = "beta", 2.5
    me = SimpleNamespace(_session_id="s")
    ScriptRunner._run_script(me, RerunData(widget_states=ws, page_script_hash="lesson"))
    ScriptRunner._run_script(me, RerunData(widget_states=ws, page_script_hash="lesson", fragment_id_queue=["poll"]))
    ScriptRunner._run_script(me, RerunData(page_script_hash="lesson"))
    ScriptRunner._run_script(me, RerunData(widget_states=ws, page_script_hash="other"))
    w.double_value = 2.6
    ScriptRunner._run_script(me, RerunData(widget_states=ws, page_script_hash="lesson"))
    assert seen[1:4] == [None, None, None]
    assert None not in (seen[0], seen[4]) and seen[0] != seen[4]


def test_a_download_made_on_click_outlives_other_sessions_runs(monkeypatch):
    """A deferred download's file survives the ends of other sessions' runs (each calls
    ``remove_orphaned_files``) until it is fetched, and is dropped once its time is up."""
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
    from streamlit.runtime.media_file_storage import MediaFileStorageError

    adapters._keep_fresh_downloads()
    adapters._keep_fresh_downloads()  # installed once
    assert MediaFileManager.execute_deferred._keeps_fresh

    def made(mgr) -> str:
        fid = mgr.add_deferred(lambda: "a,b\n1,2\n", "text/csv", "coord-1", file_name="r.csv")
        return adapters.download_file_id(mgr.execute_deferred(fid))

    def stored(mgr, fid) -> bool:
        try:
            mgr._storage.get_file(fid)
            return True
        except MediaFileStorageError:
            return False

    # Streamlit's own rule: two run ends and the unreferenced download is gone
    mgr = MediaFileManager(MemoryMediaFileStorage("/media"))
    fid = made(mgr)
    streamlit_rule = MediaFileManager._get_inactive_file_ids._streamlit
    monkeypatch.setattr(mgr, "_get_inactive_file_ids", lambda: streamlit_rule(mgr))
    mgr.remove_orphaned_files()
    mgr.remove_orphaned_files()
    assert not stored(mgr, fid)

    # served: it outlives many run ends, then goes once its time is up
    monkeypatch.setattr(adapters, "FRESH_DOWNLOAD_S", 0.3)
    mgr = MediaFileManager(MemoryMediaFileStorage("/media"))
    fid = made(mgr)
    for _ in range(30):
        mgr.remove_orphaned_files()
    assert stored(mgr, fid) and mgr._storage.get_file(fid).content == b"a,b\n1,2\n"
    time.sleep(0.35)
    mgr.remove_orphaned_files()
    mgr.remove_orphaned_files()
    assert not stored(mgr, fid)
