"""Shared test helpers: page discovery, AppTest factory, Plotly spec decoding."""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.chdir(ROOT)  # AppTest and the page scripts resolve paths from the repo root

# The AppTest helpers live in harness/apptest.py (bench/ and scripts/ use them too); re-exported here.
from harness.apptest import APPTEST_TIMEOUT, STEMS, app_test, open_page, page_schema  # noqa: E402,F401


def decode(x):
    """Plotly >= 6 typed arrays {'dtype','bdata'} -> ndarray; lists -> ndarray."""
    if isinstance(x, dict) and "bdata" in x:
        arr = np.frombuffer(base64.b64decode(x["bdata"]), dtype=np.dtype(x["dtype"]))
        shape = x.get("shape")
        if shape:
            arr = arr.reshape([int(s) for s in str(shape).split(",")])
        return arr
    return np.asarray(x) if x is not None else None


def charts(at) -> list:
    """The charts a run drew (``ui.kit.chart``: one ``bidi_component`` element each)."""
    from ui.kit.chart import sent_figure

    return [el for el in at.get("bidi_component") if sent_figure(el.proto) is not None]


def chart_specs(at) -> list[dict]:
    """The figures of the charts a run drew, as the browser receives them."""
    from ui.kit.chart import sent_figure

    return [sent_figure(el.proto) for el in charts(at)]


@pytest.fixture
def stems():
    return STEMS
