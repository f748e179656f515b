"""plotly.js is served by the app and fetched ahead on every page (ui/kit/chart.py,
ui/kit/style.py ``preload_charts``)."""

from __future__ import annotations

from harness.apptest import app_test
from ui.kit import chart


def test_the_installed_plotly_ships_its_bundle_with_a_version():
    # a plotly upgrade that moved the bundle would leave every chart empty
    assert chart.plotly_js().is_file() and chart.plotly_js().stat().st_size > 1_000_000
    assert chart.plotly_js_version().count(".") == 2 and chart.plotly_js_version() != "0"
    assert chart.asset_path() == f"/_app/plotly-{chart.plotly_js_version()}.min.js"


def test_the_bundle_route_serves_it_cacheable_under_the_base_path():
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    for base in ("", "course"):
        app = Starlette(routes=chart.asset_routes(base))
        with TestClient(app) as c:
            prefix = f"/{base}" if base else ""
            r = c.get(prefix + chart.asset_path())
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/javascript")
            assert "immutable" in r.headers["cache-control"]
            assert r.content[:400].decode().count("plotly.js v" + chart.plotly_js_version()) == 1
            assert c.get(prefix + "/_app/plotly-0.0.0.min.js").status_code == 404


def test_every_page_asks_the_browser_to_load_plotly_while_idle():
    for stem in ("home", "glossary", "two_point"):
        at = app_test(stem, {"lang": "en"})
        assert not at.exception
        bodies = [el.proto.body for el in at.get("html") if "tosPlotly(" in el.proto.body]
        assert len(bodies) == 1, stem
        body = bodies[0]
        assert f'"{chart.plotly_url("2d")}"' in body  # the 2-D bundle (assets/vendor/plotly)
        assert "requestIdleCallback" in body and "<script>" in body
