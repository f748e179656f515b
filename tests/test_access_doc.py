"""The document script (``ui.kit.lang.mark_document``) and the control names script
(``ui.kit.access.name_controls``) as the browser gets them: no "<" inside the script (``st.html``
takes one as the start of a tag and the script is dropped: the page then keeps ``lang="en"``), the
run's language, title and words in it, and readable names for a page's LaTeX labels."""

from __future__ import annotations

import contextlib
import json
import re
from unittest import mock

import pytest
import streamlit as st


def _html_of(fn, *args) -> str:
    got = []
    with (
        mock.patch.object(st, "html", lambda s, **k: got.append((s, k))),
        mock.patch.object(st, "container", lambda **k: contextlib.nullcontext()),
    ):
        fn(*args)
    assert len(got) == 1
    html, kw = got[0]
    assert kw.get("unsafe_allow_javascript") is True
    return html


def _body(html: str) -> str:
    m = re.fullmatch(r"<script>(.*)</script>", html, re.S)
    assert m, html[:80]
    return m.group(1)


@pytest.mark.parametrize(("lang", "html_lang", "stem"), [("en", "en", "two_point"), ("zh", "zh-Hans", "hemisphere")])
def test_document_script(lang, html_lang, stem):
    from ui.kit.i18n import Text
    from ui.kit.lang import mark_document

    title = Text(stem, lang)("title")
    body = _body(_html_of(mark_document, lang, title))
    assert "<" not in body
    want = json.loads(re.search(r"const want = (\{.*?\});\n", body).group(1))
    assert want["lang"] == html_lang
    assert want["title"] == f"{title} · {Text('common', lang)('app_title')}"
    assert want["chart"]["chart"] == Text("common", lang)("chart.figure")
    assert "tosChartAria" in body


def test_title_is_the_app_alone_without_a_page_title():
    from ui.kit.i18n import Text
    from ui.kit.lang import mark_document

    body = _body(_html_of(mark_document, "en", None))
    assert json.loads(re.search(r"const want = (\{.*?\});\n", body).group(1))["title"] == Text("common", "en")(
        "app_title"
    )


def test_a_title_cannot_end_the_script():
    from ui.kit.lang import mark_document

    body = _body(_html_of(mark_document, "en", "</script><script>alert(1)</script>"))
    assert "<" not in body


def test_control_names_script():
    from ui.kit.access import name_controls

    body = _body(_html_of(name_controls, ["$\\tau_{\\max}$ — depth horizon", "plain", "x </script> $a$"]))
    assert "<" not in body
    pairs = json.loads(re.search(r"d\.names = (\[.*?\]);", body).group(1))
    assert ["$\\tau_{\\max}$ — depth horizon", "τ_max — depth horizon"] in pairs
    assert all(raw != "plain" for raw, _ in pairs)  # only texts with a formula
