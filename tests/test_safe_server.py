"""One misbehaving client cannot take the server: the message budgets (``ui.serve.Guard``, time
passed in, no clock), widget states Streamlit never made, the inbound frame cap, and at most one
queued cold load per session (``ui.jobs``)."""
from __future__ import annotations

import threading

from streamlit.proto.BackMsg_pb2 import BackMsg

from ui import jobs, serve


def _flood(g: serve.Guard, sessions: int, per_s: float, seconds: float, client="c") -> dict:
    out = {"ok": 0, "later": 0, "close": 0}
    n = int(per_s * seconds)
    for i in range(n):
        now = i / per_s
        for s in range(sessions):
            verdict, _ = g.admit(f"s{s}", client, "rerun", now)
            out[verdict] += 1
    return out


def test_a_flood_from_one_browser_is_slowed_then_disconnected():
    g = serve.Guard()
    got = _flood(g, sessions=4, per_s=20, seconds=30)
    # what passes is the browser's budget (burst + rate x time), whatever the number of tabs
    assert got["ok"] <= g.client.burst + g.client.rate * 30 + 1
    assert got["later"] > 0 and got["close"] >= 1


def test_a_hand_on_a_slider_is_never_slowed():
    g = serve.Guard()
    got = _flood(g, sessions=1, per_s=2.5, seconds=600)   # a release every 0.4 s for ten minutes
    assert got == {"ok": 1500, "later": 0, "close": 0}
    g = serve.Guard()
    got = _flood(g, sessions=1, per_s=10, seconds=1)        # a quick burst of ten
    assert got["later"] == 0 and got["close"] == 0


def test_other_browsers_keep_their_own_budget():
    g = serve.Guard()
    _flood(g, sessions=4, per_s=20, seconds=5, client="attacker")
    assert g.admit("student", "another", "rerun", 5.0) == ("ok", 0.0)


def test_fragment_reruns_cost_less():
    g = serve.Guard()
    got = {"ok": 0}
    for i in range(40):   # the class poll: fragment reruns every 0.25 s
        got["ok"] += g.admit("s", "c", "fragment", i * 0.25)[0] == "ok"
    assert got["ok"] == 40


def test_widget_states_with_foreign_ids_are_dropped():
    msg = BackMsg()
    ws = msg.rerun_script.widget_states
    for wid in ("_instructor", "$$ID-abc-beta", "", "x" * 10, "$$ID-" + "y" * 1000):
        w = ws.widgets.add()
        w.id = wid
        w.string_value = "forged"
    assert serve.clean_widget_states(ws) == 4
    assert [w.id for w in ws.widgets] == ["$$ID-abc-beta"]


def test_inbound_frames_are_capped_before_buffering():
    from streamlit.web.server.starlette import starlette_server

    serve.install_guards()
    assert starlette_server._get_uvicorn_config_kwargs()["ws_max_size"] <= serve.INBOUND_MAX_BYTES
    assert serve.INBOUND_MAX_BYTES <= 2**20


def test_one_queued_cold_load_per_session():
    gate = threading.Event()
    p = jobs.JobPool(n_workers=1, nice=0)
    p.submit("block", lambda progress: gate.wait(), None, "other")   # keeps the worker busy
    flood = [p.submit(("load", i), lambda progress: i, None, "attacker") for i in range(100)]
    assert p.status()["queued"] <= 1 + 1          # the other session's job may still be queued
    assert sum(j.state == "queued" for j in flood) == 1
    assert all(isinstance(j.error, jobs.Superseded) for j in flood[:-1] if j.state == "failed")
    mine = p.submit("student", lambda progress: "ok", None, "student")
    assert p.position(mine) <= 3
    gate.set()
    assert mine.done.wait(30) and mine.result == "ok"


def test_every_browser_gets_a_cookie_that_names_it():
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    app = Starlette(routes=[Route("/", lambda r: PlainTextResponse("ok"))],
                    middleware=[Middleware(serve.BrowserCookie)])
    c = TestClient(app)
    first = c.get("/")
    assert serve.BROWSER_COOKIE in first.headers["set-cookie"] and "httponly" in first.headers["set-cookie"].lower()
    assert "set-cookie" not in c.get("/").headers          # the browser keeps its cookie


def test_a_ceiling_per_address_for_clients_without_cookies():
    g = serve.Guard()
    ok = 0
    for i in range(2000):   # 100 cookie-less sessions from one address, 20 messages each at once
        ok += g.admit(f"s{i % 100}", f"a|session:s{i % 100}", "rerun", 0.0, "a")[0] == "ok"
    assert ok <= g.address.burst


def test_a_slowed_browser_is_told_why(monkeypatch):
    from tests.conftest import app_test

    assert serve.was_slowed() is False                  # outside a run, nothing
    monkeypatch.setattr(serve, "was_slowed", lambda: True)
    at = app_test("two_point", {"lang": "en"})
    assert any("being slowed down" in w.value for w in at.warning)
