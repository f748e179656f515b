"""Both languages have the same keys, no empty strings, and real Chinese."""

import re
import tomllib

import pytest

from tests.conftest import STEMS, page_schema
from ui.kit import files
from ui.kit.i18n import Text, flat_keys, normalize_lang

#: every text file: each page's own and the shared ones (their names, as Text knows them)
FILES = files.text_names()
CJK = re.compile(r"[\u4e00-\u9fff]")


def _load(lang, name):
    with open(files.text_file(name, lang), "rb") as fh:
        return tomllib.load(fh)


@pytest.mark.parametrize("name", FILES)
def test_same_keys_in_both_languages(name):
    en, zh = _load("en", name), _load("zh", name)
    ke, kz = flat_keys(en), flat_keys(zh)
    assert ke - kz == set(), f"{name}: only in English: {sorted(ke - kz)}"
    assert kz - ke == set(), f"{name}: only in Chinese: {sorted(kz - ke)}"


@pytest.mark.parametrize("name", FILES)
def test_no_empty_or_placeholder_strings(name):
    for lang in ("en", "zh"):
        d = _load(lang, name)
        for key in flat_keys(d):
            v = Text._get([d], key)
            assert isinstance(v, str) and v.strip(), f"{lang}/{name}: {key} is empty"
            assert not re.search(r"\b(TODO|TBD|FIXME|lorem)\b", v, re.I), f"{lang}/{name}: {key}"


@pytest.mark.parametrize("name", FILES)
def test_chinese_text_is_chinese(name):
    d = _load("zh", name)
    long_vals = [Text._get([d], k) for k in flat_keys(d)]
    long_vals = [v for v in long_vals if isinstance(v, str) and len(v) > 40]
    for v in long_vals:
        assert len(CJK.findall(v)) > 5, v[:80]


@pytest.mark.parametrize("stem", STEMS)
def test_every_page_has_its_texts(stem):
    for lang in ("en", "zh"):
        t = Text(stem, lang)
        assert t.has("title") and t.has("subtitle")
        for p in page_schema(stem).params:
            assert t.has(f"params.{p.name}.label"), f"{lang}/{stem}: params.{p.name}.label"
            for o in p.options:
                assert t.has(f"params.{p.name}.options.{o}"), f"{lang}/{stem}: option {o}"


def test_lang_normalisation():
    assert normalize_lang("zh-CN") == "zh" and normalize_lang("en_US") == "en"
    assert normalize_lang("fr") is None and normalize_lang(None) is None and normalize_lang("") is None


def test_fallback_and_format():
    t = Text("two_point", "zh")
    assert t("no.such.key") == "no.such.key"
    assert "{" not in t("timechange.residual", gap="1e-9")


# ----------------------------------------------------------------------------- from the numerical review
STUDENT_FILES = [n for n in FILES if n not in ("common", "home")]  # home: instructors


def _values(lang, name):
    d = _load(lang, name)
    return {k: Text._get([d], k) for k in flat_keys(d)}


@pytest.mark.parametrize("name", FILES)
def test_plot_labels_write_inner_products_without_angle_brackets(name):
    """Plotly draws ⟨ ⟩ like ( ): 'E sup⟨g, u⟩' read as 'E sup(g, u)'. Figure labels write g·u."""
    for lang in ("en", "zh"):
        for key, v in _values(lang, name).items():
            if key.split(".")[0] in ("fig", "fig3d", "pic"):
                assert "⟨" not in v and "⟩" not in v, f"{lang}/{name}: {key} = {v!r}"


@pytest.mark.parametrize("name", STUDENT_FILES)
def test_no_code_names_in_student_text(name):
    bad = re.compile(
        r"\bsim\.\w|`samples`|√samples|samples —|trials —|\\text\{\{trials\}\}|"
        r"scipy\.|bench/|\.py\b"
    )
    for lang in ("en", "zh"):
        for key, v in _values(lang, name).items():
            assert not bad.search(v), f"{lang}/{name}: {key} = {v[:120]!r}"


def test_chinese_hypercube_wording():
    for key, v in _values("zh", "gaussian_width").items():
        assert not re.search(r"(?<!超)立方体", v), f"{key}: {v[:80]!r}"


def test_two_point_states_its_layer_map_with_the_own_term():
    """The shown errors are reproducible only with u_i = sum_j a_ij z_j over both tokens, j = i
    included (sim.attention sums over every j): the page must say so in both languages."""
    for lang in ("en", "zh"):
        body = _values(lang, "two_point")["statement.body"]
        assert re.search(r"u_i = \\sum_\{j=1\}\^\{2\} a_\{ij\}\\, z_j", body), lang
        assert "j = i" in body, lang


def test_hemisphere_w_is_described_as_drawn():
    en, zh = _values("en", "hemisphere"), _values("zh", "hemisphere")
    assert not any(re.search(r"\barrow", v) for v in en.values())
    assert not any("箭头" in v for v in zh.values())
    assert "segment" in en["statement.body"] and "线段" in zh["statement.body"]


def test_chinese_sentences_have_a_verb_and_no_line_starts_with_a_comma():
    zh = _values("zh", "hemisphere")
    assert "看此刻位置最低的那个 token，即" not in zh["why.body"]
    assert "设 $i$ 是此刻位置最低的那个 token" in zh["why.body"]
    # a formula directly followed by ， or 。 lets the browser start the next line with it
    assert not re.search(r"\$[，。]", zh["phase.body"]), zh["phase.body"]
    for name in FILES:
        for key, v in _values("zh", name).items():
            assert not re.search(r"^\s*[，。；、]", v, re.M), f"zh/{name}: {key}"


# ----------------------------------------------------------------------------- predict first
def _alternate_steps(stem: str) -> tuple:
    """Steps a page shows in place of one of its own for some values (``ALTERNATE_STEPS`` of
    ``views/predict_<stem>.py``)."""
    mod = files.module(stem, "predict")
    return tuple(getattr(mod, "ALTERNATE_STEPS", ()))


def test_predict_steps_have_their_texts_in_both_languages():
    """Every step of a page (its SCHEMA.steps) has its texts in the page's files, table
    [predict.<id>] (both languages: the same keys are checked above), and the formatted ones format
    with the page's default values; predict.toml holds only what the steps share."""
    for lang in ("en", "zh"):
        assert set(_load(lang, "predict")) == {"ui"}, lang
        for stem in STEMS:
            schema = page_schema(stem)
            d = _load(lang, stem).get("predict", {})
            values = {p.name: p.default for p in schema.params}
            steps = schema.steps + _alternate_steps(stem)  # e.g. coordinates' step at the saddle
            assert set(d) == {s.id for s in steps}, f"{lang}/{stem}"
            for s in steps:
                t = d[s.id]
                args = s.args(values)
                for k in ("instruction", "question", "explain"):
                    t[k].format(**args)  # raises on a stray single brace or unknown name
                if s.kind == "choice":
                    assert set(t["choices"]) == set(s.choices), f"{lang}/{stem}.{s.id}"
                    assert "unit" not in t
                else:
                    assert t["unit"].strip() and "choices" not in t
                if s.metrics is not None:
                    assert {k for k, _ in s.metrics(values)} == set(t["metrics"]), f"{lang}/{stem}.{s.id}"
