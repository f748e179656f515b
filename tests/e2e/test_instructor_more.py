"""More of instructor mode in headless Chromium, in English and Chinese.

The server, the parameter file and the helpers are those of ``test_instructor.py`` (a server of
its own with an instructor key and a temporary copy of the file). Three tabs (instructor, student,
second student; ``people``) serve the whole module, switched between the languages inside the
app. Each test runs with the instructor in one language and the student(s) in the other, both
ways except the presets (long; the instructor in Chinese, the student in English):

- import: an uploaded file that is not TOML, has min > max, or names an unknown page is refused
  with a message naming the uploaded file and the key, and nothing changes (file, backup, a
  student's slider); a valid one replaces the file (backup kept), reaches a student's slider on
  their next interaction, and undo puts the old file back;
- answers: a student sees no worked answers; the instructor's switch releases them (the student
  sees them on their next interaction), switching it off hides them again;
- presets in the editor: rename, delete, reorder, add, "save the current view as a preset" (with
  the answers shown by that preset); the saved file keeps every comment and everything outside
  the page's presets byte for byte; a student's preset menu follows, a preset gives its values,
  the preset with answers shows them, another hides them;
- a choice question in a class: two students join by typing the code, the question names its
  page, they answer different options, the instructor's histogram counts them in the order
  asked, the revealed value reaches both (and the instructor); closing the class tells them.

Screenshots go to ``screenshots/instructor_more_*_{en,zh}.png`` (one at phone width, 390 px).
"""

from __future__ import annotations

import json
import re
import time
import tomllib

import pytest

from tests._instructor import comments
from harness import browser as b
from tests.e2e.conftest import ROOT, VIEWPORT
from harness.browser import WAIT_MS
from tests.e2e.test_instructor import (
    BANNER,
    MAIN,
    SB,
    STEM,
    C,
    T,
    answer_expanders,
    banner_says,
    button,
    open_class,
    open_editor,
    open_nav_link,
    see,
    shoot,
    sign_in,
    text_loc,
    url,
)
from ui.teaching import params_file as pf
from ui.teaching.answers import answers
from ui.kit.i18n import Text

PHONE = {"width": 390, "height": 844}
# Each class test runs one way (teacher's language -> student's); between them, and with the
# rehearsal (a Chinese teacher, Chinese and English students), every direction is driven in the
# browser. The words themselves are checked in both languages without a browser (AppTest).
EN_ZH, ZH_EN = [("en", "zh")], [("zh", "en")]


LANG_NAME = {"en": "English", "zh": "中文"}


@pytest.fixture(scope="module")
def people(browser, teacher_server):
    """``people(role, lang)``: one browser tab per role ("teacher", signed in; "student";
    "student2"), kept for the whole module. A tab is moved inside the app (the language switch,
    the navigation), never reloaded: a reload is a new session, signed out, and a new tab costs
    ~10-25 s on two loaded cores where a step in it costs ~1-3 s. Each call returns the tab in
    language ``lang`` on the page STEM at the normal viewport."""
    made = {}

    def get(role: str, lang: str):
        if role not in made:
            ctx = browser.new_context(viewport=VIEWPORT, locale="en-US")
            ctx.set_default_timeout(WAIT_MS)
            pg = ctx.new_page()
            pg.js_errors = []
            pg.on("pageerror", lambda exc: pg.js_errors.append(str(exc)))
            made[role] = [ctx, pg, lang]
            b.goto(pg, url(teacher_server, STEM, lang))
            if role == "teacher":
                sign_in(pg, lang)
                see(pg, T(lang)("signin.signed_in"), SB)
                b.wait_ready(pg)
        _, pg, current = made[role]
        pg.set_viewport_size(VIEWPORT)
        title = Text(STEM, lang)("title")
        if current != lang:
            pg.locator(".st-key-lang button", has_text=LANG_NAME[lang]).click()
            made[role][2] = lang
            pg.locator('[data-testid="stSidebarNav"] a', has_text=title).first.wait_for()
            b.wait_ready(pg)
        if b.title(pg) != title:
            open_nav_link(pg, title)
            pg.wait_for_function(
                "(t) => { const h = document.querySelector('[data-testid=\"stMain\"] h1');"
                " return h && h.innerText.trim() === t; }",
                arg=title,
            )
            b.wait_ready(pg)
        return pg

    yield get
    errors = [e for _, pg, _ in made.values() for e in pg.js_errors]
    for ctx, _, _ in made.values():
        ctx.close()
    assert not errors, f"JavaScript errors in the page: {errors[:3]}"


def editor(pg, lang: str) -> None:
    """Open the editor on STEM as the file is now (forgetting what this session loaded before)."""
    open_editor(pg, lang)
    # the discard's run draws every row again under new keys: wait for that run, not a fixed
    # 300 ms (under load the old rows were read, their keys then never came back: the full run on
    # 7fcadef waited 240 s for ".st-key-edp-two_point-1-id")
    b.after_rerun(pg, lambda: button(pg, T(lang)("editor.discard"), MAIN).click())
    assert T(lang)("editor.changed_on_disk") not in pg.locator(MAIN).inner_text()


def beta_max(pg) -> float:
    s = b.slider(pg, "beta")
    return float(s.get_attribute("aria-valuemax") or s.get_attribute("max"))


def wait_beta_max(pg, value: float, timeout: float = WAIT_MS) -> None:
    pg.wait_for_function(
        "(v) => { const s = document.querySelector('.st-key-beta input[type=\"range\"]');"
        " return s && Number(s.getAttribute('aria-valuemax') ?? s.max) === v; }",
        arg=value,
        timeout=timeout,
    )


def interact(pg) -> None:
    """The student's next interaction: one step of the theta0 slider (then the page is drawn again)."""
    p = b.resolved(STEM).params["theta0"]
    before = b.signature(pg)
    b.nudge(pg, p, "ArrowRight" if b.widget_value(pg, STEM, p) < p.max else "ArrowLeft")
    b.wait_signature_change(pg, before)
    b.wait_ready(pg)


# --------------------------------------------------------------------------- import
def upload(pg, name: str, text: str) -> None:
    box = pg.locator('[class*="st-key-_ed_upload"] input[type="file"]').first
    box.set_input_files(files=[{"name": name, "mimeType": "application/toml", "buffer": text.encode()}])
    pg.wait_for_timeout(300)  # the upload, then the rerun it starts
    b.wait_ready(pg)


INVALID = [  # (uploaded file name, how the text is broken, what the message must say)
    ("broken.toml", lambda s: s + "\n[two_point.params.beta\n", ["broken.toml: not valid TOML"]),
    (
        "min_above_max.toml",
        lambda s: s + "\n[two_point.params.beta]\nmax = 0.05\n",
        ["min_above_max.toml: [two_point.params.beta]", "min <= default <= max", "max=0.05"],
    ),
    (
        "unknown_page.toml",
        lambda s: s + "\n[no_such_page.params.x]\nmin = 1\n",
        ["unknown_page.toml: [no_such_page] is not a page"],
    ),
]


@pytest.mark.parametrize("teacher_lang,student_lang", ZH_EN)
def test_import_refuses_invalid_files_and_applies_a_valid_one(
    teacher_lang, student_lang, params, pristine, people, shots
):
    t = T(teacher_lang)
    student = people("student", student_lang)
    interact(student)  # the file is as shipped again
    assert beta_max(student) == 10.0
    pg = people("teacher", teacher_lang)
    editor(pg, teacher_lang)
    before = params.read_bytes()
    # min > max in both languages; the other two cases in one language each (an editor run is ~3 s)
    cases = [INVALID[0], INVALID[1]] if teacher_lang == "en" else [INVALID[2], INVALID[1]]
    for i, (name, broken, says) in enumerate(cases):
        upload(pg, name, broken(pristine))
        see(pg, t("editor.import_invalid"), MAIN)
        pg.locator(f'{MAIN} [data-testid="stCode"]', has_text=says[0]).wait_for()  # not the previous file's
        shown = pg.locator(f'{MAIN} [data-testid="stCode"]').last.inner_text()
        for s in says:
            assert s in shown, (name, s, shown)
        assert pg.locator(".st-key-_ed_import_apply").count() == 0, "an invalid file can be applied"
        assert params.read_bytes() == before and not pf.backup_path(params).exists()
        if i == 1:
            shoot(
                pg,
                shots / f"instructor_more_import_refused_{teacher_lang}.png",
                pg.locator(f'{MAIN} [data-testid="stCode"]').last,
            )
    interact(student)
    assert beta_max(student) == 10.0, "a refused file reached a student"

    good = pristine + "\n[two_point.params.beta]\nmax = 6.0\ndefault = 2.0\n"
    upload(pg, "course.toml", good)
    see(pg, t("editor.import_ok"), MAIN)
    assert params.read_bytes() == before, "the upload alone changed the file"
    button(pg, t("editor.import_apply"), MAIN).click()
    see(pg, t("editor.imported"), MAIN)
    b.wait_ready(pg)
    assert params.read_text() == good
    assert pf.backup_path(params).read_text() == pristine
    # the file is in use now: the uploader is empty again, nothing offers to apply it twice
    assert pg.locator(".st-key-_ed_import_apply").count() == 0
    assert t("editor.import_ok") not in pg.locator(MAIN).inner_text()
    assert pg.locator('[class*="st-key-_ed_upload"] [data-testid="stFileUploaderFile"]').count() == 0
    shoot(pg, shots / f"instructor_more_imported_{teacher_lang}.png")  # where the button was: the toast says it
    assert pg.locator(".st-key-ed-two_point-beta-max input").input_value() in ("6", "6.0")

    interact(student)
    wait_beta_max(student, 6.0)

    button(pg, t("editor.undo"), MAIN).click()
    see(pg, t("editor.undone"), MAIN)
    assert params.read_text() == pristine


# --------------------------------------------------------------------------- answers released
def release_switch(pg):
    return pg.locator(f".st-key-_release_{STEM}")


def flip(pg, on: bool, lang: str) -> None:
    """Turn the page's release switch ``on`` or off and wait for the page to say so. A click that
    lands while the page is being redrawn is lost with the element it hit (the rehearsal's full run
    on 7fcadef waited 240 s for "only the instructor sees these answers"): the switch is clicked
    again when it did not change."""
    sw = release_switch(pg)
    box = sw.locator('input[type="checkbox"]')
    assert box.is_checked() != on
    sel = f'.st-key-_release_{STEM} input[type="checkbox"]'
    b.until(
        pg,
        lambda: sw.locator("label").first.click(),
        lambda ms: pg.wait_for_function(
            "([sel, on]) => { const x = document.querySelector(sel); return !!x && x.checked === on; }",
            arg=[sel, on],
            timeout=ms,
        ),
    )
    see(pg, T(lang)("answers.public" if on else "answers.private"), MAIN)
    b.wait_ready(pg)
    assert box.is_checked() == on


@pytest.mark.parametrize("teacher_lang,student_lang", EN_ZH)
def test_released_answers_reach_students_and_hide_again(teacher_lang, student_lang, people, shots):
    ts, ps = T(student_lang), Text(STEM, student_lang)
    n = len(answers(ps))
    student = people("student", student_lang)
    assert answer_expanders(student, student_lang).count() == 0
    teacher = people("teacher", teacher_lang)
    assert answer_expanders(teacher, teacher_lang).count() == n
    see(teacher, T(teacher_lang)("answers.private"), MAIN)
    flip(teacher, True, teacher_lang)
    try:
        interact(student)
        exp = answer_expanders(student, student_lang)
        exp.first.wait_for(timeout=WAIT_MS)
        assert [s.strip() for s in exp.all_inner_texts()] == [ts("answers.title", i=i) for i in range(1, n + 1)]
        assert release_switch(student).count() == 0, "a student sees the instructor's switch"
        assert ts("answers.public") not in student.locator(MAIN).inner_text()
        exp.first.click()
        first_words = ps("answers.q1").split("$")[0].strip()[:12]
        if first_words:
            see(student, first_words, MAIN)
        b.wait_ready(student)
        if student_lang == "zh":  # the phone: the answer must fit the screen's width
            student.set_viewport_size(PHONE)
            b.wait_ready(student)
            wide = student.evaluate("() => document.documentElement.scrollWidth")
            assert wide <= PHONE["width"] + 1, wide
        shoot(
            student,
            shots / f"instructor_more_released_{student_lang}{'_phone' if student_lang == 'zh' else ''}.png",
            exp.first,
        )
        student.set_viewport_size(VIEWPORT)
    finally:
        if release_switch(teacher).locator('input[type="checkbox"]').is_checked():
            flip(teacher, False, teacher_lang)
    interact(student)
    student.wait_for_function(
        '(t) => ![...document.querySelectorAll(\'[data-testid="stMain"] [data-testid="stExpander"] summary\')]'
        ".some((s) => s.innerText.trim().startsWith(t))",
        arg=ts("answers.title", i=1)[:-1].strip(),
    )
    assert answer_expanders(student, student_lang).count() == 0


# --------------------------------------------------------------------------- presets
PRESET_ROWS_JS = """(stem) => {
  const rx = new RegExp('^st-key-edp-' + stem + '-(\\\\d+)-id$');
  const out = [];
  for (const e of document.querySelectorAll('[class*="st-key-edp-' + stem + '-"]')) {
    for (const c of e.classList) { const m = c.match(rx); if (m) out.push(m[1]); }
  }
  return out.map((uid) => {
    const v = (f) => {
      const i = document.querySelector(`.st-key-edp-${stem}-${uid}-${f} input`);
      return i ? i.value : null;
    };
    return {uid, id: v('id'), en: v('en'), zh: v('zh'), values: v('values')};
  });
}"""


def preset_rows(pg) -> list[dict]:
    return pg.evaluate(PRESET_ROWS_JS, STEM)


def preset_row(pg, pid: str, timeout_s: float = 30) -> dict:
    """The editor's row whose name field shows ``pid``. A rename is committed when its field shows the
    new name, but the rerun it starts redraws the rows (a busy run may show the old name for a moment):
    wait for the row, and say which names were there if it never came."""
    deadline = time.monotonic() + timeout_s
    while True:
        b.wait_ready(pg)
        rows = preset_rows(pg)
        row = next((r for r in rows if r["id"] == pid), None)
        if row is not None:
            return row
        assert time.monotonic() < deadline, f"no preset row named {pid!r} in the editor: {[r['id'] for r in rows]}"
        pg.wait_for_timeout(100)


def type_into(pg, key: str, text: str) -> None:
    box = pg.locator(f".st-key-{key} input").first
    b.commit_text(pg, box, text)


def press(pg, key: str, done) -> None:
    """Click the button ``key``; wait until ``done(rows)`` holds for the editor's preset rows, every
    row drawn in full (a run in progress draws a new row field by field), and the page is ready."""
    pg.locator(f".st-key-{key} button").first.click()
    deadline = time.monotonic() + 30
    while True:
        rows = preset_rows(pg)
        if done(rows) and all(r["id"] and r["en"] and r["zh"] and r["values"] for r in rows):
            break
        assert time.monotonic() < deadline, f"the click on {key} did not give the expected presets: {rows}"
        pg.wait_for_timeout(100)
    b.wait_ready(pg)


def menu_options(pg) -> list[str]:
    """The titles in the student's preset menu, in order (the menu opened and closed again)."""
    pg.locator(".st-key-preset").first.click()
    opts = pg.locator('[role="listbox"] [role="option"]')
    opts.first.wait_for()
    out = [s.strip() for s in opts.all_inner_texts()]
    pg.keyboard.press("Escape")
    return out


def choose_preset(pg, title: str) -> None:
    before = b.signature(pg)
    pg.locator(".st-key-preset").first.click()
    pg.locator('[role="listbox"] [role="option"]', has_text=title).first.click()
    b.wait_signature_change(pg, before)  # every preset used here draws other figures
    b.wait_ready(pg)


@pytest.mark.parametrize("teacher_lang,student_lang", ZH_EN)
def test_presets_edited_reach_the_student_and_comments_are_kept(
    teacher_lang, student_lang, params, pristine, people, shots
):
    t = T(teacher_lang)
    res = b.resolved(STEM)
    p_beta = res.params["beta"]
    student = people("student", student_lang)
    interact(student)  # the file is as shipped again
    shipped = [res.presets[i].title[student_lang] for i in res.presets]
    assert menu_options(student)[1:] == shipped

    # the instructor sets a view on the page (beta one step up), then opens the editor
    teacher = people("teacher", teacher_lang)
    key, beta_view = b.step_target(p_beta, b.widget_value(teacher, STEM, p_beta))
    b.nudge(teacher, p_beta, key)
    teacher.wait_for_function(
        "(v) => Math.abs(Number(new URLSearchParams(location.search).get('beta')) - v) < 1e-9", arg=beta_view
    )
    b.wait_ready(teacher)
    view = b.widget_values(teacher, STEM, list(res.params.values()), teacher_lang)
    editor(teacher, teacher_lang)
    # the rows' fields fill in as the editor's run draws them: wait for their values
    teacher.wait_for_function(
        f"(stem) => JSON.stringify(({PRESET_ROWS_JS})(stem).map((r) => r.id))"
        f" === {json.dumps(json.dumps(list(res.presets), separators=(',', ':')))}",
        arg=STEM,
        timeout=WAIT_MS,
    )
    assert [r["id"] for r in preset_rows(teacher)] == list(res.presets)

    k = lambda pid, f: f"edp-{STEM}-{preset_row(teacher, pid)['uid']}-{f}"  # noqa: E731
    # rename: the name and both titles of "hot"
    type_into(teacher, k("hot", "id"), "warm")
    type_into(teacher, k("warm", "en"), "Warm: nearly uniform weights")
    type_into(teacher, k("warm", "zh"), "温和：权重几乎均匀")
    # delete "coarse_layers", move "cold_wide" up (above "warm")
    ids = lambda rows: [r["id"] for r in rows]  # noqa: E731
    press(teacher, k("coarse_layers", "del"), lambda rows: ids(rows) == ["seed_figure", "warm", "cold_wide"])
    press(teacher, k("cold_wide", "up"), lambda rows: ids(rows) == ["seed_figure", "cold_wide", "warm"])
    # add one (then give it a title, values and the answers), and save the current view as another
    press(teacher, "_ed_add", lambda rows: len(rows) == 4)
    added = preset_rows(teacher)[-1]["id"]
    type_into(teacher, k(added, "id"), "start_here")
    type_into(teacher, k("start_here", "en"), "Start here (with the answers)")
    type_into(teacher, k("start_here", "zh"), "从这里开始（附答案）")
    type_into(teacher, k("start_here", "values"), "beta = 2.0, theta0 = 0.5")
    teacher.locator(f".st-key-{k('start_here', 'answers')} label").first.click()
    b.wait_ready(teacher)
    press(teacher, "_ed_add_view", lambda rows: len(rows) == 5)
    saved_view = preset_rows(teacher)[-1]
    assert saved_view["en"] == "Saved view" and saved_view["zh"] == "保存的视图", saved_view
    assert b.same(pf.parse_values(saved_view["values"])["beta"], beta_view), saved_view
    order = ["seed_figure", "cold_wide", "warm", "start_here", saved_view["id"]]
    assert [r["id"] for r in preset_rows(teacher)] == order
    assert teacher.locator(".st-key-_ed_save button").is_enabled()
    shoot(
        teacher,
        shots / f"instructor_more_presets_{teacher_lang}.png",
        teacher.locator(f".st-key-{k('start_here', 'values')}"),
    )

    button(teacher, t("editor.save"), MAIN).click()
    see(teacher, t("editor.saved")[:12], MAIN)
    saved = params.read_text()
    assert comments(saved) == comments(pristine) and len(comments(saved)) > 10
    banner = "# --------------------------------------------------------------------------- Hemisphere"
    assert saved.split(banner)[1] == pristine.split(banner)[1], "another page's section changed"
    head = pristine.split("[two_point.presets.seed_figure]")[0]
    if not saved.startswith(head + "[two_point.presets.seed_figure]"):
        import difflib

        diff = "".join(list(difflib.unified_diff(pristine.splitlines(True), saved.splitlines(True), n=1))[:60])
        (ROOT / "screenshots").mkdir(exist_ok=True)
        (ROOT / "screenshots" / "presets_saved.toml").write_text(saved)
        (ROOT / "screenshots" / "presets_pristine.toml").write_text(pristine)
        raise AssertionError(f"the page's parameters changed:\n{diff}")
    data = tomllib.loads(saved)
    got = pf.file_presets(data, STEM)
    assert [p["id"] for p in got] == order
    by_id = {p["id"]: p for p in got}
    assert by_id["warm"]["title"] == {"en": "Warm: nearly uniform weights", "zh": "温和：权重几乎均匀"}
    assert by_id["warm"]["values"] == dict(res.presets["hot"].values)
    assert by_id["start_here"]["values"] == {"beta": 2.0, "theta0": 0.5} and by_id["start_here"]["answers"]
    assert not any(p["answers"] for pid, p in by_id.items() if pid != "start_here")
    assert all(b.same(by_id[saved_view["id"]]["values"][n], view[n]) for n in view), (by_id[saved_view["id"]], view)
    assert "coarse_layers" not in data[STEM]["presets"]

    # the student's menu follows on their next interaction; each preset gives its view
    interact(student)
    titles = {
        "seed_figure": res.presets["seed_figure"].title[student_lang],
        "cold_wide": res.presets["cold_wide"].title[student_lang],
        "warm": by_id["warm"]["title"][student_lang],
        "start_here": by_id["start_here"]["title"][student_lang],
        saved_view["id"]: by_id[saved_view["id"]]["title"][student_lang],
    }
    assert menu_options(student)[1:] == [titles[i] for i in order]
    choose_preset(student, titles[saved_view["id"]])
    got_view = b.widget_values(student, STEM, list(res.params.values()), student_lang)
    assert all(b.same(got_view[n], view[n]) for n in view), (got_view, view)
    assert b.url_param(student, "preset") == saved_view["id"]
    assert answer_expanders(student, student_lang).count() == 0
    choose_preset(student, titles["start_here"])
    assert b.same(b.widget_value(student, STEM, p_beta), 2.0)
    exp = answer_expanders(student, student_lang)
    exp.first.wait_for()
    assert exp.count() == len(answers(Text(STEM, student_lang)))
    shoot(student, shots / f"instructor_more_preset_answers_{student_lang}.png", exp.first)
    choose_preset(student, titles["warm"])
    assert b.same(b.widget_value(student, STEM, p_beta), res.presets["hot"].values["beta"])
    assert answer_expanders(student, student_lang).count() == 0


# --------------------------------------------------------------------------- a choice question
OPTIONS = {"en": ["it converges", "it spreads", "it oscillates"], "zh": ["收敛", "散开", "振荡"]}

# The bars of the instructor's histogram, in drawing order: Vega's SVG marks describe their data in
# their aria-label, "<axis title>: <value>; <axis title>: <value>".
BARS_JS = """() => [...document.querySelectorAll('[data-testid="stSidebar"] [aria-roledescription="bar"]')]
  .map((e) => Object.fromEntries((e.getAttribute('aria-label') || '').split('; ').map((kv) => {
    const i = kv.indexOf(': '); return [kv.slice(0, i), kv.slice(i + 2)]; })))"""


def bars(pg, lang: str) -> list[tuple[str, int]]:
    """``[(answer, count), ...]`` as the histogram draws them (its axis titles in ``lang``)."""
    a, n = C(lang)("hist.answer"), C(lang)("hist.count")  # the students' words too
    return [(d.get(a), int(d[n])) for d in pg.evaluate(BARS_JS) if n in d]


def pick(pg, key: str, option: str) -> None:
    """Choose ``option`` in the select box ``key`` (again if a rerun closed the menu meanwhile)."""
    box = pg.locator(f".st-key-{key}")
    for _ in range(3):
        box.click()
        opt = pg.locator('[role="listbox"] [role="option"]', has_text=re.compile(rf"^\s*{re.escape(option)}\s*$"))
        try:
            opt.first.click(timeout=5_000)
        except Exception:  # noqa: BLE001 - the menu closed under the click: open it again
            pg.keyboard.press("Escape")
            continue
        if box.locator('input[role="combobox"]').input_value() == option:
            return
    raise AssertionError(f"could not choose {option!r} in {key}")


@pytest.mark.parametrize("teacher_lang,student_lang", EN_ZH)
def test_choice_question_counted_and_revealed(teacher_lang, student_lang, teacher_server, people, shots):
    tt = T(teacher_lang)
    opts = OPTIONS[teacher_lang]
    teacher = people("teacher", teacher_lang)
    link, code = open_class(teacher, teacher_server, teacher_lang)
    students = [(people("student", student_lang), student_lang), (people("student2", teacher_lang), teacher_lang)]
    for pg, lang in students:  # they join by typing the code (the link is tested in test_instructor.py)
        join(pg, lang, code)
    # the instructor writes a question of their own: a choice between three options typed in the box
    # (typed: the menu's long question texts leave the last entry out of its visible rows)
    adhoc = C(teacher_lang)("teacher.adhoc")
    prompt = teacher.locator(".st-key-_class_prompt input")
    for _ in range(3):
        combo = teacher.locator('.st-key-_class_qn input[role="combobox"]')
        combo.click()
        combo.fill(adhoc.rstrip("…"))
        teacher.locator('[role="listbox"] [role="option"]', has_text=adhoc.rstrip("…")).first.click()
        try:
            prompt.wait_for(timeout=20_000)
            break
        except Exception:  # noqa: BLE001 - a rerun closed the menu under the click: again
            teacher.keyboard.press("Escape")
    prompt.wait_for()
    prompt.fill("<b>A or B</b>?")  # the instructor's text: shown literally
    prompt.press("Enter")
    teacher.wait_for_timeout(500)
    pick(teacher, "_class_kind", tt("class.kind_choice"))
    box = teacher.locator(".st-key-_class_opts input")
    box.wait_for()
    box.fill(", ".join(opts))
    box.press("Enter")
    teacher.wait_for_timeout(500)  # the live fragment reruns every 2 s: not "ready" for long
    button(teacher, tt("class.ask"), SB).click()
    for (pg, lang), choice in zip(students, opts):
        radio = pg.locator(".st-key-_class_ans_1")
        radio.wait_for(timeout=WAIT_MS)
        see(pg, Text(STEM, lang)("title"), BANNER)  # names the page
        see(pg, "<b>A or B</b>?", BANNER)
        radio.locator("label", has_text=opts[-1]).wait_for()
        assert [s.strip() for s in radio.locator("label").all_inner_texts() if s.strip()][-3:] == opts
        radio.locator("label", has_text=choice).first.click()
        pg.wait_for_timeout(300)
        b.wait_ready(pg)
        if lang == student_lang:
            shoot(pg, shots / f"instructor_more_choice_{lang}.png", radio)
        # A click that lands while the banner's fragment is being redrawn can be lost (Streamlit
        # drops it with the element it hit); a student clicks again, and a second send replaces
        # the first (counted once, checked below): so may the test, at most three times.
        b.click_until(button(pg, T(lang)("class.send"), BANNER), text_loc(pg, T(lang)("class.sent"), BANNER))
    see(teacher, C(teacher_lang)("teacher.n_answers", n=2, q=1, prompt="").rstrip(" —"), SB, timeout=WAIT_MS)
    teacher.wait_for_function(f"() => ({BARS_JS})().length === {len(opts)}", timeout=WAIT_MS)
    assert bars(teacher, teacher_lang) == [(opts[0], 1), (opts[1], 1), (opts[2], 0)], "counts, in the order asked"
    pick(teacher, "_class_rv_1", opts[1])
    teacher.wait_for_timeout(500)  # the live fragment reruns every 2 s: not "ready" for long
    button(teacher, tt("class.reveal"), SB).click()
    see(teacher, C(teacher_lang)("teacher.revealed_choice", value=opts[1], right=1, n=2), SB)  # what the class sees
    shoot(
        teacher,
        shots / f"instructor_more_choice_histogram_{teacher_lang}.png",
        teacher.locator(f'{SB} [data-testid="stVegaLiteChart"], {SB} [data-testid="stArrowVegaLiteChart"]').first,
    )
    for pg, lang in students:
        see(pg, C(lang)("banner.exact", value="").split("**")[0].strip(), BANNER, timeout=WAIT_MS)
        see(pg, opts[1], BANNER)
    # the instructor closes the class: the students are told so
    button(teacher, tt("class.close"), SB).click()
    button(teacher, tt("class.close_yes"), SB).click()  # asked again before the class ends
    for pg, lang in students:
        see(pg, C(lang)("banner.ended", code=code), MAIN, timeout=WAIT_MS)
        assert pg.locator(f"{BANNER} .st-key-_class_stop").count() == 0


def join(pg, lang: str, code: str) -> None:
    """A student types the class code into the sidebar's join box."""
    t = T(lang)
    if not pg.locator(f'{SB} [data-testid="stExpander"] summary', has_text=t("class.join_title")).count():
        interact(pg)  # a class closed: the join box comes back on the student's next interaction
    box = pg.locator(".st-key-_class_join_code input")
    if not box.is_visible():
        pg.locator(f'{SB} [data-testid="stExpander"] summary', has_text=t("class.join_title")).click()
    box.fill(code)
    box.press("Enter")
    pg.wait_for_timeout(300)
    button(pg, t("class.join"), SB).click()
    banner_says(pg, "banner.following", lang, code=code)
