"""What a page's data adapters (``views/``) compute with: a bounded cache and independent seeds."""

from __future__ import annotations

import streamlit as st

from ui import streamlit_internals


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


def stop_if_superseded() -> None:
    """End this page run now if the user already asked for a newer one: the stopping hook of the
    long computations in ``sim`` (``sim._interrupt``; installed by app.py).

    In a page's script thread with a newer rerun (or a stop) pending it raises Streamlit's own
    control exception, as the next element sent would: a held arrow key then starts the newest
    value after the chunk being computed instead of after the whole stale simulation (nothing of
    the stale run is cached). Anywhere else (a heavy job's worker thread, no Streamlit run) it
    returns at once: a shared job is never stopped by one session's newer request."""
    check = streamlit_internals.run_yield_check()
    if check is not None:
        check()
