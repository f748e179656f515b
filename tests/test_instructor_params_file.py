"""Saving the parameter file keeps every comment with its section (class trial, item 9): on the shipped
assets/params.toml, an edit of any one page (a parameter changed, its presets reordered, one
removed) leaves each page's banner comment directly above that page's first table, a blank line
before every table, every other page byte for byte, and the data exactly as edited.

On the code before the fix (tomlkit's whole-document edit) this failed: tomlkit keeps the comments
above a table as the end of the previous table, so a page's rewritten presets carried the next
page's banner along (the shipped file itself had five banners above another page's presets), and
tables it added were written right under the previous table, without a blank line."""

from __future__ import annotations

import re
import tomllib

import pytest

from ui.teaching import params_file as pf
from ui.kit.nav import page_module
from ui.kit.spec import DEFAULT_PARAMS_FILE

TEXT = DEFAULT_PARAMS_FILE.read_text(encoding="utf-8")
DATA = tomllib.loads(TEXT)
HEADER = re.compile(r"^\[([A-Za-z0-9_-]+)\.")
BANNER = "# " + "-" * 75 + " "


def _banners(text: str) -> list[tuple[str, str]]:
    """``[(banner comment, page of the first table below it), ...]`` in file order."""
    out, pending = [], None
    for line in text.splitlines():
        if line.startswith(BANNER):
            pending = line
        m = HEADER.match(line)
        if m and pending is not None:
            out.append((pending, m.group(1)))
            pending = None
    return out


def _pages_in_order(text: str) -> list[str]:
    seen: list[str] = []
    for line in text.splitlines():
        m = HEADER.match(line)
        if m and (not seen or seen[-1] != m.group(1)):
            seen.append(m.group(1))
    return seen


def _blank_before_every_table(text: str) -> list[str]:
    lines = text.splitlines()
    return [
        line
        for i, line in enumerate(lines)
        if line.startswith("[") and i and lines[i - 1].strip() and not lines[i - 1].startswith("#")
    ]


def test_the_shipped_file_has_each_banner_above_its_own_page():
    assert [p for _, p in _banners(TEXT)] == _pages_in_order(TEXT) == list(DATA)
    assert not _blank_before_every_table(TEXT)


@pytest.mark.parametrize("stem", list(DATA))
def test_an_edit_of_one_page_keeps_every_comment_with_its_section(stem):
    presets = pf.file_presets(DATA, stem)
    assert len(presets) >= 2
    edited = [*presets[::-1][:-1]]  # reordered, the first one removed
    first = page_module(stem).SCHEMA.params[0]  # its first override: a [params] table is added
    out = pf.apply_edits(TEXT, stem, {first.name: {"default": first.default}}, edited)

    assert _banners(out) == _banners(TEXT)  # every banner above its own page
    assert _pages_in_order(out) == _pages_in_order(TEXT)
    assert not _blank_before_every_table(out), _blank_before_every_table(out)
    assert "\n\n\n" not in out
    got = tomllib.loads(out)
    assert pf.file_presets(got, stem) == edited and got[stem]["params"] == {first.name: {"default": first.default}}
    assert {k: v for k, v in got.items() if k != stem} == {k: v for k, v in DATA.items() if k != stem}
    # the other pages' text, comments and blank lines included, byte for byte
    head, blocks = pf._blocks(TEXT)
    head2, blocks2 = pf._blocks(out)
    assert head2 == head and [b for s, b in blocks2 if s != stem] == [b for s, b in blocks if s != stem]


def test_a_page_new_to_the_file_goes_at_its_end_after_a_blank_line():
    text = TEXT.replace("[block.", "[blockx.")  # "block" is not in the file any more
    out = pf.apply_edits(text, "block", {"eps": {"default": 0.5}}, None)
    assert out.startswith(text.rstrip("\n") + "\n\n[block.params.eps]\n"), out[-200:]
    assert tomllib.loads(out)["block"] == {"params": {"eps": {"default": 0.5}}}


def test_a_file_laid_out_otherwise_still_edits():
    text = 'two_point.presets.a = { title = { en = "A", zh = "甲" }, values = { beta = 1.0 } }\n'
    out = pf.apply_edits(
        text,
        "two_point",
        {},
        [{"id": "b", "title": {"en": "B", "zh": "乙"}, "values": {"beta": 2.0}, "answers": False}],
    )
    assert pf.file_presets(tomllib.loads(out), "two_point")[0]["id"] == "b"
