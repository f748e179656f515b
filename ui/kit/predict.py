"""Predict, then reveal: guided steps a student answers before seeing a figure.

A page declares its steps in its schema (``PageSchema(..., steps=STEPS)``; the steps themselves
live beside the page's views, ``views/predict_<stem>.py``: what each answer depends on and how
``sim/`` computes it) and calls ``ctx.predict()`` once (after its intro). A step's texts are in the
page's own text files (``[predict.<step id>]``); what every page shares (buttons, verdicts) is in
``assets/text/<lang>/predict.toml``. Everything is drawn inside one collapsed expander, so a reader
who skips it sees the page as before.

A step is: an instruction ("set β to 2"), a question with a number input (with its unit) or a
choice, and a reveal. The answer is typed in an ``st.form`` (nothing reruns while typing; Enter
submits). On submit the value is computed by ``sim/`` for the *current* parameters, compared with
the answer (relative or absolute error, or right/wrong). A first wrong answer gets a hint (too high,
too low, or "not this one") and a second try; then (or at once when right, or on "Show the
answer") the verdict, a short explanation and the step's figure (or metrics) are shown. The record
keeps the parameter values it was answered for: when they change, the step says so and asks again.
Progress lives in ``st.session_state``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Callable

import streamlit as st

from ui.kit import cover
from ui.kit.figures import build, params_of, show
from ui.kit.i18n import Text
from ui.kit.numbers import fmt, human, within  # noqa: F401 - fmt: the pages' import

_STATE = "_predict"  # session_state[_STATE][stem][step id] -> record


@dataclass(frozen=True)
class Step:
    """One guided step of a page (texts: the page's ``[predict.<id>]``).

    ``answer(values)`` returns the true value for the page's parameter values (a float, or a
    choice id for ``kind="choice"``), computed with ``sim/``. ``params`` are the parameters it
    depends on (a change of any of them invalidates an answer). An answer ``x`` to a number
    question is right when ``|x - y| <= atol + rtol * |y|``. ``reveal`` is the page's own figure
    builder (the object, ``views.<page>.<name>_figure``), shown once answered: it is called with
    the page's values named in its signature (``ui.kit.figures.build``), or with ``reveal_args(values)``
    when given; ``metrics(values)`` returns ``[(text key, formatted value), ...]`` shown with it.
    ``covers`` are the page's text keys (a section such as ``"notice"``, or one text such as
    ``"contrast.numbers"``) that state the answer: covered like the figures until it is answered.
    """

    id: str
    params: tuple[str, ...]
    answer: Callable[[dict], float | str]
    kind: str = "number"  # "number" | "choice"
    choices: tuple[str, ...] = ()
    rtol: float = 0.1
    atol: float = 0.0
    digits: int = 4  # significant digits of the shown true value
    reveal: Callable | None = None  # a page figure builder: (page Text, *args) -> figure
    reveal_args: Callable[[dict], tuple] | None = None  # values -> the builder's args (default: by name)
    metrics: Callable[[dict], list] | None = None
    texts: Callable[[dict], dict] | None = None  # extra named values for the step's texts
    covers: tuple[str, ...] = ()  # page text keys that state this step's answer (ui.kit.cover)

    def args(self, values: dict) -> dict:
        """The names a step's texts may use: the page's values and the step's own (``texts``)."""
        return {**values, **(self.texts(values) if self.texts is not None else {})}

    def reveal_params(self) -> tuple[str, ...]:
        """The page parameters the reveal is drawn for, by name (``()`` with ``reveal_args``)."""
        return params_of(self.reveal) if self.reveal is not None and self.reveal_args is None else ()

    def figure(self, t: Text, values: dict):
        """The revealed figure for ``values`` (None when the step reveals none)."""
        if self.reveal is None:
            return None
        if self.reveal_args is not None:
            return self.reveal(t, *self.reveal_args(values))
        return build(self.reveal, t, values)


# --------------------------------------------------------------------------- pure helpers
def judge(step: Step, x, y) -> dict:
    """Compare an answer ``x`` with the true value ``y``: ``ok`` and the errors (pure, tested)."""
    if step.kind == "choice":
        return {"ok": x == y, "abs": None, "rel": None}
    x, y = float(x), float(y)
    err = abs(x - y)
    rel = err / abs(y) if y != 0 else (0.0 if err == 0 else math.inf)
    return {"ok": err <= step.atol + step.rtol * abs(y), "abs": err, "rel": rel}


def live_question(step: Step, stem: str, values: dict) -> dict:
    """Step ``step`` of page ``stem`` as a class's live question: plain data (JSON), its prompt,
    unit and choice labels in every language, its tolerance, and its exact value computed by
    ``sim/`` for ``values`` (``truth``; None with ``error`` when it cannot be computed). The same
    object a student answers alone under "Predict first" and the class answers together."""
    from ui.kit.spec import LANGS

    key = f"predict.{step.id}"
    texts = {lang: Text(stem, lang) for lang in LANGS}
    args = step.args(values)
    q = {
        "stem": stem,
        "step": step.id,
        "kind": step.kind,
        "rtol": step.rtol,
        "atol": step.atol,
        "digits": step.digits,
        "options": list(step.choices),
        "prompt": {lang: t(f"{key}.question", **args) for lang, t in texts.items()},
        "unit": {lang: (t(f"{key}.unit") if t.has(f"{key}.unit") else "") for lang, t in texts.items()},
        "labels": {lang: {c: t(f"{key}.choices.{c}") for c in step.choices} for lang, t in texts.items()},
        "values": {k: v for k, v in values.items() if isinstance(v, (int, float, str, bool))},
    }
    try:
        y = step.answer(values)
        q["truth"] = y if isinstance(y, str) else float(y)
        if not isinstance(y, str) and not math.isfinite(q["truth"]):
            raise ValueError("not a finite value")
    except (ValueError, FloatingPointError, OverflowError, ZeroDivisionError) as exc:
        q["truth"], q["error"] = None, str(exc)
    return q


def snapshot(step: Step, values: dict) -> tuple:
    """The parameter values an answer is valid for."""
    return tuple((name, values.get(name)) for name in step.params)


def _store(stem: str) -> dict:
    return st.session_state.setdefault(_STATE, {}).setdefault(stem, {})


def _input_key(stem: str, sid: str) -> str:
    return f"_predict_{stem}_{sid}_in"


# --------------------------------------------------------------------------- callbacks
def _submit(stem: str, step: Step, values: dict) -> None:
    """Form callback: runs before the rerun, so the reveal is drawn in the same run."""
    x = st.session_state.get(_input_key(stem, step.id))
    rec = _store(stem)
    if x is None:
        rec[step.id] = {"missing": True, "snap": snapshot(step, values), "focus": "said"}
        return
    try:
        y = step.answer(values)
        err = None
    except (ValueError, FloatingPointError, OverflowError) as exc:
        y, err = None, str(exc)
    verdict = judge(step, x, y) if err is None else {"ok": False, "abs": None, "rel": None}
    prev = rec.get(step.id, {})
    snap = snapshot(step, values)
    # the first wrong answer for these parameters gets a hint and a second try; the value waits
    hint = err is None and not verdict["ok"] and prev.get("hint_for") != snap
    rec[step.id] = {
        "x": x,
        "y": y,
        "error": err,
        "snap": snap,
        "tries": prev.get("tries", 0) + 1,
        "hint": hint,
        "hint_for": snap if hint else prev.get("hint_for"),
        **verdict,
        "focus": "said",
    }  # the next run moves keyboard focus to what it says (_focus)


def _again(stem: str, sid: str) -> None:
    rec = _store(stem)
    prev = rec.get(sid, {})
    rec[sid] = {"tries": prev.get("tries", 0), "cleared": True, "hint_for": prev.get("hint_for"), "focus": "input"}
    st.session_state.pop(_input_key(stem, sid), None)


def _give_up(stem: str, sid: str) -> None:
    """ "Show the answer" after a hint: the verdict and the value, without a second try."""
    r = _store(stem).get(sid)
    if r is not None:
        r["hint"] = False
        r["focus"] = "said"


def answered(r: dict | None) -> bool:
    """A step's record holds an answer whose value is shown (not one waiting for its second try)."""
    return r is not None and "x" in r and not r.get("hint")


def _hint(p: Text, step: Step, r: dict) -> None:
    """The first wrong answer: which way it is off (numbers) and how close a right one is; no value."""
    if step.kind == "choice":
        msg = p("ui.hint_choice")
    else:
        if step.atol > 0 and (step.rtol == 0 or r["y"] == 0):
            tol = p("ui.tol_abs", tol=human(step.atol, 2), unit="")
        else:
            tol = p("ui.tol_rel", tol=f"{100 * step.rtol:g}")
        msg = p("ui.hint_high" if float(r["x"]) > float(r["y"]) else "ui.hint_low", said=fmt(r["x"], 6), tol=tol)
    st.warning(msg, icon=":material/lightbulb:")


# --------------------------------------------------------------------------- drawing
def _param_text(page_t: Text, snap: tuple, only: set | None = None) -> str:
    """``label = value, ...`` as the sidebar shows them: the widget's label (its first part), an
    option by its menu text, a number for people; ``only``: just these parameters."""
    out = []
    for name, v in snap:
        if only is not None and name not in only:
            continue
        label = page_t(f"params.{name}.label") if page_t.has(f"params.{name}.label") else name
        label = label.split(" — ")[0].split(" – ")[0].split("——")[0].strip()
        opt = f"params.{name}.options.{v}"
        shown = (
            page_t(opt)
            if isinstance(v, str) and page_t.has(opt)
            else (human(v, 4) if isinstance(v, (int, float)) and not isinstance(v, bool) else v)
        )
        out.append(f"{label} = {shown}")
    return ", ".join(out)


def _form(p: Text, t: Text, stem: str, step: Step, values: dict, key: str) -> None:
    with st.form(f"_predict_form_{stem}_{step.id}", border=False, enter_to_submit=True):
        q = t(f"{key}.question", **step.args(values))
        if step.kind == "choice":
            st.radio(
                q,
                options=list(step.choices),
                index=None,
                key=_input_key(stem, step.id),
                format_func=lambda c: t(f"{key}.choices.{c}"),
            )
        else:
            st.number_input(
                p("ui.with_unit", q=q, unit=t(f"{key}.unit")),
                value=None,
                format="%g",
                step=None,
                key=_input_key(stem, step.id),
                placeholder=p("ui.placeholder"),
            )
        st.form_submit_button(p("ui.submit"), on_click=_submit, args=(stem, step, values))


def _verdict(p: Text, t: Text, step: Step, r: dict, key: str) -> None:
    if r.get("error"):
        st.error(p("ui.compute_error", msg=r["error"]))
        return
    if step.kind == "choice":
        said, truth = t(f"{key}.choices.{r['x']}"), t(f"{key}.choices.{r['y']}")
        msg = p("ui.right_choice" if r["ok"] else "ui.wrong_choice", said=said, truth=truth)
    else:
        unit = f" {t(f'{key}.sym')}" if t.has(f"{key}.sym") else ""
        if step.atol > 0 and (step.rtol == 0 or r["y"] == 0):
            off = p("ui.off_abs", err=fmt(r["abs"], 2), unit=unit)
            tol = p("ui.tol_abs", tol=fmt(step.atol, 2), unit=unit)
        else:
            off = p("ui.off_rel", err=human(100 * r["rel"], 3)) if math.isfinite(r["rel"]) else ""
            tol = p("ui.tol_rel", tol=f"{100 * step.rtol:g}")
        msg = p(
            "ui.right_number" if r["ok"] else "ui.wrong_number",
            said=fmt(r["x"], 6),
            truth=fmt(r["y"], step.digits),
            unit=unit,
            off=off,
            tol=tol,
        )
    (st.success if r["ok"] else st.error)(msg, icon=":material/check_circle:" if r["ok"] else ":material/cancel:")


def _said_key(stem: str, sid: str) -> str:
    return f"tos_said_{stem}_{sid}"


# Keyboard focus follows the student: a checked answer moves it to its verdict (or hint, or the
# note that no answer was given), "Try again" to the answer field; otherwise a rerun leaves focus
# on the page's body and a screen reader says nothing of the verdict. Once per action: the callback
# sets the record's "focus", the run that draws the result takes it. The script waits for its
# target (at most 2 s) and carries the try number, so that each action runs it anew.
_FOCUS_JS = """<script>(() => {{ /* {nonce} */
  const sel = {sel}; let n = 0;
  const go = () => {{
    const el = document.querySelector(sel);
    if (!el) {{ if (++n < 40) setTimeout(go, 50); return; }}
    if (!el.matches('input, button, [tabindex]')) el.tabIndex = -1;
    el.focus();
  }};
  go();
}})();</script>"""


def _focus(stem: str, sid: str, r: dict) -> None:
    import json

    what = r.pop("focus", None)
    if what is None:
        return
    if what == "input":
        sel = f".st-key-{_input_key(stem, sid)} input"
    else:
        sel = f'.st-key-{_said_key(stem, sid)} [data-testid="stAlert"]'
    nonce = st.session_state["_predict_focus_n"] = st.session_state.get("_predict_focus_n", 0) + 1
    with st.container(key=f"tos_focus_js_{stem}_{sid}"):
        st.html(_FOCUS_JS.format(nonce=nonce, sel=json.dumps(sel)), unsafe_allow_javascript=True)


def _reveal(ctx, step: Step, values: dict, key: str) -> None:
    t = ctx.t
    st.markdown(t(f"{key}.explain", **step.args(values)))
    if step.metrics is not None:
        ctx.metrics([(t(f"{key}.metrics.{mkey}"), val) for mkey, val in step.metrics(values)], covered=False)
    fig = step.figure(t, values)
    if fig is not None:
        show(fig, key=f"{cover.REVEAL_PREFIX}{ctx.stem}_{step.id}")


def _step(p: Text, ctx, i: int, step: Step, values: dict) -> None:
    stem, page_t = ctx.stem, ctx.t
    key = f"predict.{step.id}"
    r = _store(stem).get(step.id)
    st.markdown(f"**{p('ui.step', i=i)}** {page_t(f'{key}.instruction', **step.args(values))}")
    current = r is not None and r.get("snap") == snapshot(step, values)
    if answered(r) and not current:
        now = snapshot(step, values)
        changed = {a for (a, x), (_, y) in zip(r["snap"], now) if x != y}  # only what changed
        st.warning(
            p("ui.stale", old=_param_text(page_t, r["snap"], changed), new=_param_text(page_t, now, changed)),
            icon=":material/update:",
        )
    if current and "x" in r and r.get("hint"):
        with st.container(key=_said_key(stem, step.id)):
            _hint(p, step, r)
        _focus(stem, step.id, r)
        _form(p, page_t, stem, step, values, key)
        st.button(
            p("ui.give_up"),
            key=f"_predict_give_up_{stem}_{step.id}",
            on_click=_give_up,
            args=(stem, step.id),
            type="tertiary",
        )
        return
    if current and "x" in r:
        with st.container(key=_said_key(stem, step.id)):
            _verdict(p, page_t, step, r, key)
        _focus(stem, step.id, r)
        _reveal(ctx, step, values, key)
        st.button(p("ui.again"), key=f"_predict_again_{stem}_{step.id}", on_click=_again, args=(stem, step.id))
        return
    if current and r.get("missing"):
        with st.container(key=_said_key(stem, step.id)):
            st.info(p("ui.missing"))
    _form(p, page_t, stem, step, values, key)
    if r is not None:
        _focus(stem, step.id, r)  # "Try again": the answer field; "missing": the note


def progress(stem: str, steps_: tuple[Step, ...], values: dict) -> tuple[int, int, int]:
    """(answered for the current values, right among them, number of steps) of a page."""
    rec = st.session_state.get(_STATE, {}).get(stem, {})
    done = [rec[s.id] for s in steps_ if answered(rec.get(s.id)) and rec[s.id].get("snap") == snapshot(s, values)]
    return len(done), sum(1 for r in done if r.get("ok")), len(steps_)


def covered_texts(stem: str, steps_: tuple[Step, ...], values: dict) -> frozenset | None:
    """What the cover hides on page ``stem`` now: ``None`` when the student is not predicting
    (the "Predict first" box closed, every step answered for these values, or "show anyway"
    on), else the page text keys that state an unanswered step's answer (``Step.covers``)."""
    s = st.session_state
    if not steps_ or not s.get(f"_predict_open_{stem}") or s.get(f"_predict_peek_{stem}", False):
        return None
    rec = s.get(_STATE, {}).get(stem, {})
    open_ = [x for x in steps_ if not (answered(rec.get(x.id)) and rec[x.id].get("snap") == snapshot(x, values))]
    return frozenset(k for x in open_ for k in x.covers) if open_ else None


def steps(ctx) -> None:
    """Draw the page's 'Predict first' steps in one expander (nothing if the page has none).

    The expander is drawn lazily (its steps only while it is open). While it is open and a step is
    still unanswered for the current parameters, the page's own figures further down are covered
    (``ui.kit.cover``, honoured by ``ui.kit.figures.show`` and ``Ctx.metrics``), and so are the page texts
    that state an unanswered step's answer (``Step.covers``, honoured by ``Ctx.section`` and
    ``Ctx.md``): a student who chose to predict cannot read the answer off a figure or a text below.
    A "show the figures anyway" button lifts the cover.
    """
    stem, values = ctx.stem, ctx.values
    cover.set_cover(None)
    page_steps = ctx.steps
    if not page_steps:
        return
    p = Text("predict", ctx.lang)
    asked = next((x for x in page_steps if x.id == cover.open_question(stem)), None)
    if asked is not None:  # the class (or the lesson) asks this very step: answered there, first
        cover.set_cover(stem, asked.covers)
        st.info(p("ui.asked_in_class"), icon=":material/groups:")
        return
    with st.expander(
        p("ui.title", n=len(page_steps)),
        icon=":material/psychology_alt:",
        key=f"_predict_open_{stem}",
        on_change="rerun",
    ) as box:
        if not box.open:
            return
        st.markdown(p("ui.how"))
        done, right, n = progress(stem, page_steps, values)
        st.caption(p("ui.progress", done=done, right=right, n=n))
        texts = covered_texts(stem, page_steps, values)
        if texts is not None:
            cover.set_cover(stem, texts)
        for i, step in enumerate(page_steps, 1):
            if i > 1:
                st.divider()
            _step(p, ctx, i, step, values)
        if done < n:
            st.toggle(p("ui.peek"), key=f"_predict_peek_{stem}")
