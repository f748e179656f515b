"""Editing a lesson file's text in place (no Streamlit here): each function takes the file's text and
returns the new text, changed with ``tomlkit`` so that the teacher's comments, blank lines and the
order of everything not edited stay as written. The Lessons page (:mod:`ui.teaching.lesson_editor`)
calls these on its working copy; :func:`check` is what a save checks (``ui.teaching.params_file.save``).
"""

from __future__ import annotations

import tomlkit
from tomlkit.items import AoT

from ui.teaching import lessons as L


def check(text: str, source: str = "lesson") -> list[str]:
    """The lesson file's problems (empty: it can be written)."""
    return list(L.parse(text, source).problems)


def _doc(text: str):
    return tomlkit.parse(text)


def _steps(doc) -> AoT:
    if "step" not in doc or not isinstance(doc["step"], AoT):
        if "step" in doc:
            del doc["step"]
        doc.append("step", tomlkit.aot())
    return doc["step"]


def _texts(d: dict):
    """``{"en", "zh"}`` as an inline table (empty languages left out), or None when both are empty."""
    d = {k: str(v) for k, v in (d or {}).items() if k in L.LANGS and str(v or "").strip()}
    if not d:
        return None
    t = tomlkit.inline_table()
    t.update(d)
    return t


def _put_texts(tbl, fields) -> None:
    """Each ``(key, {"en", "zh"})`` of ``fields`` into ``tbl``: an inline table, or the key removed
    when both languages are empty (a value of None is left out: the key keeps what it has)."""
    for key, value in fields:
        if value is None:
            continue
        texts = _texts(value)
        if texts is None:
            if key in tbl:
                del tbl[key]
        else:
            tbl[key] = texts


def new(lid: str, title: dict, description: dict | None = None) -> str:
    """A new lesson file with its head and no step yet."""
    doc = tomlkit.document()
    doc.add(tomlkit.comment("A lesson of Tokens on the Sphere (format: docs/lessons.md)."))
    head = tomlkit.table()
    head["id"] = lid
    head["title"] = _texts(title) or _texts({"en": lid, "zh": lid})
    desc = _texts(description or {})
    if desc is not None:
        head["description"] = desc
    doc["lesson"] = head
    doc.append("step", tomlkit.aot())
    return tomlkit.dumps(doc)


def set_head(text: str, lid: str | None = None, title: dict | None = None, description: dict | None = None) -> str:
    doc = _doc(text)
    if "lesson" not in doc or not isinstance(doc["lesson"], dict):
        doc["lesson"] = tomlkit.table()
    head = doc["lesson"]
    if lid is not None:
        head["id"] = lid
    _put_texts(head, (("title", title), ("description", description)))
    return tomlkit.dumps(doc)


def add_step(text: str, page: str, params: dict, at: int | None = None) -> str:
    """A step showing ``page`` at ``params`` (appended, or inserted before step ``at``)."""
    doc = _doc(text)
    steps = _steps(doc)
    tbl = tomlkit.table()
    tbl["page"] = page
    vals = tomlkit.inline_table()
    vals.update({k: v for k, v in params.items() if isinstance(v, (bool, int, float, str))})
    tbl["params"] = vals
    if at is None or at >= len(steps):
        steps.append(tbl)
    else:
        steps.insert(max(at, 0), tbl)
    return tomlkit.dumps(doc)


def set_view(text: str, i: int, page: str, params: dict) -> str:
    """Step ``i`` shows ``page`` at ``params`` (its preset, if any, dropped); texts and question kept
    (a bank question of another page is then reported by :func:`check`)."""
    doc = _doc(text)
    steps = _steps(doc)
    if not 0 <= i < len(steps):
        return text
    tbl = steps[i]
    tbl["page"] = page
    vals = tomlkit.inline_table()
    vals.update({k: v for k, v in params.items() if isinstance(v, (bool, int, float, str))})
    tbl["params"] = vals
    if "preset" in tbl:
        del tbl["preset"]
    return tomlkit.dumps(doc)


def move(text: str, i: int, d: int) -> str:
    """Step ``i`` moved by ``d`` places (its own comments go with it)."""
    doc = _doc(text)
    steps = _steps(doc)
    j = i + d
    if not (0 <= i < len(steps) and 0 <= j < len(steps)):
        return text
    item = steps[i]
    del steps[i]
    steps.insert(j, item)
    return tomlkit.dumps(doc)


def delete(text: str, i: int) -> str:
    doc = _doc(text)
    steps = _steps(doc)
    if 0 <= i < len(steps):
        del steps[i]
    return tomlkit.dumps(doc)


def set_step(text: str, i: int, instruction: dict, note: dict, question: dict | None) -> str:
    """Step ``i`` with these texts and question (``None``: no question; else the question table's
    fields: ``kind`` and those of its kind, empty ones left out)."""
    doc = _doc(text)
    steps = _steps(doc)
    if not 0 <= i < len(steps):
        return text
    tbl = steps[i]
    _put_texts(tbl, (("instruction", instruction or {}), ("note", note or {})))
    if "question" in tbl:
        del tbl["question"]
    if question:
        q = tomlkit.table()
        for k, v in question.items():
            if isinstance(v, dict):
                v = _texts(v)
            elif isinstance(v, list):
                arr = tomlkit.array()
                arr.extend(_texts(o) or _texts({"en": "?"}) for o in v)
                arr.multiline(True)
                v = arr
            if v is not None and v != "":
                q[k] = v
        tbl["question"] = q
    return tomlkit.dumps(doc)
