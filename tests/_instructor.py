"""Helpers shared by the tests of instructor mode (tests/test_instructor_*.py)."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, app_test, open_page
from ui.teaching import instructor

KEY = "tq8Vn2-Xk4pLw9Rz_Hm3Yb6Jc1Fs5Dg7"  # strong enough for ui.teaching.signin.weak_key

#: AppTest cannot send cookies: a test session "presents" the cookies kept under this session-state
#: key. Only the tests read cookies from there (the served app reads ``st.context.cookies``).
TEST_COOKIES = "_test_cookies"


def _test_cookie_source():
    import streamlit as st

    got = st.session_state.get(TEST_COOKIES)
    return got if isinstance(got, dict) else {}


instructor._cookie_source = _test_cookie_source


def cookie(key: str = KEY) -> dict:
    """The cookies of a browser that signed in with ``key`` through the server's route."""
    from ui.teaching import signin

    return {signin.COOKIE: signin.make_token(key)}


@pytest.fixture
def router_only(monkeypatch):
    """Run every AppTest rerun through app.py's router.

    AppTest resets Streamlit's process-wide "pages/ folder" flag before each run, so the first
    script execution of every run is the page file alone and ``ui.kit.page`` reruns it through the
    router; a button click delivered to that first execution is lost. A served app clears the
    flag once per process (``ui.kit.nav.leave_mpa_v1``); here it is cleared for every run."""
    from streamlit.runtime.pages_manager import PagesManager

    init = PagesManager.__init__

    def patched(self, *a, **k):
        init(self, *a, **k)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", patched)


def signed_in(stem: str = "home", query: dict | None = None):
    """An AppTest session signed in with KEY (APP_INSTRUCTOR_KEY must be set), on page ``stem``."""
    at = app_test("home", query)
    at.session_state[TEST_COOKIES] = cookie()
    at.run()
    if stem != "home":
        open_page(at, stem)
        at.run()
    return at


def teacher_with_class(monkeypatch, stem: str = "two_point"):
    """A signed-in instructor (key mode, in-memory class store) who has opened a class on ``stem``:
    ``(AppTest, class code)``."""
    from ui.teaching import class_store as cs

    monkeypatch.setenv(instructor.KEY_ENV, KEY)
    monkeypatch.delenv(cs.REDIS_ENV, raising=False)
    teacher = signed_in(stem)
    teacher.button(key="_class_open").click().run()
    return teacher, teacher.session_state["_class_teach"]


__all__ = ["KEY", "ROOT", "TEST_COOKIES", "cookie", "router_only", "signed_in", "teacher_with_class"]


@pytest.fixture
def params_copy(tmp_path, monkeypatch, router_only):  # noqa: F811
    """A copy of the shipped parameter file as APP_PARAMS_FILE, instructor mode on (the key set)."""
    import shutil

    from ui.teaching import instructor
    from ui.kit.spec import DEFAULT_PARAMS_FILE, PARAMS_ENV

    f = tmp_path / "params.toml"
    shutil.copy(DEFAULT_PARAMS_FILE, f)
    monkeypatch.setenv(PARAMS_ENV, str(f))
    monkeypatch.setenv(instructor.KEY_ENV, KEY)
    return f


def comments(text: str) -> list[str]:
    """The comment lines of a TOML text (what the editor must keep)."""
    return [ln for ln in text.splitlines() if ln.lstrip().startswith("#")]


def two_point_beta(path) -> dict:
    """The [two_point.params.beta] table of the parameter file at ``path``."""
    import tomllib

    return tomllib.loads(path.read_text())["two_point"]["params"]["beta"]
