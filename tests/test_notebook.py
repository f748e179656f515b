"""Every lesson view as a runnable notebook (ui/kit/notebook.py, the recipes views/notebook_<stem>.py).

* both languages give valid nbformat v4 notebooks, for the default view and one other view;
* the parameters cell holds literals only, after the page's own validation: hostile values (from a
  URL, from ``make notebook ARGS=…``) never reach a code cell;
* executed top to bottom in a fresh ipykernel (the venv's Python), the notebook prints the key
  numbers of the view and they equal the page's (its ``views/`` data) within the recipe's tolerances;
* the worked answers are in it only when asked for (public).

Execution: one kernel per page runs the default view's notebook, then the other view's, top to
bottom again (the second run re-executes every cell, set-up included, so it depends on nothing the
first left behind but saves a second kernel start and Numba cache load). The kernel inherits this
process's environment (``NUMBA_CACHE_DIR`` and ``NUMBA_THREADING_LAYER`` as ``make test`` sets them);
Plotly's renderer is ``json`` there, so the outputs stay small. Each page's time is printed
(``-s``) and written to ``artifacts/notebook_times.json``.
"""

from __future__ import annotations

import ast
import json
import sys
import time

import pytest

from tests.conftest import ROOT, app_test
from ui.kit import files
from ui.kit import notebook as nbk
from ui.kit import spec
from ui.kit.i18n import Text
from ui.kit.nav import PAGES

nbformat = pytest.importorskip("nbformat")

LESSONS = [e.stem for e in PAGES if nbk.recipe(e.stem) is not None]
#: one cell may take this long: a hang detector. Measured with both cores busy (load average ~27):
#: the slowest notebook took 28 s in a fresh kernel, ~14 s of it the first ``sim`` import (Numba's
#: cache loaded); with a cold cache the first cell calling a page's kernels compiles them (a minute
#: or more under load)
CELL_TIMEOUT = 600
HOSTILE = [
    "1);import os#",
    "__import__('os').system('id')",
    "nan",
    "inf",
    "-1e999",
    "1e999",
    "'; rm -rf /",
    "lazy\nimport os",
    "${{7*7}}",
    '"""',
    "0x10",
    "True",
    "",
]


def _res(stem: str) -> spec.Resolved:
    return spec.resolve(files.page_module(stem).SCHEMA)


def _views(stem: str) -> dict[str, dict]:
    """The default view and one other (every parameter moved: ``Param.other_value``)."""
    res = _res(stem)
    return {
        "default": nbk.validated(res, {}),
        "other": nbk.validated(res, {p.name: p.other_value() for p in res.params.values()}),
    }


def _params_cell(nb: dict) -> str:
    return next(
        c["source"]
        for c in nb["cells"]
        if c["cell_type"] == "code" and c["source"].startswith("# The view's parameters")
    )


def _assert_literals(src: str, res: spec.Resolved) -> dict:
    """Every statement of the parameters cell is ``name = <constant>`` for a parameter of the page."""
    tree = ast.parse(src)
    out = {}
    for node in tree.body:
        assert isinstance(node, ast.Assign) and len(node.targets) == 1, ast.dump(node)
        name = node.targets[0].id
        assert name in res.params and isinstance(node.value, (ast.Constant, ast.UnaryOp)), ast.dump(node)
        out[name] = ast.literal_eval(node.value)
    assert list(out) == list(res.params)
    return out


@pytest.mark.parametrize("stem", LESSONS)
def test_both_languages_give_valid_notebooks(stem):
    res = _res(stem)
    for which, values in _views(stem).items():
        for lang in spec.LANGS:
            nb = nbk.build(nbk.recipe(stem), res, values, lang, answers=(which == "other"))
            nbformat.validate(nbformat.from_dict(nb))
            again = nbformat.reads(nbk.dumps(nb).decode("utf-8"), as_version=4)  # the file's bytes too
            nbformat.validate(again)
            assert _assert_literals(_params_cell(nb), res) == values
            md = "\n".join(c["source"] for c in nb["cells"] if c["cell_type"] == "markdown")
            t = Text(stem, lang)
            assert t("title") in md and t("questions.body") in md
            assert (t("answers.q1") in md) == (which == "other"), "answers only when asked for"


def test_every_lesson_page_has_a_recipe_and_no_parameter_shadows_the_notebook():
    assert sorted(LESSONS) == sorted(e.stem for e in PAGES if e.stem not in ("home", "glossary"))
    for stem in LESSONS:
        assert not set(_res(stem).params) & nbk.RESERVED, stem


@pytest.mark.parametrize("stem", LESSONS)
def test_hostile_values_never_reach_a_code_cell(stem):
    res = _res(stem)
    for k, bad in enumerate(HOSTILE):
        raw = {name: HOSTILE[(k + i) % len(HOSTILE)] for i, name in enumerate(res.params)}
        values = nbk.validated(res, raw)
        nb = nbk.build(nbk.recipe(stem), res, values, "en")
        got = _assert_literals(_params_cell(nb), res)
        for name, v in got.items():
            p = res.params[name]
            assert v == p.coerce(v) and (p.kind not in ("float", "int") or p.min <= v <= p.max)
        code = "\n".join(c["source"] for c in nb["cells"] if c["cell_type"] == "code")
        for s in HOSTILE:
            if len(s) > 4:
                assert s not in code, (name, s)


def test_literal_refuses_what_is_not_a_plain_value():
    for v in (float("nan"), float("inf"), "1);import os#", "a b", object(), [1], None):
        with pytest.raises(ValueError):
            nbk.literal(v)
    assert [nbk.literal(v) for v in (1, 2.5, True, "lazy")] == ["1", "2.5", "True", "'lazy'"]


def _spy_notebooks(monkeypatch) -> dict:
    """{file name: the deferred ``data`` callable} of every notebook button drawn from now on."""
    import streamlit

    made = {}
    real = streamlit.download_button

    def spy(label, data=None, file_name=None, **kw):
        if str(file_name).endswith(".ipynb"):
            made[file_name] = data
        return real(label, data=data, file_name=file_name, **kw)

    monkeypatch.setattr(streamlit, "download_button", spy)
    return made


def test_the_page_button_writes_validated_literals(monkeypatch):
    """Through the page itself: a hostile URL value, the "Open as a notebook" button's (deferred)
    data, built as a click would build it."""
    made = _spy_notebooks(monkeypatch)
    at = app_test("two_point", {"lang": "zh", "beta": "1);import os#", "theta0": "0.8", "dt": "nan"})
    assert not at.exception, [e.message for e in at.exception]
    nb = json.loads(made["two_point.ipynb"]())
    nbformat.validate(nbformat.from_dict(nb))
    got = _assert_literals(_params_cell(nb), _res("two_point"))
    assert got["theta0"] == 0.8 and got["beta"] == 1.0 and got["dt"] == 0.1
    assert "import os" not in "\n".join(c["source"] for c in nb["cells"] if c["cell_type"] == "code")
    assert nb["cells"][0]["source"].startswith(f"# {Text('two_point', 'zh')('title')}")


def test_the_button_adds_the_answers_once_released(monkeypatch):
    """The worked answers are in the downloaded notebook only while they are public (released)."""
    from ui.teaching import answers as ans

    first = Text("rotation", "en")("answers.q1")
    made = _spy_notebooks(monkeypatch)

    def text() -> str:
        return "\n".join(c["source"] for c in json.loads(made["rotation.ipynb"]())["cells"])

    try:
        assert not app_test("rotation").exception
        assert first not in text()
        ans.release("rotation", True)
        assert not app_test("rotation").exception
        assert first in text()
    finally:
        ans.release("rotation", False)


# --------------------------------------------------------------------------- execution
@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory):
    """A kernelspec ``python3`` that runs this interpreter (the venv's), found before any other."""
    d = tmp_path_factory.mktemp("jupyter")
    spec_dir = d / "kernels" / "python3"
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (venv)",
                "language": "python",
            }
        )
    )
    return {"JUPYTER_PATH": str(d), "PLOTLY_RENDERER": "json"}


TIMES: dict[str, float] = {}


def _close(got, want, rtol, atol) -> bool:
    if want != want:  # NaN: no closed form at this view (both sides say so)
        return got != got
    return abs(got - want) <= atol + rtol * abs(want)


@pytest.mark.parametrize("stem", LESSONS)
def test_notebook_runs_and_reproduces_the_page(stem, kernel_env, monkeypatch):
    from nbclient import NotebookClient

    for k, v in kernel_env.items():
        monkeypatch.setenv(k, v)
    rec, res = nbk.recipe(stem), _res(stem)
    views = _views(stem)
    nbs = {
        which: nbformat.from_dict(nbk.build(rec, res, values, "en" if which == "default" else "zh"))
        for which, values in views.items()
    }
    client = NotebookClient(
        nbs["default"], timeout=CELL_TIMEOUT, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    )
    times = {}
    with client.setup_kernel():
        for which, nb in nbs.items():
            client.nb = nb
            client.reset_execution_trackers()
            t0 = time.perf_counter()
            for i, cell in enumerate(nb.cells):
                client.execute_cell(cell, i, execution_count=client.code_cells_executed + 1)
            times[which] = time.perf_counter() - t0
    TIMES[stem] = times
    print(f"\n{stem}: default view {times['default']:.1f} s (fresh kernel), other view {times['other']:.1f} s")
    for which, nb in nbs.items():
        got, want = nbk.numbers(nb), {k: float(v) for k, v in rec.expected(views[which]).items()}
        assert got is not None, f"{stem} {which}: no NUMBERS line"
        assert set(want) <= set(got)
        bad = {k: (got[k], want[k]) for k in want if not _close(got[k], want[k], rec.rtol, rec.atol)}
        assert not bad, f"{stem} {which}: notebook vs page {bad}"
    out = ROOT / "artifacts"
    out.mkdir(exist_ok=True)
    old = {}
    try:
        old = json.loads((out / "notebook_times.json").read_text())
    except (OSError, ValueError):
        pass
    (out / "notebook_times.json").write_text(json.dumps({**old, stem: times}, indent=1, sort_keys=True))


def test_make_notebook_cli_validates_args(tmp_path, monkeypatch):
    """scripts/make_notebook.py (what ``make notebook`` runs): ARGS from the environment, validated."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import make_notebook

    out = tmp_path / "n.ipynb"
    monkeypatch.setenv("NOTEBOOK_ARGS", "beta=2.5 dt=1);import\\ os# horizon=1e9 bogus")
    assert make_notebook.main(["two_point", "--lang", "zh", "-o", str(out), "theta0=0.8"]) == 0
    nb = json.loads(out.read_text(encoding="utf-8"))
    nbformat.validate(nbformat.from_dict(nb))
    got = _assert_literals(_params_cell(nb), _res("two_point"))
    assert (got["beta"], got["theta0"], got["dt"], got["horizon"]) == (2.5, 0.8, 0.1, 20.0)
