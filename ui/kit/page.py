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
import math
from dataclasses import dataclass, field

import streamlit as st

from ui.kit import access, cover, files, hooks, notebook, predict
from ui.kit import share as _share
from ui.kit import spec as _spec
from ui.kit import style as _style
from ui.kit.i18n import Text
from ui.kit.lang import current_lang
from ui.kit.nav import PAGES, leave_mpa_v1
from ui.kit.safe import inert_html, literal
from ui.kit.share import share_url
from ui.kit.spec import PageSchema, Param, Resolved
from ui.kit.table import to_csv

_ACTIVE = "_active_page"
#: session: {page stem: {parameter: value, "preset": id}} as each page was last shown, so that leaving
#: a page and coming back (the glossary, the class console) finds the same settings
_REMEMBERED = "_page_values"
#: session: the address of the page the previous full run showed (:func:`entering`)
_LAST_PAGE = "_last_page_shown"


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
    steps: tuple = ()  # the page's "Predict first" steps (ui.kit.predict.Step), from its schema
    placed: tuple = ()  # parameters the page draws beside what they drive (:meth:`controls`), not in the sidebar

    def md(self, key: str, *, info: bool = False, **fmt) -> None:
        """Render a Markdown (+LaTeX) text block by key (``info``: in an info box); a note in its
        place while it states the answer of a step the student is predicting (``ui.kit.cover``)."""
        if cover.text_covered(key):
            cover.cover_note(self.lang, "ui.covered_text")
            return
        (st.info if info else st.markdown)(self.t(key, **fmt))

    def caption(self, key: str, text: str) -> None:
        """``st.caption(text)``, the page text ``key``; a note in its place while covered."""
        if cover.text_covered(key):
            cover.cover_note(self.lang, "ui.covered_text")
            return
        st.caption(text)

    def section(self, key: str, **fmt) -> None:
        """A titled text section: ``<key>.title`` and ``<key>.body``, one Markdown element (a level-2
        heading under the page's h1, no level skipped for a screen reader's list of headings, drawn at
        the size of ``st.subheader`` by assets/style.css; then the body): every element is a message to the
        browser and server CPU on every rerun, and a page has about ten sections. ``fmt``: numbers
        of this view filled into the body (its own braces then written twice: ``N_{{\\max}}``)."""
        if cover.text_covered(f"{key}.body"):  # it states a step's answer: the title, and a note
            st.markdown(f"## {self.t(f'{key}.title')}")
            cover.cover_note(self.lang, "ui.covered_text")
        else:
            st.markdown(f"## {self.t(f'{key}.title')}\n\n{self.t(f'{key}.body', **fmt)}")
        hooks.after_section(key, self)  # what a feature registered under this section (ui/kit/hooks.py)

    def controls(self, names, *, per_row: int = 2) -> None:
        """The sliders of ``names`` (parameters given to :func:`setup` as ``placed``) here, in a
        titled box beside the section they drive (a tab's own controls on its tab): same keys, so
        the URL, presets, the instructor's file and the notebook see them as in the sidebar."""
        with st.container(border=True):
            st.caption(self.t("ui.controls_here"))
            names = list(names)
            for i in range(0, len(names), per_row):
                row = names[i : i + per_row]
                for cell, name in zip(st.columns(per_row), row):
                    with cell:
                        _widget(self.spec.params[name], self.t)

    def intro(self) -> None:
        """The page's opening: its ``intro`` section, then its "Predict first" steps (if any)."""
        self.section("intro")
        self.predict()

    def predict(self) -> None:
        """The page's "Predict first" steps (``SCHEMA.steps``, drawn by ui/kit/predict.py), if it has any."""
        predict.steps(self)

    def metrics(
        self,
        items,
        caption: str | None = None,
        *,
        covered: bool = True,
        per_row: int | None = None,
        stacked: bool = False,
    ) -> list | None:
        """The page's headline numbers, the one way a page draws them: ``items`` are
        ``(label, value)`` or ``(label, value, opts)``, where ``opts`` may hold a ``caption`` drawn
        under that number and ``st.metric``'s own ``delta``, ``help`` … One row (``per_row``
        numbers a row when given; ``stacked``: one under the other, e.g. beside a figure), then an
        optional ``caption``. Hidden (a note in its place) while the student predicts first, unless
        ``covered=False`` (the numbers a step reveals); returns the cells (for a value filled in
        later), or None when hidden."""
        if covered and self.numbers_hidden():
            return None
        n = len(items)
        if stacked:
            cells = [st.container() for _ in items]
        else:
            k = per_row or n
            cells = [c for i in range(0, n, k) for c in st.columns(min(k, n - i))]
        for cell, item in zip(cells, items):
            label, value, opts = (*item, {})[:3]
            opts = dict(opts)
            below = opts.pop("caption", None)
            cell.metric(label, value, **opts)
            if below is not None:
                cell.caption(below)
        if caption is not None:
            st.caption(caption)
        return cells

    def numbers_hidden(self) -> bool:
        """While the student predicts first (``ui/kit/predict.py``) the page's headline numbers wait
        with its figures: draws a note in their place and returns True."""
        if cover.covered(None):
            cover.cover_note(self.lang, "ui.covered_numbers")
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
            self.t("ui.download_csv"),
            data=lambda: to_csv(columns),
            file_name=filename,
            mime="text/csv",
            key=key or f"csv_{filename}",
            on_click="ignore",
        )
        self.notebook_download()

    def notebook_download(self) -> None:
        """ "Open as a notebook": this view (parameters, language) as a Jupyter notebook
        (ui/kit/notebook.py, the page's recipe ``views/notebook_<stem>.py``), built only when clicked;
        the worked answers are in it only when they are public (``hooks.answers_public``)."""
        rec = notebook.recipe(self.stem)
        if rec is None:
            return
        res, values, lang, answers = self.spec, dict(self.values), self.lang, hooks.answers_public(self)
        st.download_button(
            self.t("ui.download_notebook"),
            help=self.t("ui.download_notebook_help"),
            data=lambda: notebook.dumps(notebook.build(rec, res, values, lang, answers=answers)),
            file_name=f"{self.stem}.ipynb",
            mime="application/x-ipynb+json",
            key=f"nb_{self.stem}",
            on_click="ignore",
        )

    def footer(self) -> None:
        """Share link and 'show the code' toggle at the end of every page."""
        with st.sidebar:
            # Lazy: its content (the link and its QR code, costly to make for every new link) is made
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
    """``(path, source)`` of what a student reads for a page: its ``page.py`` and the data and
    figure modules of its folder (:func:`ui.kit.files.shown_sources`); not the shared machinery."""
    return files.shown_sources(stem)


# --------------------------------------------------------------------------- set-up
def preset_view(res: Resolved, pid: str) -> dict:
    """The complete view of preset ``pid``: every parameter it lists takes its value, every other
    parameter its default, so a preset looks the same whatever was chosen before it."""
    values = {name: p.default for name, p in res.params.items()}
    values.update({k: v for k, v in res.presets[pid].values.items() if k in values})
    return values


def view_values(res: Resolved, query: dict) -> dict:
    """The parameter values of a view given by its query (a share link's, a pushed view's): as a
    fresh visit to that link gets them (defaults, then the preset, then each parameter, clamped;
    a value that cannot be read keeps its default). Pure: no session, no notice."""
    values = {name: p.default for name, p in res.params.items()}
    if query.get("preset") in res.presets:
        values = preset_view(res, query["preset"])
    for name, p in res.params.items():
        if query.get(name) is not None:
            v, kind = _parse_url_value(p, str(query[name]))
            if kind != "invalid":
                values[name] = v
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
.app-preset-title { font-size: 0.875rem; opacity: 0.7; overflow-wrap: anywhere; margin-top: -0.5rem; }
</style>"""


def _preset_caption(res: Resolved, lang: str) -> None:
    st.html(_PRESET_CSS)
    pid = st.session_state.get("preset")
    if pid in res.presets:
        title = str(res.presets[pid].title.get(lang) or res.presets[pid].title.get("en") or pid)
        # shown literally (an instructor's file may hold any text): HTML text, never Markdown
        st.html(f'<div class="app-preset-title">{inert_html(title)}</div>')


def page_shown() -> str | None:
    """The page whose values this session holds now (the stem of the last page run), or None."""
    return st.session_state.get(_ACTIVE)


def read_url_again() -> None:
    """The next page run takes its values from its URL again (a pushed view, the console's link to it):
    every parameter the URL names wins over what this session last had on that page."""
    st.session_state[_ACTIVE] = None


def entering(address: str) -> None:
    """Called by the router before every full run of a page (``address``: its URL path): a run that
    opens another page than the previous run showed reads its URL again (:func:`read_url_again`)."""
    state = st.session_state
    if state.get(_LAST_PAGE) != address:
        state[_LAST_PAGE] = address
        read_url_again()


def _remember(stem: str, values: dict, preset: str) -> None:
    mem = st.session_state.setdefault(_REMEMBERED, {})
    mem[stem] = {**values, "preset": preset}


def _init_values(res: Resolved, t: Text, notices: list[str]) -> dict:
    """Values for a visit that opens the page: the URL first (a preset it names, then each parameter
    it names), then what this session last had on this page, then the defaults."""
    qp = st.query_params
    values = {name: p.default for name, p in res.params.items()}
    before = st.session_state.get(_REMEMBERED, {}).get(res.stem)
    preset = ""
    if before:
        values.update({n: _sanitize(p, before[n]) for n, p in res.params.items() if n in before})
        if before.get("preset") in res.presets and all(
            values[k] == v for k, v in preset_view(res, before["preset"]).items()
        ):
            preset = before["preset"]
    pid = qp.get("preset")
    if pid is not None:
        if pid in res.presets:
            preset = pid
            values = preset_view(res, pid)
        elif pid != "":
            notices.append(
                t(
                    "ui.notice_bad_preset",
                    value=literal(pid, 40),
                    options=", ".join(literal(i, 40) for i in res.presets) or "—",
                )
            )
    for name, p in res.params.items():
        raw = qp.get(name)
        if raw is None:
            continue
        v, kind = _parse_url_value(p, raw)
        shown = literal(f"{name}={raw}", 48)  # user text: shown literally (ui.kit.safe), never as Markdown
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


_LABELS_LANG = "_labels_lang"  # the language the select boxes' labels were last drawn in


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


def setup(schema: PageSchema, *, header: bool = True, placed: tuple = ()) -> Ctx:
    """Draw the page header and sidebar controls; sync the URL; return the context. ``placed``: the
    parameters the page draws itself beside what they drive (``ctx.controls``), every run; the
    sidebar then says where they are."""
    leave_mpa_v1()
    lang = current_lang()
    t = Text(schema.stem, lang)
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
        # past) would move the slider back under their hand.
        for name, p in res.params.items():
            _keep(state, name, _sanitize(p, state[name]) if name in state else p.default)
        pid = state.get("preset", "")
        if pid not in res.presets or any(state.get(k) != v for k, v in preset_view(res, pid).items()):
            _keep(state, "preset", "")  # no preset, or the values were changed since it was applied
        if state.get(_LABELS_LANG) != lang:
            # A select box keeps the label it showed while its value is unchanged: after a language
            # switch, write its value back so the browser redraws it with the new language's label.
            for key in [n for n, p in res.params.items() if p.kind == "select"] + ["preset"]:
                if key in state:
                    state[key] = state[key]
    state[_LABELS_LANG] = lang

    if header:
        st.title(t("title"))
        if t.has("subtitle"):
            # a subtitle that states a step's answer (``Step.covers`` names "subtitle") waits
            # like the figures while the student predicts (decided here: the steps come later)
            hidden = predict.covered_texts(schema.stem, schema.steps, {n: state[n] for n in res.params})
            if hidden and "subtitle" in hidden:
                st.caption(Text("predict", lang)("ui.covered_subtitle"))
            else:
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
                t("ui.preset"),
                ids,
                key="preset",
                format_func=lambda i: t("ui.preset_none") if i == "" else res.presets[i].title.get(lang, i),
                on_change=_apply_preset,
                args=(schema.stem, res),
            )
            _preset_caption(res, lang)
        for p in res.params.values():
            if p.name not in placed:
                _widget(p, t)
        if placed:
            st.caption(t("ui.controls_placed"))
        # the controls' names as a screen reader should say them (τ_max, not "$\\tau_{\\max}$")
        access.name_controls(
            [t(f"params.{n}.{k}") for n in res.params for k in ("label", "help") if t.has(f"params.{n}.{k}")]
        )
        if res.params and st.button(t("ui.reset"), key="_reset", width="stretch"):
            state[_ACTIVE] = None
            state.get(_REMEMBERED, {}).pop(schema.stem, None)
            st.query_params.clear()
            st.query_params["lang"] = lang
            st.rerun()

    values = {name: state[name] for name in res.params}
    _remember(schema.stem, values, state.get("preset", ""))
    query = {"lang": lang, **_style.url_flags(), **hooks.url_flags()}  # a class code: kept across a failover
    if state.get("preset"):
        query["preset"] = state["preset"]
    query.update({name: fmt_value(res.params[name], v) for name, v in values.items()})
    if st.query_params.to_dict() != query:
        st.query_params.from_dict(query)
    return Ctx(schema.stem, lang, t, res, values, query, schema.steps, tuple(placed))
