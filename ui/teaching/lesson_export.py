"""A lesson to take home (no Streamlit drawing here): the whole lesson as ONE Jupyter notebook
(:func:`notebook`: a section per step, made from that page's own notebook recipe,
``ui.kit.notebook`` and ``pages/<stem>/notebook.py``: the statement, the parameters, the computation
with ``sim/``, the figure), and a printable handout (:func:`handout`: one HTML file for the browser's
print, one step per page, each question with space to write; the instructor's copy adds the teacher's
notes and the answers on a last page of their own).

A teacher's text is shown literally in both: HTML-escaped in the handout, every Markdown character
escaped in the notebook (``_md_literal``), so that nothing typed becomes a link, HTML or LaTeX. The
page's own texts (a bank question, a statement) are the app's and keep their Markdown and LaTeX.
"""

from __future__ import annotations

import html
import re
from urllib.parse import urlencode

from ui.kit import notebook as nbk
from ui.kit.access import readable
from ui.kit.i18n import Text
from ui.teaching import lessons as L
from ui.teaching.responses import q_prompt, q_value

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>$~&:\"'=^])")


def _md_literal(text: str) -> str:
    """``text`` as Markdown that shows exactly these characters (CommonMark backslash escapes for
    every ASCII punctuation mark; ``$`` escaped too, so Jupyter's MathJax leaves it alone)."""
    lines = str(text).splitlines() or [""]
    return "  \n".join(_MD_SPECIAL.sub(r"\\\1", line) for line in lines)


def _tr(d: dict, lang: str) -> str:
    return str((d or {}).get(lang) or (d or {}).get("en") or "")


def _bank_texts(step: L.Step, lang: str) -> tuple[str, str]:
    """A bank question's instruction and question, the page's own texts for the step's values."""
    bs = L.bank_step(step.page, step.question.bank)
    pt = Text(step.page, lang)
    args = bs.args(step.values())
    key = f"predict.{bs.id}"
    return (pt(f"{key}.instruction", **args) if pt.has(f"{key}.instruction") else "", pt(f"{key}.question", **args))


# --------------------------------------------------------------------------- the notebook
def notebook(lesson: L.Lesson, lang: str) -> dict:
    """The lesson as one notebook (nbformat v4 dict): the lesson's title and description, the set-up
    cell once, then per step a heading, the instruction, the page's statement (at its first step),
    its parameters cell, texts, ``sim/`` computation and figures (its recipe's cells), and the
    question (no answers)."""
    t = Text("lessons", lang)
    title = _md_literal(_tr(lesson.title, lang))
    cells: list[tuple[str, str]] = [("markdown", f"# {title}\n\n{t('notebook.intro', title=title)}")]
    if lesson.description:
        cells.append(("markdown", _md_literal(_tr(lesson.description, lang))))
    setup_done, stated = False, set()
    n = len(lesson.steps)
    for k, step in enumerate(lesson.steps, 1):
        page = Text(step.page, lang)("title")
        head = [f"## {t('notebook.step', k=k, n=n, page=page)}"]
        if step.instruction:
            head.append(f"**{t('notebook.instruction')}.** {_md_literal(_tr(step.instruction, lang))}")
        cells.append(("markdown", "\n\n".join(head)))
        rec = nbk.recipe(step.page)
        if rec is None:
            cells.append(("markdown", t("notebook.no_recipe")))
        else:
            one = nbk.build(rec, L._resolved(step.page), step.values(), lang, answers=False)["cells"]
            last_code = max(j for j, c in enumerate(one) if c["cell_type"] == "code")
            code_seen = 0
            for j, c in enumerate(one):
                # left out: the page notebook's own title and "how to run" intro (the lesson's are above)
                # and the page's list of questions after its code (the step's own question follows)
                if j in (0, 1) or j > last_code:
                    continue
                if c["cell_type"] == "markdown" and step.page in stated:  # its statement: once per page
                    continue
                if c["cell_type"] == "code":
                    code_seen += 1
                    if code_seen == 1 and setup_done:  # the set-up cell, once per notebook
                        continue
                    setup_done = True
                cells.append((c["cell_type"], c["source"]))
            stated.add(step.page)
        if step.question is not None:
            cells.append(("markdown", f"**{t('notebook.question')}.** {_question_md(step, lang)}"))
    return {
        "nbformat": nbk.NBFORMAT,
        "nbformat_minor": nbk.NBFORMAT_MINOR,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        },
        "cells": [nbk._cell(kind, src, i) for i, (kind, src) in enumerate(cells)],
    }


def _question_md(step: L.Step, lang: str) -> str:
    q = step.question
    if q.kind == "bank":
        instr, question = _bank_texts(step, lang)
        return f"{instr}\n\n{question}" if instr else question
    out = _md_literal(_tr(q.prompt, lang))
    if q.kind == "choice":
        out += "\n\n" + "\n".join(f"{i + 1}. {_md_literal(_tr(o, lang))}" for i, o in enumerate(q.options))
    elif q.kind == "number" and q.unit:
        out += f" ({_md_literal(_tr(q.unit, lang))})"
    return out


def notebook_bytes(lesson: L.Lesson, lang: str) -> bytes:
    return nbk.dumps(notebook(lesson, lang))


# --------------------------------------------------------------------------- the handout
_CSS = """
body { font-family: system-ui, "Noto Sans", "Noto Sans CJK SC", "PingFang SC", sans-serif; margin: 2rem auto;
  max-width: 46rem; color: #111; line-height: 1.5; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { font-size: 1.25rem; margin: 0 0 .3rem; }
.sheet { border-top: 2px solid #333; padding-top: 1rem; margin-top: 2rem; }
.meta { color: #444; font-size: .9rem; } .params { font-family: ui-monospace, monospace; font-size: .85rem;
  overflow-wrap: anywhere; } .instruction { white-space: pre-wrap; margin: .8rem 0; }
.question { margin: 1rem 0; padding: .6rem .8rem; border: 1px solid #999; border-radius: 6px; }
.prompt { white-space: pre-wrap; font-weight: 600; } .write { height: 9rem; border-bottom: 1px dotted #777; }
.line { border-bottom: 1px dotted #777; height: 2.2rem; } ol.options li { margin: .3rem 0; }
.note { white-space: pre-wrap; background: #f3f3f3; padding: .5rem .8rem; border-left: 4px solid #888; }
.answers li { margin: .5rem 0; } .small { font-size: .8rem; color: #555; } a { color: #1a4fa0; }
@media print { body { margin: 0; max-width: none; } .sheet { break-before: page; page-break-before: always;
  border-top: none; margin-top: 0; } a { color: #111; text-decoration: none; } }
"""


def tolerance(q: dict, t: Text) -> str:
    """How far an answer may be from the exact value: "10 %", "± 0.05" or "25 % or ± 0.002"."""
    rel, ab = float(q.get("rtol") or 0), float(q.get("atol") or 0)
    parts = ([f"{100 * rel:g} %"] if rel > 0 else []) + ([f"± {ab:g}"] if ab > 0 else [])
    return t("handout.or").join(parts) if parts else t("handout.exactly")


def _h(x) -> str:
    return html.escape(str(x), quote=True)


def _link(base: str, step: L.Step, lang: str) -> str:
    return f"{base.rstrip('/')}/{step.page}?{urlencode({**step.query(), 'lang': lang})}" if base else ""


def handout(lesson: L.Lesson, lang: str, *, teacher: bool = False, base: str = "") -> str:
    """The printable handout (one HTML document): a title page, one page per step (page, parameters,
    a link to the view when ``base``, the app's address, is known; the instruction; the question with
    space to write), and for the instructor's copy (``teacher``) the notes with each step and a last
    page with every answer, computed for the step's parameters."""
    t = Text("lessons", lang)
    n = len(lesson.steps)
    title = _h(_tr(lesson.title, lang))
    out = [
        f'<!DOCTYPE html><html lang="{"zh-CN" if lang == "zh" else "en"}"><head><meta charset="utf-8">',
        f"<title>{title}</title><style>{_CSS}</style></head><body>",
        f"<h1>{title}</h1>",
    ]
    if lesson.description:
        out.append(f'<p class="instruction">{_h(_tr(lesson.description, lang))}</p>')
    out.append(f'<p>{_h(t("handout.name"))}</p><div class="line"></div>')
    if teacher:
        out.append(f'<p class="meta">{_h(t("handout.teacher_copy"))}</p>')
    out.append(f'<p class="small">{_h(t("handout.generated", file=lesson.source.rsplit("/", 1)[-1]))}</p>')
    answers = []
    for k, step in enumerate(lesson.steps, 1):
        out.append('<section class="sheet">')
        out.append(f'<p class="meta">{_h(t("handout.step", k=k, n=n))}</p>')
        out.append(f"<h2>{_h(Text(step.page, lang)('title'))}</h2>")
        params = ", ".join(f"{a} = {v}" for a, v in step.values().items())
        out.append(f'<p class="params">{_h(t("handout.parameters"))}: {_h(params)}</p>')
        link = _link(base, step, lang)
        if link:
            out.append(f'<p class="small"><a href="{_h(link)}">{_h(t("handout.open"))}</a>: {_h(link)}</p>')
        if step.instruction:
            out.append(f'<p class="instruction">{_h(_tr(step.instruction, lang))}</p>')
        if step.question is not None:
            out.append(_question_html(step, lang, t))
        if teacher and step.note:
            out.append(f'<p class="meta">{_h(t("handout.note"))}</p><div class="note">{_h(_tr(step.note, lang))}</div>')
        out.append("</section>")
        if teacher:
            answers.append(_answer_html(step, k, lang, t))
    if teacher:
        out.append(f'<section class="sheet"><h2>{_h(t("handout.answers"))}</h2><ol class="answers">')
        out += answers
        out.append("</ol></section>")
    out.append("</body></html>")
    return "\n".join(out)


def _question_html(step: L.Step, lang: str, t: Text) -> str:
    q = step.question
    out = ['<div class="question">']
    if q.kind == "bank":  # the page's own texts: their formulas as text (print has no LaTeX)
        instr, question = (readable(x) for x in _bank_texts(step, lang))
        if instr:
            out.append(f'<p class="instruction">{_h(instr)}</p>')
        out.append(f'<p class="prompt">{_h(question)}</p>')
        kind = L.bank_step(step.page, q.bank).kind
        pt = Text(step.page, lang)
        choices = [readable(pt(f"predict.{q.bank}.choices.{c}")) for c in L.bank_step(step.page, q.bank).choices]
        unit = readable(pt(f"predict.{q.bank}.unit")) if pt.has(f"predict.{q.bank}.unit") else ""
    else:
        out.append(f'<p class="prompt">{_h(_tr(q.prompt, lang))}</p>')
        kind = q.kind
        choices = [_tr(o, lang) for o in q.options]
        unit = _tr(q.unit, lang)
    if kind == "choice":
        out.append(f'<p>{_h(t("handout.choose"))}</p><ol class="options">')
        out += [f"<li>{_h(c)}</li>" for c in choices]
        out.append("</ol>")
    elif kind == "text":
        out.append(f'<p>{_h(t("handout.write"))}</p><div class="write"></div>')
    else:
        out.append(f'<p>{_h(t("handout.your_answer"))}</p><div class="line"></div>')
        if unit:
            out.append(f'<p class="small">{_h(t("handout.unit", unit=unit))}</p>')
    out.append("</div>")
    return "\n".join(out)


def _answer_html(step: L.Step, k: int, lang: str, t: Text) -> str:
    if step.question is None:
        return f'<li value="{k}">{_h(t("handout.answer_none"))}</li>'
    try:
        q = L.step_question(step, lang)
    except Exception:  # noqa: BLE001 - one step's computation failing leaves the rest of the handout
        q = {"kind": "number", "truth": None}
    if q["kind"] == "text":
        text = t("handout.answer_text")
    elif q.get("truth") is None:
        text = t("handout.answer_poll") if q["kind"] == "choice" else t("handout.no_truth")
    else:
        text = q_value(q, lang, q["truth"])
        if q["kind"] == "number":
            text += t("handout.answer_tol", tol=tolerance(q, t))
    prompt = q_prompt(q, lang) if q.get("prompt") else ""
    if q.get("step"):  # a bank question's prompt is the page's text (own prompts stay as typed)
        prompt, text = readable(prompt), readable(text)
    return f'<li value="{k}"><span class="small">{_h(prompt)}</span><br><b>{_h(text)}</b></li>'
