"""The glossary page's data: the terms of ``assets/glossary.toml`` (the one source), checked."""

from __future__ import annotations

import tomllib

from ui.kit.spec import ROOT

GLOSSARY = ROOT / "assets" / "glossary.toml"
FIELDS = ("en", "zh", "en_def", "zh_def")


def terms() -> list[dict]:
    """Every term as ``{"en", "zh", "en_def", "zh_def", "pages"}``, in the file's order.

    Raises ``ValueError`` naming the entry when a field is missing or empty."""
    with open(GLOSSARY, "rb") as fh:
        data = tomllib.load(fh)
    out = []
    for i, tm in enumerate(data.get("term", [])):
        for f in FIELDS:
            if not isinstance(tm.get(f), str) or not tm[f].strip():
                raise ValueError(f"assets/glossary.toml: term {i + 1} has no '{f}'")
        pages = tm.get("pages", [])
        if not isinstance(pages, list) or not all(isinstance(p, str) for p in pages):
            raise ValueError(f"assets/glossary.toml: term {i + 1}: 'pages' must be a list of page names")
        out.append({**{f: tm[f].strip() for f in FIELDS}, "pages": list(pages)})
    return out


def rows(lang: str, titles: dict[str, str]) -> list[tuple[str, str, str, list[tuple[str, str]]]]:
    """``(English, 中文, meaning in lang, [(page name, its title), …])`` per term, the pages it is
    used on in the file's order; ``titles``: page name -> its title (a page without one is left out)."""
    return [
        (tm["en"], tm["zh"], tm[f"{lang}_def"], [(p, titles[p]) for p in tm["pages"] if p in titles]) for tm in terms()
    ]
