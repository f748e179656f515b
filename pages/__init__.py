"""The pages; helpers that several pages share."""
from __future__ import annotations


def show_pair(left: tuple, right: tuple) -> None:
    """Two figures side by side, each given as ``(figure, key)``."""
    import streamlit as st

    from ui.figures import show

    for col, (fig, key) in zip(st.columns(2), (left, right)):
        with col:
            show(fig, key=key)
