"""Write ``docs/api.md``: every public function of ``sim/``, with its signature and its docstring.

    .venv/bin/python scripts/api_doc.py            # (re)write docs/api.md
    .venv/bin/python scripts/api_doc.py --check    # exit 1 when docs/api.md is not up to date

Public: what a module's ``__all__`` names, or else every function and class defined in it whose
name does not start with ``_``; the modules are ``sim/*.py`` and the packages ``sim/*/`` (what a
package re-exports from its own files is listed under the package, as callers import it); modules
whose name starts with ``_`` are private. tests/test_notebook_api.py checks the file is up to date.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "docs" / "api.md"

HEADER = """# The `sim/` API

Every public function of the numerics package `sim/` (pure NumPy, SciPy and Numba: no Streamlit, no
Plotly), with its signature and its docstring (numpydoc: parameters, returns, the formulas). What
each page computes and why: [constructions.md](constructions.md).

Generated from the docstrings by `scripts/api_doc.py`; do not edit by hand (a test checks it is up
to date: run `.venv/bin/python scripts/api_doc.py` after changing a docstring).
"""


def modules() -> list[str]:
    import sim

    return [
        "sim",
        *sorted(
            m.name for m in pkgutil.iter_modules(sim.__path__, "sim.") if not m.name.split(".")[-1].startswith("_")
        ),
    ]


def public(mod) -> list[tuple[str, object]]:
    """``(name, object)`` of the public functions and classes of ``mod``, in source order."""
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [
            n
            for n, o in vars(mod).items()
            if not n.startswith("_")
            and (inspect.isfunction(o) or inspect.isclass(o))
            and getattr(o, "__module__", "") == mod.__name__
        ]
    out = []
    for n in names:
        o = getattr(mod, n)
        if inspect.isfunction(o) or inspect.isclass(o) or callable(getattr(o, "py_func", None)):
            out.append((n, o))
    return out


def _signature(name: str, obj) -> str:
    fn = getattr(obj, "py_func", obj)  # a Numba dispatcher: its Python function's signature
    try:
        return f"{name}{inspect.signature(fn)}"
    except (TypeError, ValueError):
        return name


def _summary(doc: str) -> str:
    return doc.strip().split("\n\n")[0].replace("\n", " ") if doc else ""


def render() -> str:
    parts = [HEADER]
    index, body = [], []
    for name in modules():
        mod = importlib.import_module(name)
        items = public(mod)
        if not items:
            continue
        index.append(f"- [`{name}`](#{name.replace('.', '')}): " + ", ".join(f"`{n}`" for n, _ in items))
        body.append(f"## {name}\n\n{_summary(inspect.getdoc(mod) or '')}\n")
        for n, obj in items:
            doc = inspect.getdoc(getattr(obj, "py_func", obj)) or "(no docstring)"
            body.append(f"### `{name}.{_signature(n, obj)}`\n\n```text\n{doc}\n```\n")
    parts += ["## Contents\n", "\n".join(index) + "\n", *body]
    return "\n".join(parts).rstrip("\n") + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args(argv)
    text = render()
    if a.check:
        ok = OUT.is_file() and OUT.read_text(encoding="utf-8") == text
        print("docs/api.md is up to date" if ok else "docs/api.md is out of date: run scripts/api_doc.py")
        return 0 if ok else 1
    OUT.write_text(text, encoding="utf-8")
    print(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
