"""Every student can use it: axe-core on every page, the document's language and title,
each chart one figure for assistive technology, and a keyboard-only walk.

- ``test_axe_pages[en|zh]``: the 13 pages (11 topics, home, glossary) at 1400 px and 390 px, each
  with the whole page in view (every expander open, "Predict first" and the share box included, the
  viewport as tall as the page, every chart drawn; ``bench.a11y.whole_page_in_view``): no critical or serious violation
  except those of Streamlit's own frame listed in :data:`FRAME` with the reason. One tab per
  language, opened once; a page's second width is the same page resized (no second load).
  The table (critical/serious/moderate/minor per page and width) is written to
  screenshots/a11y_axe_<lang>.md.
- ``test_axe_instructor_and_student_in_a_class``: the signed-in teacher's page with a class open,
  the parameter editor and the class console; a student who joined by the link, banner shown.
- ``test_lang_title_and_charts_follow_the_language``: ``<html lang>`` and the title, before and
  after switching language in the sidebar; the charts' role, name, description, hidden drawing and
  their toolbar's words in Chinese; slider names without LaTeX.
- ``test_keyboard_walk``: Tab alone through the two_point page: the language switch, the sliders,
  the sidebar's page links with a focus ring of 3:1 or more, the share box's copy button, the chart
  toolbar's buttons, a figure's data button; then "Predict first" by Enter, an answer typed and
  checked by Enter: focus is on the verdict.

axe-core is the copy the pinned ``axe-playwright-python`` ships (``bench.a11y.axe_version``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.a11y import IMPACTS, axe_script, axe_version, cell, counts, scan, whole_page_in_view
from harness import browser as b
from harness.browser import VIEWPORT, WAIT_MS
from harness.server import url_path
from tests.e2e.conftest import watched_tab
from ui.kit.i18n import Text
from ui.kit.nav import PAGES

SHOTS = Path(__file__).resolve().parents[2] / "screenshots"

#: Violations that come from Streamlit's own frame, not from the app's content: (rule, a fragment
#: of the failing element's HTML or target, the reason). Anything else serious or critical fails.
FRAME: list[tuple[str, str, str]] = [
    # (none left: the sidebar page list's <li> in a <div> in a <ul> is mended by the document script,
    #  ui.kit.lang.mark_document; the heading anchors are hidden by assets/style.css)
]
SERIOUS = ("critical", "serious")


def _frame_reason(rule: str, node: dict) -> str | None:
    for r, frag, why in FRAME:
        if r == rule and (frag in node["html"] or frag in node["target"]):
            return why
    return None


def own_serious(violations: list[dict]) -> list[str]:
    """The app's own critical and serious violations, one line each."""
    out = []
    for v in violations:
        for n in v["nodes"]:
            if (n.get("impact") or v["impact"]) in SERIOUS and _frame_reason(v["id"], n) is None:
                out.append(
                    f"{v['id']} ({n.get('impact') or v['impact']}): {n['target']} {n['html'][:120]}"
                    f" | {n['summary'][-160:]}"
                )
    return out


@pytest.fixture(scope="module")
def a11y_tab(browser):
    with watched_tab(browser, viewport=VIEWPORT, locale="en-US") as pg:
        yield pg


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_axe_pages(lang, server, a11y_tab):
    pg = a11y_tab
    script = axe_script()
    rows, failures = [], []
    for e in PAGES:
        pg.set_viewport_size(VIEWPORT)
        b.goto(pg, f"{server}/{url_path(e.stem)}?lang={lang}")
        row = [e.stem]
        for width in (1400, 390):
            whole_page_in_view(pg, width)
            v = scan(pg, script)
            row.append(cell(counts(v)))
            failures += [f"{e.stem} {lang} {width}px: {line}" for line in own_serious(v)]
        rows.append(row)
    SHOTS.mkdir(exist_ok=True)
    table = [
        f"axe-core {axe_version()}, lang={lang}; cells: {'/'.join(IMPACTS)} (elements)",
        "",
        "| page | 1400 px | 390 px |",
        "| --- | --- | --- |",
    ] + [f"| {' | '.join(r)} |" for r in rows]
    (SHOTS / f"a11y_axe_{lang}.md").write_text("\n".join(table) + "\n", encoding="utf-8")
    print("\n".join(table))
    assert not pg.js_errors, pg.js_errors[:3]
    assert not failures, "\n".join(failures[:20])


def _lang_title(pg) -> tuple[str, str]:
    pg.wait_for_function("() => document.documentElement.lang && document.title", timeout=WAIT_MS)
    return pg.evaluate("() => [document.documentElement.lang, document.title]")


_CHARTS_JS = """() => [...document.querySelectorAll('[data-testid="appPlotlyChart"]')].map((h) => {
  const d = h.getAttribute('aria-describedby');
  return {role: h.getAttribute('role'), name: h.getAttribute('aria-label'),
          desc: d && document.getElementById(d) ? document.getElementById(d).innerText : null,
          title: (h.querySelector('.gtitle') || {}).textContent || '',
          svgs: [...h.querySelectorAll('svg.main-svg')].map((s) => s.getAttribute('aria-hidden')),
          buttons: [...h.querySelectorAll('.modebar-btn')].map(
            (x) => [x.getAttribute('aria-label'), x.getAttribute('role'), x.tabIndex])};
})"""


def test_lang_title_and_charts_follow_the_language(server, page):
    stem = "two_point"
    b.goto(page, f"{server}/{stem}?lang=en")
    # every chart named (the page's script names each chart once it is drawn: waiting for one of
    # them let the full run on 9b96d33 read the others before they were named)
    page.wait_for_function(
        "() => { const cs = [...document.querySelectorAll('[data-testid=\"appPlotlyChart\"]')];"
        " return document.documentElement.lang === 'en' && cs.length > 0"
        " && cs.every((c) => c.getAttribute('role') === 'figure' && c.getAttribute('aria-label')); }",
        timeout=WAIT_MS,
    )
    lang, title = _lang_title(page)
    assert (lang, title) == ("en", f"{Text(stem, 'en')('title')} · {Text('common', 'en')('app_title')}")
    charts = page.evaluate(_CHARTS_JS)
    assert charts
    prefix = Text("common", "en")("view.alt_prefix")
    for c in charts:
        assert c["role"] == "figure" and c["name"], c
        drawn = re.sub(r"\s+", " ", c["title"].replace("\u200b", "")).strip()  # (plotly.js's zero-width spaces)
        assert c["name"] == drawn, c  # its name is its title as drawn
        assert c["desc"] and c["desc"].startswith(prefix), c  # its "In words" line
        assert c["svgs"] and set(c["svgs"]) == {"true"}, c  # the drawing is hidden
        # the toolbar: download and reset, each a named button with a Tab stop
        assert [x[0] for x in c["buttons"]] == ["Download plot as a PNG", "Reset axes"], c
        assert all(x[1] == "button" and x[2] == 0 for x in c["buttons"]), c
    # slider names read aloud hold no LaTeX source (two_point's τ_max label is "$\tau_{\max}$ ...")
    names_js = (
        "() => [...document.querySelectorAll('[data-testid=\"stSidebar\"] [aria-label]')]"
        ".map((e) => e.getAttribute('aria-label'))"
    )
    try:
        page.wait_for_function(f"() => !({names_js})().some((n) => n.includes('$'))", timeout=30_000)
    except Exception:  # noqa: BLE001 - playwright's TimeoutError: the assertion says what was there
        pass
    names = page.evaluate(names_js)
    assert not [n for n in names if "$" in n or "\\" in n], names

    # switch the language in the sidebar: the document follows at once
    page.locator('[data-testid="stSidebar"] button[data-variant="segmented_control"]', has_text="中文").click()
    page.wait_for_function("() => document.documentElement.lang === 'zh-Hans'", timeout=WAIT_MS)
    b.wait_ready(page)
    zh_title = f"{Text(stem, 'zh')('title')} · {Text('common', 'zh')('app_title')}"
    page.wait_for_function("(t) => document.title === t", arg=zh_title, timeout=WAIT_MS)
    words = Text("common", "zh")
    page.wait_for_function(  # every chart's toolbar in Chinese (one of them was not enough, as above)
        "(name) => { const cs = [...document.querySelectorAll('[data-testid=\"appPlotlyChart\"]')];"
        " return cs.length > 0 && cs.every((c) => [...c.querySelectorAll('.modebar-btn')].some("
        "(x) => x.getAttribute('aria-label') === name)); }",
        arg=words("chart.download"),
        timeout=WAIT_MS,
    )
    for c in page.evaluate(_CHARTS_JS):
        assert [x[0] for x in c["buttons"]] == [words("chart.download"), words("chart.reset")], c
        assert c["desc"] and c["desc"].startswith(words("view.alt_prefix")), c
    # Streamlit's English "Help for <label>" in the page's language, the label readable
    helps_js = (
        "() => [...document.querySelectorAll('[data-testid=\"stTooltipIcon\"] button[aria-label]')]"
        ".map((e) => e.getAttribute('aria-label'))"
    )
    try:
        page.wait_for_function(
            f"() => {{ const h = ({helps_js})(); return h.length"
            " && !h.some((x) => x.startsWith('Help for') || x.includes('$')); }",
            timeout=30_000,
        )
    except Exception:  # noqa: BLE001 - playwright's TimeoutError: say what was there
        pass
    helps = page.evaluate(helps_js)
    assert helps and not [h for h in helps if h.startswith("Help for") or "$" in h], helps
    # the other language's option is marked as that language
    marked = page.evaluate(
        "() => [...document.querySelectorAll('button[data-variant=\"segmented_control\"]')]"
        ".map((x) => x.innerText.trim() + ':' + x.getAttribute('lang'))"
    )
    assert marked == ["English:en", "中文:zh-Hans"]


# --------------------------------------------------------------------------- keyboard alone
_FOCUSED_JS = """() => {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  // the ring: an outline or a box shadow on the element or on one of its 3 nearest ancestors
  // (a select box draws it around its box, not on its input)
  let ring = null;
  for (let x = e, i = 0; x && i < 4 && !ring; x = x.parentElement, i++) {
    const s = getComputedStyle(x);
    ring = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) ? s.outlineColor
      : (i === 0 && s.boxShadow && s.boxShadow !== 'none' ? s.boxShadow : null);
  }
  const key = (e.closest('[class*="st-key-"]') || {className: ''}).className.match(/st-key-(\\S+)/);
  return {tag: e.tagName, name: (e.getAttribute('aria-label') || e.innerText || '').trim().slice(0, 60),
          testid: (e.closest('[data-testid]') || {dataset: {}}).dataset.testid || '',
          key: key ? key[1] : '', ring, visible: !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length)};
}"""


def _rgb(css: str) -> str | None:
    m = re.search(r"rgba?\((\d+),\s*(\d+),\s*(\d+)", css or "")
    return "#" + "".join(f"{int(x):02X}" for x in m.groups()) if m else None


def test_keyboard_walk(server, page):
    """Tab alone through two_point: every stop is visible and shows focus; the stops a student
    needs are among them; Predict first by Enter, an answer by Enter: focus lands on the verdict."""
    from tests.test_access_contrast import SIDEBAR, ratio

    stem = "two_point"
    b.goto(page, f"{server}/{stem}?lang=en")
    page.locator(".st-key-_share_open summary").click()  # the share box open (a student's click)
    page.locator('[data-testid="stSidebar"] [data-testid="stCode"]').wait_for()
    b.wait_ready(page)
    page.evaluate("() => { if (document.activeElement) document.activeElement.blur(); }")  # from the top
    stops = []
    for _ in range(160):
        page.keyboard.press("Tab")
        f = page.evaluate(_FOCUSED_JS)
        if f is None:
            continue
        stops.append(f)
    assert len(stops) >= 20
    hidden = [s for s in stops if not s["visible"]]
    assert not hidden, hidden[:5]
    no_ring = [s for s in stops if not s["ring"]]
    assert not no_ring, no_ring[:5]
    kinds = {s["testid"] for s in stops}
    names = [s["name"] for s in stops]
    assert "stSidebarNavLink" in kinds, kinds  # page links
    assert any(s["tag"] == "INPUT" and s["key"] == "beta" for s in stops), stops  # a slider
    assert "Copy to clipboard" in names, names  # the share box's copy button
    assert "Download plot as a PNG" in names and "Reset axes" in names, names  # the chart toolbar
    assert any(s["key"].startswith("_data_") for s in stops), stops  # a figure's data (CSV)
    for s in stops:
        if s["tag"] in ("A", "BUTTON", "SUMMARY") or s["testid"] in ("stSelectbox", "stMain"):
            c = _rgb(s["ring"])  # the ring is seen: 3:1 on the sidebar's grey (and so on white)
            assert c and ratio(c, SIDEBAR) >= 3.0, s

    # Predict first: opened with Enter, an answer typed, checked with Enter: focus on the verdict
    summary = page.locator(f".st-key-_predict_open_{stem} summary")
    summary.focus()
    summary.press("Enter")
    first_input = page.locator(f'[class*="st-key-_predict_{stem}_"][class*="_in"] input').first
    first_input.wait_for(state="visible", timeout=WAIT_MS)
    b.wait_ready(page)
    first_input.focus()
    if first_input.get_attribute("type") == "radio":
        page.keyboard.press("Space")
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")
    else:
        first_input.fill("0.5")
        first_input.press("Enter")
    page.wait_for_function(
        "() => { const a = document.activeElement; return !!(a && a.closest('[data-testid=\"stAlert\"]')); }",
        timeout=WAIT_MS,
    )
    said = page.evaluate("() => document.activeElement.closest('[data-testid=\"stAlert\"]').innerText")
    assert said.strip()


# --------------------------------------------------------------------------- instructor and class
def test_axe_instructor_and_student_in_a_class(teacher_server, browser):
    from tests.e2e.conftest import fresh_tabs
    from tests.e2e.test_instructor import C, T, _student_joins, open_class, open_editor, open_nav_link, see, sign_in

    failures, rows = [], []
    with fresh_tabs(browser) as tabs:
        teacher = tabs()
        b.goto(teacher, f"{teacher_server}/two_point?lang=en")
        sign_in(teacher, "en")
        see(teacher, T("en")("signin.signed_in"), '[data-testid="stSidebar"]')
        b.wait_ready(teacher)
        link, code = open_class(teacher, teacher_server, "en")
        b.wait_ready(teacher)

        def check(pg, what):
            whole_page_in_view(pg, 1400)
            v = scan(pg)
            rows.append((what, cell(counts(v))))
            failures.extend(f"{what}: {line}" for line in own_serious(v))
            pg.set_viewport_size(VIEWPORT)

        check(teacher, "teacher, class open (two_point)")
        student = _student_joins(tabs, link, "zh", code)
        check(student, "student in the class (zh)")
        # the class banner by keyboard: its controls are Tab stops, each with a visible focus
        student.locator('[data-testid="stMain"] h1').click()
        student.keyboard.press("Shift+Tab")
        seen = []
        for _ in range(60):
            student.keyboard.press("Tab")
            f = student.evaluate(_FOCUSED_JS)
            if f and f["key"].startswith("_class"):
                seen.append(f)
        assert any(f["key"] == "_class_stop" for f in seen), seen  # "stop following", by Tab
        assert all(f["visible"] and f["ring"] for f in seen), seen
        open_editor(teacher, "en")
        check(teacher, "parameter editor")
        open_nav_link(teacher, C("en")("title"))
        teacher.wait_for_function(
            "(t) => { const h = document.querySelector('[data-testid=\"stMain\"] h1');"
            " return h && h.innerText.trim() === t; }",
            arg=C("en")("title"),
            timeout=WAIT_MS,
        )
        b.wait_ready(teacher)
        check(teacher, "class console")
    print("\n".join(f"{w}: {c}" for w, c in rows))
    assert not failures, "\n".join(failures[:20])
