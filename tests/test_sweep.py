"""Every lesson page at the corners of its controls: its defaults, each parameter at its slider's
minimum and maximum (the others at their defaults), each choice of a select, each preset (built-in
and the shipped parameter file) and the all-minimum / all-maximum corners.

At each the page renders whole: no exception, no error box, and the page ran to its end (its
``limits`` section and the footer are drawn, so no ``st.stop`` cut it short). A panel that cannot
compute says so in its place (an ``st.info``) and the rest of the page stays.

One AppTest per page, its widgets moved from case to case (a fresh AppTest costs a server start);
one test per page, so pytest-xdist spreads the pages over its workers.
"""
from __future__ import annotations

import pytest

from tests.conftest import STEMS, app_test, page_schema
from ui.kit import spec
from ui.kit.i18n import Text
from ui.kit.page import preset_view

LESSONS = [s for s in STEMS if page_schema(s).params]
#: collapsed sections drawn only while open: opened for the sweep, so their corners are checked too
OPEN = {"two_point": ("_two_point_simplex_open",),
        "nonnormal": ("_nonnormal_pseudo_open", "_nonnormal_jacobians_open", "_nonnormal_euler_open"),
        "depth_sum": ("_depth_sum_variants_open", "_depth_sum_step_open")}


def cases(stem: str) -> list[tuple[str, dict]]:
    """``(name, values)`` for every corner of page ``stem``; ``values`` is a complete view."""
    res = spec.resolve(page_schema(stem), spec.load_file(spec.DEFAULT_PARAMS_FILE)[0])
    base = {k: p.default for k, p in res.params.items()}
    out = [("defaults", dict(base))]
    for k, p in res.params.items():
        if p.kind in ("float", "int"):
            out += [(f"{k}=min", {**base, k: p.min}), (f"{k}=max", {**base, k: p.max})]
        elif p.kind == "select":
            out += [(f"{k}={o}", {**base, k: o}) for o in p.options if o != p.default]
        elif p.kind == "bool":
            out.append((f"{k}={not p.default}", {**base, k: not p.default}))
    for pid in res.presets:
        out.append((f"preset {pid}", preset_view(res, pid)))
    for end in ("min", "max"):
        out.append((f"all-{end}", {k: getattr(p, end) if p.kind in ("float", "int") else p.default
                                   for k, p in res.params.items()}))
    return out


def _set(at, name, value):
    for kind in ("slider", "selectbox", "toggle", "radio", "segmented_control"):
        try:
            w = getattr(at, kind)(key=name)
        except (KeyError, AttributeError):
            continue
        if w.value != value:
            w.set_value(value)
        return
    raise KeyError(name)


def problems(at, stem: str, lang: str) -> list[str]:
    """What is wrong with the page AppTest ``at`` last drew; empty when it drew whole."""
    out = [f"exception: {e.value}" for e in at.exception]
    out += [f"error box: {e.value}" for e in at.error]
    t = Text(stem, lang)
    md = [m.value for m in at.markdown]
    if not any(t("limits.title") in m for m in md):
        out.append("stopped: no limits section")
    if not any(t("view.glossary_link") in m for m in md) and not at.get("page_link"):
        out.append("stopped: no footer")
    return out


@pytest.mark.parametrize("stem", LESSONS)
def test_every_corner_renders_whole(stem):
    at = app_test(stem)
    for key in OPEN.get(stem, ()):
        at.session_state[key] = True
    bad = {}
    for name, values in cases(stem):
        for k, v in values.items():
            _set(at, k, v)
        at.run()
        if p := problems(at, stem, "en"):
            bad[name] = p
    assert not bad, bad
