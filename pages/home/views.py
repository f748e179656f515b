"""Home: the cards of the other pages, for pages/home/page.py (no computation, no figures)."""

from __future__ import annotations

from ui.kit.i18n import Text
from ui.kit.nav import PAGES, page


def page_cards(lang: str) -> list[tuple]:
    """``(link target, title, icon, subtitle)`` of every page but home, in navigation order."""
    cards = []
    for e in PAGES:
        if e.stem != "home":
            pt = Text(e.stem, lang)
            cards.append((page(e, lang), pt("title"), e.icon, pt("subtitle")))
    return cards
