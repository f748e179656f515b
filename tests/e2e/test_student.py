"""A class's side of the app in a browser: print, projector mode, keyboard only, QR code, text alternatives."""

from __future__ import annotations

import pytest

from harness.browser import WAIT_MS, goto, resolved, url_param
from ui.kit.i18n import Text

PRINT_JS = """() => {
  const vis = (e) => !!e && getComputedStyle(e).display !== 'none' && e.getBoundingClientRect().height > 0;
  const side = document.querySelector('[data-testid="stSidebar"]');
  const params = document.querySelector('.st-key-tos_print_params');
  const exp = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stExpanderDetails"]')];
  return {sidebar: vis(side), params: vis(params) ? params.innerText : null,
          expanders: exp.length, expandersShown: exp.filter(vis).length,
          title: document.querySelector('[data-testid="stMain"] h1').innerText};
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_prints_with_its_parameters(lang, server, page, tmp_path):
    goto(page, f"{server}/two_point?lang={lang}&beta=2.5")
    page.emulate_media(media="print")
    try:
        r = page.evaluate(PRINT_JS)
        pdf = page.pdf(format="A4", print_background=True)
    finally:
        page.emulate_media(media="screen")
    t = Text("two_point", lang)
    assert r["title"] == t("title")
    assert not r["sidebar"], "the sidebar prints"
    assert r["params"] and "2.5" in r["params"] and t("params.beta.label").split("$")[0].strip() in r["params"]
    assert r["expanders"] >= 1 and r["expandersShown"] == r["expanders"], r
    assert pdf.startswith(b"%PDF") and len(pdf) > 50_000
    n_pages = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
    assert n_pages >= 2, n_pages
    (tmp_path / f"two_point_{lang}.pdf").write_bytes(pdf)
    # on screen the parameter line is hidden again
    assert page.evaluate(PRINT_JS)["params"] is None


def test_projector_mode_is_larger_and_stays_in_the_url(server, page):
    goto(page, f"{server}/nonnormal?lang=en&projector=1")
    size = page.evaluate("() => getComputedStyle(document.documentElement).fontSize")
    assert size == "21px"
    fonts = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')]
        .map((g) => g._fullLayout && g._fullLayout.font.size)""")
    assert fonts and all(f and f >= 17 for f in fonts), fonts
    assert url_param(page, "projector") == "1"
    box = page.locator(".st-key-projector input[type=checkbox]")
    assert box.is_checked()
    page.locator(".st-key-projector label").first.click()  # off: normal text, the flag leaves the URL
    page.wait_for_function("() => !new URLSearchParams(location.search).has('projector')")
    page.wait_for_function("() => getComputedStyle(document.documentElement).fontSize === '16px'")


def test_keyboard_alone_moves_a_slider(server, page):
    stem = "two_point"
    p = next(q for q in resolved(stem).params.values() if q.kind in ("float", "int"))
    goto(page, f"{server}/{stem}?lang=en")
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement && document.activeElement.type") == "range":
            break
    else:
        pytest.fail("Tab never reached a slider")
    name = page.evaluate("""() => { const k = [...document.activeElement.closest('[class*="st-key-"]').classList]
        .find((c) => c.startsWith('st-key-')); return k.slice(7); }""")
    before = url_param(page, name)
    page.keyboard.press("ArrowRight")
    page.wait_for_function("([n, v]) => new URLSearchParams(location.search).get(n) !== v", arg=[name, before])
    assert url_param(page, name) != before
    del p


def test_share_box_has_a_qr_code_and_figures_have_text(server, page):
    goto(page, f"{server}/two_point?lang=zh")
    assert page.locator(".tos-qr img").count() == 0  # made only when the share box is opened
    page.locator('[data-testid="stSidebar"] .st-key-_share_open summary').click()
    page.locator(".tos-qr img").wait_for(timeout=WAIT_MS)
    assert page.locator(".tos-qr img").count() == 1
    src = page.locator(".tos-qr img").get_attribute("src")
    assert src.startswith("data:image/svg+xml;base64,") and len(src) > 1000
    alt = page.locator('[class*="st-key-tos_alt_"]').all_text_contents()  # one sits in a closed expander
    charts = page.locator('[data-testid="appPlotlyChart"]').count()
    assert len(alt) == charts and all(Text("common", "zh")("view.alt_prefix") in a for a in alt)


WIDTHS_JS = """() => [...document.querySelectorAll('[data-testid="appPlotlyChart"]')].map((c) => {
  const svg = c.querySelector('.main-svg');
  return [Math.round(c.getBoundingClientRect().width), svg ? Math.round(svg.getBoundingClientRect().width) : -1];
})"""


def test_charts_follow_their_column_when_the_sidebar_folds(server, page):
    """A chart fills its column, and follows it when the column changes width without the window
    (the sidebar folded): Plotly's own responsiveness follows the window only (ui/kit/chart.py)."""
    goto(page, f"{server}/nonnormal?lang=en")
    before = page.evaluate(WIDTHS_JS)
    assert before and all(abs(h - s) <= 2 for h, s in before), before
    page.locator('[data-testid="stSidebar"]').hover()  # its fold button shows on hover
    page.locator('[data-testid="stSidebarCollapseButton"] button').first.click()
    page.locator('[data-testid="stSidebar"][data-collapsed="true"]').wait_for(state="attached")
    # the column grows (the sidebar's width) ...
    page.wait_for_function(
        f"(b) => {{ const w = ({WIDTHS_JS})(); return w.length > 0 && w[0][0] > b + 50; }}",
        arg=before[0][0],
        timeout=WAIT_MS,
    )
    # ... and every chart with it
    page.wait_for_function(
        f"() => {{ const w = ({WIDTHS_JS})(); return w.length > 0 && w.every(([h, s]) => Math.abs(h - s) <= 2); }}",
        timeout=WAIT_MS,
    )
