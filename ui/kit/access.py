"""Text alternatives for figures: what a figure shows in one line, and its plotted data one click away.

``ui.kit.figures.show(fig, key, alt=...)`` calls :func:`describe_below`: under every chart a caption
(the page's own ``alt`` sentence, else one made from the figure: its title, each axis with the
range of the plotted values, the curves' names) and a small button that downloads exactly the
plotted numbers (every trace's x, y, z) as CSV. A screen reader reads the caption right after the
chart. The description of a shared
frozen figure is made once and kept beside it; the CSV is built only when clicked.
"""

from __future__ import annotations

import base64
import functools
import re

import numpy as np
import streamlit as st

from ui.kit.frozen import Frozen
from ui.kit.i18n import Text
from ui.kit.lang import current_lang
from ui.kit.table import to_csv

_TAG = re.compile(r"<[^>]+>")
_BR = re.compile(r"<br\s*/?>", re.I)
_SUP = re.compile(r"<sup>(.*?)</sup>", re.I | re.S)


def _sup(m: re.Match) -> str:
    """A superscript in words: x<sup>2</sup> -> x^2, (1+L<sup>-2α</sup>)<sup>ℓ</sup> -> (1+L^(-2α))^ℓ
    (with the tags only stripped, an exponent would read as a factor)."""
    inner = _TAG.sub("", m.group(1)).strip()
    return f"^{inner}" if len(inner) == 1 else f"^({inner})"


_DESC: dict[int, tuple[object, dict]] = {}
_MAX = 512


def values(v) -> np.ndarray | None:
    """The numbers of a serialised Plotly array (typed ``{"dtype", "bdata"}``, list or ndarray)."""
    if v is None:
        return None
    if isinstance(v, dict) and "bdata" in v:
        a = np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
        if "shape" in v:
            a = a.reshape(tuple(int(s) for s in str(v["shape"]).split(",") if s.strip()))
        return a
    try:
        a = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        return None
    return a


def _text(x) -> str:
    if isinstance(x, dict):
        x = x.get("text")
    return re.sub(r"\s+", " ", _TAG.sub("", _SUP.sub(_sup, _BR.sub(" ", str(x or ""))))).strip()


def _num(x: float) -> str:
    return f"{x:.3g}"


def _range(arrs) -> tuple[float, float] | None:
    vals = [a[np.isfinite(a)] for a in arrs if a is not None and a.dtype.kind in "fiu" and a.size]
    vals = [v for v in vals if v.size]
    if not vals:
        return None
    return float(min(v.min() for v in vals)), float(max(v.max() for v in vals))


def summary(spec: dict, words: dict) -> dict:
    """``{"text": one line, "columns": {name: values}}`` of a serialised figure.

    ``words``: the language's ``figure``, ``curves``, ``from`` and ``to`` (and ``x``, ``y``, ``z``
    when an axis has no title), and its punctuation ``stop``, ``colon`` and ``semi``:
    Chinese text gets 。：； and no space after a full-width stop; numbers stay numbers. The curves'
    names are listed with ``semi`` (their own text often holds a comma: "欧氏流，精确解"), or with
    " | " when a name holds that too."""
    p = {**_ASCII_PUNCT, **{k: words[k] for k in _ASCII_PUNCT if k in words}}
    join = " " if p["stop"].isascii() else ""
    lay = spec.get("layout", {}) or {}
    data = [tr for tr in spec.get("data", []) or [] if isinstance(tr, dict)]
    cols: dict[str, np.ndarray] = {}
    per_axis: dict[str, list] = {"x": [], "y": [], "z": []}
    names = []
    for i, tr in enumerate(data):
        name = _text(tr.get("name")) or f"{words['trace']} {i + 1}"
        if tr.get("showlegend") is not False and name not in names and _text(tr.get("name")):
            names.append(name)
        for c in ("x", "y", "z"):
            a = values(tr.get(c))
            if a is None:
                continue
            per_axis[c].append(a.astype(float, copy=False) if a.dtype.kind in "fiu" else None)
            col = f"{name} [{c}]"
            while col in cols:
                col += "'"
            cols[col] = a.ravel()
    scene = lay.get("scene") or {}
    parts = []
    title = _text(lay.get("title"))
    if title:
        parts.append(title.rstrip(".。") + p["stop"])
    axes = []
    for c in ("x", "y", "z"):
        ax = lay.get(f"{c}axis") or scene.get(f"{c}axis") or {}
        label = _text(ax.get("title")) if isinstance(ax, dict) else ""
        rng = _range(per_axis[c])
        if rng is None or (not label and c == "z"):
            continue
        axes.append(f"{label or words[c]}{p['colon']}{words['from']} {_num(rng[0])} {words['to']} {_num(rng[1])}")
    if axes:
        parts.append(p["semi"].join(axes) + p["stop"])
    if names:
        more = "…" if len(names) > 6 else p["stop"]
        sep = p["semi"] if not any(p["semi"].strip() in n for n in names) else " | "
        parts.append(f"{words['curves']}{p['colon']}" + sep.join(names[:6]) + more)
    return {"text": join.join(parts) or words["figure"], "columns": cols}


_ASCII_PUNCT = {"stop": ".", "colon": ": ", "semi": "; "}
_FULL_WIDTH_PUNCT = {"stop": "。", "colon": "：", "semi": "；"}  # Chinese text


def _words(lang: str) -> dict:
    t = Text("common", lang)
    words = {k: t(f"view.alt_{k}") for k in ("figure", "curves", "from", "to", "x", "y", "z", "trace")}
    return {**words, **(_FULL_WIDTH_PUNCT if lang == "zh" else _ASCII_PUNCT)}


def describe(fig, lang: str) -> dict:
    """:func:`summary` of a ``ui.kit.frozen.Frozen`` (made once per shared figure) or a live figure."""
    if not isinstance(fig, Frozen):
        return summary(fig.to_dict(), _words(lang))
    hit = _DESC.get(id(fig))
    if hit is None or hit[0] is not fig or lang not in hit[1]:
        if hit is None or hit[0] is not fig:
            if len(_DESC) >= _MAX:
                _DESC.pop(next(iter(_DESC)))
            hit = (fig, {})
            _DESC[id(fig)] = hit
        hit[1][lang] = summary(fig.spec, _words(lang))
    return hit[1][lang]


def describe_below(fig, key: str | None, alt: str | None = None) -> None:
    """Under a chart: its text alternative (a caption) and a button with its plotted data."""
    lang = current_lang()
    try:
        d = describe(fig, lang)
    except Exception:  # noqa: BLE001 - a description must never break a page
        d = {"text": "", "columns": {}}
    text = alt or d["text"]
    t = Text("common", lang)
    with st.container(key=f"tos_alt_{key}" if key else None):
        st.caption(f"{t('view.alt_prefix')} {_escape(text)}")
        if key and d["columns"]:
            cols = d["columns"]
            st.download_button(
                t("view.alt_data"),
                data=lambda: to_csv(cols),
                file_name=f"{key}.csv",
                mime="text/csv",
                key=f"_data_{key}",
                on_click="ignore",
                type="tertiary",
                icon=":material/table_view:",
            )


def _escape(s: str) -> str:
    """Markdown-inert: the description is shown literally (no emphasis, no LaTeX)."""
    return re.sub(r"([\\`*_{}\[\]<>$#|~])", r"\\\1", s)


# --------------------------------------------------------------------------- names read aloud
_MATH = re.compile(r"(?<!\\)\$(.+?)(?<!\\)\$", re.S)


@functools.lru_cache(maxsize=1024)
def readable(text: str) -> str:
    """A label or help text as assistive technology should read it: each ``$…$`` formula as plain
    text (``$\\tau_{\\max}$`` -> ``τ_max``, pylatexenc's LaTeX-to-text), Markdown's ``**`` and
    backticks dropped; the rest as it is. On screen Streamlit still draws the formula."""
    from pylatexenc.latex2text import LatexNodes2Text

    conv = LatexNodes2Text(math_mode="text", strict_latex_spaces=True)

    def one(m: re.Match) -> str:
        try:
            return conv.latex_to_text(m.group(1)).strip()
        except Exception:  # noqa: BLE001 - a formula it cannot read stays as it was typed
            return m.group(1)

    out = _MATH.sub(one, str(text))
    return re.sub(r"\*\*|`", "", out)


def name_controls(texts) -> None:
    """Give assistive technology the readable form (:func:`readable`) of every control text in
    ``texts`` that holds a formula: Streamlit draws a label's Markdown and LaTeX on screen but uses
    the raw text as the slider's ``aria-label`` (and "Help for <label>"); the document script
    (``ui.kit.lang.mark_document``) replaces it wherever it appears."""
    import json

    pairs = sorted({(s, readable(s)) for s in texts if s and "$" in s}, key=lambda p: -len(p[0]))
    data = json.dumps(pairs, ensure_ascii=False).replace("<", "\\u003c")
    with st.container(key="tos_names"):
        st.html(
            f"<script>(() => {{ const d = window.__tosDoc = window.__tosDoc || {{names: []}}; d.names = {data};"
            " if (window.__tosApply) window.__tosApply(); })();</script>",
            unsafe_allow_javascript=True,
        )
