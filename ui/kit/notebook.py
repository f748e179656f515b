"""A lesson view as a Jupyter notebook (nbformat v4): what "Open as a notebook" downloads.

Each topic page has a recipe, ``pages/<stem>/notebook.py`` (a :class:`Recipe` named ``RECIPE``); from
it and the current view, :func:`build` writes a notebook that runs top to bottom in a fresh kernel
with the project's requirements:

1. the page's title and statement (its own Markdown + LaTeX texts, in the chosen language);
2. one set-up cell (finds the project's ``sim/``, imports NumPy and Plotly, the page's colours);
3. **one parameters cell**: every parameter as a literal, *after* the page's own validation
   (:func:`validated`: the schema's types, ranges and options); only ``repr`` of a finite float, an
   int, a bool or an option id of the schema is written, so nothing from a URL can become code;
4. the recipe's cells: the page's texts it draws with (figure titles, axis titles, legend names),
   then cells calling the public ``sim/`` functions and drawing the main figures with Plotly (the
   exact curve beside the simulation);
5. a last cell printing the key numbers as one JSON line (``NUMBERS {...}``: the tests read it);
6. the page's questions, and their worked answers only when they are public (released by the
   instructor, or a preset that shows them: ``answers=True``).

The notebook is a plain dict in nbformat's v4 schema (the app needs no Jupyter package);
tests/test_notebook.py validates it with ``nbformat`` and executes it with ``nbclient``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from collections.abc import Callable

from ui.kit import files
from ui.kit.figures import COLORS
from ui.kit.i18n import Text
from ui.kit.spec import Resolved

NBFORMAT, NBFORMAT_MINOR = 4, 5
#: a select option id written into code: letters, digits and ``_`` only (the schemas' ids all are)
_OPTION_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: names the set-up and texts cells define: no parameter may be called so
RESERVED = frozenset(
    {"json", "pathlib", "sys", "np", "go", "COLORS", "figure", "exact", "simulated", "TEXT", "numbers"}
)
NUMBERS_TAG = "NUMBERS "  # the last cell's output line: NUMBERS {"key": value, ...}


@dataclass(frozen=True)
class Recipe:
    """What a page's notebook holds besides its texts and parameters.

    ``code``: the code cells (they use the parameters by name, ``TEXT[key]`` for the page's texts
    listed in ``texts``, ``COLORS`` and the helpers of the set-up cell); the last one sets
    ``numbers`` (a dict of key numbers). ``expected(values)``: the same numbers as the page computes
    them (its ``views/`` data), for the tests; ``rtol``/``atol``: how far the two may differ.
    ``statement``: the text sections drawn first (``<key>.title`` / ``<key>.body``)."""

    stem: str
    code: tuple[str, ...]
    texts: tuple[str, ...] = ()
    statement: tuple[str, ...] = ("intro", "statement")
    expected: Callable[[dict], dict] | None = None
    rtol: float = 1e-9
    atol: float = 1e-12


def recipe(stem: str) -> Recipe | None:
    """The recipe of page ``stem`` (``pages/<stem>/notebook.py``), or None when it has none."""
    return getattr(files.module(stem, "notebook"), "RECIPE", None)


# --------------------------------------------------------------------------- parameters
def validated(res: Resolved, raw: dict) -> dict:
    """Every parameter of ``res`` from ``raw`` (values or strings, e.g. from a URL or a command line),
    as the page itself would take them: coerced to its type, clamped into its range and snapped to
    its step; a value that cannot be taken (unknown option, not a number, NaN) gives the default."""
    out = {}
    for name, p in res.params.items():
        v = raw.get(name, p.default)
        try:
            if p.kind in ("float", "int"):
                x = float(v)
                if not math.isfinite(x):
                    raise ValueError(name)
                v = p.clamp(int(round(x)) if p.kind == "int" else x)
            else:
                v = p.coerce(v)
        except (TypeError, ValueError, OverflowError):
            v = p.default
        out[name] = v
    return out


def literal(value) -> str:
    """The Python literal of a validated value; anything else raises (it never reaches code)."""
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("not a finite number")
        return repr(float(value))
    if isinstance(value, str) and _OPTION_ID.match(value):
        return repr(value)
    raise ValueError(f"not a literal parameter value: {type(value).__name__}")


def parameters_cell(res: Resolved, values: dict, t: Text) -> str:
    """``name = literal  # label`` for every parameter (the label is a comment, from the page's texts)."""
    lines = ["# The view's parameters (edit and run all cells again)"]
    clean = validated(res, values)
    for name in res.params:
        label = " ".join(t(f"params.{name}.label").split()).replace("$", "")
        lines.append(f"{name} = {literal(clean[name])}  # {label}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- cells
_SETUP = '''\
import json
import math
import pathlib
import sys

# sim/ is the project's numerics: run this notebook inside a copy of the project (any folder of it).
for _d in (pathlib.Path.cwd(), *pathlib.Path.cwd().parents):
    if (_d / "sim" / "__init__.py").is_file():
        sys.path.insert(0, str(_d))
        break

import numpy as np
import plotly.graph_objects as go

COLORS = @COLORS@


def figure(x_title, y_title, title=None, log_x=False, log_y=False):
    """An empty figure with the page's axis titles (which time each axis is)."""
    fig = go.Figure()
    fig.update_layout(template="plotly_white", title=title, height=420, legend=dict(orientation="h", y=-0.2))
    fig.update_xaxes(title=x_title, type="log" if log_x else None)
    fig.update_yaxes(title=y_title, type="log" if log_y else None)
    return fig


def exact(fig, x, y, name, color=COLORS["exact"], **line):
    """The exact curve: a solid line."""
    fig.add_scatter(x=np.asarray(x), y=np.asarray(y), mode="lines", name=name,
                    line={"color": color, "width": 2.5, **line})


def simulated(fig, x, y, name, color=COLORS["sim"], symbol="circle"):
    """The simulation: markers of the same colour as its exact curve."""
    fig.add_scatter(x=np.asarray(x), y=np.asarray(y), mode="markers", name=name,
                    marker=dict(color=color, symbol=symbol, size=7))
'''

_NUMBERS = """\
# The key numbers of this view, as the page shows them (one JSON line).
print("NUMBERS " + json.dumps({k: float(v) for k, v in numbers.items()}, sort_keys=True))"""


def _texts_cell(t: Text, keys: tuple[str, ...]) -> str:
    rows = ",\n".join(f"    {k!r}: {t(k)!r}" for k in keys)
    return "# The page's texts for the figures (titles, axes, legends)\nTEXT = {\n" + rows + ",\n}"


def _section(t: Text, key: str) -> str:
    return f"## {t(f'{key}.title')}\n\n{t(f'{key}.body')}" if t.has(f"{key}.title") else t(f"{key}.body")


def _cell(kind: str, source: str, n: int) -> dict:
    cell = {"cell_type": kind, "id": f"{kind[:2]}{n:03d}", "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def build(rec: Recipe, res: Resolved, values: dict, lang: str, *, answers: bool = False) -> dict:
    """The notebook (an nbformat v4 dict) of page ``rec.stem`` at ``values`` in ``lang``; the worked
    answers are included only when ``answers`` (they are public for this view)."""
    t = Text(rec.stem, lang)
    common = Text("common", lang)
    md = [f"# {t('title')}" + (f"\n\n*{t('subtitle')}*" if t.has("subtitle") else ""), common("notebook.intro")]
    md += [_section(t, key) for key in rec.statement if t.has(f"{key}.body")]
    code = [_SETUP.replace("@COLORS@", json.dumps(COLORS, indent=4)), parameters_cell(res, values, t)]
    if rec.texts:
        code.append(_texts_cell(t, rec.texts))
    code += [c.strip("\n") for c in rec.code] + [_NUMBERS]
    tail = [_section(t, "questions")] if t.has("questions.body") else []
    if answers:
        i = 1
        while t.has(f"answers.q{i}"):
            tail.append(f"**{common('notebook.answer', i=i)}**\n\n{t(f'answers.q{i}')}")
            i += 1
    cells = [("markdown", s) for s in md] + [("code", s) for s in code] + [("markdown", s) for s in tail]
    return {
        "nbformat": NBFORMAT,
        "nbformat_minor": NBFORMAT_MINOR,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        },
        "cells": [_cell(kind, src, i) for i, (kind, src) in enumerate(cells)],
    }


def dumps(nb: dict) -> bytes:
    """The ``.ipynb`` file's bytes (UTF-8 JSON, as Jupyter writes it)."""
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def numbers(nb: dict) -> dict | None:
    """The key numbers an executed notebook printed (its ``NUMBERS`` line), or None."""
    for cell in nb["cells"]:
        for out in cell.get("outputs", ()):
            for line in "".join(out.get("text", "")).splitlines():
                if line.startswith(NUMBERS_TAG):
                    return json.loads(line[len(NUMBERS_TAG) :])
    return None
