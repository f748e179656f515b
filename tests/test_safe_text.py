"""User-authored text is shown literally everywhere, captions included: a bare address in a preset
title never becomes a link in the sidebar (``ui.kit.safe.inert_html``)."""

from __future__ import annotations

import html

from tests.conftest import app_test
from tests.test_security_input import _elements, _strings
from ui.kit.safe import inert_html

TITLE = "Hot <b>ZQ%</b> see https://evil.example/x www.evil.example a@evil.example **bold** $x$"


def test_inert_html_escapes_everything():
    s = inert_html(TITLE)
    assert "<b>" not in s and "&lt;b&gt;" in s
    assert html.unescape(s) == TITLE[:199] + ("…" if len(TITLE) > 200 else "")
    assert inert_html("a\nb\u202e") == "a\\nb\\u202e"
    assert len(inert_html("x" * 10_000)) <= 200


def test_preset_title_with_a_bare_address_is_not_a_link(tmp_path, monkeypatch):
    f = tmp_path / "params.toml"
    f.write_text(
        f"[two_point.presets.hot]\ntitle = {TITLE!r}\nvalues = {{ beta = 2.0 }}\n".replace("'", '"'), encoding="utf-8"
    )
    monkeypatch.setenv("APP_PARAMS_FILE", str(f))
    at = app_test("two_point", {"lang": "en", "preset": "hot"})
    assert not at.exception
    bodies = [h.proto.body for h in at.sidebar.get("html")]
    assert any(inert_html(TITLE) in b for b in bodies), bodies
    for el in _elements(at._tree):
        kind = type(el.proto).__name__
        if kind in ("Markdown", "Alert", "Heading"):  # what Streamlit renders as Markdown
            for field, s in _strings(el.proto):
                assert "evil.example" not in s, (kind, field, s)
