"""Both languages have the same keys, no empty strings, and real Chinese."""
import re
import tomllib

import pytest

from tests.conftest import STEMS, page_schema
from ui.i18n import TEXT_DIR, Text, flat_keys, normalize_lang

FILES = sorted({p.name for lang in ("en", "zh") for p in (TEXT_DIR / lang).glob("*.toml")})
CJK = re.compile(r"[\u4e00-\u9fff]")


def _load(lang, name):
    with open(TEXT_DIR / lang / name, "rb") as fh:
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
