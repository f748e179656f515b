"""Every registered page in headless Chromium, as a student uses it.

Pages come from ``ui.kit.nav.PAGES`` (a new page is covered without edits here); parameters and
presets from each page's ``SCHEMA`` resolved against the instructor file. For every page:

- the page's own URL (the link a student would share) restores the same widget values, every
  figure draws, no exception and no notice;
- switching the language (sidebar segmented control) changes the title, keeps the view and the
  page clean;
- moving the first slider redraws a figure and writes the new value into the URL;
- choosing a preset in the sidebar sets the widgets to the preset's values;
- with every expander open the page stays clean (with ``E2E_SHOTS=1``, a screenshot of the whole
  page in both languages goes to ``screenshots/<page>_<lang>.png``: ``make screenshots``);
- garbage in the URL gives a notice, never a traceback (two pages here; every page in AppTest).
"""

from __future__ import annotations

import os

import pytest

from harness import browser as b
from harness.browser import WAIT_MS  # noqa: E402
from ui.kit.i18n import Text
from ui.kit.nav import PAGES
from ui.kit.page import fmt_value

STEMS = [e.stem for e in PAGES]
#: Full-page screenshots (screenshots/<page>_<lang>.png) cost the browser a relayout at the page's
#: whole height and a large raster: taken when E2E_SHOTS=1 (``make screenshots``), not in every run.
SHOOT = os.environ.get("E2E_SHOTS") == "1"
WITH_PARAMS = [s for s in STEMS if b.schema(s).params]


def url(server: str, stem: str, query: str = "") -> str:
    path = "" if stem == "home" else stem  # the default page is served at "/"
    return f"{server}/{path}" + (f"?{query}" if query else "")


def assert_clean(page, where: str) -> None:
    exc = b.exceptions(page)
    assert not exc, f"{where}: exception element(s) on the page: {exc[:2]}"
    assert "Traceback" not in page.locator('[data-testid="stMain"]').inner_text(), f"{where}: traceback"


def numeric(stem: str):
    return [p for p in b.resolved(stem).params.values() if p.kind in ("float", "int")]


def test_first_visitor_after_start_can_switch_language(server_proc):
    """The server fixture's first session (see conftest.first_visit) switched the language.

    Regression test: Streamlit's legacy pages/-folder mode used to drop the first visitor's
    first interaction; ui.server.serve clears that mode before the server starts."""
    assert server_proc.first_visitor_switched_language


def choose_preset_that_changes_most(page, stem: str, params) -> None:
    """A preset from the sidebar menu sets its values (the one that changes the most widgets)."""
    res = b.resolved(stem)
    now = b.widget_values(page, stem, params)

    def changes(pid):
        return sum(not b.same(now[k], v) for k, v in res.presets[pid].values.items() if k in now)

    pid = max(res.presets, key=changes)
    assert changes(pid) > 0, f"no preset changes any widget from {now}"
    preset = res.presets[pid]
    page.locator('.st-key-preset input[role="combobox"]').click()
    page.get_by_role("option", name=preset.title.get("en", pid), exact=True).click()
    b.wait_url_param(page, "preset", pid)
    b.wait_ready(page)
    assert_clean(page, f"after preset {pid}")
    got = b.widget_values(page, stem, [res.params[k] for k in preset.values if k in res.params])
    for k, v in preset.values.items():
        assert b.same(got[k], v), f"preset {pid}: {k} shows {got[k]}, preset says {v}"


@pytest.mark.parametrize("stem", STEMS)
def test_link_language_slider_preset(stem, server, page, shots):
    """One visit per page, as a student who was sent a link uses it (one page load: a load costs
    the browser several seconds of CPU, so the checks share it):

    1. a shared link with every parameter set (to a value other than its default, in Chinese)
       restores exactly those values, every figure draws, no notice, and the page keeps the values
       in its own URL;
    2. switching the language changes the title, keeps the view and the page clean;
    3. one keyboard step on the first slider writes the new value into the URL and redraws a figure;
    4. a preset from the sidebar menu sets its values;
    5. with every expander open the page stays clean (full-page screenshots with E2E_SHOTS=1).
    The page at its defaults is loaded by test_phone.py (both languages) and test_held_key.py."""
    from urllib.parse import urlencode

    res = b.resolved(stem)
    params = list(res.params.values())
    want = {p.name: p.other_value() for p in params}
    query = {"lang": "zh", **{p.name: fmt_value(p, want[p.name]) for p in params}}
    b.goto(page, url(server, stem, urlencode(query)))
    assert_clean(page, "link")
    assert b.title(page) == Text(stem, "zh")("title")
    # no notice about the link (warnings, errors); an info box that explains the chosen view
    # (gaussian_width with M > D, a low_temperature model) is part of the page
    notices = page.locator('[data-testid="stAlertContentWarning"], [data-testid="stAlertContentError"]')
    assert notices.count() == 0, notices.all_inner_texts()
    got = b.widget_values(page, stem, params, "zh")
    bad = {k: (got[k], want[k]) for k in want if not b.same(got[k], want[k])}
    assert not bad, f"widget shows != link value: {bad}"
    for k, v in query.items():
        assert b.url_param(page, k) == v, f"the page rewrote {k}"
    charts = b.n_charts(page)
    if params:
        assert charts >= 1, "a page with parameters shows no figure"
    assert b.n_drawn(page) == charts, "a figure did not draw"
    if SHOOT:
        b.full_screenshot(page, shots / f"{stem}_zh.png")
        page.set_viewport_size(b.VIEWPORT)

    # 2. the language switch (sidebar segmented control)
    page.locator('.st-key-lang button[role="radio"]', has_text="English").click()
    en_title = Text(stem, "en")("title")
    page.wait_for_function(
        "(t) => { const h = document.querySelector('[data-testid=\"stMain\"] h1');"
        " return h && h.innerText.trim() === t; }",
        arg=en_title,
        timeout=WAIT_MS,
    )
    b.wait_ready(page)
    assert en_title != Text(stem, "zh")("title")
    assert_clean(page, "en")
    assert b.url_param(page, "lang") == "en"
    assert b.n_drawn(page) == b.n_charts(page) == charts, "figures after switching language"
    kept = b.widget_values(page, stem, params, "en")
    assert all(b.same(kept[k], want[k]) for k in want), f"the language switch changed the view: {kept}"

    if params:
        # 3. one keyboard step on the first slider: the URL gets the new value, a figure is redrawn
        p = b.first_slider(params)
        assert p is not None, "page has parameters but no slider"
        before = b.signature(page)
        assert before, "no figure"
        key, target = b.step_target(p, b.widget_value(page, stem, p))
        b.nudge(page, p, key)
        b.wait_url_param(page, p.name, fmt_value(p, target))
        b.wait_ready(page)
        b.wait_signature_change(page, before)
        assert b.same(b.widget_value(page, stem, p), target)
        assert_clean(page, f"after moving {p.name}")
        # 4. a preset
        if res.presets:
            choose_preset_that_changes_most(page, stem, params)

    # 5. every expander open
    b.open_expanders(page)
    b.wait_ready(page)
    assert_clean(page, "expanders open")
    if SHOOT:
        b.full_screenshot(page, shots / f"{stem}_en.png")


#: Garbage links on every page are AppTest's (tests/test_pages.py); the browser checks two: the page
#: with the most numeric parameters (every kind of junk at once) and one with none (a bad language).
GARBAGE = [max(STEMS, key=lambda s: len(numeric(s))), next(s for s in STEMS if not numeric(s))]


@pytest.mark.parametrize("stem", GARBAGE)
def test_garbage_link_gives_notice_not_traceback(stem, server, page):
    from urllib.parse import urlencode

    nums = numeric(stem)
    query = {"lang": "en", "preset": "no_such_preset"}
    junk = ["abc", "nan", "inf", "1e999", "-", "0x10"]
    for i, p in enumerate(nums):
        query[p.name] = junk[i % len(junk)]
    if not nums:
        query["lang"] = "xx"
    b.goto(page, url(server, stem, urlencode(query)))
    assert_clean(page, "garbage link")
    alerts = page.locator(b.ALERT).all_inner_texts()
    assert alerts, "no notice for garbage in the link"
    for p in nums:
        v = b.widget_value(page, stem, p)
        assert p.min <= v <= p.max, f"{p.name}={v} outside [{p.min}, {p.max}]"
    assert b.n_drawn(page) == b.n_charts(page)
