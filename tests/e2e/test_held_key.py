"""A held key and a mouse drag on a slider: the page settles on the value the student set.

On every lesson page a student holds the right-arrow key on one slider: ten key presses at the
speed a key repeats (33-80 ms apart, dispatched in the page, so the pace holds however busy the
test process is). Runs for the values passed over finish late and in any order; the page must end
with the slider, the URL and what is drawn (the figures' data and the captions and numbers under
them) all at the last value pressed, and the slider must never move back by itself on the way (a
run that wrote its value back into the widget used to pull it back: 74 -> 72 -> 74). The same with
a mouse drag on two pages.

One tab, the session's server; each page is opened from the sidebar (a load where the tab shows
another app or language) and loaded once more by its final URL (the reference drawing of the value
pressed to, mostly from the server's cache).
"""

from __future__ import annotations

import pytest

from harness import browser as b
from ui.kit.nav import PAGES
from ui.kit.page import fmt_value

LESSONS = [e.stem for e in PAGES if e.stem not in ("home", "glossary")]
PRESSES = 10
GAPS_MS = b.HOLD_GAPS_MS  # between the ten key-downs of one held key
#: pages whose first slider is not the one to hold (too few steps to the right of its default)
SLIDER = {"block": "norm_d"}
DRAGGED = ["two_point", "coordinates"]
SETTLE_MS = 240_000  # a loaded two-core machine: up to ten uncached runs of a heavy page

# Every displayed value of the slider, as the student sees it, frame by frame; and its value when
# the mouse button went up.
RECORD_JS = """(n) => {
  window._tosHist = []; window._tosAtUp = null;
  const input = () => document.querySelector('.st-key-' + n + ' input[type="range"]');
  const now = () => { const e = input(); return e ? (e.getAttribute('aria-valuenow') ?? e.value) : null; };
  const tick = () => { const v = now(); const h = window._tosHist;
    if (v !== null && (!h.length || h[h.length - 1] !== v)) h.push(v);
    window._tosRaf = requestAnimationFrame(tick); };
  window.addEventListener('pointerup', () => { window._tosAtUp = now(); }, true);
  tick();
}"""
HOLD_JS = b.HOLD_JS
# What the page draws: each chart's data (Plotly's ids left out) and the captions and numbers
# of the main area (the figures' text alternatives name their plotted ranges).
DRAWN_JS = """() => {
  const h = (s) => { let x = 0x811c9dc5; for (let i = 0; i < s.length; i++) {
      x ^= s.charCodeAt(i); x = Math.imul(x, 0x01000193); } return (x >>> 0).toString(16); };
  const skip = (k, v) => (k === 'uid' ? undefined : v);
  const charts = [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')].map((gd) => {
    try { return h(JSON.stringify(gd.data, skip)); } catch (e) { return 'unreadable'; } });
  // the first start's "still preparing" note (app.py) is the server's state, not the view's drawing
  const texts = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stCaptionContainer"],'
      + ' [data-testid="stMain"] [data-testid="stMetric"]')].filter((e) => !e.closest('.st-key-tos_warming'))
      .map((e) => e.innerText.trim());
  return {charts, texts: h(texts.join('\\n')), n_texts: texts.length};
}"""
SETTLED_JS = "([n, v]) => new URLSearchParams(location.search).get(n) === v && (" + b.READY_JS + ")()"


def held_slider(stem: str):
    params = b.resolved(stem).params
    if stem in SLIDER:
        return params[SLIDER[stem]]
    for p in params.values():
        if p.kind in ("float", "int") and p.clamp(p.default + PRESSES * p.step) == round(
            p.default + PRESSES * p.step, 12
        ):
            return p
    raise AssertionError(f"{stem}: no slider with {PRESSES} steps of room right of its default")


def wait_settled(page, p, want) -> None:
    """The page has run for ``want`` (in its URL) and is drawn, twice, a moment apart."""
    for _ in range(2):
        page.wait_for_function(SETTLED_JS, arg=[p.name, fmt_value(p, want)], timeout=SETTLE_MS, polling=100)
        page.wait_for_timeout(300)


def check_settled(page, stem: str, p, want, before: dict, how: str) -> None:
    """Slider, URL and drawing at ``want``; the slider never went back; the drawing is the one
    the page's own link draws."""
    wait_settled(page, p, want)
    shown = [float(v) for v in page.evaluate("window._tosHist")]
    assert b.same(b.widget_value(page, stem, p), want), f"{how}: slider {shown[-1]}, set {want}"
    assert b.url_param(page, p.name) == fmt_value(p, want)
    back = [(x, y) for x, y in zip(shown, shown[1:]) if y < x - 1e-9]
    assert not back, f"{how}: the slider moved back by itself {back} (shown: {shown})"
    drawn = page.evaluate(DRAWN_JS)
    assert drawn["charts"], f"{stem}: no figure"
    assert drawn != before, f"{how}: nothing drawn changed with {p.name}"
    assert not b.exceptions(page)
    b.goto(page, page.url)  # the same view from its link: what the value pressed to draws
    assert b.same(b.widget_value(page, stem, p), want)
    assert page.evaluate(DRAWN_JS) == drawn, f"{how}: the drawing is not the one of {p.name}={want}"


@pytest.mark.parametrize("stem", LESSONS)
def test_held_key_settles_on_the_last_value(stem, server, page):
    p = held_slider(stem)
    want = p.clamp(p.default + PRESSES * p.step)
    b.open_page(page, server, stem)  # from the sidebar: what a student does between pages
    assert b.same(b.widget_value(page, stem, p), p.default)
    before = page.evaluate(DRAWN_JS)
    page.evaluate(RECORD_JS, p.name)
    page.evaluate(HOLD_JS, [p.name, GAPS_MS])
    check_settled(page, stem, p, want, before, f"{stem}: {PRESSES} x ArrowRight on {p.name}")


@pytest.mark.parametrize("stem", DRAGGED)
def test_mouse_drag_settles_where_released(stem, server, page):
    p = held_slider(stem)
    target = p.clamp(p.default + PRESSES * p.step)
    b.open_page(page, server, stem)
    before = page.evaluate(DRAWN_JS)
    page.evaluate(RECORD_JS, p.name)
    thumb = page.locator(f'.st-key-{p.name} [data-testid="stSliderThumbValue"]').locator("..").first
    thumb.scroll_into_view_if_needed()
    box, track = thumb.bounding_box(), thumb.locator("..").bounding_box()
    # the thumb's centre line, at the track's height (the value label floats above the thumb)
    x0, y = box["x"] + box["width"] / 2, track["y"] + track["height"] / 2
    x1 = track["x"] + track["width"] * (target - p.min) / (p.max - p.min)
    page.mouse.move(x0, y)
    page.mouse.down()
    for i in range(1, PRESSES + 1):
        page.mouse.move(x0 + (x1 - x0) * i / PRESSES, y)
        page.wait_for_timeout(GAPS_MS[i % len(GAPS_MS)])
    page.mouse.up()
    page.wait_for_function("() => window._tosAtUp !== null", timeout=30_000)
    want = p.clamp(float(page.evaluate("window._tosAtUp")))
    assert want > p.default, f"the drag did not move {p.name} (released at {want})"
    check_settled(page, stem, p, want, before, f"{stem}: drag of {p.name} to {want}")


def test_a_run_sends_widget_values_back_only_when_they_change():
    """The server side of it (AppTest): after its first run a page no longer sends its widgets'
    values back to the browser (Streamlit's ``set_value``), which is what moved them under a
    held key; an explicit action (a preset) still does."""
    from tests.conftest import app_test

    at = app_test("two_point", {"lang": "en"})
    assert at.slider(key="beta").proto.set_value  # a fresh visit: the URL's values are sent
    at.slider(key="beta").set_value(1.5).run()
    assert not [k for k in ("beta", "theta0", "horizon") if at.slider(key=k).proto.set_value]
    assert not at.selectbox(key="preset").proto.set_value
    at.run()
    assert not at.slider(key="beta").proto.set_value and at.slider(key="beta").value == 1.5
    pid = next(iter(b.resolved("two_point").presets))
    at.selectbox(key="preset").set_value(pid).run()
    assert at.slider(key="beta").proto.set_value  # the preset moves the sliders


def test_a_language_switch_redraws_the_select_boxes_labels():
    """A select box keeps the label it shows while its value is unchanged; after a language switch
    its value is sent back (``set_value``) so the browser shows the new language's label (the
    browser check: test_browser.py::test_link_language_slider_preset). Without a switch, not."""
    from tests.conftest import app_test

    at = app_test("width", {"lang": "zh"})
    at.slider(key="N").set_value(at.slider(key="N").value + 1).run()
    assert not at.selectbox(key="scaling").proto.set_value and not at.selectbox(key="preset").proto.set_value
    at.button_group(key="lang").set_value("en").run()
    assert at.selectbox(key="scaling").proto.set_value and at.selectbox(key="preset").proto.set_value
    assert "lazy" in " ".join(at.selectbox(key="scaling").options).lower()
    at.run()
    assert not at.selectbox(key="scaling").proto.set_value
