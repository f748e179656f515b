"""The language in force and the sidebar switch that sets it."""

from __future__ import annotations

import streamlit as st

from ui.kit.i18n import LANG_NAMES, normalize_lang
from ui.kit.spec import LANGS


def current_lang() -> str:
    """The language in force: widget state, else ``?lang=``, else browser locale, else en."""
    state = st.session_state
    lang = normalize_lang(state.get("lang"))
    if lang:
        return lang
    raw = st.query_params.get("lang")
    lang = normalize_lang(raw)
    if lang is None:
        try:
            lang = normalize_lang(st.context.locale)
        except Exception:  # noqa: BLE001 - no browser context (tests, bare mode)
            lang = None
    return lang or "en"


def language_selector() -> str:
    """Draw the sidebar language switch (once per run, in app.py) and return the language."""
    lang = current_lang()
    raw = st.query_params.get("lang")
    if "lang" not in st.session_state:
        st.session_state["lang"] = lang
        if raw is not None and normalize_lang(raw) is None:
            st.session_state["_lang_notice"] = raw
    st.sidebar.segmented_control(
        "Language / 语言",
        options=list(LANGS),
        format_func=LANG_NAMES.get,
        key="lang",
        required=True,
        label_visibility="collapsed",
    )
    return normalize_lang(st.session_state.get("lang")) or "en"


#: ``<html lang>`` of each language (BCP 47: Chinese in simplified characters)
HTML_LANG = {"en": "en", "zh": "zh-Hans"}

# Streamlit 1.67 has no public way to set <html lang> (index.html says "en"; streamlit#15726, the
# page_lang PR was closed) and its own page title wins over a title set once: this script, in a
# hidden container, keeps the document's language and title what this run says, whatever Streamlit
# draws later (a mutation observer, at most every 200 ms). It also mends, on each pass:
# - the language switch: the option in the other language is marked as that language, and so are
#   the words of the other language in the main area (the glossary's terms);
# - Streamlit's sidebar page list, <ul> holding <div> groups of <li> (axe: "list", "listitem",
#   serious): the <ul> becomes role="none" and each group a role="list";
# - a table or display equation wider than its column (it scrolls sideways inside its box): a Tab
#   stop with a name, so that a keyboard can scroll it;
# - each chart: one figure with a name and a description (ui.kit.chart.ARIA_JS);
# - names read aloud: aria-label values holding a control's raw label (LaTeX source) get the
#   readable name (ui.kit.access.name_controls fills window.__tosDoc.names).
_DOC_JS = r"""<script>(() => {%(charts)s
  const want = %(want)s;
  window.__tosDoc = Object.assign(window.__tosDoc || {names: []}, want);
  const LANGS = {'English': 'en', '中文': 'zh-Hans'};
  const apply = () => {
    const w = window.__tosDoc, d = document;
    if (d.documentElement.lang !== w.lang) d.documentElement.lang = w.lang;
    if (w.title && d.title !== w.title) d.title = w.title;
    for (const b of d.querySelectorAll('[data-testid="stSidebar"] button[data-variant="segmented_control"]')) {
      const l = LANGS[b.innerText.trim()];
      if (l && b.getAttribute('lang') !== l) b.setAttribute('lang', l);
    }
    const ul = d.querySelector('[data-testid="stSidebarNavItems"]');
    if (ul && ul.querySelector(':scope > div')) {
      if (ul.getAttribute('role') !== 'none') ul.setAttribute('role', 'none');
      for (const g of ul.querySelectorAll(':scope > div')) {
        if (g.getAttribute('role') !== 'list') g.setAttribute('role', 'list');
        const h = g.querySelector(':scope > header');
        if (h) {
          if (!h.id) h.id = 'tos-nav-' + Math.random().toString(36).slice(2, 9);
          g.setAttribute('aria-labelledby', h.id);
        }
      }
    }
    for (const el of d.querySelectorAll('[data-testid="stMarkdownContainer"] table, .katex-display')) {
      const wide = el.scrollWidth > el.clientWidth;  // as axe judges a region scrollable
      if (wide && !el.dataset.tosScroll) {
        el.dataset.tosScroll = '1';
        el.tabIndex = 0;
        if (el.tagName !== 'TABLE') el.setAttribute('role', 'group');
        el.setAttribute('aria-label', el.tagName === 'TABLE' ? w.scroll_table : w.scroll_equation);
      } else if (!wide && el.dataset.tosScroll) {
        delete el.dataset.tosScroll;
        el.removeAttribute('tabindex');
        el.removeAttribute('aria-label');
        if (el.tagName !== 'TABLE') el.removeAttribute('role');
      }
    }
    if (w.chart && window.tosChartAria) tosChartAria(w.chart);
    // words of the other language inside the page (the glossary, the language link): marked as such
    for (const el of d.querySelectorAll('[data-testid="stMain"] :is(strong, em, td, th, li, p, a span)')) {
      if (el.children.length || el.closest('.katex')) continue;
      const s = el.textContent.trim(), cjk = (s.match(/[\u3400-\u9fff]/g) || []).length;
      const other = w.lang === 'en' ? (cjk && cjk >= (s.match(/[A-Za-z]/g) || []).length ? 'zh-Hans' : null)
        : (!cjk && /^[A-Za-z][A-Za-z ()'\/-]{2,}$/.test(s) ? 'en' : null);
      if (other && el.getAttribute('lang') !== other) el.setAttribute('lang', other);
    }
    // Streamlit names a help button "Help for" + its label, in English whatever the page's language
    for (const el of d.querySelectorAll('[data-testid="stTooltipIcon"] button[aria-label^="Help for "]')) {
      const v = w.help_for.split('{label}').join(el.getAttribute('aria-label').slice(9));
      if (v !== el.getAttribute('aria-label')) el.setAttribute('aria-label', v);
    }
    if (w.names.length) {
      const sel = '[data-testid="stSidebar"] [aria-label*="$"], [data-testid="stMain"] [aria-label*="$"]';
      for (const el of d.querySelectorAll(sel)) {
        let v = el.getAttribute('aria-label');
        for (const [raw, name] of w.names) if (raw && v.includes(raw)) v = v.split(raw).join(name);
        if (v !== el.getAttribute('aria-label')) el.setAttribute('aria-label', v);
      }
    }
  };
  window.__tosApply = apply;
  if (!window.__tosDocWatch) {
    let timer = null;
    const soon = () => { if (!timer) timer = setTimeout(() => { timer = null; apply(); }, 200); };
    window.__tosDocWatch = new MutationObserver(soon);
    window.__tosDocWatch.observe(document.documentElement, {subtree: true, childList: true, characterData: true});
    window.addEventListener('resize', soon);
  }
  apply();
})();</script>"""


def mark_document(lang: str, page_title: str | None) -> None:
    """The document's language (``<html lang>``: en / zh-Hans) and title (the page's, then the
    app's name, in ``lang``) for this run; drawn once per run by app.py (a hidden element)."""
    import json

    from ui.kit.chart import ARIA_JS
    from ui.kit.i18n import Text

    t = Text("common", lang)
    app = t("app_title")
    title = f"{page_title} · {app}" if page_title and page_title != app else app
    want = {
        "lang": HTML_LANG.get(lang, "en"),
        "title": title,
        "scroll_table": t("view.scroll_table"),
        "scroll_equation": t("view.scroll_equation"),
        "help_for": t("view.help_for", label="{label}"),
        "chart": {"chart": t("chart.figure"), "toolbar": t("chart.toolbar")},
    }
    # json.dumps escapes nothing of "</script>": "<" is written as \u003c so no text can end the script
    data = json.dumps(want, ensure_ascii=False).replace("<", "\\u003c")
    with st.container(key="tos_doc"):
        st.html(
            _DOC_JS % {"want": data, "charts": "\n" + ARIA_JS.strip() + "\n  window.tosChartAria = tosChartAria;"},
            unsafe_allow_javascript=True,
        )
