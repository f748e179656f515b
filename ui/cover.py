"""The cover over a page's figures and numbers while its student predicts first.

``ui.predict.steps`` sets it (the stem whose figures wait); ``ui.figures.show`` and
``Ctx.metrics`` honour it. Apart from ``ui.predict`` so that drawing a figure does not
depend on the step machinery.
"""
from __future__ import annotations

import streamlit as st

from ui.i18n import Text

COVER = "_predict_cover"    # session_state[COVER]: the stem whose figures wait for the steps, or None
REVEAL_PREFIX = "fig_predict_"  # figures a step reveals are never covered


def set_cover(stem: str | None) -> None:
    st.session_state[COVER] = stem


def covered(key: str | None) -> bool:
    """True when the figure ``key`` of the current page waits for the 'Predict first' steps."""
    return (st.session_state.get(COVER) is not None
            and not (key or "").startswith(REVEAL_PREFIX))


def cover_note(lang: str, key: str = "ui.covered") -> None:
    """What a covered figure (or row of numbers) shows instead of itself."""
    st.info(Text("predict", lang)(key), icon=":material/visibility_off:")
