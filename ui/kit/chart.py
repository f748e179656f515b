"""A Plotly chart that is updated in place: a slider step redraws the figure with ``Plotly.react``
on the chart already on the page, instead of a new chart.

Why not ``st.plotly_chart``: Streamlit 1.67 derives a chart's element id from its figure, even
when the chart has a key, so after a slider step every changed figure is a new element: the
browser drops the old chart and draws the new one from scratch (``Plotly.newPlot``; a 3-D scene
gets a new WebGL context and compiles its shaders again: 0.6-1.1 s of CPU per scene in headless
Chromium). Keeping the element (the key alone) keeps the chart, but its frontend takes the
figure once per element, so the chart then keeps its first figure (docs/performance.md).

Here the figure goes to a small Streamlit component (``st.components.v2``, no iframe) whose
identity is its key only. Its JavaScript keeps one plot ``div`` per chart and hands every new
figure to ``Plotly.react``, which changes only what changed (traces' data, a title) and keeps a
3-D scene's WebGL context. Figures that arrive while one is being drawn wait; only the newest
of them is drawn.

What the browser receives is what ``st.plotly_chart`` would send (the same
``plotly.tools.return_figure_from_figure_or_data`` and ``plotly.io.to_json``), and the same
config. plotly.js is the copy the installed plotly package ships (``plotly/package_data``),
served by this app at ``/_app/plotly-<version>.min.js`` (:func:`asset_routes`, cached by the
browser for a year: the address changes with the version), loaded once per tab, ahead of the
first chart when the browser is idle (:func:`preload_html`, ``ui.kit.style.preload_charts``).

Where the chart is in the page: ``[data-testid="appPlotlyChart"]`` (the tests and benchmarks
find charts by it), with the plot ``div`` (``.js-plotly-plot``) inside; it carries
``data-drawing`` from the moment a figure arrives until the newest one is drawn.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from pathlib import Path

import plotly
import plotly.io as pio
import streamlit as st

from ui import streamlit_internals as internals
from ui.kit import bundles

NAME = "tos_plot"
TESTID = "appPlotlyChart"

# The loader is the same code in the chart and in the preload (one script element per bundle and
# tab). A figure names the bundle it needs and the bundles that also have its trace types (the 3-D
# bundle has every 2-D type, the full one every type): one already loaded or loading is used, so a
# page whose first figure is 3-D loads one bundle only. Each bundle is its own Plotly (the UMD
# bundle sets window.Plotly as it runs; the load event follows at once): a chart keeps the one it
# was drawn with (gd.__tosP) for its resizes and purge.
_LOADER = r"""
function tosPlotly(url, also) {
  const at = (window.__tosPlotlyAt = window.__tosPlotlyAt || {});
  for (const u of [url].concat(also || [])) if (at[u]) return at[u];
  at[url] = new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.src = url; s.async = true; s.dataset.tosPlotly = '1';
    s.onload = () => resolve(window.Plotly);
    s.onerror = (e) => { delete at[url]; s.remove(); reject(e); };
    document.head.appendChild(s);
  });
  return at[url];
}
"""

JS = (
    _LOADER
    + r"""
export default function (component) {
  const { data, parentElement } = component;
  const text = typeof data === 'string' ? data : new TextDecoder().decode(data);
  const msg = JSON.parse(text);
  let host = parentElement.querySelector(':scope > div[data-testid="@TESTID@"]');
  if (!host) {
    host = document.createElement('div');
    host.dataset.testid = '@TESTID@';
    host.style.width = '100%';
    host.appendChild(document.createElement('div'));
    parentElement.appendChild(host);
    // the column's width can change without the window's (the sidebar folded, a phone turned):
    // Plotly's own 'responsive' follows the window only
    if (window.ResizeObserver) {
      let width = 0, timer = null;
      new ResizeObserver((entries) => {
        const w = Math.round(entries[0].contentRect.width);
        if (!w || w === width) return;
        const first = width === 0;
        width = w;
        if (first) return;
        clearTimeout(timer);
        timer = setTimeout(() => {
          const gd = host.firstChild;
          if (gd && gd.__tosP && gd._fullLayout) gd.__tosP.Plots.resize(gd);
        }, 100);
      }).observe(host);
    }
  }
  const gd = host.firstChild;
  const seq = (gd.__tosSeq = (gd.__tosSeq || 0) + 1);
  const fig = msg.fig;
  // the figure's height kept from the moment it arrives, before plotly.js has loaded and drawn it:
  // the page below does not jump down when it is drawn (a layout shift on every first visit)
  const tall = Math.round(Number((fig.layout || {}).height) || 450);
  if (host.style.minHeight !== tall + 'px') host.style.minHeight = tall + 'px';
  host.dataset.drawing = '1';  // until the newest figure is drawn (tests and benchmarks wait for it)
  // one draw at a time per chart; a figure superseded while it waited is not drawn
  gd.__tosChain = (gd.__tosChain || Promise.resolve()).then(() => {
    if (gd.__tosSeq !== seq) return null;
    return tosPlotly(msg.url, msg.also).then((P) => (gd.__tosP = P).react(gd, {
      data: fig.data || [], layout: fig.layout || {}, frames: fig.frames,
      // a 3-D scene drawn at the screen's own pixel density (plotly.js draws it at twice that on
      // any screen: four times the pixels on an ordinary display; an exported image keeps 2)
      config: Object.assign({plotGlPixelRatio: Math.min(2, Math.max(1, window.devicePixelRatio || 1))}, msg.config)}));
  }).catch((e) => { console.error('chart', e); }).finally(() => {
    if (gd.__tosSeq === seq) delete host.dataset.drawing;
  });
  return () => {  // unmounted (not merely updated): free the chart, its WebGL contexts too
    setTimeout(() => { if (!host.isConnected && gd.__tosP) gd.__tosP.purge(gd); }, 0);
  };
}
""".replace("@TESTID@", TESTID)
)

_component = None


def component():
    """The registered component (registered on first use, once per process)."""
    global _component
    if _component is None:
        _component = st.components.v2.component(NAME, js=JS, isolate_styles=False)
    return _component


# --------------------------------------------------------------------------- plotly.js
@functools.cache
def plotly_js() -> Path:
    """The plotly.js bundle of the installed plotly package."""
    return Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"


@functools.cache
def plotly_js_version() -> str:
    """plotly.js's version, from the bundle's header (``plotly.js v4.1.1``)."""
    try:
        with open(plotly_js(), encoding="utf-8") as f:
            head = f.read(400)
    except OSError:
        return "0"
    m = re.search(r"plotly\.js v(\d+\.\d+\.\d+)", head)
    return m.group(1) if m else "0"


def asset_path(bundle: str | None = None) -> str:
    """The address a plotly.js bundle is served at, below the server's base path: the plotly
    package's full bundle (``None``) or a partial one (``ui.kit.bundles``: "2d", "3d")."""
    return f"/_app/plotly-{bundle + '-' if bundle else ''}{plotly_js_version()}.min.js"


def plotly_url(bundle: str | None = None) -> str:
    """That address as the browser asks for it (with ``server.baseUrlPath``)."""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return (f"/{base}" if base else "") + asset_path(bundle)


def asset_routes(base: str = "") -> list:
    """``GET /_app/plotly-<version>.min.js`` (the full bundle) and ``/_app/plotly-<name>-<version>.min.js``
    (each partial bundle of ``assets/vendor/plotly``; the full one in its place when it is not
    usable): cacheable for a year (immutable: a new version has a new address). Compressed by
    ``ui.server.compress`` once per server."""
    from starlette.responses import FileResponse, Response
    from starlette.routing import Route

    base = f"/{base.strip('/')}" if base.strip("/") else ""

    def serving(name: str | None):
        async def serve(request):
            path = (name and bundles.path_of(name, plotly_js_version())) or plotly_js()
            if not path.is_file():
                return Response("plotly.js is not installed", status_code=404)
            return FileResponse(
                path, media_type="text/javascript", headers={"Cache-Control": "public, max-age=31536000, immutable"}
            )

        return serve

    names = [None, *(bundles.manifest().get("bundles") or {})]
    return [Route(f"{base}{asset_path(n)}", serving(n), methods=["GET", "HEAD"]) for n in names]


#: the chart toolbar's buttons: download as image and reset (the one that fits the figure's axes);
#: nothing else (no zoom/pan mode buttons, no hover toggles; nothing that posts to another host)
TOOLBAR = ("toImage", "resetScale2d", "resetCameraDefault3d")
_TOOLBAR_3D = {"resetCameraDefault3d"}
_NO_OUTSIDE = {"showSendToCloud": False, "showEditInChartStudio": False, "showLink": False, "displaylogo": False}


def toolbar(config: dict, scene: bool) -> dict:
    """``config`` with the toolbar reduced to :data:`TOOLBAR` (the buttons of this kind of figure)."""
    keep = [b for b in TOOLBAR if (b in _TOOLBAR_3D) == scene or b == "toImage"]
    return {**config, **_NO_OUTSIDE, "modeBarButtons": [keep]}


_PRELOAD = r"""<script>(() => {%s
  if (window.__tosChartsPreloaded) return;
  window.__tosChartsPreloaded = true;
  const go = () => {
    if (Object.keys(window.__tosPlotlyAt || {}).length) return;  // a chart is loading one already
    tosPlotly(%s).then(() => { window.__tosChartsLoaded = true; }, () => {});
  };
  (window.requestIdleCallback || ((f) => setTimeout(f, 300)))(go, {timeout: 4000});
})();</script>"""


def preload_html() -> str:
    """A script that loads plotly.js once the browser is idle, before any chart asks for it: while
    the server runs a lesson page (the download and the evaluation overlap the run) or while the
    student reads a page without charts. The bundle is the one the page's charts will ask for: the
    3-D one on a page that has drawn a 3-D scene in this process, else the 2-D one."""
    scene = bool(_page_keys(internals.run_ctx()) & _SCENE_PAGES)
    usable = [n for n, _, traces in bundles.usable(plotly_js_version()) if not scene or traces & bundles.SCENE_TYPES]
    return _PRELOAD % (_LOADER, json.dumps(plotly_url(usable[0] if usable else None)))


def _page_keys(ctx) -> set[str]:
    """What names the page of a run: its script hash and the page its request asked for (by name on
    a first request by address, by hash from the sidebar: before the navigation has resolved the
    page, the run's script hash is app.py's)."""
    intended = (internals.intended_page(ctx) if ctx is not None else None) or ("", "")
    return {k for k in (internals.page_script_hash(ctx), *intended) if k}


# --------------------------------------------------------------------------- drawing
def _figure(fig) -> dict:
    return plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True)


def figure_json(fig) -> str:
    """The figure's JSON exactly as ``st.plotly_chart`` makes it."""
    return pio.to_json(_figure(fig), validate=False)


#: pages (script hashes) that have drawn a 3-D scene in this process: every figure of theirs asks for
#: the 3-D bundle, so that a 2-D figure drawn before the scene does not load the 2-D one as well
_SCENE_PAGES: set[str] = set()


def payload(fig, config: dict) -> bytes:
    """What the chart's JavaScript receives: the address of the plotly.js bundle the figure needs
    (``url``) and of the others that would do (``also``, a bundle already loaded is used), the
    config with the app's toolbar (:func:`toolbar`), the figure."""
    figure = _figure(fig)
    types = bundles.trace_types(figure)
    scene = bundles.has_scene(figure, types)
    page = _page_keys(internals.run_ctx())
    if scene and len(_SCENE_PAGES) < 256:
        _SCENE_PAGES.update(page)
    fits = bundles.choose(types | ({"scatter3d"} if page & _SCENE_PAGES else set()), plotly_js_version())
    urls = [plotly_url(n) for n in fits] + [plotly_url()]
    head = json.dumps({"url": urls[0], "also": urls[1:], "config": toolbar(config, scene)})
    return f'{head[:-1]}, "fig": {pio.to_json(figure, validate=False)}}}'.encode()


_sent = threading.local()


def draw(fig, key: str, config: dict) -> None:
    """Draw ``fig`` as the chart ``key`` (the same chart from one run to the next)."""
    data = payload(fig, config)
    _sent.bytes = getattr(_sent, "bytes", 0) + len(data)
    component()(key=key, data=data, width="stretch", height="content")


def take_sent_bytes() -> int:
    """The bytes of figures this thread's run has sent since the last call (and start again from
    0): what the browser has to draw for it (``ui.server.runs.settled`` reads it at a run's end)."""
    n = getattr(_sent, "bytes", 0)
    _sent.bytes = 0
    return n


def sent_figure(proto) -> dict | None:
    """The figure an element of this component carries (``None`` for any other element); for
    tests and benchmarks that read what a run sent."""
    if getattr(proto, "component_name", None) != NAME or proto.WhichOneof("data") != "bytes":
        return None
    return json.loads(proto.bytes.decode())["fig"]


# --------------------------------------------------------------------------- for assistive technology
#: plotly.js's own English words on the kept toolbar, by their key in common.toml ``[chart]``
_TOOLBAR_WORDS = {
    "download": "Download plot as a PNG",
    "reset": "Reset axes",
    "reset_camera": "Reset camera to default",
}
#: plotly.js's locale of each of the app's languages other than English
PLOTLY_LOCALE = {"zh": "zh-CN"}


def localized(config: dict, lang: str) -> dict:
    """``config`` with the toolbar's words in ``lang``: plotly.js's ``locale`` and an inline
    ``locales`` dictionary (nothing else of plotly.js's locale files is loaded; numbers and dates
    keep plotly.js's default format)."""
    loc = PLOTLY_LOCALE.get(lang)
    if loc is None:
        return config
    from ui.kit.i18n import Text

    t = Text("common", lang)
    words = {en: t(f"chart.{k}") for k, en in _TOOLBAR_WORDS.items()}
    return {**config, "locale": loc, "locales": {loc: {"dictionary": words, "format": {}}}}


#: Each chart as one figure for assistive technology (run by the document script,
#: ``ui.kit.lang.mark_document``, whenever the page changed): the chart's element gets
#: role="figure", its title as its name (``words.chart`` when it has none) and its "In words"
#: caption (``ui.kit.access.describe_below``, the container ``tos_alt_<key>`` under it) as its
#: description; plotly.js's drawing (SVG layers, WebGL canvases) is hidden from the accessibility
#: tree; the toolbar is a named toolbar whose buttons are buttons with a name and a Tab stop
#: (plotly.js draws them as links without an address: a keyboard could not reach them).
ARIA_JS = r"""
function tosChartAria(words) {
  let n = 0;
  for (const host of document.querySelectorAll('[data-testid="%(testid)s"]')) {
    n++;
    const gd = host.querySelector('.js-plotly-plot');
    if (!gd || !gd._fullLayout) continue;
    const title = (gd._fullLayout.title && gd._fullLayout.title.text) || '';
    // (no less-than sign in this code: st.html would take it as the start of a tag and drop the script)
    const name = title.replace(/\x3cbr\s*\/?>/gi, ' ').replace(/\x3c[^>]+>/g, '').replace(/\s+/g, ' ').trim()
      || words.chart;
    if (host.getAttribute('role') !== 'figure') host.setAttribute('role', 'figure');
    if (host.getAttribute('aria-label') !== name) host.setAttribute('aria-label', name);
    const box = host.closest('[class*="st-key-"]');
    const key = box && (box.className.match(/(?:^|\s)st-key-(\S+)/) || [])[1];
    const alt = key && document.querySelector('.st-key-tos_alt_' + CSS.escape(key));
    const cap = alt && alt.querySelector('[data-testid="stCaptionContainer"]');
    if (cap) {
      if (!cap.id) cap.id = 'tos-alt-' + key;
      if (host.getAttribute('aria-describedby') !== cap.id) host.setAttribute('aria-describedby', cap.id);
    }
    for (const el of gd.querySelectorAll('svg.main-svg, canvas, .gl-container')) {
      if (el.getAttribute('aria-hidden') !== 'true') el.setAttribute('aria-hidden', 'true');
    }
    const bar = gd.querySelector('.modebar');
    if (bar && bar.getAttribute('role') !== 'toolbar') {
      bar.setAttribute('role', 'toolbar');
      bar.setAttribute('aria-label', words.toolbar);
    }
    for (const b of gd.querySelectorAll('.modebar-btn')) {
      const label = b.getAttribute('data-title') || '';
      if (b.getAttribute('aria-label') !== label) b.setAttribute('aria-label', label);
      if (b.getAttribute('role') !== 'button') {
        b.setAttribute('role', 'button');
        b.tabIndex = 0;
        b.addEventListener('keydown', (e) => {
          if (e.key !== 'Enter' && e.key !== ' ') return;
          e.preventDefault();
          b.dispatchEvent(new MouseEvent('click', {bubbles: true}));
        });
      }
    }
  }
  return n;
}
""" % {"testid": TESTID}  # noqa: UP031 - JavaScript braces
