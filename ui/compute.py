"""What a page's data adapters (``views/``) compute with: a bounded cache and independent seeds."""
from __future__ import annotations

import streamlit as st


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
