"""Instructor sign-in: off when not configured, wrong key, rate limit, key from secrets, sign-out."""
from __future__ import annotations

import pytest

from tests._instructor import router_only  # noqa: F401 - fixture
from tests.conftest import APPTEST_TIMEOUT, app_test
from ui import instructor

KEY = "correct horse battery staple"


@pytest.fixture(autouse=True)
def _router(router_only):
    pass


def _texts(at) -> str:
    parts = []
    for kind in ("markdown", "caption", "error", "warning", "text_input", "button", "expander"):
        for el in at.get(kind):
            parts.append(str(getattr(el, "label", "") or "") + " " + str(getattr(el, "value", "") or ""))
    return "\n".join(parts)


def _sign_in(at, key: str):
    at.text_input(key="_instructor_key").input(key)
    # the form's submit button is the only button inside the sign-in form
    submit = [b for b in at.button if b.label in ("Sign in", "登录")]
    submit[0].click().run()
    return at


@pytest.fixture
def no_config(monkeypatch):
    monkeypatch.delenv(instructor.KEY_ENV, raising=False)


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv(instructor.KEY_ENV, KEY)


def test_nothing_visible_without_configuration(no_config):
    at = app_test("home")
    assert not at.exception
    assert not [w for w in at.text_input if w.key == "_instructor_key"]
    # no sign-in box and no instructor controls (the home page's note for teachers, in the main
    # area, may explain what instructor mode is where a server is set up for it)
    assert "Instructor" not in _texts(at.sidebar) and "教师" not in _texts(at.sidebar)
    assert not [e for e in at.expander if e.label in ("Instructor", "教师")]


def test_short_key_counts_as_not_configured(monkeypatch):
    monkeypatch.setenv(instructor.KEY_ENV, "short")
    at = app_test("home")
    assert not [w for w in at.text_input if w.key == "_instructor_key"]


def test_wrong_key_refused_right_key_accepted_and_sign_out(key_env):
    at = app_test("home")
    assert [w for w in at.text_input if w.key == "_instructor_key"]
    _sign_in(at, KEY + "x")
    assert not at.exception
    assert any("not right" in e.value for e in at.error)
    assert at.session_state["_instructor_attempts"] and "_instructor" not in at.session_state
    _sign_in(at, KEY)
    assert at.session_state["_instructor"] == instructor._digest(KEY)
    assert any("Signed in as instructor" in c.value for c in at.caption)
    assert not [w for w in at.text_input if w.key == "_instructor_key"]
    at.button(key="_instructor_out").click().run()
    assert "_instructor" not in at.session_state
    assert [w for w in at.text_input if w.key == "_instructor_key"]


def test_rate_limit_blocks_even_the_right_key_then_expires(key_env, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(instructor, "_now", lambda: clock[0])
    at = app_test("home")
    for i in range(instructor.MAX_ATTEMPTS):
        _sign_in(at, f"wrong-{i}")
    warn = [w.value for w in at.warning if "Too many attempts" in w.value]
    assert warn and "60 s" in warn[0]
    assert at.text_input(key="_instructor_key").disabled
    # a client that submits anyway (the form is only disabled in the browser) is refused, even
    # with the right key
    at.text_input(key="_instructor_key").proto.disabled = False  # forge what a browser cannot do
    [b for b in at.button if b.label == "Sign in"][0].proto.disabled = False
    _sign_in(at, KEY)
    assert "_instructor" not in at.session_state
    assert len(at.session_state["_instructor_attempts"]) == instructor.MAX_ATTEMPTS
    clock[0] += 30
    at.run()
    warn = [w.value for w in at.warning if "Too many attempts" in w.value]
    assert warn and "30 s" in warn[0]
    clock[0] += 31
    at.run()
    assert not [w for w in at.warning if "Too many attempts" in w.value]
    _sign_in(at, KEY)
    assert at.session_state["_instructor"] == instructor._digest(KEY)


def test_key_from_secrets_and_key_rotation_signs_out(no_config):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APPTEST_TIMEOUT)
    at.secrets["instructor"] = {"key": KEY}
    at.run()
    _sign_in(at, KEY)
    assert at.session_state["_instructor"] == instructor._digest(KEY)
    at.secrets["instructor"] = {"key": KEY + " rotated"}
    at.run()
    assert [w for w in at.text_input if w.key == "_instructor_key"]  # signed out by the new key


def test_chinese_sidebar(key_env):
    at = app_test("home", {"lang": "zh"})
    _sign_in(at, "nope-nope-nope")
    assert any("密钥不正确" in e.value for e in at.error)
