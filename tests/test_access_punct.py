"""Figure text alternatives in Chinese use Chinese punctuation ("Print and accessibility").

The one-line description under each figure is assembled by ``ui.kit.access.summary`` from the figure's
title, axis titles and curve names. In Chinese its own separators are 。：；， (numbers stay numbers:
"从 0.1 到 5"). ``cjk_punct_errors`` is used on every page's rendered Chinese descriptions by
tests/test_pages.py (defaults) and tests/test_predict.py (the revealed figures).
"""

from __future__ import annotations

import re

import numpy as np

from ui.kit.access import _words, summary
from ui.kit.i18n import Text

_CJK = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
# an ASCII , . : ; touching a CJK character (a space in between counts as touching)
_BAD = re.compile(rf"{_CJK} ?[,.:;]|[,.:;] ?{_CJK}")


def cjk_punct_errors(text: str) -> list[str]:
    """The places in ``text`` where ASCII punctuation touches Chinese characters (with context)."""
    return [text[max(m.start() - 6, 0) : m.end() + 6] for m in _BAD.finditer(text)]


def alt_captions(at, lang: str = "zh") -> list[str]:
    """The figure descriptions on an AppTest page (captions that start with the 'In words' prefix)."""
    prefix = Text("common", lang)("view.alt_prefix")
    return [c.value for c in at.caption if c.value.startswith(prefix)]


def _spec(title, x, y, names):
    return {
        "layout": {"title": {"text": title}, "xaxis": {"title": {"text": x}}, "yaxis": {"title": {"text": y}}},
        "data": [
            {"type": "scatter", "name": n, "x": np.arange(3.0), "y": np.arange(3.0) * (i + 1) / 10}
            for i, n in enumerate(names)
        ],
    }


def test_the_checker_finds_ascii_punctuation_next_to_chinese():
    assert cjk_punct_errors("横轴: 从 0 到 5") and cjk_punct_errors("度量. 纵轴") and cjk_punct_errors("精确解, 梯度步")
    assert cjk_punct_errors("图中有；a；b.") == []  # "b." touches no CJK character
    assert cjk_punct_errors("从 0.1 到 2.5，(a, b) 中的轨迹") == []


def test_chinese_summary_uses_chinese_punctuation():
    spec = _spec("θ(t)：同一函数，两种度量", "训练时间 t", "θ = a·b", ["欧氏流，精确解", "拉回度量"])
    got = summary(spec, _words("zh"))["text"]
    assert got == (
        "θ(t)：同一函数，两种度量。训练时间 t：从 0 到 2；θ = a·b：从 0 到 0.4。图中有：欧氏流，精确解；拉回度量。"
    ), got
    assert cjk_punct_errors(got) == []
    # a title with its own full stop is not doubled; curve names that are plain letters are kept
    got = summary(_spec("两点。", "", "", ["SA", "USA"]), _words("zh"))["text"]
    assert got.startswith("两点。横轴：从 0 到 2；纵轴：") and got.endswith("图中有：SA；USA。") and "。。" not in got


def test_english_summary_keeps_english_punctuation():
    got = summary(_spec("Two points.", "depth τ", "half-angle ϑ (rad)", ["SA", "USA"]), _words("en"))["text"]
    assert got == ("Two points. depth τ: from 0 to 2; half-angle ϑ (rad): from 0 to 0.4. Shown: SA; USA."), got


def test_superscripts_stay_exponents_in_words():
    """A curve name or axis title with <sup> reads as an exponent, not a factor: depth_sum's exact
    ratio (1+L<sup>−2α</sup>)<sup>ℓ</sup> was described as "(1+L−2α)ℓ"."""
    spec = _spec(
        "Energy ratio",
        "layer ℓ",
        "|z<sub>ℓ</sub>|<sup>2</sup> / |z<sub>0</sub>|<sup>2</sup>",
        ["exact (1+L<sup>−2α</sup>)<sup>ℓ</sup>", "Monte Carlo"],
    )
    got = summary(spec, _words("en"))["text"]
    assert "|zℓ|^2 / |z0|^2: from 0 to 0.4" in got, got
    assert got.endswith("Shown: exact (1+L^(−2α))^ℓ; Monte Carlo."), got


def test_curve_names_are_listed_with_a_separator_they_do_not_hold():
    """Names hold commas ("欧氏流，精确解", "SA, exact"): listed with one, two names read as four.
    They are listed with ；/; and, when a name holds that too, with " | "."""
    zh = summary(_spec("图", "x", "y", ["欧氏流，精确解", "拉回度量，梯度步", "参考线"]), _words("zh"))["text"]
    assert zh.endswith("图中有：欧氏流，精确解；拉回度量，梯度步；参考线。"), zh
    assert zh.split("图中有：")[1].count("；") == 2
    en = summary(_spec("Fig", "x", "y", ["SA, exact", "USA, layer map"]), _words("en"))["text"]
    assert en.endswith("Shown: SA, exact; USA, layer map."), en
    for lang, name in (("zh", "a；b"), ("en", "a; b")):
        got = summary(_spec("F", "x", "y", [name, "c"]), _words(lang))["text"]
        assert got.rstrip("。.").endswith(f"{name} | c"), got
