"""Frozen figures: a finished Plotly figure serialised once, then shared read-only.

The machinery behind the figure vocabulary (``ui.kit.figures``): :class:`Frozen` and its serialiser
:func:`spec_dict` (Plotly's ``to_dict`` without its deep copy), :func:`typed` arrays, the trace
validator a figure is built with when validation is off (:func:`unchecked`), and the shared cache
of page figures (:func:`cached_figure`).
"""

from __future__ import annotations

import base64
import copy
import functools

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from plotly.basedatatypes import BaseFigure

from ui import streamlit_internals
from ui.kit.finish import fit_legend_spec, fit_log_ticks


class _TracesUnchecked:
    """A figure's trace validator that builds traces without Plotly's per-property validation.

    ``go.Figure(_validate=False)`` skips validation in the constructor only: ``fig.add_trace`` (what
    ``exact_line``, ``sim_markers`` and many builders use) still validates every property of the new
    trace, and its arrays go through Plotly's generic (narwhals) array checks.
    With ``VALIDATE`` off this passes ``_validate=False`` there too; the tests build every page's
    figures with ``VALIDATE`` on (tests/test_rerun_cost.py)."""

    def __init__(self, inner) -> None:
        self._inner = inner

    def validate_coerce(self, v, skip_invalid=False, _validate=False):
        return self._inner.validate_coerce(v, skip_invalid=skip_invalid, _validate=False)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def unchecked(fig: go.Figure, validate: bool) -> go.Figure:
    """``fig`` whose ``add_trace``/``add_traces`` skip validation unless ``validate``."""
    if not validate:
        streamlit_internals.set_data_validator(fig, _TracesUnchecked(streamlit_internals.data_validator(fig)))
    return fig


class Frozen(BaseFigure):
    """A finished figure, serialised once and afterwards only read.

    ``st.plotly_chart`` turns a figure into JSON through ``to_dict()``, which deep-copies every
    trace, layout entry and animation frame and re-encodes its arrays — on every rerun of every
    session (more with frames). A figure kept in a shared cache is
    wrapped once: ``to_dict()`` then returns the stored dict (Plotly's own output, so what reaches
    the browser is identical; ``tests/test_figures.py`` checks that). Read-only by design: there is
    nothing to mutate, and sharing it between reruns and sessions is safe.
    """

    def __init__(self, fig: go.Figure, frames: list[dict] | None = None) -> None:  # noqa: D107
        # BaseFigure.__init__ is skipped on purpose: nothing of a live figure is needed.
        fit_log_ticks(fig)
        spec = spec_dict(fig)
        fit_legend_spec(spec["layout"], spec.get("data", ()))  # on the dict: Plotly's update_layout costs ms per figure
        if frames is not None:
            # Animation frames as plain dicts (``{"data": [...], "traces": [...], "name": ...}``):
            # Plotly validates each frame's traces one by one; these go to
            # the browser as given (numpy arrays are encoded by Plotly's JSON encoder).
            spec["frames"] = [_typed_arrays(f) for f in frames]
        object.__setattr__(self, "_spec", spec)

    def to_dict(self) -> dict:
        return self._spec

    def to_plotly_json(self) -> dict:
        return self._spec

    @property
    def spec(self) -> dict:
        """The serialised figure (``data``, ``layout``, ``frames``): read it, do not change it."""
        return self._spec

    def __repr__(self) -> str:
        return f"Frozen({len(self._spec.get('data', []))} traces, {len(self._spec.get('frames', []))} frames)"


def spec_dict(fig: go.Figure) -> dict:
    """``fig.to_dict()``, the same dict, built without its deep copy.

    ``to_dict`` deep-copies every trace, the layout and the frames, then replaces numpy arrays by
    Plotly's typed-array form (``convert_to_base64``); the copy (a Python call per list element)
    and Plotly's array checks were most of the cost of freezing a page's figures after a slider
    move. Here the containers are copied while walking and arrays encoded
    directly, the way Plotly encodes them; scalars and strings are shared (immutable). The figure
    itself is not changed. ``tests/test_figures.py`` checks the result equals ``fig.to_dict()``."""
    traces, layout, frame_props = streamlit_internals.figure_parts(fig)
    res = {"data": [_spec_tree(tr) for tr in traces], "layout": _spec_tree(layout)}
    frames = [_spec_tree(f) for f in frame_props]
    if frames:
        res["frames"] = frames
    return res


_SKIPPED = frozenset(("geojson", "layer", "layers", "range"))  # plotly's is_skipped_key: kept as they are
_NARROW = {"int64": (np.int8, np.int16, np.int32), "uint64": (np.uint8, np.uint16, np.uint32)}


def _spec_tree(obj):
    """A copy of one node of a figure's property tree, numpy arrays in typed-array form."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k in _SKIPPED:
                out[k] = copy.deepcopy(v)
            elif isinstance(v, np.ndarray):
                out[k] = _plotly_typed(v)
            elif isinstance(v, (dict, list, tuple)):
                out[k] = _spec_tree(v)
            else:
                out[k] = v
        return out
    if isinstance(obj, list):
        return [_spec_tree(v) if isinstance(v, (dict, list, tuple, np.ndarray)) else v for v in obj]
    if isinstance(obj, tuple):
        return tuple(_spec_tree(v) if isinstance(v, (dict, list, tuple, np.ndarray)) else v for v in obj)
    if isinstance(obj, np.ndarray):  # an array inside a list: Plotly leaves it (a copy) as an array
        return obj.copy()
    return obj


def _plotly_typed(v: np.ndarray):
    """``_plotly_utils.utils.to_typed_array_spec`` for a numeric numpy array, without its generic
    (narwhals) array checks; anything else goes through Plotly's own function."""
    if v.dtype.kind not in "iuf" or v.size == 0 or v.dtype.byteorder not in "=|":
        from _plotly_utils.utils import to_typed_array_spec

        return to_typed_array_spec(v)
    v = np.ascontiguousarray(v)
    name = v.dtype.name
    if name in _NARROW:
        lo, hi = v.min(), v.max()
        for t in _NARROW[name]:
            if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max:
                v = v.astype(t)
                break
        else:
            return v.copy()
    code = _JS_TYPES.get(v.dtype.name)
    if code is None:
        return v.copy()
    spec = {"dtype": code, "bdata": base64.b64encode(v).decode("ascii")}
    if v.ndim > 1:
        spec["shape"] = str(v.shape)[1:-1]
    return spec


_JS_TYPES = {
    "float32": "f4",
    "float64": "f8",
    "int8": "i1",
    "uint8": "u1",
    "int16": "i2",
    "uint16": "u2",
    "int32": "i4",
    "uint32": "u4",
}


def typed(a, dtype=None):
    """A numeric array in Plotly's typed-array form ``{"dtype", "bdata"[, "shape"]}``.

    This is what ``Figure.to_dict`` sends to the browser anyway; handing Plotly (or a frame dict) the
    encoded form skips its per-array validation. ``dtype=np.float32`` halves the bytes of drawing
    data (~1e-7 relative). 64-bit integers are narrowed to 32 bits as Plotly does (plotly.js has
    none); what cannot be encoded is returned as a list."""
    a = np.ascontiguousarray(a, dtype=dtype)
    if a.dtype.kind in "iu" and a.dtype.itemsize == 8 and a.size:
        narrow = np.int32 if a.dtype.kind == "i" else np.uint32
        if np.iinfo(narrow).min <= a.min() and a.max() <= np.iinfo(narrow).max:
            a = a.astype(narrow)
    code = _JS_TYPES.get(a.dtype.name)
    if code is None or a.size == 0:
        return a.tolist()
    spec = {"dtype": code, "bdata": base64.b64encode(a).decode("ascii")}
    if a.ndim > 1:
        spec["shape"] = str(a.shape)[1:-1]
    return spec


def _typed_arrays(obj):
    """numpy arrays inside ``obj`` (nested dicts and lists) -> :func:`typed` form."""
    if isinstance(obj, dict):
        return {k: _typed_arrays(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_typed_arrays(v) for v in obj]
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "fiu":
        return typed(obj)
    return obj


def freeze(fig: go.Figure | Frozen) -> Frozen:
    """``fig`` as a :class:`Frozen` figure (unchanged when it already is one)."""
    return fig if isinstance(fig, Frozen) else Frozen(fig)


def cached_figure(fn=None, *, max_entries: int = 64):
    """Decorator: build a page figure once and share it between reruns and sessions.

    ``fn(t, *args) -> go.Figure | Frozen``, where ``t`` is the page's :class:`ui.kit.i18n.Text`. The result is
    :class:`Frozen` and kept in ``st.cache_resource`` (at most ``max_entries`` figures per builder),
    keyed on the language, the version of the text files and ``args`` (hashed by Streamlit: pass the
    page's parameter values and let the builder read its data from the ``cached`` compute
    functions). A cached rerun then pays neither Plotly's validation nor its deep copy, nor (for
    hashable arguments: numbers, strings, tuples) Streamlit's argument hashing. ``builder.clear()``
    empties both.
    """

    def deco(fn):
        def build(stem: str, lang: str, version: tuple, *args):
            from ui.kit.i18n import Text

            return freeze(fn(Text(stem, lang), *args))

        # Streamlit keys a cache on module + qualified name + source: make each builder distinct.
        build.__module__, build.__qualname__ = fn.__module__, f"{fn.__qualname__}.<frozen>"
        shared = st.cache_resource(max_entries=max_entries, show_spinner=False)(build)

        # In front of Streamlit's cache: a plain dict keyed on the arguments themselves (with their
        # types: 1 and 1.0 stay apart). Streamlit hashes a call's arguments on every call (paid per
        # figure by every rerun of every session); a dict look-up is far cheaper. Misses, arguments
        # that cannot be hashed, and concurrent first builds go through st.cache_resource as before.
        memo: dict = {}

        @functools.wraps(fn)
        def call(t, *args) -> Frozen:
            try:
                key = (t.stem, t.lang, t.version, *((type(a), a) for a in args))
                hit = memo.get(key)
            except TypeError:  # an unhashable argument
                return shared(t.stem, t.lang, t.version, *args)
            if hit is None:
                hit = memo[key] = shared(t.stem, t.lang, t.version, *args)
                while len(memo) > max_entries:  # oldest first; another thread may have removed it
                    try:
                        memo.pop(next(iter(memo)), None)
                    except (StopIteration, RuntimeError):
                        break
            return hit

        def clear() -> None:
            memo.clear()
            shared.clear()

        call.clear = clear
        call.cached_figure = True  # marks a shared builder (tests/test_rerun_cost.py finds them so)
        return call

    return deco(fn) if fn is not None else deco
