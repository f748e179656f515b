"""The glossary page shows every term of assets/glossary.toml, in both languages, and every page links to it."""

import re

import pytest

from tests.conftest import STEMS, app_test
from ui.kit.i18n import Text
from pages.glossary import views as G

CJK = re.compile(r"[\u4e00-\u9fff]")


def test_every_term_has_both_languages_and_real_pages():
    terms = G.terms()
    assert 15 <= len(terms) <= 40
    assert len({t["en"] for t in terms}) == len(terms)
    for tm in terms:
        assert CJK.search(tm["zh"]) and CJK.search(tm["zh_def"]), tm["en"]
        assert not CJK.search(tm["en_def"]), tm["en"]
        assert tm["pages"] and set(tm["pages"]) <= set(STEMS), (tm["en"], tm["pages"])


def test_a_broken_entry_is_named(tmp_path, monkeypatch):
    bad = tmp_path / "g.toml"
    bad.write_text('[[term]]\nen = "a"\nzh = "甲"\nen_def = "x"\n', encoding="utf-8")
    monkeypatch.setattr(G, "GLOSSARY", bad)
    with pytest.raises(ValueError, match="term 1 has no 'zh_def'"):
        G.terms()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_shows_every_term(lang):
    at = app_test("glossary", {"lang": lang})
    assert not at.exception
    text = "\n".join(m.value for m in at.markdown)
    for tm in G.terms():
        assert f"**{tm['en']}** · **{tm['zh']}** — {tm[f'{lang}_def']}" in text
    assert Text("glossary", lang)("title") == at.title[0].value


@pytest.mark.parametrize("stem", ["home", "two_point"])
def test_other_pages_link_to_the_glossary(stem):
    at = app_test(stem, {"lang": "zh"})
    assert not at.exception
    labels = [e.proto.label for e in at.get("page_link")]
    assert Text("common", "zh")("view.glossary_link") in labels, labels


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_used_on_names_are_links_and_there_is_no_csv(lang):
    """Each page a term is used on is a link to that page (in the page's language); the page has no
    figure, so no CSV button."""
    at = app_test("glossary", {"lang": lang})
    assert not at.exception
    assert not at.get("download_button")
    links = [e.proto.label for e in at.get("page_link")]
    text = "\n".join(m.value for m in at.markdown)
    for tm in G.terms():
        for stem in tm["pages"]:
            title = Text(stem, lang)("title")
            assert title in links or f"[{title}]({stem}?lang={lang})" in text, (tm["en"], stem)
    if lang == "zh":
        assert all(c.value.endswith("：") for c in at.caption if c.value.startswith("出现在"))
