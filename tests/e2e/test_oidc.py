"""Instructor sign-in with OpenID Connect (``st.login``) in headless Chromium, English and Chinese.

A mock provider (``tests/e2e/oidc_provider.py``, on loopback) and a server started here with a
temporary secrets file (``--secrets.files``: an ``[auth]`` block pointing at the mock and
``[instructor] emails = ["teacher@example.org"]``; the repository's ``.streamlit`` is not
touched). Each test is a fresh browser context (its own cookies, its own Streamlit session):

- a student sees the sign-in box and none of the instructor's controls;
- "Sign in with your account" goes through the provider (authorize, token with PKCE, the RS256
  id_token checked against the provider's keys) and back; as teacher@example.org the editor is in
  the navigation and the answers are under the questions; reloading keeps the sign-in (cookie);
- as student@example.org nothing of the instructor's shows, the sidebar says the account is not
  on the list, and that account can sign out;
- "Sign out" logs out at the provider too and returns to the student view (a reload stays out);
- a refused sign-in at the provider comes back signed out, with no error on the page.

Screenshots: ``screenshots/oidc_signed_in_{en,zh}.png`` (the sidebar) and ``oidc_not_listed_*``.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from harness import browser as b
from tests.e2e.conftest import VIEWPORT, Server, first_visit, free_port, fresh_tabs
from tests.e2e.oidc_provider import MockOIDC
from harness.browser import WAIT_MS  # noqa: E402
from ui.teaching import instructor
from ui.teaching.answers import answers
from ui.kit.i18n import Text

# one xdist worker runs the whole module: its module-scoped server and tabs are made once
pytestmark = pytest.mark.xdist_group("test_oidc")

STEM = "two_point"
SB = '[data-testid="stSidebar"]'
MAIN = '[data-testid="stMain"]'
LANGS = ["en", "zh"]
LOCALE = {"en": "en-US", "zh": "zh-CN"}
TEACHER, STUDENT = "teacher@example.org", "student@example.org"
CLIENT_ID, CLIENT_SECRET = "tokens-on-the-sphere", "mock-client-secret-0123456789"


def T(lang: str) -> Text:
    return Text("instructor", lang)


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def oidc(tmp_path_factory):
    """(mock provider, app URL): the app served with an [auth] block that points at the mock."""
    port = free_port()
    app_url = f"http://127.0.0.1:{port}"
    redirect = f"{app_url}/oauth2callback"
    with MockOIDC(CLIENT_ID, CLIENT_SECRET, redirect) as idp:
        secrets = tmp_path_factory.mktemp("oidc") / "secrets.toml"
        secrets.write_text(
            "[auth]\n"
            f'redirect_uri = "{redirect}"\n'
            'cookie_secret = "a-test-cookie-secret-that-is-long-enough-0123456789"\n'
            f'client_id = "{CLIENT_ID}"\n'
            f'client_secret = "{CLIENT_SECRET}"\n'
            f'server_metadata_url = "{idp.metadata_url}"\n\n'
            "[instructor]\n"
            f'emails = ["{TEACHER.upper()}"]   # compared without case\n'
        )
        srv = Server(port=port, warm=False, extra_flags=["--secrets.files", str(secrets)])
        srv.env.pop(instructor.KEY_ENV, None)  # the [auth] block alone configures instructor mode
        srv.start()
        try:
            first_visit(srv.url)
            yield idp, srv.url
        finally:
            srv.stop()


@pytest.fixture
def tab(browser):
    """``tab(lang)``: a tab in a fresh browser context (no cookies: signed out), its locale ``lang``."""
    with fresh_tabs(browser) as new:
        yield lambda lang="en": new(locale=LOCALE[lang])


# --------------------------------------------------------------------------- helpers
def url(server: str, stem: str, lang: str) -> str:
    return f"{server}/{'' if stem == 'home' else stem}?lang={lang}"


def sidebar_text(pg) -> str:
    return pg.locator(SB).inner_text()


def see(pg, text: str, where: str = SB, timeout: float = WAIT_MS):
    loc = pg.locator(f"{where} :is(p, span, div, code, h1, h2, h3, summary, li)", has_text=text).last
    loc.wait_for(state="visible", timeout=timeout)
    return loc


def signin_box(pg, lang: str):
    return pg.locator(f'{SB} [data-testid="stExpander"]', has_text=T(lang)("signin.title")).first


def open_signin(pg, lang: str):
    box = signin_box(pg, lang)
    if not box.locator(".st-key-_instructor_login").is_visible():
        box.locator("summary").click()
    btn = pg.locator(".st-key-_instructor_login button")
    btn.wait_for(state="visible")
    return btn


def sign_in(pg, idp: MockOIDC, server: str, lang: str, email: str | None) -> None:
    """Click the sign-in button as ``email`` and wait until the app is back and drawn."""
    idp.sign_in_as(email)
    n = len(idp.paths())
    back = re.compile(re.escape(server) + r"/(\?.*)?$")
    for attempt in range(3):
        btn = open_signin(pg, lang)
        try:
            with pg.expect_navigation(url=back, timeout=WAIT_MS / 3):
                btn.click()
            break
        except PlaywrightTimeout:
            if "/authorize" in idp.paths()[n:]:  # on its way: the provider was asked, wait for the way back
                pg.wait_for_url(back, timeout=WAIT_MS)
                break
            # with every core busy a click that lands while a run is starting can be lost (the run
            # never asks the browser to leave): the provider was never asked, so click again
            assert attempt < 2, f"the sign-in click never reached the provider (3 clicks); page at {pg.url}"
            b.wait_ready(pg)
    b.wait_ready(pg)
    assert "/authorize" in idp.paths()[n:], idp.paths()[n:]


def editor_links(pg, lang: str):
    return pg.locator('[data-testid="stSidebarNav"] a', has_text=T(lang)("editor.nav"))


def answer_expanders(pg, lang: str):
    return pg.locator(
        f'{MAIN} [data-testid="stExpander"] summary [data-testid="stMarkdownContainer"]',
        has_text=re.compile("^" + re.escape(T(lang)("answers.title", i=1))[:-1] + r"\d+$"),
    )


def assert_student_view(pg, lang: str) -> None:
    t = T(lang)
    assert t("signin.signed_in") not in sidebar_text(pg)
    assert editor_links(pg, lang).count() == 0
    assert pg.locator(".st-key-_class_open").count() == 0
    assert answer_expanders(pg, lang).count() == 0, "a student sees answers"


def open_stem(pg, server: str, lang: str) -> None:
    b.goto(pg, url(server, STEM, lang))


def shoot_sidebar(pg, path) -> None:
    """The whole sidebar (it scrolls on its own: the viewport is made tall enough for it)."""
    h = pg.evaluate("() => document.querySelector('[data-testid=\"stSidebarContent\"]').scrollHeight")
    pg.set_viewport_size({"width": VIEWPORT["width"], "height": int(min(max(h + 40, VIEWPORT["height"]), 4000))})
    pg.wait_for_timeout(300)
    pg.locator(SB).screenshot(path=str(path), animations="disabled")
    pg.set_viewport_size(VIEWPORT)


def last(idp: MockOIDC, path: str) -> dict:
    return [q for p, q in list(idp.log) if p == path][-1]


# --------------------------------------------------------------------------- tests
@pytest.mark.parametrize("lang", LANGS)
def test_student_sees_the_sign_in_button_and_nothing_else(lang, oidc, tab):
    idp, server = oidc
    t = T(lang)
    pg = tab(lang)
    open_stem(pg, server, lang)
    assert t("signin.title") in sidebar_text(pg)
    assert_student_view(pg, lang)
    assert pg.locator("form.app-signin").count() == 0, "the key form shows in OIDC mode"
    btn = open_signin(pg, lang)
    assert btn.inner_text().strip() == t("signin.oidc")
    assert not b.exceptions(pg)


@pytest.mark.parametrize("lang", LANGS)
def test_teacher_signs_in_through_the_provider_and_out(lang, oidc, tab, shots):
    idp, server = oidc
    t, pt = T(lang), Text(STEM, lang)
    pg = tab(lang)
    open_stem(pg, server, lang)
    assert_student_view(pg, lang)
    issued, errors = idp.issued, len(idp.errors)
    sign_in(pg, idp, server, lang, TEACHER)
    assert idp.issued == issued + 1 and idp.errors[errors:] == []
    # what Streamlit (Authlib) sent: PKCE S256, a nonce, the registered redirect; the verifier
    # and the nonce were checked by the provider (token) and by Authlib (id_token)
    auth, tok = last(idp, "/authorize"), last(idp, "/token")
    assert auth["code_challenge_method"] == "S256" and auth["nonce"] and auth["state"]
    assert auth["redirect_uri"] == f"{server}/oauth2callback"
    assert tok["code_verifier"] and tok["grant_type"] == "authorization_code"
    see(pg, t("signin.signed_in"))
    assert TEACHER in sidebar_text(pg)
    assert b.url_param(pg, "lang") in (None, lang)
    assert pg.locator(".st-key-_instructor_out").count() == 1
    assert editor_links(pg, lang).count() == 1
    shoot_sidebar(pg, shots / f"oidc_signed_in_{lang}.png")

    # the answers under the questions (the sign-in is a cookie: it holds on the page's own URL)
    open_stem(pg, server, lang)
    see(pg, t("signin.signed_in"))
    n = len(answers(pt))
    assert n >= 2 and answer_expanders(pg, lang).count() == n
    q_title = pg.locator(f"{MAIN} :is(h2, h3)", has_text=pt("questions.title")).first
    assert answer_expanders(pg, lang).first.bounding_box()["y"] > q_title.bounding_box()["y"]
    assert not b.exceptions(pg)

    # sign out: at the provider too (RP-initiated logout), back to the student view
    logouts = idp.logouts
    with pg.expect_navigation(url=re.compile(re.escape(server) + r"/(\?.*)?$"), timeout=WAIT_MS):
        pg.locator(".st-key-_instructor_out button").click()
    b.wait_ready(pg)
    assert idp.logouts == logouts + 1
    see(pg, t("signin.title"))
    assert_student_view(pg, lang)
    open_stem(pg, server, lang)  # a reload: the cookie is gone
    assert_student_view(pg, lang)
    assert answer_expanders(pg, lang).count() == 0


@pytest.mark.parametrize("lang", LANGS)
def test_student_account_gets_no_instructor_controls(lang, oidc, tab, shots):
    idp, server = oidc
    t = T(lang)
    pg = tab(lang)
    open_stem(pg, server, lang)
    sign_in(pg, idp, server, lang, STUDENT)
    see(pg, t("signin.not_listed"))
    assert_student_view(pg, lang)
    open_stem(pg, server, lang)
    see(pg, t("signin.not_listed"))
    assert_student_view(pg, lang)
    shoot_sidebar(pg, shots / f"oidc_not_listed_{lang}.png")
    # that account can sign out
    with pg.expect_navigation(url=re.compile(re.escape(server) + r"/(\?.*)?$"), timeout=WAIT_MS):
        pg.locator(".st-key-_instructor_out button").click()
    b.wait_ready(pg)
    assert t("signin.not_listed") not in sidebar_text(pg)
    assert_student_view(pg, lang)


def test_refused_at_the_provider_comes_back_signed_out(oidc, tab):
    idp, server = oidc
    lang = "en"
    pg = tab(lang)
    b.goto(pg, url(server, "home", lang))
    errors = len(idp.errors)
    sign_in(pg, idp, server, lang, None)
    assert idp.errors[errors:] == []
    assert not b.exceptions(pg)
    assert_student_view(pg, lang)
    see(pg, T(lang)("signin.title"))
