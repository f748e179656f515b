"""What a teacher met in a class trial, in Chromium: one Chinese teacher at 1400 x 900, one
Chinese student on a phone (390 x 844, touch), one server (memory store).

Each step names the point of the issue it checks and what it caught on the code before the fix:

* item 6 — the phone's sidebar sheet folds after joining by the typed code and after opening a page
  from the sidebar (before: it stayed open over the lower half of the screen); the teacher's sidebar
  counts the student without a rerun (before: "0" until the panel was drawn again);
* item 8 — a held class is said in the banner, and the hold's toast shows once (before: a toast
  only, and shown a second time by the poll's trip back to the held page);
* item 2 — a bank question reaches the student with its step's instruction and the parameters it is
  about, and the teacher sees the same before asking (before: the bare question);
* item 3 — the release toast names the page; answers released during the class are withdrawn when it
  ends and the console says so (before: "a page's answers", and they stayed public);
* item 6 — once the class was sent another view, the revealed question and its histogram are folded
  away on the phone's first screen (before: they filled it);
* item 7 — the console in projector mode at 1400 x 900: the QR code above the fold with a text
  alternative naming its address, the code as its own large element, the link box's copy icon beside
  the link (before: the QR below the fold, no alternative text, a ~20 px word in a sentence, the icon
  over the port).

Screenshots: ``screenshots/class_trial_*`` (the phone during a question, the console on a projector).
"""

from __future__ import annotations

import json

from harness import browser as b
from harness.browser import WAIT_MS
from tests.e2e.test_instructor import (
    MAIN,
    SB,
    STEM,
    T,
    _wait_param,
    button,
    open_class,
    open_nav_link,
    open_nav_page,
    see,
    sign_in,
)
from tests.e2e.test_instructor_more import flip, pick, release_switch
from tests.e2e.test_rehearsal import (  # noqa: F401
    BANNER,
    PHONE,
    STATE_JS,
    C,
    _answer,
    _ask,
    _in_banner,
    _reveal,
    _shot,
    _until,
    page_said,
    people,
)
from ui.teaching import responses
from ui.teaching.console import CONSOLE_PATH
from ui.kit.i18n import Text
from ui.kit.predict import live_question
from ui.teaching.teacher import with_context
from pages.two_point.predict import STEPS

OTHER = "hemisphere"

#: every toast the page shows, by its text, as it is added (the count of a toast shown twice is 2)
TOASTS_JS = """
window.__toasts = [];
new MutationObserver((ms) => {
  for (const m of ms) for (const n of m.addedNodes) {
    if (n.nodeType !== 1) continue;
    const found = n.matches('[data-testid="stToast"]') ? [n] : [...n.querySelectorAll('[data-testid="stToast"]')];
    for (const t of found) window.__toasts.push(t.innerText);
  }
}).observe(document, {subtree: true, childList: true});
"""

SHEET_OPEN_JS = """() => { const s = document.querySelector('section[data-testid="stSidebar"]');
  return !!s && s.getAttribute('data-collapsed') === 'false'; }"""


def _sheet_folds(pg) -> None:
    pg.wait_for_function(f"() => !({SHEET_OPEN_JS})()", timeout=WAIT_MS)


def _open_sheet(pg) -> None:
    if not pg.evaluate(SHEET_OPEN_JS):
        pg.locator('[data-testid="stExpandSidebarButton"]').first.click()
    pg.wait_for_function(SHEET_OPEN_JS, timeout=WAIT_MS)


def _push(teacher, done, phone=None, shots=None) -> None:
    """The teacher's Push (sidebar), until ``done(timeout)`` (a student followed): a click that
    lands while the teacher's live panel (a fragment, redrawn every few seconds) is being redrawn is
    lost with the button it hit; the teacher clicks again, and so does the test.

    Twice in full browser runs under load (never alone) the phone did not follow even three pushes
    in 240 s, so it is not a lost click. If it happens again, ``shots`` gets both screens and what
    each page showed (``class_trial_not_followed_*``) for finding out why."""
    try:
        _until(teacher, lambda: button(teacher, T("zh")("class.push"), SB).click(), done)
    except Exception as exc:
        if phone is None or shots is None:
            raise
        said = {}
        for name, pg in (("phone", phone), ("teacher", teacher)):
            try:
                _shot(pg, shots / f"class_trial_not_followed_{name}.png")
                state = pg.evaluate(STATE_JS)
                (shots / f"class_trial_not_followed_{name}.json").write_text(
                    json.dumps(state, ensure_ascii=False, indent=1), encoding="utf-8"
                )
                said[name] = page_said(pg)
            except Exception:  # noqa: BLE001 - what can be saved is saved
                pass
        # in the failure's own line: a CI run's screenshots are not kept
        raise AssertionError(f"the phone did not follow the push; the pages showed {said}") from exc


def _on(pg, stem: str):
    """``done(timeout)``: ``pg`` shows the page ``stem``."""
    return lambda ms: pg.wait_for_function(f"() => location.pathname.endsWith('/{stem}')", timeout=ms)


def _teacher_with_class(open_tab, server: str):
    """A Chinese teacher at 1400 x 900, signed in, with a class open: (tab, join link, code)."""
    teacher = open_tab(viewport={"width": 1400, "height": 900})
    b.goto(teacher, f"{server}/?lang=zh")
    sign_in(teacher, "zh")
    see(teacher, T("zh")("signin.signed_in"), SB)
    link, code = open_class(teacher, server, "zh")
    return teacher, link, code


def test_a_class_trial_on_a_phone_and_a_projector(teacher_server, people, shots):  # noqa: F811 - the fixture
    tz, cz, pz = T("zh"), C("zh"), Text(STEM, "zh")
    teacher, link, code = _teacher_with_class(people, teacher_server)
    open_nav_page(teacher, pz("title"), STEM)
    teacher.locator(".st-key-_class_qn").wait_for(timeout=WAIT_MS)

    # item 6: the phone joins by typing the code in the sidebar sheet; the sheet folds
    phone = people(viewport=PHONE, is_mobile=True, has_touch=True)
    phone.add_init_script(TOASTS_JS)
    b.goto(phone, f"{teacher_server}/?lang=zh")
    _open_sheet(phone)
    phone.locator(f'{SB} [data-testid="stExpander"] summary', has_text=tz("class.join_title")).click()
    box = phone.locator(".st-key-_class_join_code input")
    box.fill(code)
    box.press("Enter")
    b.wait_ready(phone)
    button(phone, tz("class.join"), SB).click()
    _in_banner(phone, code)
    _sheet_folds(phone)
    # item 6: the teacher's sidebar counts the student (before: the count read once, 0, until a rerun)
    see(teacher, cz("teacher.present", n=1), SB)
    # ... and after opening another page from the sheet
    _open_sheet(phone)
    open_nav_link(phone, Text(OTHER, "zh")("title"))
    phone.wait_for_function(f"() => location.pathname.endsWith('/{OTHER}')", timeout=WAIT_MS)
    _sheet_folds(phone)

    # item 8: the teacher holds the class on the lesson page: the banner says so; one toast
    teacher.locator(".st-key-_class_hold label").first.click()
    b.wait_ready(teacher)
    _push(teacher, _on(phone, STEM), phone, shots)
    held = cz("banner.held", code=code, page=pz("title")).split("**")[-1].strip()
    _in_banner(phone, held[:12])
    phone.wait_for_timeout(6_000)  # the poll's trips meanwhile: no second toast
    toasts = phone.evaluate("() => window.__toasts")
    assert sum(cz("toast.held") in x for x in toasts) == 1, toasts
    # hold off again: released at once (before: only with the next Push), said once, nobody moved
    holding = cz("teacher.holding", page=pz("title"))[:8]  # the caption under the switch while held
    see(teacher, holding, SB)
    _shot(teacher, shots / "class_trial_teacher_zh_held.png")
    _until(
        teacher,
        lambda: teacher.locator(".st-key-_class_hold label").first.click(),
        lambda ms: teacher.wait_for_function(
            "(t) => !document.querySelector('[data-testid=\"stSidebar\"]').innerText.includes(t)",
            arg=holding,
            timeout=ms,
        ),
    )
    _in_banner(phone, cz("banner.following", code=code).split("**")[-1].strip()[:8])
    phone.wait_for_function(
        "(t) => window.__toasts.filter((x) => x.includes(t)).length === 1", arg=cz("toast.unheld"), timeout=WAIT_MS
    )
    assert phone.evaluate("() => location.pathname").endswith(f"/{STEM}")
    _shot(phone, shots / "class_trial_phone_zh_released.png")
    b.wait_ready(teacher)

    # item 2: a bank question with its instruction and parameters, for the teacher and the student
    values = {n: p.default for n, p in b.resolved(STEM).params.items()}
    step = next(s for s in STEPS if s.id == "sa_end")
    q = with_context(live_question(step, STEM, values), step, STEM, values)
    _ask(teacher, q, 1)
    see(teacher, q["instruction"]["zh"][:12], SB)
    _in_banner(phone, q["prompt"]["zh"][:12])
    _in_banner(phone, q["instruction"]["zh"][:12])
    _in_banner(phone, q["about"]["zh"][:12])
    b.wait_ready(phone)
    _shot(phone, shots / "class_trial_phone_zh_question.png")
    _answer(phone, "zh", 1, q["truth"])
    _reveal(teacher, 1)
    _in_banner(phone, cz("banner.right", tol=responses.tolerance(q, "zh")))

    # item 3: the release toast names the page
    release_switch(teacher).scroll_into_view_if_needed()
    flip(teacher, True, "zh")
    phone.wait_for_function(
        "(t) => window.__toasts.some((x) => x.includes(t))",
        arg=cz("toast.released", pages=pz("title")),
        timeout=WAIT_MS,
    )

    # item 6: the class moves on to another page: the revealed question folds away on the phone
    open_nav_page(teacher, Text(OTHER, "zh")("title"), OTHER)
    teacher.locator(".st-key-_class_push button").wait_for(timeout=WAIT_MS)
    _push(teacher, _on(phone, OTHER), phone, shots)
    _in_banner(phone, cz("banner.earlier", n=1))
    b.wait_ready(phone)
    banner = phone.locator(BANNER).first
    assert not banner.locator("text=" + q["prompt"]["zh"][:12]).first.is_visible()
    chart = banner.locator('[data-testid="stVegaLiteChart"], [data-testid="stArrowVegaLiteChart"]').first
    assert not chart.is_visible()

    # item 7: the console on a projector at 1400 x 900
    open_nav_page(teacher, cz("title"), CONSOLE_PATH)
    qr = teacher.locator(f"{MAIN} .tos-class-qr img").first
    qr.wait_for(timeout=WAIT_MS)
    teacher.locator(".st-key-projector label").first.click()  # the sidebar's projector switch
    teacher.wait_for_function(
        "() => parseFloat(getComputedStyle(document.documentElement).fontSize) > 20", timeout=WAIT_MS
    )
    b.wait_ready(teacher)
    teacher.evaluate("() => window.scrollTo(0, 0)")
    box = qr.bounding_box()
    assert box["y"] + box["height"] <= 900, box  # above the fold
    assert code in (qr.get_attribute("alt") or "")  # a text alternative: its address
    value = teacher.locator(f"{MAIN} .tos-class-code-value").first
    assert value.inner_text().strip() == code
    assert float(value.evaluate("(e) => parseFloat(getComputedStyle(e).fontSize)")) >= 60
    assert value.evaluate(
        "(e) => e.getBoundingClientRect().right"
        " <= e.closest('[data-testid=\"stColumn\"]').getBoundingClientRect().right + 1"
    )  # fits
    side = teacher.locator(f"{SB} .tos-class-code-value").first  # and in the sidebar's panel
    assert side.evaluate(
        "(e) => e.getBoundingClientRect().right"
        " <= e.closest('[data-testid=\"stSidebarContent\"]').getBoundingClientRect().right"
    )
    gap = teacher.locator(f'{MAIN} [class*="st-key-tos_class_link"] [data-testid="stCode"]').first.evaluate(
        """(e) => { const pre = e.querySelector('pre'), btn = e.querySelector('button');
                    if (!btn) return 1e9;
                    const r = document.createRange(); r.selectNodeContents(pre.querySelector('code') || pre);
                    const text = [...r.getClientRects()].reduce((m, x) => Math.max(m, x.right), 0);
                    return btn.getBoundingClientRect().left - text; }"""
    )
    assert gap >= 0, gap  # the copy icon beside the text
    _shot(teacher, shots / "class_trial_console_zh_projector_1400x900.png")

    # item 3: ending the class withdraws the answers released during it, and says so
    button(teacher, tz("class.close"), MAIN).click()
    button(teacher, tz("class.close_yes"), MAIN).click()
    see(teacher, cz("teacher.withdrawn", pages=pz("title"))[:10], MAIN)
    b.goto(phone, f"{teacher_server}/{STEM}?lang=zh")
    b.wait_ready(phone)
    assert (
        phone.locator(f'{MAIN} [data-testid="stExpander"] summary', has_text=T("zh")("answers.title", i=1)).count() == 0
    )


def test_pushed_view_opens_exactly_ime_choices_and_settings_kept(teacher_server, people):  # noqa: F811 - the fixture
    """Items 1, 5 and 8 (first half) of the class trial in Chromium, each failing on the code before its fix:

    * 8 — a slider's value survives a visit to the glossary and back by the sidebar (before: the
      default again, beta = 1.5 came back as 1);
    * 1 — the console's "open the pushed page" opens exactly the pushed view, not this session's own
      later value of the page (before: a link whose page kept the session's values; a question asked
      there pushed them to the class);
    * 5 — an own choice question typed with an input method's full-width commas ("更快，更慢，差不多")
      can be asked and reaches the student as three choices (before: Ask greyed out, no message).
    """
    tz, cz, pz = T("zh"), C("zh"), Text(STEM, "zh")
    teacher, link, code = _teacher_with_class(people, teacher_server)
    laptop = people(viewport={"width": 1280, "height": 800})
    laptop.goto(f"{link}&lang=zh", wait_until="domcontentloaded")
    _in_banner(laptop, code)
    open_nav_page(teacher, pz("title"), STEM)
    teacher.locator(".st-key-_class_qn").wait_for(timeout=WAIT_MS)
    b.wait_ready(teacher)

    p_beta = b.resolved(STEM).params["beta"]
    before = b.widget_value(teacher, STEM, p_beta, "zh")
    b.nudge(teacher, p_beta)
    pushed = b.step_target(p_beta, before)[1]
    _wait_param(teacher, "beta", pushed)
    b.wait_ready(teacher)
    _push(teacher, lambda ms: _wait_param(laptop, "beta", pushed, ms))

    # item 8: the teacher moves beta again, visits the glossary and comes back by the sidebar
    b.nudge(teacher, p_beta)
    later = b.step_target(p_beta, pushed)[1]
    _wait_param(teacher, "beta", later)
    b.wait_ready(teacher)
    open_nav_page(teacher, Text("glossary", "zh")("title"), "glossary")
    open_nav_page(teacher, pz("title"), STEM)
    _wait_param(teacher, "beta", later)
    b.wait_ready(teacher)
    assert b.same(b.widget_value(teacher, STEM, p_beta, "zh"), later)

    # item 1: the console opens the pushed view (beta as pushed), not the session's later value
    open_nav_page(teacher, cz("title"), CONSOLE_PATH)
    button(teacher, cz("console.go"), MAIN).click()
    teacher.wait_for_function(f"() => location.pathname.endsWith('/{STEM}')", timeout=WAIT_MS)
    _wait_param(teacher, "beta", pushed)
    b.wait_ready(teacher)
    assert b.same(b.widget_value(teacher, STEM, p_beta, "zh"), pushed)

    # item 5: an own choice question typed with full-width commas
    teacher.locator(".st-key-_class_qn").wait_for(timeout=WAIT_MS)
    pick(teacher, "_class_qn", cz("teacher.adhoc"))
    prompt = teacher.locator(".st-key-_class_prompt input")
    b.commit_text(teacher, prompt, "β 变大时，收拢会？")
    pick(teacher, "_class_kind", tz("class.kind_choice"))
    opts = teacher.locator(".st-key-_class_opts input")
    opts.wait_for(timeout=WAIT_MS)
    b.commit_text(teacher, opts, "更快，更慢，差不多")
    b.wait_ready(teacher)
    ask = button(teacher, tz("class.ask"), SB)
    assert ask.is_enabled()
    ask.click()
    radio = laptop.locator(".st-key-_class_ans_1")
    radio.wait_for(timeout=WAIT_MS)
    for label in ("更快", "更慢", "差不多"):
        radio.locator("label", has_text=label).first.wait_for(timeout=WAIT_MS)
    assert radio.locator('input[type="radio"]').count() == 3
    _in_banner(laptop, "β 变大时，收拢会？")  # the teacher's own words, as typed, as plain text
    assert laptop.locator(f"{BANNER} code", has_text="收拢会").count() == 0
    # the class ends (the sign-in is shared by the tests of this server: the next one opens its own)
    button(teacher, tz("class.close"), SB).click()
    button(teacher, tz("class.close_yes"), SB).click()
    _in_banner(laptop, cz("banner.ended", code=code)[-8:])
