"""Instructor mode in headless Chromium, in English and Chinese.

Servers from tests/e2e/conftest.py (one of each per xdist worker): the plain ``server`` (no
instructor key: nothing of instructor mode may show) and ``teacher_server``, with
``APP_INSTRUCTOR_KEY`` and a temporary copy of the parameter file (``APP_PARAMS_FILE``), so the
editor writes to the copy; the rate-limit test starts its own. One browser; every role (instructor,
student, second student) is its own browser context, i.e. its own Streamlit session.

- sign-in: wrong key refused with a message (still a student), right key gives the instructor's
  controls, five attempts a minute then the form waits;
- answers: hidden from a student, shown under the questions to the instructor;
- editor: min > max, a default outside the range and a step <= 0 are refused next to the field and
  nothing is written; a valid save reaches a student's slider on their next interaction; undo
  restores the file byte for byte; comments are kept; a file edited by hand meanwhile is not
  overwritten; export downloads the file on disk;
- class: open (code, link, QR), join by the link (banner), push a view (the latency is printed
  and written to ``artifacts/class_push_chromium.txt``), stop following and follow again, a live
  question answered by two students, the count and histogram, the revealed value.

Screenshots (desktop) go to ``screenshots/instructor_*_{en,zh}.png``.
"""

from __future__ import annotations

import os
import re
import time

import pytest

from tests._instructor import KEY, comments
from harness import browser as b
from tests.e2e.conftest import ROOT, Server, fresh_tabs
from harness.browser import WAIT_MS  # noqa: E402
from ui.teaching import instructor, live
from ui.teaching import params_file as pf
from ui.teaching.answers import answers
from ui.kit.i18n import Text
from ui.kit.spec import PARAMS_ENV

STEM = "two_point"
SB = '[data-testid="stSidebar"]'
MAIN = '[data-testid="stMain"]'
LANGS = ["en", "zh"]


def T(lang: str) -> Text:
    return Text("instructor", lang)


# --------------------------------------------------------------------------- fixtures
SIGNIN_PER_MIN = 3


@pytest.fixture(scope="module")
def limited_server(params):
    """Instructor mode with a small attempt limit (its own server: the limit is per address)."""
    srv = Server(
        warm=False, env={instructor.KEY_ENV: KEY, PARAMS_ENV: str(params), "APP_SIGNIN_PER_MIN": str(SIGNIN_PER_MIN)}
    )
    srv.start()
    try:
        yield srv.url
    finally:
        srv.stop()


@pytest.fixture
def tabs(browser):
    """``tabs()`` opens a tab in a fresh browser context (a new Streamlit session, signed out)."""
    with fresh_tabs(browser, locale="en-US", accept_downloads=True) as new:
        yield new


# --------------------------------------------------------------------------- helpers
def url(server: str, stem: str, lang: str, query: str = "") -> str:
    path = "" if stem == "home" else stem
    return f"{server}/{path}?lang={lang}" + (f"&{query}" if query else "")


def sidebar_text(pg) -> str:
    return pg.locator(SB).inner_text()


def text_loc(pg, text: str, where: str = ""):
    """The (last) text element showing ``text`` inside ``where`` (a CSS selector)."""
    return pg.locator(f"{where} :is(p, span, div, code, h1, h2, h3, summary, li)".strip(), has_text=text).last


def see(pg, text: str, where: str = "", timeout: float = WAIT_MS):
    """Wait until ``text`` is visible (inside ``where``, a CSS selector) and return its locator."""
    loc = text_loc(pg, text, where)
    loc.wait_for(state="visible", timeout=timeout)
    return loc


def button(pg, label: str, where: str = ""):
    return pg.locator(f"{where} button".strip(), has_text=label).first


def answer_expanders(pg, lang: str):
    """The answers' expander headers on the page (their label, without the icon)."""
    return pg.locator(
        f'{MAIN} [data-testid="stExpander"] summary [data-testid="stMarkdownContainer"]',
        has_text=re.compile("^" + re.escape(T(lang)("answers.title", i=1))[:-1] + r"\d+$"),
    )


KEY_BOX = 'form.app-signin input[name="key"]'
SIGN_OUT = 'form.app-signin[action$="/_app/signout"]'


def sign_in(pg, lang: str, key: str = KEY) -> None:
    """Type the key into the sidebar's form; it posts to the server's route, which sets the signed
    cookie and sends the browser back (a wrong key: a short page that links back)."""
    t = T(lang)
    box = pg.locator(KEY_BOX)
    if not box.is_visible():
        pg.locator(f'{SB} [data-testid="stExpander"] summary', has_text=t("signin.title")).click()
    box.fill(key)
    box.press("Enter")  # submits the form that holds this very input (a click elsewhere could land
    # on a form redrawn meanwhile, empty: its `required` key then submits nothing)


def refused(pg, text: str) -> None:
    """The route's refusal page shows ``text``; follow its link back to the app."""
    pg.get_by_text(text).first.wait_for(state="visible", timeout=WAIT_MS)
    # The page stays until its link is followed (it used to refresh after 4 s): go to the link's address.
    try:
        href = pg.evaluate(
            "() => document.querySelector('[data-testid=\"stApp\"]') ? null"
            " : (document.querySelector('a') || {}).href || null"
        )
    except Exception:  # noqa: BLE001 - the refresh navigated while we looked
        href = None
    if href:
        b.goto(pg, href)
    else:
        b.wait_ready(pg)


def signed_in_tab(tabs, server: str, lang: str, stem: str = STEM):
    pg = tabs()
    b.goto(pg, url(server, stem, lang))
    sign_in(pg, lang)
    see(pg, T(lang)("signin.signed_in"), SB)
    b.wait_ready(pg)
    return pg


def nav_links(pg, text: str):
    """The sidebar navigation's links with ``text`` (the whole list shown, "View more" pressed)."""
    link = pg.locator('[data-testid="stSidebarNav"] a', has_text=text)
    if not link.count():
        more = pg.locator('[data-testid="stSidebarNavViewButton"]', has_text=re.compile("more", re.I))
        if more.count():
            more.click()
            pg.locator('[data-testid="stSidebarNavViewButton"]', has_text=re.compile("less", re.I)).wait_for()
    return link


def open_nav_link(pg, text: str) -> None:
    nav_links(pg, text).first.click()


def open_nav_page(pg, text: str, path: str) -> None:
    """Open the page of the navigation's link ``text`` and wait until the address ends with
    ``/path`` and its run is done (the link clicked again if a redraw swallowed the click). The
    teacher's sidebar panel is the same on every page: what it does must wait for this, or it acts
    for the page left (a Push of the old page)."""
    on = f"() => location.pathname.replace(/\\/$/, '').endsWith('/{path}')"
    b.until(pg, lambda: open_nav_link(pg, text), lambda ms: pg.wait_for_function(on, timeout=ms))
    b.wait_ready(pg)


def open_editor(pg, lang: str) -> None:
    t = T(lang)
    open_nav_link(pg, t("editor.nav"))
    pg.wait_for_function(
        "(t) => { const h = document.querySelector('[data-testid=\"stMain\"] h1');"
        " return h && h.innerText.trim() === t; }",
        arg=t("editor.title"),
    )
    b.wait_ready(pg)
    sel = pg.locator(".st-key-_ed_stem")
    title = Text(STEM, lang)("title")
    if sel.locator('input[role="combobox"]').input_value() != title:
        sel.click()
        pg.locator('[role="option"]', has_text=title).first.click()
    pg.locator(".st-key-ed-two_point-beta-min input").wait_for()
    b.wait_ready(pg)


def field(pg, name: str, f: str):
    return pg.locator(f".st-key-ed-{STEM}-{name}-{f} input")


def set_field(pg, name: str, f: str, value) -> None:
    box = field(pg, name, f)
    b.commit_text(pg, box, str(value))


def row_of(pg, name: str):
    """The bordered row of parameter ``name`` in the editor (its fields and messages)."""
    return field(pg, name, "min").locator(
        f"xpath=ancestor::div[@data-testid='stVerticalBlock'][.//strong[normalize-space()='{name}']][1]"
    )


def shoot(pg, path, locator=None) -> None:
    if locator is not None:
        locator.scroll_into_view_if_needed()
    pg.screenshot(path=str(path), animations="disabled")


# --------------------------------------------------------------------------- no key configured
def test_no_key_configured_shows_nothing_of_instructor_mode(server_proc, page):
    if server_proc.env.get(instructor.KEY_ENV):
        pytest.skip("the e2e server was started with an instructor key in the environment")
    for lang in LANGS:
        t = T(lang)
        b.goto(page, url(server_proc.url, STEM, lang))
        side = sidebar_text(page)
        for key in ("signin.title", "signin.key", "class.teach_title", "class.join_title"):
            assert t(key) not in side, (lang, key)
        assert page.locator("form.app-signin, .st-key-_class_open, .st-key-_class_join_code").count() == 0
        assert answer_expanders(page, lang).count() == 0, "a student sees answers"
        assert t("answers.release") not in page.locator(MAIN).inner_text()
        assert t("editor.nav") not in side
        # the editor's address gives the home page, not the editor
        b.goto(page, f"{server_proc.url}/instructor_params?lang={lang}")
        assert b.title(page) != t("editor.title")
        assert page.locator(".st-key-_ed_save, .st-key-_ed_stem").count() == 0


# --------------------------------------------------------------------------- sign-in and answers
@pytest.mark.parametrize("lang", LANGS)
def test_sign_in_wrong_then_right_key_and_answers(lang, teacher_server, tabs, shots):
    t, pt = T(lang), Text(STEM, lang)
    n_answers = len(answers(pt))
    assert n_answers >= 2
    pg = tabs()
    b.goto(pg, url(teacher_server, STEM, lang))
    # a student: the sign-in box and the join box, nothing else of instructor mode
    assert t("signin.title") in sidebar_text(pg)
    assert answer_expanders(pg, lang).count() == 0, "a student sees answers"
    assert pg.locator(f".st-key-_class_open, {SIGN_OUT}").count() == 0
    assert nav_links(pg, t("editor.nav")).count() == 0

    sign_in(pg, lang, key="not the key at all")
    refused(pg, t("signin.wrong"))
    assert answer_expanders(pg, lang).count() == 0
    assert pg.locator(f".st-key-_class_open, {SIGN_OUT}").count() == 0
    assert t("signin.signed_in") not in sidebar_text(pg)
    assert "not the key" not in pg.url
    shoot(pg, shots / f"instructor_signin_{lang}.png")

    sign_in(pg, lang)
    see(pg, t("signin.signed_in"), SB)
    b.wait_ready(pg)
    assert pg.locator(SIGN_OUT).count() == 1
    assert t("class.teach_title") in sidebar_text(pg)
    # a reload keeps the teacher signed in (the cookie), and the key is in no URL
    pg.reload()
    b.wait_ready(pg)
    see(pg, t("signin.signed_in"), SB)
    assert KEY not in pg.url
    # the answers, one per question, below the questions
    exp = answer_expanders(pg, lang)
    assert exp.count() == n_answers
    assert [s.strip() for s in exp.all_inner_texts()] == [t("answers.title", i=i) for i in range(1, n_answers + 1)]
    q_title = pg.locator(f"{MAIN} :is(h2, h3)", has_text=pt("questions.title")).first
    assert exp.first.bounding_box()["y"] > q_title.bounding_box()["y"]
    assert pg.get_by_text(t("answers.private")).count() == 1
    exp.first.click()
    first_line = pt("answers.q1").split("$")[0].strip()[:20]
    if first_line:
        see(pg, first_line, MAIN)
    b.wait_ready(pg)
    shoot(pg, shots / f"instructor_answer_{lang}.png", exp.first)
    # the editor is in the navigation now
    assert nav_links(pg, t("editor.nav")).count() == 1


def test_sign_in_rate_limited(limited_server, tabs):
    """Attempts are limited per address (the server here allows ``SIGNIN_PER_MIN`` a minute)."""
    lang = "en"
    t = T(lang)
    pg = tabs()
    b.goto(pg, url(limited_server, "home", lang))
    for i in range(SIGNIN_PER_MIN):
        sign_in(pg, lang, key=f"wrong key number {i}")
        refused(pg, t("signin.wrong"))
    sign_in(pg, lang)  # the right key, too, once over the limit
    refused(pg, t("signin.wait", s=99).split("99")[0].strip())
    assert t("signin.signed_in") not in sidebar_text(pg)


# --------------------------------------------------------------------------- the editor
@pytest.mark.parametrize("lang", LANGS)
def test_editor_refuses_invalid_entries_next_to_the_field(lang, teacher_server, params, pristine, tabs, shots):
    t = T(lang)
    pg = signed_in_tab(tabs, teacher_server, lang)
    open_editor(pg, lang)
    before = params.read_bytes()
    save = pg.locator(".st-key-_ed_save button")
    assert save.is_enabled()
    row = row_of(pg, "beta")
    cases = [
        ("min", 6.0, "max", 5.0, "need min <= default <= max"),  # min > max
        ("default", 50.0, None, None, "need min <= default <= max"),  # default outside
        ("step", 0, None, None, "step must be > 0"),
        ("step", -0.5, None, None, "step must be > 0"),
    ]
    for i, (f1, v1, f2, v2, msg) in enumerate(cases):
        set_field(pg, "beta", f1, v1)
        if f2:
            set_field(pg, "beta", f2, v2)
        see(pg, msg, '[data-testid="stMain"]')
        # the row's message is drawn before the save button, further down: wait for the run's end
        pg.wait_for_function("() => document.querySelector('.st-key-_ed_save button').disabled", timeout=b.WAIT_MS)
        see(pg, t("editor.cannot_save", n=1), MAIN)
        b.wait_ready(pg)
        assert msg in row.inner_text(), f"the message is not next to the field: {msg}"
        assert t("editor.invalid").rstrip(":：") in row.inner_text()
        assert save.is_disabled()
        if i == 0:
            shoot(pg, shots / f"instructor_editor_error_{lang}.png", row)
        # a click on the disabled button (as a forged client could) writes nothing
        save.click(force=True)
        assert params.read_bytes() == before
        button(pg, t("editor.discard"), MAIN).click()
        pg.wait_for_function("() => !document.querySelector('.st-key-_ed_save button').disabled")
        b.wait_ready(pg)
    assert params.read_bytes() == before
    assert not pf.backup_path(params).exists()


def test_editor_save_reaches_student_undo_comments_export(teacher_server, params, pristine, tabs):
    lang = "en"
    t = T(lang)
    student = tabs()
    b.goto(student, url(teacher_server, STEM, "zh"))
    beta = b.slider(student, "beta")
    assert float(beta.get_attribute("aria-valuemax") or beta.get_attribute("max")) == 10.0

    pg = signed_in_tab(tabs, teacher_server, lang)
    open_editor(pg, lang)
    set_field(pg, "beta", "max", 6.0)
    set_field(pg, "beta", "default", 2.0)
    button(pg, t("editor.save"), MAIN).click()
    see(pg, t("editor.saved")[:20], MAIN)
    saved = params.read_text()
    assert saved != pristine
    assert comments(saved) == comments(pristine) and len(comments(saved)) > 10
    import difflib  # the file holds only what it overrides: the two values are added, nothing removed

    diff = list(difflib.ndiff(pristine.splitlines(), saved.splitlines()))
    assert [d[2:] for d in diff if d.startswith("+ ")] == ["", "[two_point.params.beta]", "max = 6.0", "default = 2.0"]
    assert not [d for d in diff if d.startswith("- ")]
    assert pf.backup_path(params).read_text() == pristine

    # the student's next interaction: the beta slider now ends at 6
    b.nudge(student, b.resolved(STEM).params["theta0"])
    student.wait_for_function(
        "() => { const s = document.querySelector('.st-key-beta input[type=\"range\"]');"
        " return s && Number(s.getAttribute('aria-valuemax') ?? s.max) === 6; }",
        timeout=WAIT_MS,
    )

    # export: the file on disk, byte for byte
    b.wait_ready(pg)
    with pg.expect_download() as dl:
        pg.locator(".st-key-_ed_export button").click()
    got = dl.value.path().read_text(encoding="utf-8")
    assert got == params.read_text() == saved

    # undo restores the file as it was
    button(pg, t("editor.undo"), MAIN).click()
    see(pg, t("editor.undone"), MAIN)  # in full: "saved" also says "The previous version"
    assert params.read_text() == pristine
    b.wait_ready(pg)
    assert field(pg, "beta", "max").count() == 1
    assert field(pg, "beta", "max").input_value() in ("10", "10.0"), "the editor shows the undone value"


@pytest.mark.parametrize("lang", ["zh"])
def test_editor_detects_a_file_edited_by_hand(lang, teacher_server, params, pristine, tabs):
    t = T(lang)
    pg = signed_in_tab(tabs, teacher_server, lang)
    open_editor(pg, lang)
    hand = pristine.replace("# Instructor parameter file", "# Edited by hand.\n# Instructor parameter file", 1)
    assert hand != pristine
    params.write_text(hand)
    set_field(pg, "beta", "default", 3.0)
    see(pg, t("editor.changed_on_disk")[:12], MAIN)
    button(pg, t("editor.save"), MAIN).click()
    see(pg, t("editor.conflict")[:12], MAIN)
    assert params.read_text() == hand, "the hand edit was overwritten"
    assert not pf.backup_path(params).exists()
    button(pg, t("editor.reload"), MAIN).click()
    pg.wait_for_function(
        "(s) => !document.querySelector('[data-testid=\"stMain\"]').innerText.includes(s)",
        arg=t("editor.changed_on_disk")[:12],
    )
    b.wait_ready(pg)
    try:  # the field takes the file's value as its widget is drawn again (the full run on 9b96d33 read
        # it before: '3')
        pg.wait_for_function(
            "() => ['1', '1.0'].includes(document.querySelector('.st-key-ed-two_point-beta-default input').value)",
            timeout=30_000,
        )
    except Exception:  # noqa: BLE001 - playwright's TimeoutError: the assertion says what was there
        pass
    assert field(pg, "beta", "default").input_value() in ("1", "1.0"), "the editor shows the file's value"


# --------------------------------------------------------------------------- class sessions
# A follower's page is never "not running" for long (its follow fragment reruns every POLL_S), so
# b.wait_ready can wait forever on a loaded machine; a follower's page is waited for by what it shows.


def drawn(pg, timeout: float = WAIT_MS) -> None:
    pg.wait_for_function(b.DRAWN_JS, timeout=timeout)


BANNER = ".st-key-class_banner"  # the student's class banner, in the main area of every page


def C(lang: str) -> Text:
    return Text("console", lang)


def banner_loc(pg, key: str, lang: str, **fmt):
    """The banner showing the text ``key`` of console.toml (its words after the Markdown code)."""
    return pg.locator(BANNER, has_text=C(lang)(key, **fmt).split("**")[-1].strip(" :：")).first


def banner_says(pg, key: str, lang: str, timeout: float = WAIT_MS, **fmt) -> None:
    """Wait until the banner shows the text ``key`` of console.toml."""
    banner_loc(pg, key, lang, **fmt).wait_for(state="visible", timeout=timeout)


def _student_joins(tabs, link: str, lang: str, code: str):
    pg = tabs()
    pg.goto(f"{link}&lang={lang}", wait_until="domcontentloaded")
    pg.locator(BANNER, has_text=code).first.wait_for(state="visible", timeout=WAIT_MS)
    banner_says(pg, "banner.following", lang, code=code)
    drawn(pg)
    return pg


def _wait_param(pg, name: str, value: float, timeout: float = WAIT_MS) -> None:
    pg.wait_for_function(
        "([n, v]) => Math.abs(Number(new URLSearchParams(location.search).get(n)) - v) < 1e-9",
        arg=[name, value],
        timeout=timeout,
    )


def open_class(teacher, server: str, lang: str):
    """The signed-in instructor's tab ``teacher`` opens a class: ``(join link, code)``."""
    t = T(lang)
    if not button(teacher, t("class.open"), SB).is_visible():
        teacher.locator(f'{SB} [data-testid="stExpander"] summary', has_text=t("class.teach_title")).click()
    button(teacher, t("class.open"), SB).click()
    link = see(teacher, "/?class=", f'{SB} [data-testid="stCode"]').inner_text().strip()
    m = re.search(r"\?class=([A-Z0-9]+)$", link)
    assert m and link.startswith(server), link
    code = m.group(1)
    assert code in sidebar_text(teacher)
    return link, code


# one way: the rehearsal (test_rehearsal.py) drives a Chinese teacher with English students
@pytest.mark.parametrize("teacher_lang,student_lang", [("en", "zh")])
def test_class_open_join_push_follow_and_live_question(teacher_lang, student_lang, teacher_server, tabs, shots):
    tt, ts = T(teacher_lang), T(student_lang)
    teacher = signed_in_tab(tabs, teacher_server, teacher_lang)
    link, code = open_class(teacher, teacher_server, teacher_lang)
    qr = teacher.locator(f"{SB} .tos-class-qr img").first
    qr.wait_for()
    assert qr.bounding_box()["width"] >= 100
    b.wait_ready(teacher)
    panel = teacher.locator(f'{SB} [data-testid="stExpander"]', has=teacher.locator(".tos-class-qr img")).last
    panel.screenshot(path=str(shots / f"instructor_class_panel_{teacher_lang}.png"), animations="disabled")

    student = _student_joins(tabs, link, student_lang, code)
    shoot(student, shots / f"instructor_student_banner_{student_lang}.png")
    start = b.url_param(student, "beta")

    # push: the teacher changes beta on the page, pushes; the student's page follows
    p_beta, p_theta = b.resolved(STEM).params["beta"], b.resolved(STEM).params["theta0"]
    before = b.widget_value(teacher, STEM, p_beta)
    b.nudge(teacher, p_beta)
    target = b.step_target(p_beta, before)[1]
    _wait_param(teacher, "beta", target)
    b.wait_ready(teacher)
    push = button(teacher, tt("class.push"), SB)
    t0 = time.perf_counter()
    push.click()
    student.wait_for_function(
        "([p, v]) => location.pathname.endsWith('/' + p)"
        " && Math.abs(Number(new URLSearchParams(location.search).get('beta')) - v) < 1e-9",
        arg=[STEM, target],
        timeout=WAIT_MS,
    )
    latency = time.perf_counter() - t0
    student.wait_for_function(
        "(t) => { const h = document.querySelector('[data-testid=\"stMain\"] h1');"
        " return h && h.innerText.trim() === t; }",
        arg=Text(STEM, student_lang)("title"),
    )
    drawn(student)
    latency_drawn = time.perf_counter() - t0
    assert start is None or float(start) != target
    assert b.same(b.widget_value(student, STEM, p_beta, student_lang), target)
    assert b.url_param(student, "lang") == student_lang, "the push changed the student's language"
    assert b.title(student) == Text(STEM, student_lang)("title")
    see(teacher, tt("class.pushed", v=1).split(")")[0].split("）")[0], SB)  # up to its number
    line = (
        f"push latency in Chromium ({teacher_lang} -> {student_lang}): URL {latency:.2f} s, "
        f"page drawn {latency_drawn:.2f} s (poll every {live.POLL_S:g} s; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    print("\n" + line)
    out = ROOT / "artifacts"
    out.mkdir(exist_ok=True)
    with open(out / "class_push_chromium.txt", "a") as fh:
        fh.write(time.strftime("%Y-%m-%d %H:%M:%S ") + line + "\n")
    # the target is 2 s on an idle server; the bound here only says "by itself, soon"
    # (two shared cores under load are several times slower: the printed line has the load)
    assert latency < 20.0, line

    # the student stops following: a new push does not move them; "follow again" does
    b.click_until(
        button(student, ts("class.stop"), BANNER), banner_loc(student, "banner.not_following", student_lang, code=code)
    )
    theta_before = b.widget_value(teacher, STEM, p_theta)
    b.nudge(teacher, p_theta)
    theta_target = b.step_target(p_theta, theta_before)[1]
    _wait_param(teacher, "theta0", theta_target)
    b.wait_ready(teacher)
    push.click()
    see(teacher, tt("class.pushed", v=2).split(")")[0].split("）")[0], SB)  # up to its number
    student.wait_for_timeout(3_000)
    assert not b.same(b.widget_value(student, STEM, p_theta, student_lang), theta_target)
    b.click_until(
        button(student, ts("class.follow"), BANNER), banner_loc(student, "banner.following", student_lang, code=code)
    )
    _wait_param(student, "theta0", theta_target, timeout=WAIT_MS)

    # a live question (the page's first number question): two students answer, the teacher sees
    # the count, reveals a value of their own (an override of the computed one)
    student2 = _student_joins(tabs, link, teacher_lang, code)
    b.click_until(button(teacher, tt("class.ask"), SB), student.locator(".st-key-_class_ans_1 input"))
    for pg, lang, value in ((student, student_lang, 0.5), (student2, teacher_lang, 2.0)):
        box = pg.locator(".st-key-_class_ans_1 input")
        box.wait_for(timeout=WAIT_MS)
        box.fill(str(value))
        box.press("Enter")
        b.wait_ready(pg)
        b.click_until(button(pg, T(lang)("class.send"), BANNER), text_loc(pg, T(lang)("class.sent"), BANNER))
    see(teacher, C(teacher_lang)("teacher.n_answers", n=2, q=1, prompt="").rstrip(" —"), SB, timeout=WAIT_MS)
    teacher.locator(f'{SB} [data-testid="stVegaLiteChart"], {SB} [data-testid="stArrowVegaLiteChart"]').first.wait_for()
    rv = teacher.locator(".st-key-_class_rv_1 input")
    rv.fill("1.25")
    rv.press("Enter")
    b.wait_ready(teacher)
    b.click_until(
        button(teacher, tt("class.reveal"), SB),
        text_loc(student, C(student_lang)("banner.exact", value="1.25").split("**")[0].strip(), BANNER),
    )
    for pg, lang in ((student, student_lang), (student2, teacher_lang)):
        see(pg, C(lang)("banner.exact", value="1.25").split("**")[0].strip(), BANNER, timeout=WAIT_MS)
        see(pg, "1.25", BANNER)
