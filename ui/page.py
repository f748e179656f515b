"""Page set-up shared by every page: language, controls, URL state, notices.

A page is thin::

    SCHEMA = PageSchema("two_point", params=(...), presets=(...))

    def render():
        ctx = setup(SCHEMA)          # header, sidebar controls, URL sync
        v = ctx.values               # current parameter values
        ...                          # call cached sim functions, draw figures
        ctx.footer()

URL state: every parameter lives in the query string under its name (the
widget key), plus ``lang`` and ``preset``. A link restores the exact view;
garbage, NaN, infinite or out-of-range values are ignored or clamped with a
visible notice.
"""
from __future__ import annotations

import contextlib
import csv
import inspect
import io
import math
import re
import sys
from dataclasses import dataclass, field
from urllib.parse import urlencode

import streamlit as st

from ui import spec as _spec
from ui.answers import show_answers
from ui import share as _share
from ui import style as _style
from ui.i18n import LANG_NAMES, Text, normalize_lang
from ui.safe import literal
from ui.spec import LANGS, PageSchema, Param, Resolved

_ACTIVE = "_active_page"


# --------------------------------------------------------------------------- language
def current_lang() -> str:
    """The language in force: widget state, else ``?lang=``, else browser locale, else en."""
    state = st.session_state
    lang = normalize_lang(state.get("lang"))
    if lang:
        return lang
    raw = st.query_params.get("lang")
    lang = normalize_lang(raw)
    if lang is None:
        try:
            lang = normalize_lang(st.context.locale)
        except Exception:  # noqa: BLE001 - no browser context (tests, bare mode)
            lang = None
    return lang or "en"


def language_selector() -> str:
    """Draw the sidebar language switch (once per run, in app.py) and return the language."""
    lang = current_lang()
    raw = st.query_params.get("lang")
    if "lang" not in st.session_state:
        st.session_state["lang"] = lang
        if raw is not None and normalize_lang(raw) is None:
            st.session_state["_lang_notice"] = raw
    st.sidebar.segmented_control(
        "Language / 语言", options=list(LANGS), format_func=LANG_NAMES.get,
        key="lang", required=True, label_visibility="collapsed",
    )
    return normalize_lang(st.session_state.get("lang")) or "en"


# --------------------------------------------------------------------------- formatting
def _decimals(p: Param) -> int:
    if p.kind == "int" or not p.step:
        return 0 if p.kind == "int" else 3
    s = f"{p.step:.10f}".rstrip("0")
    return max(len(s.split(".")[1]) if "." in s else 0, 0)


def fmt_value(p: Param, v) -> str:
    """Compact, exact string for the URL."""
    if p.kind == "float":
        return f"{v:.10g}"
    if p.kind == "bool":
        return "1" if v else "0"
    return str(v)


def _parse_url_value(p: Param, raw: str):
    """Return (value, notice_kind) where notice_kind is None, 'clamped' or 'invalid'."""
    if p.kind in ("float", "int"):
        try:
            x = float(raw)
        except (TypeError, ValueError):
            return None, "invalid"
        if not math.isfinite(x):
            return None, "invalid"
        if p.kind == "int" and not x.is_integer():
            x = round(x)
        v = p.clamp(int(x) if p.kind == "int" else x)
        in_range = p.min <= x <= p.max
        return v, (None if in_range else "clamped")
    try:
        return p.coerce(raw), None
    except (ValueError, TypeError):
        return None, "invalid"


# --------------------------------------------------------------------------- context
@dataclass
class Ctx:
    """What a page needs after set-up."""

    stem: str
    lang: str
    t: Text
    spec: Resolved
    values: dict = field(default_factory=dict)
    query: dict = field(default_factory=dict)

    def md(self, key: str, **fmt) -> None:
        """Render a Markdown (+LaTeX) text block by key."""
        st.markdown(self.t(key, **fmt))

    def section(self, key: str) -> None:
        """A titled text section: ``<key>.title`` and ``<key>.body``, one Markdown element (a level-3
        heading, as ``st.subheader`` draws it, then the body): every element is a message to the
        browser and ~0.5 ms of the server's CPU per rerun, and a page has about ten sections."""
        st.markdown(f"### {self.t(f'{key}.title')}\n\n{self.t(f'{key}.body')}")
        if key == "questions":  # worked answers: instructors, or the class once released
            show_answers(self)

    def predict(self) -> None:  # the page's "Predict first" steps (ui/predict.py), if it has any
        from ui.predict import steps
        steps(self)

    def metrics(self, items, caption: str | None = None) -> list | None:
        """One row of headline numbers ``[(label, value), ...]`` with an optional caption under it.
        Hidden (a note in its place) while the student predicts first; returns the row's columns
        (for a caption or a later value in one of them), or None when hidden."""
        if self.numbers_hidden():
            return None
        cols = st.columns(len(items))
        for col, (label, value) in zip(cols, items):
            col.metric(label, value)
        if caption is not None:
            st.caption(caption)
        return cols

    def numbers_hidden(self) -> bool:
        """While the student predicts first (``ui/predict.py``) the page's headline numbers wait
        with its figures: draws a note in their place and returns True."""
        from ui import predict

        if predict.covered(None):
            predict.cover_note(self.lang, "ui.covered_numbers")
            return True
        return False

    @contextlib.contextmanager
    def guard(self):
        """Turn a ValueError from sim/ into a clear message instead of a traceback."""
        try:
            yield
        except (ValueError, FloatingPointError, OverflowError) as exc:
            st.error(self.t("ui.compute_error", msg=str(exc)))
            st.stop()

    def csv_download(self, filename: str, columns: dict, key: str | None = None) -> None:
        """A download button for the plotted data; ragged columns are padded."""
        st.download_button(
            # deferred: the CSV is built only when the button is clicked, not on every rerun
            self.t("ui.download_csv"), data=lambda: to_csv(columns), file_name=filename,
            mime="text/csv", key=key or f"csv_{filename}", on_click="ignore",
        )

    def footer(self) -> None:
        """Share link and 'show the code' toggle at the end of every page."""
        with st.sidebar:
            # Lazy: its content (the link and its QR code, ~15-20 ms of CPU for every new link) is made
            # only while the box is open; opening it is one cheap rerun.
            with st.expander(self.t("ui.share"), key="_share_open", on_change="rerun") as box:
                if box.open:
                    st.caption(self.t("ui.share_help"))
                    url = share_url(self.query)
                    st.code(url, language=None, wrap_lines=True)
                    _share.show_qr(url, self.t("view.share_qr"))
            show = st.toggle(self.t("ui.show_code"), key="_show_code", value=False)
        _share.glossary_link(self.stem, self.lang, self.t("view.glossary_link"))
        if show:
            st.subheader(self.t("ui.code_title"))
            for path, src in page_sources(self.stem):
                st.caption(path)
                st.code(src, language="python")


def page_sources(stem: str) -> list[tuple[str, str]]:
    """``(path, source)`` of what a student reads for a page: ``pages/<stem>.py`` and, when it has
    one, ``views/<stem>.py`` (its data and figures); not the shared machinery in ``ui/``."""
    out = []
    for pkg in ("pages", "views"):
        mod = sys.modules.get(f"{pkg}.{stem}")
        try:
            src = inspect.getsource(mod) if mod is not None else ""
        except (OSError, TypeError):
            src = ""
        if src or pkg == "pages":
            out.append((f"{pkg}/{stem}.py", src or "# source not available"))
    return out


def to_csv(columns: dict) -> str:
    names = list(columns)
    cols = [list(map(_cell, columns[n])) for n in names]
    nrow = max((len(c) for c in cols), default=0)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(names)
    for i in range(nrow):
        w.writerow([c[i] if i < len(c) else "" for c in cols])
    return buf.getvalue()


def _cell(x):
    try:
        f = float(x)
    except (TypeError, ValueError):
        return x
    return f"{f:.12g}"


def share_url(query: dict) -> str:
    base = ""
    try:
        base = (st.context.url or "").split("?")[0]
    except Exception:  # noqa: BLE001
        base = ""
    return f"{base}?{urlencode(query)}"


# --------------------------------------------------------------------------- set-up
def preset_view(res: Resolved, pid: str) -> dict:
    """The complete view of preset ``pid``: every parameter it lists takes its value, every other
    parameter its default, so a preset looks the same whatever was chosen before it."""
    values = {name: p.default for name, p in res.params.items()}
    values.update({k: v for k, v in res.presets[pid].values.items() if k in values})
    return values


def _apply_preset(stem: str, res: Resolved) -> None:
    pid = st.session_state.get("preset")
    if pid in res.presets:
        for k, v in preset_view(res, pid).items():
            st.session_state[k] = v


# A preset's title is often longer than the sidebar is wide, and the box (a text input) cuts it off
# ("d = 6, shown through a projectio"): the chosen one is repeated in full under the box, and the
# options of the open menu wrap instead of being cut.
_PRESET_CSS = """<style>
[role="listbox"] [role="option"] { height: auto !important; min-height: 2.5rem; }
[role="listbox"] [role="option"] > div { white-space: normal !important; overflow: visible !important;
  text-overflow: clip !important; line-height: 1.3; padding-top: 0.3rem; padding-bottom: 0.3rem; }
</style>"""


def _preset_caption(res: Resolved, lang: str) -> None:
    st.html(_PRESET_CSS)
    pid = st.session_state.get("preset")
    if pid in res.presets:
        title = str(res.presets[pid].title.get(lang) or res.presets[pid].title.get("en") or pid)
        # shown literally (an instructor's file may hold any text): Markdown/LaTeX characters escaped
        st.caption(re.sub(r"([\\`*_{}\[\]()#+\-.!|<>$~:])", r"\\\1", title))


def _init_values(res: Resolved, t: Text, notices: list[str]) -> dict:
    """Values for a fresh visit: URL first, then preset, then defaults."""
    qp = st.query_params
    values = {name: p.default for name, p in res.params.items()}
    pid = qp.get("preset")
    preset = ""
    if pid is not None:
        if pid in res.presets:
            preset = pid
            values = preset_view(res, pid)
        elif pid != "":
            notices.append(t("ui.notice_bad_preset", value=literal(pid, 40),
                             options=", ".join(literal(i, 40) for i in res.presets) or "—"))
    for name, p in res.params.items():
        raw = qp.get(name)
        if raw is None:
            continue
        v, kind = _parse_url_value(p, raw)
        shown = literal(f"{name}={raw}", 48)  # user text: shown literally (ui.safe), never as Markdown
        if kind == "invalid":
            notices.append(t("ui.notice_invalid", value=shown, default=values[name]))
        elif kind == "clamped":
            notices.append(t("ui.notice_clamped", value=shown, lo=p.min, hi=p.max, used=v))
            values[name] = v
        else:
            values[name] = v
    st.session_state["preset"] = preset
    return values


def _sanitize(p: Param, v):
    """Keep a session value valid under the (possibly just edited) spec."""
    try:
        v = p.coerce(v)
    except (ValueError, TypeError):
        return p.default
    return p.clamp(v) if p.kind in ("float", "int") else v


def _keep(state, key: str, v) -> None:
    """``state[key] = v`` unless it already holds exactly that (same value, same type)."""
    if key not in state or type(state[key]) is not type(v) or state[key] != v:
        state[key] = v


def _widget(p: Param, t: Text) -> None:
    label = t(f"params.{p.name}.label")
    help_ = t(f"params.{p.name}.help") if t.has(f"params.{p.name}.help") else None
    if p.kind in ("float", "int"):
        step = p.step if p.step else (1 if p.kind == "int" else (p.max - p.min) / 100)
        fmt = None if p.kind == "int" else f"%.{_decimals(p)}f"
        st.slider(label, min_value=p.min, max_value=p.max, step=step, format=fmt, key=p.name, help=help_)
    elif p.kind == "select":
        def opt_label(o, _n=p.name):
            k = f"params.{_n}.options.{o}"
            return t(k) if t.has(k) else str(o)
        st.selectbox(label, options=list(p.options), format_func=opt_label, key=p.name, help=help_)
    elif p.kind == "bool":
        st.toggle(label, key=p.name, help=help_)


def _leave_mpa_v1() -> None:
    """Make sure the page runs inside app.py's ``st.navigation``.

    Streamlit treats an app with a folder named ``pages/`` as a v1 multipage app until
    some session has run ``st.navigation`` (a process-wide flag). If the first request
    after a server start is a deep link such as ``/two_point``, it would run the page
    script alone, without the router (no language switch, no titles). Clearing the flag
    and rerunning routes the request through app.py. (Pinned streamlit 1.67.)
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - other streamlit versions
        return
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def setup(schema: PageSchema, *, header: bool = True) -> Ctx:
    """Draw the page header and sidebar controls; sync the URL; return the context."""
    _leave_mpa_v1()
    lang = current_lang()
    t = Text(schema.stem, lang)
    from ui.nav import PAGES

    res = _spec.resolve(schema, known_pages=tuple(e.stem for e in PAGES))
    state = st.session_state
    notices: list[str] = []

    if state.get("_lang_notice") is not None:
        notices.append(t("ui.notice_bad_lang", value=literal(state.pop("_lang_notice"), 40)))

    fresh = state.get(_ACTIVE) != schema.stem
    if fresh:
        state[_ACTIVE] = schema.stem
        for name, v in _init_values(res, t, notices).items():
            state[name] = v
    else:
        # Only what must change is written: a widget key written here goes back to the browser as
        # the widget's value, and a run that finishes late (a value the student has already moved
        # past) would move the slider back under their hand (issue 35).
        for name, p in res.params.items():
            _keep(state, name, _sanitize(p, state[name]) if name in state else p.default)
        pid = state.get("preset", "")
        if pid not in res.presets or any(state.get(k) != v for k, v in preset_view(res, pid).items()):
            _keep(state, "preset", "")  # no preset, or the values were changed since it was applied

    if header:
        st.title(t("title"))
        if t.has("subtitle"):
            st.caption(t("subtitle"))
        _style.print_header(t, res, {name: state[name] for name in res.params})
    if res.errors:
        # keys, values and names from the file are the instructor's text: shown literally
        st.error(t("ui.params_error_intro") + "\n\n" + "\n".join(f"- {literal(e, 300)}" for e in res.errors))
    for n in notices:
        st.warning(n, icon="⚠️")

    with st.sidebar:
        if res.params:
            st.header(t("ui.parameters"))
        if res.presets:
            ids = ["", *res.presets]
            st.selectbox(
                t("ui.preset"), ids, key="preset",
                format_func=lambda i: t("ui.preset_none") if i == "" else res.presets[i].title.get(lang, i),
                on_change=_apply_preset, args=(schema.stem, res),
            )
            _preset_caption(res, lang)
        for p in res.params.values():
            _widget(p, t)
        if res.params and st.button(t("ui.reset"), key="_reset", width="stretch"):
            state[_ACTIVE] = None
            st.query_params.clear()
            st.query_params["lang"] = lang
            st.rerun()

    values = {name: state[name] for name in res.params}
    from ui.classroom import url_flags as _class_flags  # here: ui.classroom imports ui.answers

    query = {"lang": lang, **_style.url_flags(), **_class_flags()}  # class: kept across a failover
    if state.get("preset"):
        query["preset"] = state["preset"]
    query.update({name: fmt_value(res.params[name], v) for name, v in values.items()})
    if st.query_params.to_dict() != query:
        st.query_params.from_dict(query)
    return Ctx(schema.stem, lang, t, res, values, query)


def cached(fn=None, *, max_entries: int = 64):
    """``st.cache_data`` with a bounded size and no spinner: for page-level compute functions.

    Keep the returned objects small (downsample trajectories): each caller gets a copy.
    """
    deco = st.cache_data(max_entries=max_entries, show_spinner=False)
    return deco(fn) if fn is not None else deco


def sub_seed(seed: int, *tags: int) -> int:
    """An independent seed for one sub-experiment of a page (a sweep point, a panel): the same
    ``(seed, *tags)`` always gives the same seed, different tags give independent streams."""
    import numpy as np

    return int(np.random.SeedSequence([seed, *tags]).generate_state(1, np.uint64)[0] >> 1)
