"""The performance architecture, guarded: every chart a page shows is a shared Frozen figure, and a
rerun at the same state builds no figure at all (docs/performance.md)."""

from __future__ import annotations

import pytest
import plotly.tools

from tests.conftest import STEMS, app_test, charts
from ui.kit import files
from ui.kit import figures as F

CHART_PAGES = [s for s in STEMS if s not in ("home", "glossary")]  # text-only pages


@pytest.mark.parametrize("stem", CHART_PAGES)
def test_charts_are_frozen_and_a_same_state_rerun_builds_none(stem, monkeypatch):
    shown, built = [], []
    orig_chart, orig_init = plotly.tools.return_figure_from_figure_or_data, F.Frozen.__init__

    def chart(figure_or_data, *a, **k):  # what ui.kit.chart (as st.plotly_chart) calls with the figure it was given
        shown.append(type(figure_or_data).__name__)
        return orig_chart(figure_or_data, *a, **k)

    def init(self, *a, **k):
        built.append(1)
        orig_init(self, *a, **k)

    monkeypatch.setattr(plotly.tools, "return_figure_from_figure_or_data", chart)
    monkeypatch.setattr(F.Frozen, "__init__", init)
    # Build this page's figures afresh with Plotly's validation on, which rejects unknown or ill-typed
    # properties (the app builds them without: ui.kit.figures.VALIDATE)
    monkeypatch.setattr(F, "VALIDATE", True)
    for builder in _builders(stem):
        builder.clear()
    at = app_test(stem, {"lang": "en"})
    assert not at.exception
    assert shown and set(shown) == {"Frozen"}, shown
    n_charts = len(charts(at))
    shown.clear()
    built.clear()
    at.run()  # same session, same state
    assert not at.exception
    assert len(shown) == n_charts and set(shown) == {"Frozen"}
    assert built == [], f"{stem}: {len(built)} figure(s) rebuilt on a rerun at the same state"


def _builders(stem: str) -> list:
    """The shared figure builders (``@cached_figure``) of pages/<stem>/views.py and figures.py."""
    mods = [m for m in (files.module(stem, "views"), files.module(stem, "figures")) if m is not None]
    return list({id(f): f for m in mods for f in vars(m).values() if getattr(f, "cached_figure", False)}.values())
