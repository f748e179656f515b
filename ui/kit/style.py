"""How the app looks on a phone, on a projector and on paper: one place for all three.

- :func:`inject` (once per run, app.py) adds ``assets/style.css`` (wide equations scroll inside their
  own box on a phone, figure titles fit, ``@media print`` rules) and, in projector mode,
  ``assets/projector.css`` (larger text, black on white).
- Projector mode is ``?projector=1`` or the sidebar toggle (:func:`projector_toggle`); it stays in
  the URL (:func:`url_flags`, merged into every page's query by ``ui.kit.page.setup``).
- Figures: :func:`for_screen` gives the projector variant of a shared frozen figure (larger fonts,
  thicker lines and markers, darker axes; the same Okabe–Ito colours). The shared figure cache is
  untouched: the variant is derived from it once per figure and kept beside it.
- :func:`print_header`: the current parameters, written under the title, shown only in print.
"""

from __future__ import annotations

import copy
from pathlib import Path

import streamlit as st

from ui.kit.frozen import Frozen, freeze

ASSETS = Path(__file__).resolve().parents[2] / "assets"
KEY = "projector"
_CSS: dict[str, tuple[float, str]] = {}


def _css(name: str) -> str:
    path = ASSETS / name
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return ""
    hit = _CSS.get(name)
    if hit is None or hit[0] != mtime:
        hit = (mtime, path.read_text(encoding="utf-8"))
        _CSS[name] = hit
    return hit[1]


def _truthy(raw) -> bool:
    return str(raw).strip().lower() in ("1", "true", "yes", "on")


def projector_on() -> bool:
    """Projector mode: the sidebar toggle's state, else ``?projector=1`` in the URL."""
    if KEY in st.session_state:
        return bool(st.session_state[KEY])
    return _truthy(st.query_params.get(KEY, ""))


def projector_toggle(label: str) -> bool:
    """The sidebar switch (drawn once per run in app.py); starts from the URL."""
    if KEY not in st.session_state:
        st.session_state[KEY] = _truthy(st.query_params.get(KEY, ""))
    st.sidebar.toggle(label, key=KEY)
    return bool(st.session_state[KEY])


def url_flags() -> dict:
    """Query entries that belong in every page's URL (the share link keeps projector mode)."""
    return {KEY: "1"} if projector_on() else {}


def inject() -> None:
    """The app's CSS (and the projector CSS when that mode is on), once per run; and the chart
    code fetched ahead (:func:`preload_charts`)."""
    css = _css("style.css") + (_css("projector.css") if projector_on() else "")
    st.html(f"<style>{css}</style>")
    preload_charts()


def preload_charts() -> None:
    """Have the browser load and evaluate plotly.js (4.8 MB of JavaScript, ~1-2 s of CPU in
    Chromium) while it is idle, once per browser tab: on a page without charts (the home page,
    the glossary) the student is reading; without this the first lesson they open paid it on top
    of drawing its figures. A page with charts loads it anyway (``ui.kit.chart``, the same script
    element): nothing changes there. In a hidden container (``.st-key-tos_preload`` in
    assets/style.css); nothing is shown."""
    from ui.kit import chart

    with st.container(key="tos_preload"):
        st.html(chart.preload_html(), unsafe_allow_javascript=True)


# --------------------------------------------------------------------------- figures
#: projector variants, keyed by the id of the shared frozen figure (kept alive beside it)
_VARIANTS: dict[int, tuple[object, dict]] = {}
_MAX_VARIANTS = 256
FONT_SCALE, LINE_SCALE, MARKER_SCALE, HEIGHT_SCALE = 1.35, 1.7, 1.35, 1.15


def projector_spec(spec: dict) -> dict:
    """A projector version of a serialised figure: fonts x1.35, lines x1.7, markers x1.35, the
    figure a little taller, black axes and darker grid lines. Colours are kept (Okabe–Ito)."""
    s = copy.deepcopy(spec)
    lay = s.setdefault("layout", {})
    base = (((lay.get("template") or {}).get("layout") or {}).get("font") or {}).get("size", 13)
    lay["font"] = {
        **(lay.get("font") or {}),
        "size": round((lay.get("font") or {}).get("size", base) * FONT_SCALE),
        "color": "#000",
    }
    title = lay.get("title")
    if isinstance(title, dict) and isinstance(title.get("font"), dict) and "size" in title["font"]:
        title["font"]["size"] = round(title["font"]["size"] * FONT_SCALE)
    if isinstance(lay.get("height"), (int, float)):
        lay["height"] = round(lay["height"] * HEIGHT_SCALE)
    margin = lay.get("margin")
    if isinstance(margin, dict) and isinstance(margin.get("t"), (int, float)):
        margin["t"] = round(margin["t"] * FONT_SCALE)
    for name, ax in list(lay.items()):
        if name.startswith(("xaxis", "yaxis")) and isinstance(ax, dict):
            ax.update(linecolor="#000", tickcolor="#000", linewidth=2, gridcolor="#CFCFCF")
    for tr in s.get("data", []):
        _thicker(tr)
    for fr in s.get("frames", []) or []:
        for tr in fr.get("data", []) or []:
            _thicker(tr)
    return s


def _thicker(tr: dict) -> None:
    ln = tr.get("line")
    if isinstance(ln, dict):
        tr["line"] = {**ln, "width": round(ln.get("width", 2) * LINE_SCALE, 2)}
    mk = tr.get("marker")
    if isinstance(mk, dict) and isinstance(mk.get("size"), (int, float)):
        tr["marker"] = {**mk, "size": round(mk["size"] * MARKER_SCALE, 2)}


def for_screen(fig):
    """``fig`` as this session should see it: itself, or its projector variant (built once per
    shared figure). ``fig`` is a ``ui.kit.figures.Frozen`` or a live ``go.Figure``."""
    if not projector_on():
        return fig
    if not isinstance(fig, Frozen):
        return _spec_figure(projector_spec(freeze(fig).spec))
    hit = _VARIANTS.get(id(fig))
    if hit is None or hit[0] is not fig:
        if len(_VARIANTS) >= _MAX_VARIANTS:
            _VARIANTS.pop(next(iter(_VARIANTS)))
        hit = (fig, projector_spec(fig.spec))
        _VARIANTS[id(fig)] = hit
    return _spec_figure(hit[1])


def _spec_figure(spec: dict):
    out = Frozen.__new__(Frozen)
    object.__setattr__(out, "_spec", spec)
    return out


# --------------------------------------------------------------------------- print
def print_header(t, res, values: dict) -> None:
    """The current parameters as one line under the title, visible only when printed."""
    if not values:
        return
    parts = []
    for name, v in values.items():
        label = t(f"params.{name}.label") if t.has(f"params.{name}.label") else name
        p = res.params.get(name)
        if p is not None and p.kind == "select":
            k = f"params.{name}.options.{v}"
            v = t(k) if t.has(k) else v
        elif isinstance(v, float):
            v = f"{v:.6g}"
        parts.append(f"{label} = {v}")
    with st.container(key="tos_print_params"):  # class st-key-tos_print_params: shown only in print
        st.caption(f"**{t('view.print_params')}:** " + " · ".join(map(str, parts)))
