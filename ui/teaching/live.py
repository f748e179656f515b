"""What the class's modules share: the session keys, the store, the texts and a few helpers
(the join link and its QR code, a page by its stem, toasts, an instructor's text shown literally).

The class: ``ui.teaching.student`` (the banner), ``ui.teaching.teacher`` (the panel on a page),
``ui.teaching.console`` (the console page, the sidebar box), ``ui.teaching.responses`` (the
answers, pure); state in ``ui.teaching.class_store`` (in memory, or Redis with ``APP_REDIS_URL``).
"""

from __future__ import annotations

import json

import streamlit as st

from ui.teaching import class_store as cs
from ui.teaching.responses import histogram, q_value
from ui.kit.i18n import Text

POLL_S = 1.0  # see _poll: a poll that finds nothing new is one store read
BEAT_S = 5.0  # a student tells the store it is here at most this often (the instructor's count)
_CODE = "_class_code"  # session: the class this session belongs to (student)
_FOLLOW = "_class_follow"  # session: student follows pushes
_SEEN = "_class_seen"  # session: version of the last push applied
_VIEW = "_class_view"  # session: the last pushed view applied (its page, whether held)
_WHO = "_class_who"  # session: (code, anonymous id for answers)
_TEACH = "_class_teach"  # session: code of the class this instructor opened
_STAMP = "_class_stamp"  # session: the class's stamp (version, question, reveals) last drawn
_REL = "_class_rel"  # session: the released pages when the page was last drawn
_LEFT = "_class_left"  # session: a class that closed (its code may still be in the URL)
_GONE = "_class_gone"  # session: (code, ended by the teacher?) told in the banner until a new join
_DOWN = "_class_down"  # session: the store could not be reached on the last try
_PENDING = "_class_pending"  # session: {(code, qid): answer} sent while the store was down
_TOASTS = "_class_toasts"  # session: toasts to show on the next full run: (text key, its named values)
_BEAT = "_class_beat"  # session: when this student last told the store it is here
_SLOT = "_class_slot"  # session (one run): the teacher panel's place for push / ask
_BANK = "_class_bank"  # session (instructor): the lesson page last shown, for the console
_VIEW_BANK = "_class_view_bank"  # session (instructor): (pushed view, its bank), for the console
_GO = "_class_go"  # session: a pushed view to open at the top of the next full run
MAX_PROMPT = 200


def _store():
    return cs.get_store()


def _ct(lang: str) -> Text:
    return Text("console", lang)


def for_phones(link: str) -> str:
    """``link`` as the students' phones can open it: on this machine's loopback name (the teacher
    browses by ``localhost``), the classroom network's address instead (the first LAN address, as
    ``make serve-class`` prints them); any other link as it is. What the join QR code encodes."""
    from ui.kit.share import is_loopback, lan_links

    return next(iter(lan_links(link)), link) if is_loopback(link) else link


def join_link(code: str) -> str:
    """The address students open to join: the configured public address or the one this browser used
    (:func:`ui.kit.share.share_base`, as the share link), with the class code; ``/?class=…`` when
    neither is known (tests). Its QR code encodes :func:`for_phones` of it."""
    from ui.kit.share import share_base

    try:
        base = share_base("", st.context.headers.get("Host"), st.context.headers.get("X-Forwarded-Proto"))
    except Exception:  # noqa: BLE001 - no browser context (tests)
        base = ""
    return f"{base or '/'}?class={code}"


def qr_svg(text: str) -> str:
    from ui.kit.share import qr_svg as _qr

    return _qr(text, 4)


def _page(stem: str, lang: str):
    from ui.kit.nav import PAGES, page

    return page(next(e for e in PAGES if e.stem == stem), lang)


def _stems() -> set[str]:
    from ui.kit.nav import PAGES

    return {e.stem for e in PAGES}


def _toast(key: str, **values: str) -> None:
    st.session_state.setdefault(_TOASTS, []).append((key, tuple(sorted(values.items()))))


def qr_html(link: str, size: int) -> str:
    """The join QR code of ``link`` (it encodes :func:`for_phones` of it) as an ``<img>`` for
    ``st.html``, ``size`` px wide, with a text alternative naming the address it opens (a screen
    reader says where the code leads; ``st.image`` has no alternative text)."""
    import html

    from ui.kit.share import qr_data_uri

    target = for_phones(link)
    return (
        f'<div class="tos-class-qr"><img alt="QR: {html.escape(target, quote=True)}" width="{int(size)}" '
        f'height="{int(size)}" src="{qr_data_uri(target)}"></div>'
    )


def show_code(code: str, label: str) -> None:
    """The class code as an element of its own (large; larger still in projector mode, see
    assets/styles), under its label: read from the back of a room, not a word inside a sentence."""
    import html

    st.html(
        f'<div class="tos-class-code"><span class="tos-class-code-label">{html.escape(label)}</span>'
        f'<span class="tos-class-code-value" translate="no">{html.escape(code)}</span></div>'
    )


def context(q: dict, lang: str, ct: Text) -> None:
    """A bank question's instruction and the parameters it is about, as the students read them
    (the banner) and the instructor before asking (the panel, the console)."""
    text = (q.get("instruction") or {}).get(lang) if isinstance(q.get("instruction"), dict) else None
    if text:
        st.markdown(text)
    about = (q.get("about") or {}).get(lang) if isinstance(q.get("about"), dict) else None
    if about:
        st.caption(ct("banner.about", params=about))


def answers_chart(values: list, q: dict, lang: str, height: int, x_label: str, y_label: str) -> None:
    """The answers to ``q`` as horizontal bars (:func:`responses.histogram`: choices in the order
    asked, in ``lang``; numbers by bins), nothing when there is none: the students' banner, the
    teacher's panel and the lesson board draw the same chart."""
    h = histogram(values, q)
    if q.get("kind") == "choice":
        h["answer"] = [q_value(q, lang, a) for a in h["answer"]]
    if h["answer"]:  # labels readable across
        st.bar_chart(
            h, x="answer", y="count", height=height, horizontal=True, sort=False, x_label=x_label, y_label=y_label
        )


_FOLD_JS = r"""
export default function (component) {
  // On a phone the open sidebar is a sheet over the page (assets/style.css): after joining a class or
  // opening another page it is folded, once per new value of this element's data (per element key).
  const msg = JSON.parse(typeof component.data === 'string' ? component.data : '{}');
  const seen = (window.__tosFolded = window.__tosFolded || {});
  if (seen[msg.key] === msg.token) return;
  seen[msg.key] = msg.token;
  if (!window.matchMedia('(max-width: 640px)').matches) return;
  const side = document.querySelector('section[data-testid="stSidebar"]');
  const fold = document.querySelector('[data-testid="stSidebarCollapseButton"] button');
  if (side && fold && side.getAttribute('data-collapsed') === 'false') fold.click();
}
"""
_fold = None


def fold_sheet(key: str, token: str) -> None:
    """On a phone, fold the sidebar sheet when ``token`` is new for ``key`` (a class joined, a page
    opened): Streamlit keeps it open where the student opened it, over half of the screen. Streamlit
    offers no public call for it (``st.set_page_config(initial_sidebar_state=...)`` gives way to the
    state the browser stored when the student opened the sheet); a tiny component (public
    ``st.components.v2``, no iframe) clicks the sidebar's own fold button; a wide screen: nothing."""
    global _fold
    if _fold is None:
        _fold = st.components.v2.component("tos_fold_sheet", js=_FOLD_JS)
    with st.container(key=f"tos_fold_{key}"):  # not drawn (assets/style.css)
        _fold(key=f"_tos_fold_{key}", data=json.dumps({"key": key, "token": token}), width="stretch", height="content")


def plain(text: str, head: str = "") -> None:
    """An instructor's own text (a question) shown literally as ordinary text: HTML text, never
    Markdown, so no markup, link, LaTeX or directive comes out of it, and no grey code span either;
    ``head`` (an app text, no markup) in bold before it."""
    import html

    from ui.kit.safe import inert_html

    bold = f"<strong>{html.escape(head)}</strong>" if head else ""
    st.html(f'<p class="tos-class-plain">{bold}{inert_html(text, MAX_PROMPT)}</p>')


def _literal(text: str) -> str:
    from ui.kit.safe import literal

    return literal(text, MAX_PROMPT)


def titles(stems, lang: str) -> str:
    """Pages by their titles in ``lang``, in one line (unknown stems left out)."""
    known = _stems()
    return ("、" if lang == "zh" else ", ").join(Text(x, lang)("title") for x in stems if x in known)


def _short(text: str, n: int = 90) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"
