"""Worked answers to each page's "Questions for students".

The answers live in the page's text files, one per question, in the questions' order::

    [answers]
    q1 = '''...'''
    q2 = '''...'''

Who sees them (under the questions, one expander per answer):

* an instructor (``ui.instructor.is_instructor``), always, with a switch that releases them to the class;
* everybody, once the instructor has released them (per page, held by this server process until it
  restarts; with several replicas each replica holds its own switch);
* everybody viewing a preset that says so in the parameter file (``answers = true``), e.g. a
  "solutions" preset handed out after the lesson::

      [two_point.presets.solutions]
      title = { en = "With the answers", zh = "附答案" }
      values = { beta = 1.0 }
      answers = true
"""
from __future__ import annotations

import threading

import streamlit as st

from ui import instructor
from ui.i18n import Text
from ui.spec import load_file

_released: set[str] = set()
_lock = threading.Lock()
LAST_VIEW = "_last_view"  # session: {"stem", "values", "query"} of the last page viewed (editor, class push)


def answers(t: Text) -> list[str]:
    """The answers ``q1, q2, ...`` of a page's text, in order (stops at the first gap)."""
    out = []
    while t.has(f"answers.q{len(out) + 1}"):
        out.append(t(f"answers.q{len(out) + 1}"))
    return out


def released(stem: str) -> bool:
    return stem in _released


def release(stem: str, on: bool) -> None:
    with _lock:
        (_released.add if on else _released.discard)(stem)


def preset_shows_answers(stem: str, preset: str | None) -> bool:
    """True when the parameter file's preset ``preset`` of page ``stem`` has ``answers = true``."""
    if not preset:
        return False
    data, _ = load_file()
    try:
        return data[stem]["presets"][preset].get("answers") is True
    except (KeyError, TypeError, AttributeError):
        return False


def _toggle(stem: str) -> None:
    release(stem, bool(st.session_state.get(f"_release_{stem}")))


def show_answers(ctx) -> None:
    """Draw the answers under the questions of ``ctx`` (a ``ui.page.Ctx``) for those allowed to see them."""
    st.session_state[LAST_VIEW] = {"stem": ctx.stem, "values": dict(ctx.values), "query": dict(ctx.query)}
    items = answers(ctx.t)
    if not items:
        return
    teacher = instructor.is_instructor()
    public = released(ctx.stem) or preset_shows_answers(ctx.stem, st.session_state.get("preset"))
    if not (teacher or public):
        return
    ui = Text("instructor", ctx.lang)
    if teacher:
        key = f"_release_{ctx.stem}"
        st.session_state[key] = released(ctx.stem)  # follow the shared switch (another tab may have moved it)
        st.toggle(ui("answers.release"), key=key, on_change=_toggle, args=(ctx.stem,),
                  help=ui("answers.release_help"))
        st.caption(ui("answers.public" if public else "answers.private"))
    for i, text in enumerate(items, 1):
        with st.expander(ui("answers.title", i=i)):
            st.markdown(text)
