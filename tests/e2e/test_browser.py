"""Every registered page in headless Chromium, as a student uses it.

Pages come from ``ui.nav.PAGES`` (a new page is covered without edits here); parameters and
presets from each page's ``SCHEMA`` resolved against the instructor file. For every page:

- it loads without an error element, every figure draws, and a screenshot of the whole page
  is written to ``screenshots/<page>_<lang>.png`` in both languages;
- switching the language (sidebar segmented control) changes the title and keeps the page clean;
- moving the first slider redraws a figure and writes the new value into the URL;
- choosing a preset in the sidebar sets the widgets to the preset's values;
- the page's own URL (the link a student would share) restores the same widget values;
- garbage in the URL gives a notice, never a traceback.
"""
from __future__ import annotations

import pytest

from tests.e2e import browser as b
from tests.e2e.browser import WAIT_MS  # noqa: E402
from ui.i18n import Text
from ui.nav import PAGES
from ui.page import fmt_value

STEMS = [e.stem for e in PAGES]
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
    first interaction; ui.serve clears that mode before the server starts."""
    assert server_proc.first_visitor_switched_language


@pytest.mark.parametrize("stem", STEMS)
def test_loads_draws_and_switches_language(stem, server, page, shots):
    b.goto(page, url(server, stem, "lang=en"))
    assert_clean(page, "en")
    errors = page.locator('[data-testid="stAlertContentError"]').all_inner_texts()
    assert not errors, f"error message at the defaults: {errors[:2]}"
    assert b.title(page) == Text(stem, "en")("title")
    charts = b.n_charts(page)
    if b.schema(stem).params:
        assert charts >= 1, "a page with parameters shows no figure"
    assert b.n_drawn(page) == charts, "a figure did not draw"
    b.open_expanders(page)
    b.wait_ready(page)
    assert_clean(page, "en, expanders open")
    b.full_screenshot(page, shots / f"{stem}_en.png")

    page.set_viewport_size({"width": 1400, "height": 1000})
    page.locator('.st-key-lang button[role="radio"]', has_text="中文").click()
    zh_title = Text(stem, "zh")("title")
    page.wait_for_function("(t) => { const h = document.querySelector('[data-testid=\"stMain\"] h1');"
                           " return h && h.innerText.trim() === t; }", arg=zh_title, timeout=WAIT_MS)
    b.wait_ready(page)
    assert zh_title != Text(stem, "en")("title")
    assert_clean(page, "zh")
    assert b.url_param(page, "lang") == "zh"
    assert b.n_drawn(page) == b.n_charts(page) == charts, "figures after switching language"
    b.open_expanders(page)
    b.wait_ready(page)
    b.full_screenshot(page, shots / f"{stem}_zh.png")


@pytest.mark.parametrize("stem", WITH_PARAMS)
def test_slider_redraws_and_preset_applies(stem, server, page):
    res = b.resolved(stem)
    params = list(res.params.values())
    b.goto(page, url(server, stem, "lang=en"))
    p = b.first_slider(params)
    assert p is not None, "page has parameters but no slider"

    # 1. One keyboard step on the first slider: the URL gets the new value, a figure is redrawn.
    before = b.signature(page)
    assert before, "no figure"
    v0 = b.widget_value(page, stem, p)
    assert b.same(v0, res.params[p.name].default)
    key, want = b.step_target(p, v0)
    b.nudge(page, p, key)
    b.wait_url_param(page, p.name, fmt_value(p, want))
    b.wait_ready(page)
    b.wait_signature_change(page, before)
    assert b.same(b.widget_value(page, stem, p), want)
    assert_clean(page, f"after moving {p.name}")

    # 2. A preset from the sidebar menu sets its values (pick the one that changes the most).
    if not res.presets:
        return
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


@pytest.mark.parametrize("stem", WITH_PARAMS)
def test_link_restores_widget_values(stem, server, page):
    """A shared link with every parameter set restores exactly those values, and the page keeps
    them in its own URL (so sharing the link again gives the same view)."""
    from urllib.parse import urlencode

    res = b.resolved(stem)
    params = list(res.params.values())
    want = {p.name: p.other_value() for p in params}
    query = {"lang": "zh", **{p.name: fmt_value(p, want[p.name]) for p in params}}
    b.goto(page, url(server, stem, urlencode(query)))
    assert_clean(page, "link")
    # no notice about the link (warnings, errors); an info box that explains the chosen view
    # (gaussian_width with M > D, a low_temperature model) is part of the page
    notices = page.locator('[data-testid="stAlertContentWarning"], [data-testid="stAlertContentError"]')
    assert notices.count() == 0, notices.all_inner_texts()
    got = b.widget_values(page, stem, params, "zh")
    bad = {k: (got[k], want[k]) for k in want if not b.same(got[k], want[k])}
    assert not bad, f"widget shows != link value: {bad}"
    for k, v in query.items():
        assert b.url_param(page, k) == v, f"the page rewrote {k}"
    assert b.n_drawn(page) == b.n_charts(page) >= 1


@pytest.mark.parametrize("stem", STEMS)
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
