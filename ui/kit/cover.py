"""The cover over a page's figures and numbers while its student predicts first.

``ui.kit.predict.steps`` sets it (the stem whose figures wait); ``ui.kit.figures.show`` and
``Ctx.metrics`` honour it. Apart from ``ui.kit.predict`` so that drawing a figure does not
depend on the step machinery.
"""

from __future__ import annotations

import streamlit as st

from ui.kit.i18n import Text

COVER = "_predict_cover"  # session_state[COVER]: the stem whose figures wait for the steps, or None
TEXTS = "_predict_cover_texts"  # session_state[TEXTS]: text keys that state an unanswered step's answer
REVEAL_PREFIX = "fig_predict_"  # figures a step reveals are never covered


OPEN = "_question_open"  # session_state[OPEN]: (stem, step id) of a class or lesson question still to answer


def question_open(stem: str, step_id: str) -> None:
    """Say that this student has a class or lesson question open on page ``stem``: the page's own
    "Predict first" step ``step_id`` (set by the class box or the lesson box, drawn before the page;
    :func:`clear_open` at the start of every run). Until it is answered, the page's figures and the
    texts that state its answer are covered, and the page's own step cannot be answered (its reveal
    would show the truth before the class's)."""
    st.session_state[OPEN] = (stem, step_id)


def open_question(stem: str) -> str | None:
    """The step id of the question open on page ``stem`` (:func:`question_open`), or None."""
    got = st.session_state.get(OPEN)
    return got[1] if got and got[0] == stem else None


def clear_open() -> None:
    st.session_state.pop(OPEN, None)


def set_cover(stem: str | None, texts=()) -> None:
    """Cover the figures of page ``stem`` (None: nothing is covered) and the page texts ``texts``
    (text keys: a section, e.g. ``"notice"``, covers every key under it, ``"notice.body"``)."""
    st.session_state[COVER] = stem
    st.session_state[TEXTS] = frozenset(texts) if stem is not None else frozenset()


def text_covered(key: str) -> bool:
    """True when the page text ``key`` (or the section it belongs to) states the answer of a step
    the student has not answered yet: drawn as a note until then (``Ctx.section``, ``Ctx.md``)."""
    texts = st.session_state.get(TEXTS) or ()
    if not texts or st.session_state.get(COVER) is None:
        return False
    parts = key.split(".")
    return any(".".join(parts[:i]) in texts for i in range(1, len(parts) + 1))


def covered(key: str | None) -> bool:
    """True when the figure ``key`` of the current page waits for the 'Predict first' steps."""
    return st.session_state.get(COVER) is not None and not (key or "").startswith(REVEAL_PREFIX)


def cover_note(lang: str, key: str = "ui.covered") -> None:
    """What a covered figure (or row of numbers) shows instead of itself."""
    st.info(Text("predict", lang)(key), icon=":material/visibility_off:")
