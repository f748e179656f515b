"""The chart code is fetched ahead on every page (ui/style.py, ``preload_charts``)."""
from __future__ import annotations

from bench.harness import app_test
from ui import style


def test_streamlit_still_ships_its_chart_code_under_that_name():
    # a Streamlit upgrade that renames the chunk would turn the preload into a silent no-op
    names = style.chart_chunks()
    assert names and all(n.startswith("PlotlyChart.") and n.endswith(".js") for n in names)


def test_every_page_asks_the_browser_to_load_the_chart_code_while_idle():
    for stem in ("home", "glossary", "two_point"):
        at = app_test(stem, {"lang": "en"})
        assert not at.exception
        bodies = [el.proto.body for el in at.get("html") if "import(" in el.proto.body]
        assert len(bodies) == 1, stem
        body = bodies[0]
        assert all(f'"{n}"' in body for n in style.chart_chunks())
        assert "requestIdleCallback" in body and "<script>" in body
