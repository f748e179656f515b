"""A new page is a checklist, and this file is it (docs/architecture.md repeats it item by item).

For every page ``<stem>``:

1. **Registry line**: one ``Entry("<stem>", group, icon)`` in ``ui/nav.py``; every ``pages/*.py`` is registered.
2. **Schema and render**: ``pages/<stem>.py`` defines ``SCHEMA = PageSchema("<stem>", ...)`` and ``render()``.
3. **Texts in both languages with the same keys**: ``assets/text/en/<stem>.toml`` and
   ``assets/text/zh/<stem>.toml``, a ``title``, a label for every parameter.
4. **Steps** (a page with parameters): ``SCHEMA.steps`` from ``views/predict_<stem>.py``, each step's
   parameters and its reveal's are the page's, its texts in ``[predict.<id>]`` of both languages.
5. **Answers**: a page with a ``[questions]`` section has ``[answers] q1, q2, …`` in both languages.
6. **Presets** (a page with parameters): at least one, in its SCHEMA or the shipped parameter file.
7. **Page tests** (a page with parameters): ``tests/test_page_<stem>.py``.
8. **Notebook** (a page with parameters): ``views/notebook_<stem>.py`` defines ``RECIPE`` (ui/notebook.py).

The page's views (``views/<stem>.py``) are checked by tests/test_layering.py (they exist, define no
kernels, and import only the kit and ``sim``).
"""
import importlib
from pathlib import Path

import pytest

from tests.conftest import STEMS, page_schema
from ui import spec
from ui.answers import answers
from ui.i18n import TEXT_DIR, Text, flat_keys
from ui.nav import PAGES

ROOT = Path(__file__).resolve().parent.parent


def _texts(stem: str, lang: str) -> dict:
    import tomllib

    with open(TEXT_DIR / lang / f"{stem}.toml", "rb") as fh:
        return tomllib.load(fh)


def test_1_every_page_file_is_registered_once():
    files = sorted(f.stem for f in (ROOT / "pages").glob("*.py") if f.stem != "__init__")
    assert sorted(STEMS) == files
    assert len(set(STEMS)) == len(STEMS)
    assert all(e.group and e.icon for e in PAGES)


@pytest.mark.parametrize("stem", STEMS)
def test_2_schema_and_render(stem):
    import importlib

    mod = importlib.import_module(f"pages.{stem}")
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
    assert schema.steps, f"{stem}: no 'Predict first' steps (views/predict_{stem}.py, SCHEMA.steps)"
    assert (ROOT / "views" / f"predict_{stem}.py").is_file()
    names = {p.name for p in schema.params}
    ids = [s.id for s in schema.steps]
    assert len(ids) == len(set(ids))
    for s in schema.steps:
        assert set(s.params) <= names, (s.id, set(s.params) - names)
        assert set(s.reveal_params()) <= names, (s.id, set(s.reveal_params()) - names)
    alt = [s.id for s in getattr(importlib.import_module(f"views.predict_{stem}"), "ALTERNATE_STEPS", ())]
    for lang in ("en", "zh"):   # the texts of its steps, and of those it may show in place of one
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
    """A page with parameters has a notebook recipe (ui/notebook.py): ``views/notebook_<stem>.py``
    defines ``RECIPE``, a ``ui.notebook.Recipe`` of this page, whose texts exist in both languages and
    whose ``expected`` gives the page's numbers (tests/test_notebook.py runs it against them)."""
    from ui import notebook

    if not page_schema(stem).params:
        return
    assert (ROOT / "views" / f"notebook_{stem}.py").is_file()
    rec = notebook.recipe(stem)
    assert isinstance(rec, notebook.Recipe) and rec.stem == stem and rec.code and callable(rec.expected)
    assert not {p.name for p in page_schema(stem).params} & notebook.RESERVED
    for lang in ("en", "zh"):
        t = Text(stem, lang)
        assert all(t.has(k) for k in rec.texts + tuple(f"{s}.body" for s in rec.statement)), lang
