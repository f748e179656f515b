"""The pages; helpers that several pages share."""
from __future__ import annotations


def show_pair(left: tuple, right: tuple) -> None:
    """Two figures side by side, each given as ``(figure, key)``."""
    import streamlit as st

    from ui.figures import show

    for col, (fig, key) in zip(st.columns(2), (left, right)):
        with col:
            show(fig, key=key)


def figure_beside(fig, key: str, ctx=None, metrics=None, side: str | None = None):
    """A figure in 3/5 of the width; beside it headline numbers (stacked, through ``ctx``) and a note.
    Returns the side column, for anything more."""
    import streamlit as st

    from ui.figures import show

    main, aside = st.columns([3, 2])
    with main:
        show(fig, key=key)
    with aside:
        if metrics:
            ctx.metrics(metrics, stacked=True)
        if side:
            st.markdown(side)
    return aside
