"""Worked answers to each page's "Questions for students".

The answers live in the page's text files, one per question, in the questions' order::

    [answers]
    q1 = '''...'''
    q2 = '''...'''

Who sees them (under the questions, one expander per answer):

* an instructor (``ui.teaching.instructor.is_instructor``), always, with a switch that releases them to the class;
* everybody, once the instructor has released them (per page, in the class store: the server's
  memory, or Redis when ``APP_REDIS_URL`` is set, so every replica follows one switch; a replica
  reads it at most once a second);
* everybody viewing a preset that says so in the parameter file (``answers = true``), e.g. a
  "solutions" preset handed out after the lesson::

      [two_point.presets.solutions]
      title = { en = "With the answers", zh = "附答案" }
      values = { beta = 1.0 }
      answers = true
"""

from __future__ import annotations

import logging
import math
import threading
import time

import streamlit as st

from ui.teaching import class_store as cs
from ui.teaching import instructor
from ui.kit.i18n import Text
from ui.kit.spec import load_file

#: this process's copy of the released pages and when it was read (every page run asks); ``gen``
#: counts this process's own switches, so that a read begun before one cannot overwrite it
_seen: dict = {"at": -math.inf, "pages": frozenset(), "gen": 0}
_seen_lock = threading.Lock()
RECHECK_S = 1.0
_log = logging.getLogger(__name__)
LAST_VIEW = "_last_view"  # session: {"stem", "values", "query"} of the last page viewed (editor, class push)


def answers(t: Text) -> list[str]:
    """The answers ``q1, q2, ...`` of a page's text, in order (stops at the first gap)."""
    out = []
    while t.has(f"answers.q{len(out) + 1}"):
        out.append(t(f"answers.q{len(out) + 1}"))
    return out


def released(stem: str) -> bool:
    """True when an instructor released page ``stem``'s answers (read from the store at most once
    a second; if the store cannot be reached, the last state read stands)."""
    return stem in released_pages()


def released_pages() -> frozenset:
    """Every page whose answers are released (the same once-a-second read as :func:`released`);
    the class poll compares it with what the page drew, so a release reaches a student within
    the poll interval without a reload.

    Many sessions' threads ask at once. A store read that began before this process's own
    :func:`release` returns the old set; it is dropped, not cached (else the teacher's switch
    springs back: the teacher's own rerun would read that stale copy, fresh for a second, and
    show the switch off, with nothing to run the page again)."""
    now = time.monotonic()
    with _seen_lock:
        if now - _seen["at"] < RECHECK_S:
            return _seen["pages"]
        gen = _seen.get("gen", 0)
    try:
        pages = frozenset(cs.get_store().released_pages())
    except cs.STORE_ERRORS as exc:
        _log.warning("released answers: store unreachable (%s); keeping the last state", type(exc).__name__)
        pages = None
    with _seen_lock:
        if _seen.get("gen", 0) == gen:
            if pages is not None:
                _seen["pages"] = pages
            _seen["at"] = now
        return _seen["pages"]


def release(stem: str, on: bool, code: str | None = None) -> None:
    """Release (or withdraw) page ``stem``'s answers for everyone, on every replica. ``code``: the
    class the instructor has open, which notes it (its end withdraws what it released:
    :func:`withdraw_class`)."""
    cs.get_store().set_released(stem, on)
    if code:
        cs.get_store().note_release(code, stem, on)
    with _seen_lock:  # this process knows the new state at once; reads already under way are dropped
        _seen["gen"] = _seen.get("gen", 0) + 1
        pages = _seen["pages"]
        _seen["pages"] = pages | {stem} if on else pages - {stem}
        _seen["at"] = -math.inf  # and the next read takes every other replica's switches too


def withdraw_class(code: str) -> list[str]:
    """Withdraw every page's answers released while class ``code`` was open (called as it ends:
    released answers do not stay public after the class); the pages withdrawn."""
    stems = sorted(cs.get_store().released_in(code))
    for stem in stems:
        release(stem, False)
    return stems


def preset_shows_answers(stem: str, preset: str | None) -> bool:
    """True when the parameter file's preset ``preset`` of page ``stem`` has ``answers = true``."""
    if not preset:
        return False
    data, _ = load_file()
    try:
        return data[stem]["presets"][preset].get("answers") is True
    except (KeyError, TypeError, AttributeError):
        return False


def public(ctx) -> bool:
    """True when everybody may see the answers of the view ``ctx`` (released, or a preset that shows
    them): what ``show_answers`` draws for a student, and what a downloaded notebook includes."""
    return released(ctx.stem) or preset_shows_answers(ctx.stem, st.session_state.get("preset"))


def _toggle(stem: str) -> None:
    from ui.teaching.live import _TEACH

    try:
        release(stem, bool(st.session_state.get(f"_release_{stem}")), st.session_state.get(_TEACH))
    except cs.STORE_ERRORS as exc:  # the switch shows the stored state again on this run
        _log.warning("released answers: store unreachable (%s); switch not changed", type(exc).__name__)


def show_answers(ctx) -> None:
    """Draw the answers under the questions of ``ctx`` (a ``ui.kit.page.Ctx``) for those allowed to see them."""
    st.session_state[LAST_VIEW] = {"stem": ctx.stem, "values": dict(ctx.values), "query": dict(ctx.query)}
    items = answers(ctx.t)
    if not items:
        return
    teacher = instructor.is_instructor()
    shown = public(ctx)
    if not (teacher or shown):
        return
    ui = Text("instructor", ctx.lang)
    if teacher:
        key = f"_release_{ctx.stem}"
        st.session_state[key] = released(ctx.stem)  # follow the shared switch (another tab may have moved it)
        st.toggle(ui("answers.release"), key=key, on_change=_toggle, args=(ctx.stem,), help=ui("answers.release_help"))
        st.caption(ui("answers.public" if shown else "answers.private"))
    for i, text in enumerate(items, 1):
        with st.expander(ui("answers.title", i=i)):
            st.markdown(text)
