"""A student's first visit in a real browser: what it transfers, that every text asset
comes compressed, that no request leaves 127.0.0.1, that a lesson page loads one partial plotly.js
bundle, and that the figures drawn with it are the figures the full bundle draws.

The byte limits are the issue's targets (docs/performance.md, "First visit"): a lesson page's first
visit at most 1.5 MB on the wire, the home page 1 MB, a second lesson page in the same tab 150 kB.
Measured as a class meets them: the server warm (each page opened once, its assets compressed and
recompressed at brotli's best level), each visit in a fresh browser context."""

from __future__ import annotations

import pytest

from bench.first_visit import settle_assets, visit, warm_pages
from harness import browser as b
from ui.kit import chart

#: bytes on the wire (compressed bodies and headers) of a first visit in a fresh browser context
LIMITS = {"home": 1_000_000, "two_point": 1_500_000, "hemisphere": 1_500_000}
#: a second lesson page opened from the sidebar in the same tab
SECOND_LIMIT = 150_000
KB = 1000


@pytest.fixture(scope="module")
def visits(browser, server):
    warm_pages(server, list(LIMITS))
    seen = [x for stem in LIMITS for r in visit(browser, server, stem, None) for x in r["assets"]]
    settle_assets(server, sorted({x["path"] for x in seen if x["enc"] == "br"}))
    return {stem: visit(browser, server, stem, None if stem == "home" else "nonnormal") for stem in LIMITS}


@pytest.mark.parametrize("stem", list(LIMITS))
def test_a_first_visit_is_small_compressed_and_stays_on_the_server(visits, stem):
    rows = visits[stem]
    first = rows[0]
    ahead = sum(a["wire"] for a in first["assets"] if "/_app/plotly" in a["path"]) if stem == "home" else 0
    # (home: plotly.js fetched ahead once the browser is idle, for the next lesson, sometimes within
    # the visit: the 2-D bundle, counted apart)
    assert first["wire"] - ahead <= LIMITS[stem], f"{stem}: {(first['wire'] - ahead) / KB:.0f} kB on the wire"
    for r in rows:
        assert r["uncompressed_text"] == [], f"{r['page']}: sent uncompressed {r['uncompressed_text']}"
        assert r["hosts"] == [], f"{r['page']}: asked other hosts {r['hosts']}"
    bundles = sorted(a["path"] for a in first["assets"] if "/_app/plotly" in a["path"])
    if stem == "home":
        assert bundles in ([], [chart.asset_path("2d")]), bundles
        return
    want = chart.asset_path("3d" if stem == "hemisphere" else "2d")
    assert bundles == [want], f"{stem} loaded {bundles}"
    second = rows[1]
    assert second["wire"] <= SECOND_LIMIT, f"then nonnormal: {second['wire'] / KB:.0f} kB"
    assert not any("/_app/plotly" in a["path"] for a in second["assets"])


#: the page's layout shifts as the browser reports them (what Lighthouse sums as CLS)
SHIFTS_JS = """(() => { window.__tosShift = 0;
  new PerformanceObserver((list) => { for (const e of list.getEntries())
    if (!e.hadRecentInput) window.__tosShift += e.value; }).observe({type: 'layout-shift', buffered: true});
})()"""
#: the most a first visit may shift. Before: home 0.42-0.49, two_point 0.75, hemisphere 0.38; now,
#: quiet, 0.000-0.005 each. Under load a hold may reach its 15 s cap before KaTeX has drawn (the
#: 0.8 s fallback no longer runs while a placeholder is in the column: it did, and two_point shifted
#: 0.47 in a full run), and the text sections then grow in view as before: the limits leave room
#: for that, not for the old layout.
SHIFT_LIMITS = {"home": 0.25, "two_point": 0.4, "hemisphere": 0.3}


@pytest.mark.parametrize("stem", list(SHIFT_LIMITS))
def test_a_first_visit_keeps_its_layout(browser, server, stem):
    """The sidebar's place, the wide column and the script-only elements hold from the first paint
    (assets/first_paint.css in the document): the page does not jump when the first run arrives."""
    ctx = browser.new_context(viewport=b.VIEWPORT)
    try:
        page = ctx.new_page()
        page.add_init_script(SHIFTS_JS)
        b.goto(page, f"{server}/{'' if stem == 'home' else stem}?lang=en")
        page.wait_for_timeout(1000)
        shift = page.evaluate("() => window.__tosShift")
        assert shift <= SHIFT_LIMITS[stem], f"{stem}: layout shift {shift:.3f}"
        held = page.evaluate(
            "() => ['tos-boot', 'tos-wait', 'tos-nav'].filter((c) => document.documentElement.classList.contains(c))"
        )
        assert held == [], f"{stem}: still held {held}"
    finally:
        ctx.close()


def test_the_page_column_is_held_while_streamlit_placeholders_are_in_it(browser):
    """tos-wait (ui.server.compress): on a page without a formula the column shows 0.8 s after its
    first element, but not while a Streamlit placeholder (stSkeleton, which grows when its element's
    code arrives) is in it. Under load that code came more than 0.8 s after the first element, and
    the text grew in view (two_point: layout shift 0.47 in a full run). The document's own script,
    on a stand-in page whose elements the test adds."""
    from ui.server import compress

    head, _ = compress.document_head()
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        page.set_content("<html><head>" + head.decode() + "</head><body><div data-testid='stMain'></div></body></html>")
        held = "() => document.documentElement.classList.contains('tos-wait')"
        add = """(html) => document.querySelector('[data-testid="stMain"]').insertAdjacentHTML('beforeend', html)"""
        assert page.evaluate(held)
        page.evaluate(add, "<div data-testid='stElementContainer'>title</div><div data-testid='stSkeleton'></div>")
        page.wait_for_timeout(1500)  # longer than the 0.8 s: a placeholder holds the column
        assert page.evaluate(held)
        page.evaluate("() => document.querySelector('[data-testid=\"stSkeleton\"]').remove()")
        page.wait_for_function(f"() => !({held})()", timeout=10_000)  # then 0.8 s without one
        # a formula releases it at once
        page.set_content("<html><head>" + head.decode() + "</head><body><div data-testid='stMain'></div></body></html>")
        page.evaluate(add, "<div data-testid='stSkeleton'></div><span class='katex'>x</span>")
        page.wait_for_function(f"() => !({held})()", timeout=2_000)
    finally:
        ctx.close()


# Every partial bundle's address answered with the plotly package's full bundle (loaded by a
# script element the page adds before any of its own code runs)
FULL_JS = """([urls, full]) => {
  window.__tosPlotlyAt = {};
  const p = new Promise((resolve) => {
    const go = () => { const s = document.createElement('script'); s.src = full;
      s.onload = () => resolve(window.Plotly); document.head.appendChild(s); };
    if (document.head) go(); else document.addEventListener('DOMContentLoaded', go);
  });
  for (const u of urls) window.__tosPlotlyAt[u] = p;
}"""


# One short hash per chart of what it draws: its SVG layers with each element's attributes sorted
# (the order depends on how often plotly.js has redrawn an element), without the random ids
# plotly.js gives each chart (its clip paths) and trace (a class name); plus, for WebGL traces that
# draw on a canvas, the plotted data. The same figure drawn twice has the same signature.
DRAWN_JS = r"""() => {
  const h = (s) => { let x = 0x811c9dc5; for (let i = 0; i < s.length; i++) {
      x ^= s.charCodeAt(i); x = Math.imul(x, 0x01000193); } return (x >>> 0).toString(16); };
  const ser = (n) => n.nodeType === 3 ? n.nodeValue : n.nodeType !== 1 ? '' :
    '<' + n.tagName + [...n.attributes].map((a) => a.name + '=' + a.value).sort().join(' ') + '>'
    + [...n.childNodes].map(ser).join('') + '</>';
  return [...document.querySelectorAll('[data-testid="appPlotlyChart"]')].map((c) => {
    const gd = c.querySelector('.js-plotly-plot');
    const uid = (gd && gd._fullLayout && gd._fullLayout._uid) || '#';
    let s = [...c.querySelectorAll('.main-svg')].map(ser).join('|').split(uid).join('U')
      .replace(/\btrace[0-9a-f]{6}\b/g, 'T');
    if (c.querySelector('canvas')) {
      try { s += JSON.stringify(gd && gd.data); } catch (e) { /* circular: ignore */ }
    }
    return h(s);
  });
}"""


def settled(page, tries: int = 20) -> list[str]:
    """The drawing's signature once it stays the same for half a second (a chart drawn while the
    page's column was still settling is drawn again at its final width, 100 ms later)."""
    last = page.evaluate(DRAWN_JS)
    for _ in range(tries):
        page.wait_for_timeout(500)
        now = page.evaluate(DRAWN_JS)
        if now == last:
            return now
        last = now
    return last


@pytest.mark.parametrize("stem", ["two_point", "hemisphere"])
def test_the_partial_bundle_draws_what_the_full_one_draws(browser, server, stem):
    drawn = {}
    for how in ("partial", "full"):
        ctx = browser.new_context(viewport=b.VIEWPORT, locale="en-US")
        try:
            page = ctx.new_page()
            if how == "full":
                urls = [chart.asset_path(n) for n in ("2d", "3d")]
                page.add_init_script(f"({FULL_JS})({[urls, chart.asset_path()]!r})")
            b.goto(page, f"{server}/{stem}?lang=en")
            loaded = page.evaluate(
                "() => [...document.querySelectorAll('script[src*=\"/_app/plotly\"]')]"
                ".map((s) => new URL(s.src).pathname)"
            )
            assert (chart.asset_path() in loaded) == (how == "full"), loaded
            drawn[how] = (
                settled(page),
                page.evaluate(
                    "() => [...document.querySelectorAll('.js-plotly-plot')].map((g) => g._fullData.map((t) => t.type))"
                ),
            )
            assert not b.exceptions(page)
            # a 3-D scene is drawn at the screen's pixel density (1 here), not plotly's default 2
            canvases = page.evaluate(
                "() => [...document.querySelectorAll('.js-plotly-plot canvas')].map((c) => [c.width, c.clientWidth])"
            )
            assert all(w == cw for w, cw in canvases) and (bool(canvases) == (stem == "hemisphere")), canvases
        finally:
            ctx.close()
    assert drawn["partial"][1] == drawn["full"][1] and drawn["partial"][1], drawn
    assert drawn["partial"][0] == drawn["full"][0]
