"""Instructor sign-in with OpenID Connect, at the AppTest level (the browser flow through a mock
provider is tests/e2e/test_oidc.py): which mode is on, who is an instructor (the ``[instructor]
emails`` list, case, unverified addresses), what the sidebar shows to each, sign-out, and an
incomplete ``[auth]`` block reported in words.

``AppTest.user`` seeds ``st.user`` for a run; ``AppTest.secrets`` seeds ``st.secrets``.
"""

from __future__ import annotations

import re

import pytest

from tests._instructor import router_only  # noqa: F401 - fixture
from tests.conftest import APPTEST_TIMEOUT, ROOT, open_page
from ui.teaching import instructor
from ui.kit.i18n import Text

AUTH = {
    "redirect_uri": "http://127.0.0.1:8501/oauth2callback",
    "cookie_secret": "x" * 40,
    "client_id": "tots",
    "client_secret": "s" * 20,
    "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
}
TEACHER, STUDENT = "teacher@example.org", "student@example.org"
PAGE = "two_point"
pytestmark = pytest.mark.usefixtures("router_only")


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    monkeypatch.delenv(instructor.KEY_ENV, raising=False)
    instructor._secrets_cache = None
    yield
    instructor._secrets_cache = None


def make(
    user: dict | None = None,
    emails=(TEACHER,),
    lang: str = "en",
    stem: str = "home",
    auth: dict | None = AUTH,
    key: str | None = None,
):
    """An AppTest of app.py with the given secrets and signed-in account (None: signed out)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APPTEST_TIMEOUT)
    if auth is not None:
        at.secrets["auth"] = dict(auth)
    inst = {}
    if emails is not None:
        inst["emails"] = list(emails) if not isinstance(emails, str) else emails
    if key is not None:
        inst["key"] = key
    if inst:
        at.secrets["instructor"] = inst
    at.user = {"is_logged_in": False} if user is None else {"is_logged_in": True, **user}
    at.query_params["lang"] = lang
    at.run()
    if stem != "home":
        open_page(at, stem)
        at.query_params["lang"] = lang
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def captions(at) -> list[str]:
    return [c.value for c in at.sidebar.caption]


def buttons(at) -> dict[str, str]:
    return {w.key: w.label for w in at.sidebar.button if w.key}


def answer_labels(at) -> list[str]:
    return [e.label for e in at.expander if re.fullmatch(r"(Answer|答案) \d+", e.label or "")]


def nav_titles(at) -> list[str]:
    return [info.get("page_name") or info.get("url_pathname") for info in at._registered_pages.values()]


def is_teacher(at, lang: str = "en") -> bool:
    t = Text("instructor", lang)
    return t("signin.signed_in") in captions(at)


# --------------------------------------------------------------------------- mode
def _key_form(at) -> bool:
    return any('action="/_app/signin"' in h.proto.body for h in at.sidebar.get("html"))


def test_mode_follows_the_secrets(monkeypatch):
    at = make(None)  # [auth]: OIDC, even with a key in the secrets
    assert "_instructor_login" in buttons(at)
    assert not _key_form(at)
    at = make(None, auth=None, emails=None, key="Kq3-vX9_mP2wL7zR4tY8nB6c")
    assert "_instructor_login" not in buttons(at)
    assert _key_form(at)
    at = make(None, auth=None, emails=(TEACHER,))  # an instructor list without [auth]: still off
    assert not buttons(at) and not _key_form(at)
    assert not [e for e in at.sidebar.expander if e.label == "Instructor"]


def test_mode_function(monkeypatch):
    sections = {}
    monkeypatch.setattr(instructor, "_secrets_section", lambda name: sections.get(name))
    assert instructor.mode() is None
    sections["instructor"] = {"key": "Kq3-vX9_mP2wL7zR4tY8nB6c"}
    assert instructor.mode() == "key"
    sections["auth"] = dict(AUTH)
    assert instructor.mode() == "oidc"
    sections["auth"] = {}
    assert instructor.mode() == "key"


def test_named_provider_is_used_when_auth_has_no_default(monkeypatch):
    sections = {"auth": dict(AUTH)}
    monkeypatch.setattr(instructor, "_secrets_section", lambda name: sections.get(name))
    assert instructor._oidc_provider() is None
    base = {k: AUTH[k] for k in ("redirect_uri", "cookie_secret")}
    sections["auth"] = {
        **base,
        "microsoft": {"client_id": "a", "client_secret": "b", "server_metadata_url": "http://x"},
        "google": {"client_id": "c", "client_secret": "d", "server_metadata_url": "http://y"},
    }
    assert instructor._oidc_provider() == "microsoft"  # the first in the file


# --------------------------------------------------------------------------- who is an instructor
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_signed_out_student_sees_the_sign_in_button_only(lang):
    t = Text("instructor", lang)
    at = make(None, lang=lang, stem=PAGE)
    assert buttons(at).get("_instructor_login") == t("signin.oidc")
    assert "_instructor_out" not in buttons(at)
    assert not is_teacher(at, lang) and t("signin.not_listed") not in captions(at)
    assert answer_labels(at) == []
    assert t("editor.nav") not in nav_titles(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_listed_teacher_gets_the_controls(lang):
    t = Text("instructor", lang)
    at = make({"email": "Teacher@Example.org ", "email_verified": True, "name": "T"}, lang=lang, stem=PAGE)
    assert is_teacher(at, lang)
    assert t("signin.account", who="`Teacher@Example.org`") in captions(at)
    assert buttons(at).get("_instructor_out") == t("signin.sign_out")
    assert "_instructor_login" not in buttons(at)
    assert len(answer_labels(at)) >= 2
    assert t("editor.nav") in nav_titles(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_unlisted_account_is_a_student_and_can_sign_out(lang):
    t = Text("instructor", lang)
    at = make({"email": STUDENT, "email_verified": True}, lang=lang, stem=PAGE)
    assert not is_teacher(at, lang)
    assert t("signin.not_listed") in captions(at)
    assert t("signin.account", who=f"`{STUDENT}`") in captions(at)
    assert answer_labels(at) == [] and t("editor.nav") not in nav_titles(at)
    assert "_instructor_login" not in buttons(at)
    at.sidebar.button(key="_instructor_out").click().run()
    assert not at.exception
    assert at.user.get("is_logged_in") is False  # st.logout() ran
    assert not is_teacher(at, lang)


@pytest.mark.parametrize("verified", [False, "false", "FALSE", 0, 1, "yes", None, "missing"])
def test_unverified_address_on_the_list_is_not_an_instructor(verified):
    claims = {"email": TEACHER} if verified == "missing" else {"email": TEACHER, "email_verified": verified}
    at = make(claims)
    assert not is_teacher(at)
    assert Text("instructor", "en")("signin.not_listed") in captions(at)


@pytest.mark.parametrize("verified", [True, "true", "True"])
def test_only_a_verified_address_counts(verified):
    assert is_teacher(make({"email": TEACHER, "email_verified": verified}))


def test_no_email_claim_is_not_on_the_list():
    at = make({"sub": "abc", "name": "No Mail"})
    assert not is_teacher(at)


def test_without_a_list_every_signed_in_account_is_an_instructor(caplog, monkeypatch):
    monkeypatch.setattr(instructor, "_warned_open", False)
    at = make({"email": STUDENT}, emails=None)
    assert caplog.text.count("every account the provider admits is an instructor") == 1
    assert is_teacher(at)
    at = make({"sub": "only-a-subject"}, emails=())
    assert is_teacher(at)


def test_a_single_address_as_a_string_is_a_list_of_one():
    assert is_teacher(make({"email": TEACHER, "email_verified": True}, emails=TEACHER))
    assert not is_teacher(make({"email": "eacher@example.org"}, emails=TEACHER))  # not a substring test


def test_teacher_signs_out():
    t = Text("instructor", "en")
    at = make({"email": TEACHER, "email_verified": True})
    assert is_teacher(at)
    at.sidebar.button(key="_instructor_out").click().run()
    assert not at.exception
    assert at.user.get("is_logged_in") is False  # st.logout() ran; the browser now goes to
    assert t("editor.nav") not in nav_titles(at)  # /auth/logout, the cookie is cleared
    at.run()  # and a new session starts signed out
    assert not is_teacher(at)
    assert "_instructor_login" in buttons(at)


def test_account_text_from_the_provider_is_shown_literally():
    hostile = "x` [click](https://evil.example) $\\alpha$\n**b**"
    at = make({"email": hostile}, emails=None)
    acc = [c for c in captions(at) if c.startswith("Account:")]
    assert len(acc) == 1
    from ui.kit.safe import literal

    assert acc[0] == "Account: " + literal(hostile)
    assert "\n" not in acc[0] and acc[0].count("`") >= 4


def test_incomplete_auth_block_is_reported_in_words(caplog):
    at = make(None, auth={"client_id": "only this"})
    assert "_instructor_login" in buttons(at)
    at.sidebar.button(key="_instructor_login").click().run()
    assert not at.exception
    t = Text("instructor", "en")
    assert any(e.value == t("signin.misconfigured") for e in at.sidebar.error)
    assert "misconfigured" in caplog.text
