"""Where a page's files are: the one place in the app that knows their names.

A page is a folder ``pages/<stem>/``, everything in it that page's and nothing else:

========================== ======================================================================
``page.py``                ``SCHEMA`` and ``render()`` (what Streamlit runs)
``params.toml``            its built-in parameters and their hard limits (:meth:`ui.kit.spec.PageSchema.from_file`)
``views.py``               its cached data adapters (calling :mod:`sim`) and figure builders
``figures.py``             more figure builders, where ``views.py`` would grow too long (optional)
``<part>_<topic>.py``      ``views.py`` or ``figures.py`` past 250 lines: a topic continued (optional)
``predict.py``             its "Predict first" steps (``STEPS``)
``notebook.py``            its notebook recipe (``RECIPE``)
``en.toml``, ``zh.toml``   its texts in both languages
========================== ======================================================================

Texts shared by every page (``common``, ``predict``, ``console``, ``instructor``) stay in
``assets/text/<lang>/``. Everything else (the registry, schemas, texts, notebooks, the start-up
import, scripts and benchmarks) asks this module, never builds a path or a module name itself.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
PAGES_DIR = ROOT / "pages"
SHARED_TEXT_DIR = ROOT / "assets" / "text"

#: the modules of a page folder, in the order "show this page's code" lists them; ``predict`` and
#: ``notebook`` are left out of that view (the steps hold the answers a student is asked to predict)
PARTS = ("page", "views", "figures", "predict", "notebook")
SHOWN = ("page", "views", "figures")
#: a views or figures module that would pass the page-file limit (250 lines) continues in
#: ``views_<topic>.py`` / ``figures_<topic>.py`` beside it, shown right after it
CONTINUED = ("views", "figures")
_CONTINUATION = re.compile(r"(views|figures)_[a-z0-9_]+")


def folder(stem: str) -> Path:
    """``pages/<stem>/``."""
    return PAGES_DIR / stem


def params_file(stem: str) -> Path:
    """The page's built-in parameter table, ``pages/<stem>/params.toml``."""
    return folder(stem) / "params.toml"


def text_file(name: str, lang: str) -> Path:
    """The text file ``name`` in ``lang``: a page's own (``pages/<name>/<lang>.toml``) when ``name`` is
    a page, else a shared one (``assets/text/<lang>/<name>.toml``)."""
    if name.isidentifier() and folder(name).is_dir():
        return folder(name) / f"{lang}.toml"
    return SHARED_TEXT_DIR / lang / f"{name}.toml"


def is_part(part: str) -> bool:
    """Whether a page folder may have a module of this name: one of :data:`PARTS`, or the
    continuation of one of :data:`CONTINUED` (``figures_resnet``)."""
    return part in PARTS or _CONTINUATION.fullmatch(part) is not None


def module_name(stem: str, part: str = "page") -> str:
    """The dotted name of one module of a page (``pages.two_point.views``)."""
    if not is_part(part):
        raise ValueError(f"{part!r}: a page folder has the modules {PARTS} and their continuations")
    return f"pages.{stem}.{part}"


def source_file(stem: str, part: str) -> Path:
    """The file of one module of a page (it may not exist: ``figures`` and ``notebook`` are optional)."""
    module_name(stem, part)  # checks ``part``
    return folder(stem) / f"{part}.py"


def has(stem: str, part: str) -> bool:
    """Whether the page has that module."""
    return source_file(stem, part).is_file()


def module(stem: str, part: str = "page") -> ModuleType | None:
    """The imported module (imported once per process), or None when the page has no such file."""
    if not has(stem, part):
        return None
    return importlib.import_module(module_name(stem, part))


def page_module(stem: str) -> ModuleType:
    """``pages.<stem>.page`` (its ``SCHEMA`` and ``render``)."""
    return importlib.import_module(module_name(stem, "page"))


def shown_parts(stem: str) -> list[str]:
    """:data:`SHOWN`, each views/figures module followed by its continuations on disk (sorted)."""
    out = []
    for part in SHOWN:
        out.append(part)
        if part in CONTINUED:
            out += sorted(p.stem for p in folder(stem).glob(f"{part}_*.py") if is_part(p.stem))
    return out


def shown_sources(stem: str) -> list[tuple[str, str]]:
    """``(path, source)`` of what a student reads for a page: every shown module it has, already
    imported (its page and its data and figures), never the shared machinery in ``ui/``."""
    import inspect

    out = []
    for part in shown_parts(stem):
        mod = sys.modules.get(module_name(stem, part))
        try:
            src = inspect.getsource(mod) if mod is not None else ""
        except (OSError, TypeError):
            src = ""
        if src or part == "page":
            out.append((source_file(stem, part).relative_to(ROOT).as_posix(), src or "# source not available"))
    return out


def stems_on_disk() -> list[str]:
    """Every page folder (a folder of ``pages/`` with a ``page.py``), sorted."""
    return sorted(p.parent.name for p in PAGES_DIR.glob("*/page.py"))


def text_names() -> list[str]:
    """Every text file's name, as :class:`ui.kit.i18n.Text` takes it: each page's and the shared ones."""
    return sorted(stems_on_disk() + [p.stem for p in (SHARED_TEXT_DIR / "en").glob("*.toml")])
