"""A class's answers, pure: the answer id from the browser's cookie (:func:`answer_id`), an answer
checked (:func:`parse_answer`) and judged (:func:`verdict`), the answers as a histogram
(:func:`histogram`: any finite answers, whatever their spread), every question's results as CSV
(:func:`results_csv`), a question's prompt and values as a student reads them.

No Streamlit here, nor in what it imports (tests/test_teaching_responses.py): the tolerance rule
and the number format are the predict steps' own, from :mod:`ui.kit.numbers`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import re

from ui.kit.numbers import human, within

ADHOC_RTOL = 0.05
MAX_TEXT = 500  # a free-text answer (kind "text"), in characters


def xsrf_token(raw: str) -> str:
    """The token inside Streamlit's ``_streamlit_xsrf`` cookie. Tornado writes it as
    ``2|mask|masked token|time`` with a new random mask on every page load; the token itself
    (mask XOR masked token) stays the browser's. A value of another form is returned as it is."""
    parts = str(raw or "").split("|")
    if len(parts) == 4 and parts[0] == "2":
        try:
            mask, masked = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
        except ValueError:
            return str(raw)
        if len(mask) == 4:
            return bytes(b ^ mask[i % 4] for i, b in enumerate(masked)).hex()
    return str(raw or "")


def answer_id(code: str, cookies) -> str | None:
    """The student's anonymous answer id in class ``code``, from the browser's cookie (nginx's
    sticky ``st_replica``, else the token inside Streamlit's ``_streamlit_xsrf``, unmasked: the
    cookie's string changes on every load, its token does not); None without either. The same
    browser gets the same id after a reload or on another replica, so an answer sent again
    replaces the first. Hashed with the class code: ids are not linkable across classes and no
    cookie value is stored."""
    cookies = cookies or {}
    base = cookies.get("st_replica") or xsrf_token(cookies.get("_streamlit_xsrf") or "")
    return hashlib.sha256(f"{code}|{base}".encode()).hexdigest()[:16] if base else None


def parse_answer(q: dict, v):
    """``(value, None)`` for an answer the question ``q`` accepts, else ``(None, text key)``:
    a number must be finite, a choice one of the question's."""
    if v is None or (isinstance(v, str) and not v.strip()):
        return None, "answer_missing"
    if q.get("kind") == "text":  # free text (a lesson's own question): kept as typed, no verdict
        return (v.strip(), None) if isinstance(v, str) and len(v.strip()) <= MAX_TEXT else (None, "answer_bad")
    if q.get("kind") == "choice":
        return (v, None) if v in (q.get("options") or []) else (None, "answer_bad")
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None, "answer_bad"
    return (x, None) if math.isfinite(x) else (None, "answer_bad")


def verdict(q: dict, x, y) -> bool | None:
    """Whether answer ``x`` is right for the exact value ``y`` (None when either is missing)."""
    if x is None or y is None or q.get("kind") == "text":
        return None
    if q.get("kind") == "choice":
        return x == y
    # here, not at the top: ui.kit.predict imports streamlit
    try:
        return within(x, y, float(q.get("rtol", ADHOC_RTOL)), float(q.get("atol", 0.0)))
    except (TypeError, ValueError):
        return None


def _labels(xs: list[float], digits: int = 4) -> list[str]:
    """Labels of ``xs`` distinct enough to tell them apart (more digits until they differ)."""
    for d in range(digits, 18):
        out = [f"{x:.{d}g}" for x in xs]
        if len(set(out)) == len(out):
            return out
    return [f"{x!r}" for x in xs]


def histogram(values: list, q: dict, bins: int = 8) -> dict:
    """The answers as bars ``{"answer": [labels], "count": [counts]}``, for any answers: choices in
    the order asked; numbers (finite ones; anything else is not counted) one bar per value when
    at most ``bins + 2`` values differ at four digits (``2`` and ``2.0000000000000004`` are one
    bar), else ``bins`` equal bins over the middle 90 % of the answers plus one bar each for those
    below and above when the whole range is over ten times the middle's (an answer of ``1e16`` does
    not squeeze everyone else into one bar). Never raises: no ``np.histogram``, edges computed
    without overflow."""
    if q.get("kind") == "choice":
        opts = list(q.get("options") or [])
        return {"answer": opts, "count": [sum(1 for v in values if v == o) for o in opts]}
    x = sorted(float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v))
    if not x:
        return {"answer": [], "count": []}
    groups: dict[str, int] = {}
    for v in x:
        key = f"{v:.4g}"
        groups[key] = groups.get(key, 0) + 1
    if len(groups) <= bins + 2:
        return {"answer": list(groups), "count": list(groups.values())}
    n = len(x)
    lo, hi = x[int(0.05 * n)], x[max(math.ceil(0.95 * n) - 1, 0)]
    if not hi > lo or x[-1] / 2 - x[0] / 2 <= 5 * (hi / 2 - lo / 2):
        lo, hi = x[0], x[-1]  # no far outliers (or all in the middle are one value): the whole range
    edges = [lo * (1 - k / bins) + hi * (k / bins) for k in range(bins + 1)]
    counts = [0] * bins
    below = above = 0
    for v in x:
        if v < lo:
            below += 1
        elif v > hi:
            above += 1
        else:
            k = 0
            while k < bins - 1 and v >= edges[k + 1]:
                k += 1
            counts[k] += 1
    names = _labels(edges)
    out = {"answer": [f"{a} – {b}" for a, b in zip(names[:-1], names[1:])], "count": counts}
    if below:
        out["answer"].insert(0, f"< {names[0]}")
        out["count"].insert(0, below)
    if above:
        out["answer"].append(f"> {names[-1]}")
        out["count"].append(above)
    return out


_histogram = histogram


def _label(q: dict, lang: str, v) -> str:
    """A choice's label in ``lang`` (the student saw it), a number as it is; "" for nothing."""
    if v is None:
        return ""
    labels = (q.get("labels") or {}).get(lang) or (q.get("labels") or {}).get("en") or {}
    return str(labels.get(v, v)) if q.get("kind") == "choice" else str(v)


def results_csv(store, code: str, lang: str = "en") -> str:
    """Every question of class ``code``, as a spreadsheet opens it: one row per answer (question, when
    it was asked, page, prompt in ``lang``, one column per parameter, exact value, the answer, its
    verdict); choices by their labels; answers anonymous (numbered per question, no id). UTF-8 with a
    byte-order mark, so that a spreadsheet in a Chinese locale reads the Chinese as Chinese."""
    import datetime as _dt

    qs = list(store.questions(code))
    params: list[str] = []
    for q in qs:
        params += [k for k in (q.get("values") or {}) if k not in params]
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["question", "asked_utc", "page", "prompt", *params, "exact_value", "answer_no", "answer", "right"])
    for q in qs:
        qid = q.get("id")
        exact = store.revealed(code, qid)
        exact = q.get("truth") if exact is None else exact
        at = q.get("asked_at")
        when = (
            _dt.datetime.fromtimestamp(float(at), _dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
            if isinstance(at, (int, float))
            else ""
        )
        values = q.get("values") or {}
        cells = [values.get(k, "") for k in params]
        got = store.answers(code, qid)
        for i, a in enumerate(got or [None], 1):
            ok = verdict(q, a, exact)
            w.writerow(
                [
                    qid,
                    when,
                    q.get("stem", ""),
                    q_prompt(q, lang),
                    *cells,
                    _label(q, lang, exact),
                    i if a is not None else "",
                    _label(q, lang, a),
                    "" if ok is None else int(ok),
                ]
            )
    return "\ufeff" + out.getvalue()


#: what separates typed choices: ASCII and full-width commas, the ideographic comma, semicolons, lines
_OPTION_SEP = re.compile(r"[,，、;；\n]")


def split_options(raw: str, max_len: int = 60, most: int = 8) -> list[str]:
    """The choices a teacher typed (``"faster, slower"`` or, with a Chinese input method,
    ``"更快，更慢，差不多"``): split on any comma or semicolon, trimmed, each at most ``max_len``
    characters, without repeats, at most ``most`` of them."""
    parts = (p.strip()[:max_len] for p in _OPTION_SEP.split(str(raw or "")))
    return list(dict.fromkeys(p for p in parts if p))[:most]


def q_prompt(q: dict, lang: str) -> str:
    p = q.get("prompt")
    if isinstance(p, dict):
        return str(p.get(lang) or p.get("en") or "")
    return str(p or "")


def q_value(q: dict, lang: str, v) -> str:
    """An answer or exact value as a student reads it: a choice's label, a number with its unit."""
    if v is None:
        return "—"
    if q.get("kind") == "text":  # a free text: as typed (the caller shows it literally)
        return str(v)
    if q.get("kind") == "choice":
        return str(((q.get("labels") or {}).get(lang) or {}).get(v, v))
    # a page's step carries its unit symbol (``sym``: "rad", or none): its ``unit`` is the answer
    # box's description ("no unit", "slope on log-log axes"), which reads wrong after a number
    units = q.get("sym") if isinstance(q.get("sym"), dict) else q.get("unit")
    unit = ((units or {}).get(lang) or "") if isinstance(units, dict) else ""
    return f"{human(v, int(q.get('digits', 4)))}{' ' + unit if unit else ''}"


def tolerance(q: dict, lang: str) -> str:
    """How close a number answer to ``q`` must be, as a student reads it: ``5%`` (relative) or the
    absolute bound (``0.5``, with the unit symbol if any), as :func:`verdict` judges it."""
    try:
        rtol, atol = float(q.get("rtol", ADHOC_RTOL) or 0.0), float(q.get("atol", 0.0) or 0.0)
    except (TypeError, ValueError):
        return ""
    if atol > 0 and rtol == 0:
        return q_value({**q, "kind": "number", "digits": 2}, lang, atol)
    return f"{100 * rtol:g}%"
