"""The app in headless Chromium: load, render figures, react to a slider, no tracebacks."""
from __future__ import annotations

PLOT = '[data-testid="stPlotlyChart"] .main-svg'


LINE_JS = ("() => { const p = document.querySelector("
           "'[data-testid=\"stPlotlyChart\"] .scatterlayer path.js-line');"
           " return p ? p.getAttribute('d') : null; }")


def first_line(page) -> str | None:
    """The SVG path of the first drawn line: what the student actually sees."""
    return page.evaluate(LINE_JS)


def wait_ready(page, timeout=60_000):
    page.wait_for_selector(PLOT, timeout=timeout)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout)


def test_two_point_slider_changes_figure(server, page, shots):
    page.goto(f"{server}/two_point?lang=en", wait_until="domcontentloaded")
    wait_ready(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    before = first_line(page)
    assert before and before.count("L") > 10
    slider = page.get_by_role("slider").first
    slider.focus()
    for _ in range(5):
        slider.press("ArrowRight")
    page.wait_for_function(f"(b) => ({LINE_JS})() !== b", arg=before, timeout=20_000)
    assert "beta=1.5" in page.url
    page.screenshot(path=str(shots / "two_point_en_slider.png"), full_page=False)
