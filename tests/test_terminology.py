"""One terminology in both languages, the glossary's, and clean typography on every page ("Language").

Every visible string lives in ``assets/text/{en,zh}/*.toml`` and ``assets/glossary.toml``. This file
walks them all and flags

- a term written in a form the glossary did not choose (``VARIANTS``: the form found, the form to use);
- in Chinese prose: ASCII quotes (``"`` ``'``; use “ ” ‘ ’) and ASCII punctuation touching a Chinese
  character (``，。：；？！（）`` are the full-width forms);
- raw markup outside maths and code in either language: ``t_max``, ``W_in`` (a subscript written
  as ``_``), a LaTeX command outside ``$…$``.

Maths (``$…$``, ``$$…$$``), code (`` `…` ``), HTML tags, format fields (``{x:.3f}``) and link targets
are taken out of a string before it is checked: what is checked is what a reader sees as prose.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from ui.kit import files

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "assets" / "glossary.toml"

_CJK = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"

#: (language, pattern of a form not to use, the glossary's form). The glossary entry itself may name
#: the other forms (assets/glossary.toml is not checked against this list).
VARIANTS = [
    ("zh", r"词元", "token（本应用的中文页面直接写 token）"),
    # a page is one of the eleven topics, a lesson is a teacher's prepared sequence of views
    ("en", r"\b[Ll]esson pages?\b", "topic page (a lesson is a prepared sequence of views)"),
    ("zh", r"课程页", "主题页（课程是教师准备的一串视图与问题）"),
    ("zh", r"注意力汇(?!聚点)|(?<!注意力)汇(?=（sink）)", "注意力汇聚点 / 汇聚点"),
    ("zh", r"Hessian|黑塞(?!矩阵)|海森", "黑塞矩阵"),
    ("zh", r"Jacobian|雅可比(?!矩阵|行列式)", "雅可比矩阵"),
    ("zh", r"层数\}?\s*(?:[×x*·]|\\times)|层数乘以", "层序号 × Δ（层数是总层数 L）"),
    ("en", r"\\text\{layer\}\s*\\times", "(layer index) × Δ"),
    ("zh", r"\\times\$?（", "n 步：t ≈ nΔ（n 为步数）"),
    ("zh", r"生成位置", "三种时间：深度、训练时间 t、算子时间 s"),
    ("en", r"[Gg]eneration position", "the three times: depth, training time t, operator time s"),
    ("zh", r"逆温度系数|反温度", "逆温度"),
    ("zh", r"蒙特卡洛|蒙特卡/罗", "蒙特卡罗"),
    ("zh", r"残差链接|跳跃连接", "残差连接"),
    ("zh", r"伪频谱", "伪谱"),
    ("zh", r"标准误差", "标准误"),
    ("zh", r"团簇|聚类(?!现象)", "簇"),
    ("zh", r"深度时间", "连续深度 τ"),
    ("en", r"depth time", "continuous depth τ"),
    ("zh", r"置换等变(?!性)", "置换等变性"),
]

# what a reader does not see as prose: maths, code, tags, entities, format fields, link targets
_HIDDEN = re.compile(r":material/\w+:|\$\$.*?\$\$|\$.*?\$|`[^`]*`|<[^>]+>|&\w+;|\{[\w.!:<>^=+-]*\}|\]\([^)]*\)", re.S)
_ASCII_QUOTE = re.compile(r"[\"']")
# ASCII , . : ; ? ! touching a CJK character (a space in between counts as touching), or an ASCII
# bracket right against one ("(a, b) 中" is maths set apart by a space; "见(图)" is not)
_HALF = re.compile(rf"{_CJK} ?[,.:;?!]|[,:;?!] ?{_CJK}|{_CJK}[()]|[()]{_CJK}")
# a subscript or superscript written with _ / ^ on a letter, or a LaTeX command, outside maths
_RAW = re.compile(r"(?<![\w\\])[A-Za-z\u0370-\u03ff\u2016]_\{?[A-Za-z0-9]|[A-Za-z)]\^\{|\\[A-Za-z]{2,}")


def _strings(obj, path=""):
    if isinstance(obj, str):
        yield path, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(v, f"{path}.{k}" if path else k)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _strings(v, f"{path}[{i}]")


def texts(lang: str) -> list[tuple[str, str]]:
    """``(where, string)`` for every string a page shows in ``lang``, the glossary's included."""
    out = []
    for name in files.text_names():
        with open(files.text_file(name, lang), "rb") as fh:
            out += [(f"{lang}/{name}:{k}", s) for k, s in _strings(tomllib.load(fh))]
    with open(GLOSSARY, "rb") as fh:
        for i, tm in enumerate(tomllib.load(fh)["term"]):
            out += [(f"glossary.toml:term{i + 1}.{k}", tm[k]) for k in (lang, f"{lang}_def")]
    return out


def prose(s: str) -> str:
    """``s`` as a reader sees it in prose: maths, code, tags and format fields replaced by a space."""
    return _HIDDEN.sub(" ", s)


def _context(s: str, m: re.Match) -> str:
    return s[max(m.start() - 8, 0) : m.end() + 8].replace("\n", " ")


def variant_errors(lang: str) -> list[str]:
    bad = []
    for where, s in texts(lang):
        if where.startswith("glossary.toml"):
            continue
        for lg, pat, use in VARIANTS:
            if lg == lang:
                bad += [f"{where}: '{_context(s, m)}' → {use}" for m in re.finditer(pat, s)]
    return bad


def quote_errors(s: str) -> list[str]:
    p = prose(s)
    return [_context(p, m) for m in _ASCII_QUOTE.finditer(p)]


def half_width_errors(s: str) -> list[str]:
    p = prose(s)
    return [_context(p, m) for m in _HALF.finditer(p)]


def raw_markup_errors(s: str) -> list[str]:
    p = prose(s)
    return [_context(p, m) for m in _RAW.finditer(p)]


def _report(lang: str, check) -> list[str]:
    return [f"{where}: {e!r}" for where, s in texts(lang) for e in check(s)]


# --------------------------------------------------------------------------- the checkers themselves
def test_the_checkers_find_what_they_should():
    assert quote_errors('称为"亚稳态"') and quote_errors("它'很'大")
    assert quote_errors('称为“亚稳态”，$f\'(x)$，`a="b"`，<span style="x">甲</span>') == []
    assert half_width_errors("步长, 越小") and half_width_errors("注意:") and half_width_errors("见(图)")
    assert half_width_errors("从 0.1 到 2.5，(a, b) 中；$f(x)$。见 {n:.2f}。") == []
    assert half_width_errors(":material/cast: 课堂") == []  # a Streamlit icon code is not prose
    assert raw_markup_errors("t_max：显示的训练时长") and raw_markup_errors("‖W_out − W_inᵀ‖")
    assert raw_markup_errors("τ_max — depth") and raw_markup_errors("\\lVert x")
    assert raw_markup_errors("$t_{\\max}$：显示的训练时长，`APP_PARAMS_FILE`，snake_case") == []


# --------------------------------------------------------------------------- the app's texts
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_terms_are_the_glossary_ones(lang):
    bad = variant_errors(lang)
    assert not bad, "\n".join(bad)


def test_no_ascii_quotes_in_chinese():
    bad = _report("zh", quote_errors)
    assert not bad, "\n".join(bad)


def test_no_half_width_punctuation_next_to_chinese():
    bad = _report("zh", half_width_errors)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_raw_markup_outside_maths(lang):
    bad = _report(lang, raw_markup_errors)
    assert not bad, "\n".join(bad)


# --------------------------------------------------------------------------- slider labels, one style
def _labels() -> list[tuple[str, str, str, str]]:
    out = []
    for name in files.text_names():
        with open(files.text_file(name, "en"), "rb") as fh:
            en = tomllib.load(fh).get("params", {})
        with open(files.text_file(name, "zh"), "rb") as fh:
            zh = tomllib.load(fh).get("params", {})
        out += [(name, k, v["label"], zh[k]["label"]) for k, v in en.items() if "label" in v]
    return out


def test_slider_labels_have_one_style():
    """A symbol first, then what it is: "β — inverse temperature" / "β：逆温度"; without a symbol
    a plain lower-case description ("random seed" / "随机种子")."""
    bad = []
    for stem, key, en, zh in _labels():
        sym = re.match(r"(.+?) — ", en)
        if sym:
            if not zh.startswith(sym.group(1) + "："):
                bad.append(f"{stem}.{key}: '{en}' / '{zh}': the Chinese label starts with '{sym.group(1)}：'")
        elif re.search(r": ", prose(en)) or en[0].isupper():
            bad.append(f"{stem}.{key}: '{en}': 'symbol — description' or a lower-case description")
        if " — " in zh or " - " in zh:
            bad.append(f"{stem}.{key}: '{zh}': 符号后用全角冒号")
    assert not bad, "\n".join(bad)


# --------------------------------------------------------------------------- no developer text
#: words about how the app is built or run, not about the mathematics (instructor.toml is for
#: instructors and may name the parameter file)
_DEV = re.compile(
    r"Numba|SciPy|NumPy|np\.random|\bexpm\b|benchmark|on this server|\bcache\b|APP_[A-Z]|"
    r"\b[\w/]+\.(?:toml|py)\b|assets/|docs/|环境变量|缓存|基准测试|本服务器上"
)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_developer_text_on_student_pages(lang):
    bad = [
        f"{where}: {s[max(m.start() - 20, 0) : m.end() + 20]!r}"
        for where, s in texts(lang)
        if not where.startswith(f"{lang}/instructor:")
        for m in _DEV.finditer(s)
    ]
    assert not bad, "\n".join(bad)


# --------------------------------------------------------------------------- the three times
THREE = {"en": ("depth", "training time", "operator"), "zh": ("深度", "训练时间", "算子")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_three_times_are_the_same_on_home_and_glossary(lang):
    """Home and glossary name the same three clocks: depth, training time t, operator time s."""

    def section(stem, key):
        with open(files.text_file(stem, lang), "rb") as fh:
            return tomllib.load(fh)[key]["body"].lower()

    home, note = section("home", "times"), section("glossary", "note")
    for word in THREE[lang]:
        assert word in home and word in note, word
    assert "$t$" in home and "$t$" in note and "$s$" in home and "$s$" in note
