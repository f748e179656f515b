"""Showing untrusted text (URL values, parameter-file keys and values, file names) literally.
(The instructor sign-in's primitives: :mod:`ui.teaching.signin`.)

Every Streamlit text element except ``st.text``/``st.code`` renders Markdown with LaTeX
(``$…$``), GitHub autolinks, emoji and colour directives, so a value such as
``x` [Log in again](https://…)`` echoed inside a notice would close the notice's code span and
put a working link inside the app's own warning box. :func:`literal` turns any value into one
inline code span that CommonMark cannot leave: the fence is one backtick longer than the longest
run of backticks inside, so no character of the value can close it, and a code span's content is
never parsed as Markdown, HTML, LaTeX, a link or a directive. Line breaks and other invisible or
direction-changing characters are shown as escapes (a paragraph break would end the span), and
the value is cut to ``limit`` characters so a 10 kB link cannot flood the page.

Use it for every piece of user-controlled text placed into a Markdown string::

    st.warning(t("ui.notice_invalid", value=literal(f"{name}={raw}"), default=...))
"""

from __future__ import annotations

import html
import re

__all__ = ["inert_html", "literal", "visible"]

_TICKS = re.compile(r"`+")


def visible(value, limit: int = 60) -> str:
    """``value`` as a single line of visible characters, at most ``limit`` long (``…`` marks a cut).

    Line breaks, tabs, control and format characters (including bidi overrides such as U+202E)
    become their Python escapes (``\\n``, ``\\u202e``), so what is shown is what was sent.
    """
    s = str(value)
    if len(s) > 4 * limit:  # never walk a huge string character by character
        s = s[: 4 * limit]
    s = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in s)
    if len(s) > limit or len(str(value)) > 4 * limit:
        s = s[: max(limit - 1, 0)] + "…"
    return s


def literal(value, limit: int = 60) -> str:
    """A Markdown inline code span that shows ``value`` (cut to ``limit`` characters) exactly.

    Inert in ``st.markdown``/``st.warning``/``st.error``/captions/labels: no link, no HTML, no
    LaTeX, no emphasis, no directive can come out of it, whatever the value holds.
    """
    s = visible(value, limit)
    if not s:
        return "` `"
    longest = max((len(m) for m in _TICKS.findall(s)), default=0)
    fence = "`" * (longest + 1)
    # CommonMark strips one space from each end when both ends are spaces; a value that starts or
    # ends with a backtick needs the space so the fence is not extended by it.
    pad = " " if (s[0] in "` " or s[-1] in "` ") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def inert_html(value, limit: int = 200) -> str:
    """``value`` (cut to ``limit`` characters, invisible characters as escapes) as HTML text for
    ``st.html``: every ``<``, ``&`` and quote escaped, so it is shown exactly as written. Used
    where a code span would look wrong (a preset's title under the sidebar's preset box): HTML
    text is never Markdown, so no autolink (``https://…``, ``www.…``, an e-mail address), no
    emphasis, no LaTeX and no directive can come out of it."""
    return html.escape(visible(value, limit), quote=True)


# --------------------------------------------------------------------------- the instructor's sign-in
