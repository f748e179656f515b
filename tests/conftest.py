"""Shared test helpers: page discovery, AppTest factory, Plotly spec decoding."""
from __future__ import annotations

import base64
import importlib
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.chdir(ROOT)  # AppTest and the page scripts resolve paths from the repo root

from ui.nav import PAGES  # noqa: E402

STEMS = [e.stem for e in PAGES]


def page_schema(stem: str):
    """The PageSchema declared at the top of pages/<stem>.py (importing does not render)."""
    return importlib.import_module(f"pages.{stem}").SCHEMA


def decode(x):
    """Plotly >= 6 typed arrays {'dtype','bdata'} -> ndarray; lists -> ndarray."""
    if isinstance(x, dict) and "bdata" in x:
        arr = np.frombuffer(base64.b64decode(x["bdata"]), dtype=np.dtype(x["dtype"]))
        shape = x.get("shape")
        if shape:
            arr = arr.reshape([int(s) for s in str(shape).split(",")])
        return arr
    return np.asarray(x) if x is not None else None


def chart_specs(at) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def open_page(at, stem: str):
    """Point an AppTest at page ``stem`` for its next ``run()``.

    Pages are functions (``st.Page(render, url_path=stem)``, see ui/nav.py), and
    ``AppTest.switch_page`` only resolves file pages; the script hash Streamlit uses for a page is
    the hash of its URL path, which is what a browser session sends as well."""
    matches = [h for h, info in at._registered_pages.items() if info.get("url_pathname") == stem]
    if not matches:
        raise ValueError(f"no registered page {stem!r}: {list(at._registered_pages.values())}")
    at._page_hash = matches[0]
    return at


#: AppTest's limit for one script run. It is a hang detector, not a speed test: the dearest run (the
#: first one in a process: imports, Numba cache loads, a cold page) costs ~10 s of CPU; with both cores
#: busy with other work and two xdist workers, a process gets a third of a core or less, and such a
#: run takes over 90 s of wall time (it did). Speed is measured in bench/, never by a time-out here.
APPTEST_TIMEOUT = 600.0


def app_test(stem: str, query: dict | None = None, timeout: float = APPTEST_TIMEOUT):
    """An AppTest that runs app.py on page ``stem`` with the given query string."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    if stem != "home":
        open_page(at, stem)
        for k, v in (query or {}).items():
            at.query_params[k] = v
        at.run()
    return at


@pytest.fixture
def stems():
    return STEMS
