"""The subsets of Streamlit's fonts (``assets/vendor/fonts/``, ``scripts/vendor_fonts.py``,
served by ``ui.server.fonts``): rebuilt identically from the installed Streamlit, every icon the app
or Streamlit's frontend names still drawn, every character of the app's texts that the whole font
draws still in its subset, and the whole font served when a subset cannot be trusted."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys

import pytest
from fontTools.ttLib import TTFont

from harness.server import ROOT
from ui.server import fonts

sys.path.insert(0, str(ROOT / "scripts"))
import vendor_fonts  # noqa: E402

MANIFEST = json.loads(fonts.MANIFEST.read_text(encoding="utf-8"))
VERSION, MEDIA = vendor_fonts.streamlit_media()
ICONS = next(n for n in MANIFEST["fonts"] if n.startswith("MaterialSymbols"))
TEXT = sorted(n for n in MANIFEST["fonts"] if n != ICONS)


def _font(path):
    return TTFont(str(path), recalcTimestamp=False)


def test_the_subsets_are_what_the_script_builds_from_this_streamlit():
    assert MANIFEST["streamlit"] == VERSION
    built = vendor_fonts.build()
    assert set(built["fonts"]) == set(MANIFEST["fonts"])
    for name, f in built["fonts"].items():
        assert f["source_sha256"] == hashlib.sha256((MEDIA / name).read_bytes()).hexdigest(), name
        assert f["sha256"] == MANIFEST["fonts"][name]["sha256"], f"{name}: rebuild with scripts/vendor_fonts.py --write"
        assert hashlib.sha256((fonts.VENDOR / name).read_bytes()).hexdigest() == f["sha256"], name


def test_every_icon_named_by_the_app_or_streamlit_is_drawn_by_the_subset():
    whole, sub = vendor_fonts.ligatures(_font(MEDIA / ICONS)), vendor_fonts.ligatures(_font(fonts.VENDOR / ICONS))
    app = vendor_fonts.app_icons()
    assert len(app) >= 40 and app <= set(sub), sorted(app - set(sub))
    named = set()
    for js in (MEDIA.parent / "js").glob("*.js"):
        named |= set(vendor_fonts.MATERIAL.findall(js.read_text(encoding="utf-8", errors="replace")))
    assert named & set(whole) <= set(sub), sorted((named & set(whole)) - set(sub))
    # each kept icon is spelled as in the whole font and draws the same outline
    wg, sg = _font(MEDIA / ICONS)["glyf"], _font(fonts.VENDOR / ICONS)["glyf"]
    for text, glyph in sub.items():
        assert sg[glyph].getCoordinates(sg)[0] == wg[whole[text]].getCoordinates(wg)[0], text
    assert len(sub) < len(whole) / 4  # and most of the 4,009 icons are gone


def _app_characters() -> set[str]:
    chars = set()
    for pattern in ("assets/**/*.toml", "pages/**/*.toml", "pages/**/*.py", "ui/**/*.py", "app.py"):
        for f in ROOT.glob(pattern):
            chars |= set(f.read_text(encoding="utf-8"))
    return chars


@pytest.mark.parametrize("name", TEXT)
def test_every_character_of_the_texts_the_whole_font_draws_is_in_its_subset(name):
    whole = set(_font(MEDIA / name).getBestCmap())
    sub = _font(fonts.VENDOR / name)
    kept = set(sub.getBestCmap())
    used = {ord(c) for c in _app_characters()} & whole
    assert used - kept == set(), [chr(c) for c in sorted(used - kept)]
    assert "fvar" in sub and [a.axisTag for a in sub["fvar"].axes] == [
        a.axisTag for a in _font(MEDIA / name)["fvar"].axes
    ]
    maths = {ord(c) for c in "αβθϑ≤≥→−√∞"} & whole
    assert maths <= kept and (len(maths) >= 8 or "SourceCode" in name)
    assert len(kept) < len(whole)  # Cyrillic and others left to the browser's next font


def test_a_subset_that_cannot_be_trusted_is_not_served(tmp_path, monkeypatch):
    assert fonts.subset_for(f"/static/media/{ICONS}") is not None
    assert fonts.subset_for(f"/app/static/media/{ICONS}") is not None  # under a base URL path
    assert fonts.subset_for(f"/static/media/x/{ICONS}") is None
    assert fonts.subset_for(f"/media/{ICONS}") is None
    vendor = tmp_path / "fonts"
    shutil.copytree(fonts.VENDOR, vendor)
    monkeypatch.setattr(fonts, "VENDOR", vendor)
    monkeypatch.setattr(fonts, "MANIFEST", vendor / "manifest.json")
    (vendor / TEXT[0]).write_bytes(b"altered")
    fonts.table.cache_clear()
    try:
        t = fonts.table()
        assert TEXT[0] not in t and ICONS in t
        monkeypatch.setattr(fonts, "_streamlit_version", lambda: "9.9.9")
        fonts.table.cache_clear()
        assert fonts.table() == {} and fonts.subset_for(f"/static/media/{ICONS}") is None
        (vendor / "manifest.json").write_text("{not json")
        monkeypatch.undo()
        monkeypatch.setattr(fonts, "MANIFEST", vendor / "manifest.json")
        fonts.table.cache_clear()
        assert fonts.table() == {}
    finally:
        monkeypatch.undo()
        fonts.table.cache_clear()
