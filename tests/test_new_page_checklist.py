"""A new page is a checklist, and this file is it (docs/architecture.md repeats it item by item).

A page is a folder, ``pages/<stem>/`` (ui/kit/files.py names its files; nothing else does). For every
page ``<stem>``:

1. **Registry line**: one ``<stem> <group> <icon>`` line in ``ui/kit/nav.py``; every page folder is
   registered, once, and holds only a page's files.
2. **Schema and render**: ``pages/<stem>/page.py`` defines ``SCHEMA = PageSchema.from_file("<stem>", ...)``
   (its built-in parameters in ``pages/<stem>/params.toml``) and ``render()``.
3. **Texts in both languages with the same keys**: ``pages/<stem>/en.toml`` and ``pages/<stem>/zh.toml``,
   a ``title``, a label for every parameter.
4. **Steps** (a page with parameters): ``SCHEMA.steps`` from ``pages/<stem>/predict.py``, each step's
   parameters and its reveal's are the page's, its texts in ``[predict.<id>]`` of both languages.
5. **Answers**: a page with a ``[questions]`` section has ``[answers] q1, q2, …`` in both languages.
6. **Presets** (a page with parameters): at least one, in its SCHEMA or the shipped parameter file.
7. **Page tests** (a page with parameters): ``tests/test_page_<stem>.py``.
8. **Notebook** (a page with parameters): ``pages/<stem>/notebook.py`` defines ``RECIPE`` (ui/kit/notebook.py).

Its data and figures (``pages/<stem>/views.py``, and ``figures.py`` when views would grow too long) are
checked by tests/test_layering.py (no kernels; only the kit, the server's shared jobs and ``sim``).
Outside the folder a page adds ``sim/<stem>.py`` (or a sub-package), its tests and its section of
``docs/constructions.md``.
"""

from pathlib import Path

import pytest

from tests.conftest import STEMS, page_schema
from ui.kit import spec
from ui.teaching.answers import answers
from ui.kit import files
from ui.kit.i18n import Text, flat_keys
from ui.kit.nav import PAGES

ROOT = Path(__file__).resolve().parent.parent


def _texts(stem: str, lang: str) -> dict:
    import tomllib

    with open(files.text_file(stem, lang), "rb") as fh:
        return tomllib.load(fh)


#: what a page folder may hold (ui/kit/files.py): its modules, its parameters and its texts
FOLDER_FILES = {"__init__.py", "params.toml", "en.toml", "zh.toml"} | {f"{p}.py" for p in files.PARTS}


def test_1_every_page_folder_is_registered_once():
    assert sorted(STEMS) == files.stems_on_disk()
    assert sorted(p.name for p in (ROOT / "pages").iterdir() if p.is_file() and p.suffix == ".py") == ["__init__.py"]
    for stem in STEMS:
        held = {p.name for p in files.folder(stem).iterdir() if p.name != "__pycache__"}
        extra = {f for f in held - FOLDER_FILES if f.endswith(".py") and files.is_part(f[:-3])}
        assert held - extra <= FOLDER_FILES, f"pages/{stem}/: {sorted(held - FOLDER_FILES - extra)} belong elsewhere"
        assert {"page.py", "en.toml", "zh.toml"} <= held, stem
    assert len(set(STEMS)) == len(STEMS)
    assert all(e.group and e.icon for e in PAGES)


@pytest.mark.parametrize("stem", STEMS)
def test_2_schema_and_render(stem):

    mod = files.page_module(stem)
    assert isinstance(mod.SCHEMA, spec.PageSchema) and mod.SCHEMA.stem == stem
    assert callable(mod.render)


@pytest.mark.parametrize("stem", STEMS)
def test_3_texts_in_both_languages_with_the_same_keys(stem):
    en, zh = _texts(stem, "en"), _texts(stem, "zh")
    assert flat_keys(en) == flat_keys(zh)
    assert isinstance(en.get("title"), str)
    for p in page_schema(stem).params:
        assert Text(stem, "en").has(f"params.{p.name}.label"), p.name


@pytest.mark.parametrize("stem", STEMS)
def test_4_steps(stem):
    schema = page_schema(stem)
    if not schema.params:
        assert schema.steps == ()
        return
    assert schema.steps, f"{stem}: no 'Predict first' steps (pages/{stem}/predict.py, SCHEMA.steps)"
    assert files.has(stem, "predict") and files.has(stem, "views")
    names = {p.name for p in schema.params}
    ids = [s.id for s in schema.steps]
    assert len(ids) == len(set(ids))
    for s in schema.steps:
        assert set(s.params) <= names, (s.id, set(s.params) - names)
        assert set(s.reveal_params()) <= names, (s.id, set(s.reveal_params()) - names)
    alt = [s.id for s in getattr(files.module(stem, "predict"), "ALTERNATE_STEPS", ())]
    for lang in ("en", "zh"):  # the texts of its steps, and of those it may show in place of one
        assert set(_texts(stem, lang).get("predict", {})) == set(ids) | set(alt), lang


@pytest.mark.parametrize("stem", STEMS)
def test_5_answers(stem):
    for lang in ("en", "zh"):
        if "questions" in _texts(stem, lang):
            assert answers(Text(stem, lang)), f"{lang}/{stem}: questions without [answers]"
    assert len(answers(Text(stem, "en"))) == len(answers(Text(stem, "zh")))


@pytest.mark.parametrize("stem", STEMS)
def test_6_presets(stem):
    schema = page_schema(stem)
    if schema.params:
        data, _ = spec.load_file(spec.DEFAULT_PARAMS_FILE)
        assert spec.resolve(schema, data).presets, f"{stem}: no preset"


@pytest.mark.parametrize("stem", STEMS)
def test_7_page_tests(stem):
    if page_schema(stem).params:
        assert (ROOT / "tests" / f"test_page_{stem}.py").is_file()


@pytest.mark.parametrize("stem", STEMS)
def test_8_notebook(stem):
    """A page with parameters has a notebook recipe (ui/kit/notebook.py): ``pages/<stem>/notebook.py``
    defines ``RECIPE``, a ``ui.kit.notebook.Recipe`` of this page, whose texts exist in both languages and
    whose ``expected`` gives the page's numbers (tests/test_notebook.py runs it against them)."""
    from ui.kit import notebook

    if not page_schema(stem).params:
        return
    assert files.has(stem, "notebook") and files.params_file(stem).is_file()
    rec = notebook.recipe(stem)
    assert isinstance(rec, notebook.Recipe) and rec.stem == stem and rec.code and callable(rec.expected)
    assert not {p.name for p in page_schema(stem).params} & notebook.RESERVED
    for lang in ("en", "zh"):
        t = Text(stem, lang)
        assert all(t.has(k) for k in rec.texts + tuple(f"{s}.body" for s in rec.statement)), lang


def test_a_long_views_or_figures_module_continues_beside_it_and_is_shown():
    """``views_<topic>.py`` / ``figures_<topic>.py`` (a module past the page-file limit, continued):
    allowed in a page folder, shown right after the module it continues, with its source."""
    import importlib

    continued = sorted(p for p in files.PAGES_DIR.glob("*/*_*.py") if files.is_part(p.stem))
    assert continued, "no page uses a continuation module (then this test checks nothing)"
    for p in continued:
        stem, part = p.parent.name, p.stem
        order = files.shown_parts(stem)
        base = part.split("_", 1)[0]
        assert order.index(base) < order.index(part), (stem, order)
        importlib.import_module(files.module_name(stem, part))
        shown = dict(files.shown_sources(stem))
        assert shown[f"pages/{stem}/{part}.py"] == p.read_text(encoding="utf-8"), part
    assert not files.is_part("marks") and not files.is_part("figures_") and files.is_part("figures_resnet")
