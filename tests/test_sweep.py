"""Every lesson page at the corners of its controls, and its printed numbers there against dense
references.

Corners: the defaults; each parameter at its slider's minimum and maximum (the others at their
defaults); each choice of a select; each preset (built-in and the shipped parameter file); the
all-minimum / all-maximum corners; pairwise ends (rows of a strength-2 covering array: every pair
of numeric sliders meets at all four of its (min, max) combinations in some row); then, with a
parameter file that opens every slider to the instructor's hard limits (``lo``/``hi`` of the
page's params.toml), each parameter at ``lo`` and at ``hi`` and the all-``lo`` / all-``hi`` corners.

At each the page renders whole: no exception, no error box, and the page ran to its end (its
``limits`` section and the footer are drawn, so no ``st.stop`` cut it short). A panel that cannot
compute says so in its place (an ``st.info``) and the rest of the page stays.

Numbers: at the defaults, all-min, all-max, each choice of a select, the pairwise rows, every hard
limit case and the page's own corners (``EXTRA``: where its numbers once came from thinned
records) a few of the numbers the page prints are read back from its metrics, at the values its
widgets show, and compared with an independent dense reference (tests/_reference_sweep.py: plain
NumPy/SciPy, every layer, closed forms), within the tolerance the page's rounding allows. Whole
sweep: 531 runs, 1037 numbers, about 130 s on the shared 2-core machine (the old sweep: 101 s back
to back with it).

One AppTest per page, its widgets moved from case to case (a fresh AppTest costs a server start);
one test per page, so pytest-xdist spreads the pages over its workers.
"""

from __future__ import annotations

import itertools
import math

import pytest

from tests import _reference_sweep as refs
from tests.conftest import STEMS, app_test, page_schema
from ui.kit import spec
from ui.kit.i18n import Text
from ui.kit.page import preset_view

LESSONS = [s for s in STEMS if page_schema(s).params]
#: collapsed sections drawn only while open: opened for the sweep, so their corners are checked too
OPEN = {
    "two_point": ("_two_point_simplex_open",),
    "nonnormal": ("_nonnormal_pseudo_open", "_nonnormal_jacobians_open", "_nonnormal_euler_open"),
    "depth_sum": ("_depth_sum_variants_open", "_depth_sum_step_open"),
}
#: the cases whose printed numbers are compared with a reference (every case is checked to render):
#: these, each choice of a select, the pairwise rows, the hard limits and the page's own corners
CHECKED = ("defaults", "all-min", "all-max")
#: corners where a page's numbers went wrong before (numbers from thinned records), checked too
EXTRA = {
    "two_point": [
        dict(beta=5.0, theta0=0.2, horizon=20.0, dt=0.05),
        dict(beta=8.0, theta0=0.3, horizon=10.0, dt=0.02),
        dict(beta=10.0, theta0=0.05, horizon=5.0, dt=0.01),
    ],
    "gaussian_width": [dict(family="directions", correlation=0.5), dict(family="directions", M=64, D=64)],
}


def covering_rows(k: int) -> list[tuple[int, ...]]:
    """Rows of 0/1 (min/max) for ``k`` factors in which every pair of factors takes all four
    combinations: row 0 all zeros, then ``m - 1`` rows whose columns are distinct vectors of weight
    ``w > (m - 1)/2`` (two such columns differ both ways and share a one), ``m`` the smallest that
    gives ``k`` columns (k <= 3: 4 rows, k <= 10: 6, k <= 15: 7)."""
    if k < 2:
        return []
    m = 4
    while math.comb(m - 1, (m - 1) // 2 + 1) < k:
        m += 1
    cols = list(itertools.combinations(range(m - 1), (m - 1) // 2 + 1))[:k]
    rows = [tuple(0 for _ in range(k))]
    rows += [tuple(int(r in c) for c in cols) for r in range(m - 1)]
    return rows


def _numeric(res) -> list:
    return [(k, p) for k, p in res.params.items() if p.kind in ("float", "int")]


def cases(stem: str) -> list[tuple[str, dict]]:
    """``(name, values)`` for every corner of page ``stem`` inside its sliders; ``values`` is a
    complete view."""
    res = spec.resolve(page_schema(stem), spec.load_file(spec.DEFAULT_PARAMS_FILE)[0])
    base = {k: p.default for k, p in res.params.items()}
    out = [("defaults", dict(base))]
    for k, p in res.params.items():
        if p.kind in ("float", "int"):
            out += [(f"{k}=min", {**base, k: p.min}), (f"{k}=max", {**base, k: p.max})]
        elif p.kind == "select":
            out += [(f"choice {k}={o}", {**base, k: o}) for o in p.options if o != p.default]
        elif p.kind == "bool":
            out.append((f"{k}={not p.default}", {**base, k: not p.default}))
    for pid in res.presets:
        out.append((f"preset {pid}", preset_view(res, pid)))
    for end in ("min", "max"):
        out.append(
            (
                f"all-{end}",
                {k: getattr(p, end) if p.kind in ("float", "int") else p.default for k, p in res.params.items()},
            )
        )
    num = _numeric(res)
    for i, row in enumerate(covering_rows(len(num))[1:]):  # row 0 is all-min, already there
        out.append((f"pairwise {i}", {**base, **{k: (p.max if b else p.min) for (k, p), b in zip(num, row)}}))
    out += [(f"extra {i}", {**base, **e}) for i, e in enumerate(EXTRA.get(stem, ()))]
    return out


def hard_file(stem: str, path) -> str:
    """A parameter file (the shipped one plus every slider of ``stem`` opened to its hard limits)."""
    text = spec.DEFAULT_PARAMS_FILE.read_text(encoding="utf-8")
    data = spec.load_file(spec.DEFAULT_PARAMS_FILE)[0].get(stem, {}).get("params", {})
    extra = []
    for k, p in _numeric(spec.resolve(page_schema(stem), {})):
        if k in data:  # the shipped file narrows it already: that table is replaced
            raise AssertionError(f"{stem}.{k} is set in the shipped file; extend hard_file")
        fmt = (lambda x: str(int(x))) if p.kind == "int" else repr
        extra.append(f"\n[{stem}.params.{k}]\nmin = {fmt(p.lo)}\nmax = {fmt(p.hi)}\n")
    path.write_text(text + "".join(extra), encoding="utf-8")
    return str(path)


def hard_cases(stem: str) -> list[tuple[str, dict]]:
    """Each numeric parameter at its hard ``lo`` and ``hi``, then all-lo and all-hi."""
    res = spec.resolve(page_schema(stem), {})
    base = {k: p.default for k, p in res.params.items()}
    out = []
    for k, p in _numeric(res):
        out += [(f"hard {k}=lo", {**base, k: p.lo}), (f"hard {k}=hi", {**base, k: p.hi})]
    for end in ("lo", "hi"):
        out.append((f"hard all-{end}", {**base, **{k: getattr(p, end) for k, p in _numeric(res)}}))
    return out


def _widget(at, name):
    for kind in ("slider", "selectbox", "toggle", "radio", "segmented_control"):
        try:
            return getattr(at, kind)(key=name)
        except (KeyError, AttributeError):
            continue
    raise KeyError(name)


def _set(at, name, value):
    w = _widget(at, name)
    if w.value != value:
        w.set_value(value)


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


def _sweep(at, stem, named_cases, bad, counts):
    for name, values in named_cases:
        for k, v in values.items():
            _set(at, k, v)
        at.run()
        counts["runs"] += 1
        p = problems(at, stem, "en")
        checked = name in CHECKED or name.split()[0] in ("choice", "pairwise", "hard", "extra")
        if not p and checked and stem in refs.CHECKS:
            # the values the page shows (a slider opened to its hard limits keeps its step from
            # the new minimum: the default β = 1.0 becomes 1.01 when β opens down to 0.01)
            found = refs.CHECKS[stem](refs.shown(at), {k: _widget(at, k).value for k in values})
            counts["numbers"] += len(found)
            p = [f"{label}: shown {s}, reference {r}" for label, s, r, ok in found if not ok]
        if p:
            bad[name] = p


@pytest.mark.parametrize("stem", LESSONS)
def test_every_corner_renders_whole_and_its_numbers_agree(stem, tmp_path, monkeypatch):
    at = app_test(stem)
    for key in OPEN.get(stem, ()):
        at.session_state[key] = True
    bad, counts = {}, {"runs": 0, "numbers": 0}
    _sweep(at, stem, cases(stem), bad, counts)
    monkeypatch.setenv(spec.PARAMS_ENV, hard_file(stem, tmp_path / "hard.toml"))
    at.run()  # the widgets whose range or step the file changes are new widgets: drawn once before they are set
    _sweep(at, stem, hard_cases(stem), bad, counts)
    assert not bad, bad
    assert stem not in refs.CHECKS or counts["numbers"] >= 5, counts
    print(f"{stem}: {counts['runs']} runs, {counts['numbers']} numbers compared")


def test_covering_rows_cover_every_pair():
    for k in range(2, 16):
        rows = covering_rows(k)
        assert len(rows) <= 7
        for i, j in itertools.combinations(range(k), 2):
            assert {(r[i], r[j]) for r in rows} == {(0, 0), (0, 1), (1, 0), (1, 1)}, (k, i, j)
