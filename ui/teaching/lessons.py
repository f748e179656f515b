"""Lessons: a teacher's prepared sequence of views and questions, one TOML file each (no Streamlit
drawing here; the Lessons page is :mod:`ui.teaching.lesson_editor`, the take-home copies
:mod:`ui.teaching.lesson_export`).

A lesson file::

    [lesson]
    id = "first_lesson"                      # the file's stem: letters a-z, digits, _ and -
    title = { en = "…", zh = "…" }
    description = { en = "…", zh = "…" }

    [[step]]                                 # the steps, in order
    page = "two_point"                       # one of the eleven topic pages
    params = { beta = 1.0, theta0 = 1.0 }    # and/or preset = "<a preset id of that page>"
    instruction = { en = "…", zh = "…" }     # shown to students (optional)
    note = { en = "…", zh = "…" }            # the teacher's only (optional)
    [step.question]                          # optional
    kind = "bank"                            # bank | number | choice | text
    bank = "energy0"                         # bank: a "Predict first" step id of the page

The format, with every key: ``docs/lessons.md``. :func:`parse` never raises: every problem is a
message naming the file, the step (1-based) and the key; a step whose view is broken is dropped, a
broken question is dropped from its step, a broken text is left out, the rest of the lesson runs.
Parameters are checked against the page's effective parameters (its schema with the instructor's
parameter file), as a link to the page would read them: a value outside the range or off the
slider's grid is a problem, since the page would show another value than the file says.

:func:`step_question` turns a step's question into the dict the class store's ``ask()`` takes
(``ui.teaching.teacher``): ``"step"`` keeps its meaning there (the bank step's id, ``None`` for a
teacher's own question, whose prompt is then shown literally) and ``"lesson_step"`` is the step's
index in its lesson (0-based).
"""

from __future__ import annotations

import math
import os
import re
import threading
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ui.kit import spec as _spec

BUILTIN_DIR = _spec.ROOT / "assets" / "lessons"
LESSONS_ENV = "APP_LESSONS_DIR"
LANGS = _spec.LANGS
KINDS = ("bank", "number", "choice", "text")
LESSON_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,59}$")
MAX_STEPS = 40
MAX_BYTES = 2**18  # 256 KB: a lesson of 40 long steps is ~30 KB
MAX_TITLE = 120
MAX_TEXT = 1500  # a description, an instruction, a note
MAX_PROMPT = 200  # as a live question's prompt (ui.teaching.live.MAX_PROMPT)
MAX_OPTION = 60
MAX_OPTIONS = 8
MAX_UNIT = 20
DEFAULT_TOL = 0.05  # an own number question's relative tolerance (as the class's own questions)
MAX_MESSAGES = 40
OPTION_IDS = tuple("abcdefgh")  # a choice's answer ids, in the order of its options

_TOP_KEYS = ("lesson", "step")
_LESSON_KEYS = ("id", "title", "description")
_STEP_KEYS = ("page", "params", "preset", "instruction", "note", "question")
_Q_KEYS = {
    "bank": ("kind", "bank"),
    "number": ("kind", "prompt", "value", "tol", "unit"),
    "choice": ("kind", "prompt", "options", "correct"),
    "text": ("kind", "prompt"),
}


@dataclass(frozen=True)
class Question:
    kind: str  # "bank" | "number" | "choice" | "text"
    bank: str | None = None  # bank: a "Predict first" step id of the page
    prompt: dict = field(default_factory=dict)  # {"en", "zh"}: own questions
    unit: dict = field(default_factory=dict)  # number: {"en", "zh"} or empty
    value: float | None = None  # number: the teacher's value
    tol: float | None = None  # number: relative tolerance
    options: tuple = ()  # choice: ({"en", "zh"}, ...)
    correct: int | None = None  # choice: index of the right option (None: a poll)


@dataclass(frozen=True)
class Step:
    page: str
    params: dict
    preset: str | None
    instruction: dict
    note: dict
    question: Question | None
    index: int = 0  # its place in the lesson (0-based), after dropped steps

    def values(self) -> dict:
        """Every parameter of the page for this view, as a visit to :meth:`query` shows them."""
        from ui.kit.page import view_values

        return view_values(_resolved(self.page), self.query())

    def query(self) -> dict[str, str]:
        """The page URL query that opens exactly this view: the preset (if any) and every parameter
        (a URL naming only some would leave the others as the student's session last had them)."""
        from ui.kit.page import fmt_value, view_values

        res = _resolved(self.page)
        q = {"preset": self.preset} if self.preset else {}
        q.update({k: fmt_value(res.params[k], v) for k, v in self.params.items() if k in res.params})
        values = view_values(res, q)
        return {**q, **{k: fmt_value(res.params[k], v) for k, v in values.items()}}


@dataclass(frozen=True)
class Lesson:
    id: str
    title: dict
    description: dict
    steps: tuple[Step, ...]
    source: str
    builtin: bool
    problems: tuple[str, ...] = ()


# --------------------------------------------------------------------------- pages
def _stems() -> tuple[str, ...]:
    from ui.kit.nav import PAGES

    return tuple(e.stem for e in PAGES)


def _schema(stem: str):
    from ui.kit.nav import page_module

    return page_module(stem).SCHEMA


def _resolved(stem: str) -> _spec.Resolved:
    """The page's effective parameters and presets (its schema with the instructor's file)."""
    return _spec.resolve(_schema(stem), known_pages=_stems())


def bank_step(page: str, step_id: str):
    """The page's "Predict first" step ``step_id`` (``ui.kit.predict.Step``), or None."""
    return next((s for s in _schema(page).steps if s.id == step_id), None)


# --------------------------------------------------------------------------- parsing
def _short(v, limit: int = 60) -> str:
    return _spec._short(v, limit)


class _Where:
    """Collects messages ``<file>: step <n>: <key>: problem``."""

    def __init__(self, source: str):
        self.source, self.out = source, []

    def add(self, where: str, msg: str) -> None:
        self.out.append(f"{self.source}: {where}: {msg}" if where else f"{self.source}: {msg}")


def _texts(value, where: str, key: str, w: _Where, limit: int, required: bool = False) -> dict:
    """A ``{"en", "zh"}`` text (a single string counts for both); {} when absent or broken."""
    if value is None:
        if required:
            w.add(where, f"{key}: missing (give {key}.en and {key}.zh)")
        return {}
    if isinstance(value, str):
        value = {lang: value for lang in LANGS}
    if not isinstance(value, dict):
        w.add(where, f"{key}: expected a string or a table with keys en, zh, got {_spec._kind(value)}")
        return {}
    out = {}
    for k, v in value.items():
        if k not in LANGS:
            w.add(where, f"{key}.{k}: unknown language (use {', '.join(LANGS)})")
        elif not isinstance(v, str):
            w.add(where, f"{key}.{k}: expected a string, got {_spec._kind(v)}")
        elif len(v) > limit:
            w.add(where, f"{key}.{k}: {len(v)} characters, at most {limit} are kept")
            out[k] = v[:limit]
        elif v.strip():
            out[k] = v
    if out and len(out) < len(LANGS):  # a lesson in one language: that text in both (not a problem)
        have = next(iter(out))
        out = {lang: out.get(lang, out[have]) for lang in LANGS}
    if not out and required:
        w.add(where, f"{key}: empty")
    return out


def _view(raw: dict, where: str, w: _Where):
    """``(page, params, preset)`` of a step, or None when its view cannot be shown as written."""
    page = raw.get("page")
    stems = _stems()
    if not isinstance(page, str) or page not in stems:
        w.add(where, f"page: {_short(page)} is not a topic page (pages: {', '.join(stems)})")
        return None
    res = _resolved(page)
    preset = raw.get("preset")
    if preset is not None and (not isinstance(preset, str) or preset not in res.presets):
        w.add(
            where, f"preset: {_short(preset)} is not a preset of {page} (presets: {', '.join(res.presets) or 'none'})"
        )
        return None
    params = raw.get("params", {})
    if not isinstance(params, dict):
        w.add(where, f"params: expected a table of name = value, got {_spec._kind(params)}")
        return None
    clean, ok = {}, True
    for k, v in params.items():
        p = res.params.get(k)
        if p is None:
            w.add(where, f"params.{k}: unknown parameter of {page} (known: {', '.join(res.params)})")
            ok = False
            continue
        try:
            c = p.coerce(v)
        except (ValueError, TypeError) as exc:
            w.add(where, f"params.{k}: {exc}")
            ok = False
            continue
        if p.kind in ("float", "int"):
            if not p.min <= c <= p.max:
                w.add(where, f"params.{k}: {c} is outside [{p.min}, {p.max}]")
                ok = False
                continue
            if not math.isclose(p.clamp(c), c, rel_tol=1e-9, abs_tol=1e-12):
                w.add(
                    where,
                    f"params.{k}: {c} is not on the slider's steps ({p.step} from {p.min}); "
                    f"the page would show {p.clamp(c)}",
                )
                ok = False
                continue
        clean[k] = c
    return (page, clean, preset) if ok else None


def _number(x) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not _spec._finite(x):
        return None
    return float(x)


def _question(raw, page: str, where: str, w: _Where) -> Question | None:
    where = f"{where}: question"
    if not isinstance(raw, dict):
        w.add(where, f"expected a table ([step.question]), got {_spec._kind(raw)}")
        return None
    kind = raw.get("kind")
    if kind not in KINDS:
        w.add(where, f"kind: {_short(kind)} is not one of {', '.join(KINDS)}; question left out")
        return None
    for k in raw:
        if k not in _Q_KEYS[kind]:
            w.add(where, f"{k}: unknown key for a {kind} question (allowed: {', '.join(_Q_KEYS[kind])})")
    if kind == "bank":
        ids = [s.id for s in _schema(page).steps]
        if raw.get("bank") not in ids:
            w.add(
                where,
                f"bank: {_short(raw.get('bank'))} is not a question of {page} "
                f"(its questions: {', '.join(ids) or 'none'}); question left out",
            )
            return None
        return Question("bank", bank=raw["bank"])
    prompt = _texts(raw.get("prompt"), where, "prompt", w, MAX_PROMPT, required=True)
    if kind == "text":
        if not prompt:
            w.add(where, "question left out")
            return None
        return Question("text", prompt=prompt)
    if kind == "number":
        value = _number(raw.get("value"))
        if value is None:
            w.add(where, f"value: expected a finite number, got {_short(raw.get('value'))}")
        tol = raw.get("tol", DEFAULT_TOL)
        if _number(tol) is None or not 0 < tol <= 1:
            w.add(where, f"tol: a relative tolerance in (0, 1] (0.05 = 5 %), got {_short(tol)}")
            tol = None
        unit = _texts(raw.get("unit"), where, "unit", w, MAX_UNIT)
        if value is None or tol is None or not prompt:
            w.add(where, "question left out")
            return None
        return Question("number", prompt=prompt, unit=unit, value=value, tol=float(tol))
    options = raw.get("options")
    if not isinstance(options, list) or not 2 <= len(options) <= MAX_OPTIONS:
        w.add(where, f"options: give 2 to {MAX_OPTIONS} options, got {_short(options)}")
        options = []
    opts = tuple(_texts(o, where, f"options[{i + 1}]", w, MAX_OPTION, required=True) for i, o in enumerate(options))
    correct = raw.get("correct")
    if correct is not None and (
        isinstance(correct, bool) or not isinstance(correct, int) or not 1 <= correct <= len(opts)
    ):
        w.add(
            where,
            f"correct: the number of the right option, 1 to {len(opts)} (leave it out for a "
            f"poll), got {_short(correct)}",
        )
        correct, opts = None, ()
    if not prompt or len(opts) < 2 or not all(opts):
        w.add(where, "question left out")
        return None
    return Question("choice", prompt=prompt, options=opts, correct=None if correct is None else correct - 1)


def _step(raw, n: int, w: _Where) -> Step | None:
    where = f"step {n}"
    if not isinstance(raw, dict):
        w.add(where, f"expected a table ([[step]]), got {_spec._kind(raw)}; step left out")
        return None
    for k in raw:
        if k not in _STEP_KEYS:
            w.add(where, f"{k}: unknown key (allowed: {', '.join(_STEP_KEYS)})")
    view = _view(raw, where, w)
    if view is None:
        w.add(where, "step left out")
        return None
    page, params, preset = view
    q = raw.get("question")
    return Step(
        page,
        params,
        preset,
        _texts(raw.get("instruction"), where, "instruction", w, MAX_TEXT),
        _texts(raw.get("note"), where, "note", w, MAX_TEXT),
        None if q is None else _question(q, page, where, w),
    )


def _stem_of(source: str) -> str:
    name = Path(str(source)).name
    return name[:-5] if name.endswith(".toml") else name


def parse(text: str, source: str, builtin: bool = False) -> Lesson:
    """The lesson in ``text`` (file ``source``: its name is the lesson's id); never raises."""
    name = Path(str(source)).name
    w = _Where(name)
    try:
        return _parse(text, source, builtin, w)
    except Exception as exc:  # noqa: BLE001 - the last guard: a lesson never breaks a page
        w.add("", f"could not be read ({type(exc).__name__}: {_short(str(exc))})")
        return Lesson(_fallback_id(source), {}, {}, (), str(source), builtin, tuple(w.out[:MAX_MESSAGES]))


def _fallback_id(source: str) -> str:
    stem = _stem_of(source)
    return stem if LESSON_ID.match(stem) else "lesson"


def _parse(text: str, source: str, builtin: bool, w: _Where) -> Lesson:
    if not isinstance(text, str):
        text = str(text)
    fid = _fallback_id(source)
    if len(text.encode("utf-8", "replace")) > MAX_BYTES:
        w.add("", f"{len(text.encode('utf-8', 'replace'))} bytes, at most {MAX_BYTES} are read")
        return Lesson(fid, {}, {}, (), str(source), builtin, tuple(w.out))
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        w.add("", f"not valid TOML ({exc})")
        data = None
    except RecursionError:
        w.add("", "not valid TOML (nested too deeply)")
        data = None
    if data is None:
        return Lesson(fid, {}, {}, (), str(source), builtin, tuple(w.out))
    for k in data:
        if k not in _TOP_KEYS:
            w.add("", f"[{k}]: unknown key (a lesson has [lesson] and [[step]] tables)")
    head = data.get("lesson", {})
    if not isinstance(head, dict):
        w.add("lesson", f"expected a table ([lesson]), got {_spec._kind(head)}")
        head = {}
    for k in head:
        if k not in _LESSON_KEYS:
            w.add("lesson", f"{k}: unknown key (allowed: {', '.join(_LESSON_KEYS)})")
    lid = head.get("id")
    stem = _stem_of(source)
    if lid is None:
        lid = fid
    elif not isinstance(lid, str) or not LESSON_ID.match(lid):
        w.add("lesson", f"id: {_short(lid)}: use a-z, 0-9, _ and - (at most 60); the file name is used")
        lid = fid
    elif lid != stem and LESSON_ID.match(stem) and Path(str(source)).is_file():
        w.add("lesson", f"id: {lid!r} differs from the file name {stem!r}; the file name is used")
        lid = stem
    title = _texts(head.get("title"), "lesson", "title", w, MAX_TITLE, required=True) or {lang: lid for lang in LANGS}
    desc = _texts(head.get("description"), "lesson", "description", w, MAX_TEXT)
    raw_steps = data.get("step", [])
    if not isinstance(raw_steps, list):
        w.add("", f"step: expected [[step]] tables, got {_spec._kind(raw_steps)}")
        raw_steps = []
    if len(raw_steps) > MAX_STEPS:
        w.add("", f"{len(raw_steps)} steps: at most {MAX_STEPS} are used")
    steps = []
    for n, raw in enumerate(raw_steps[:MAX_STEPS], 1):
        s = _step(raw, n, w)
        if s is not None:
            steps.append(Step(s.page, s.params, s.preset, s.instruction, s.note, s.question, len(steps)))
    if not steps:
        w.add("", "no step can be shown")
    out = (
        w.out
        if len(w.out) <= MAX_MESSAGES
        else [*w.out[:MAX_MESSAGES], f"{w.source}: … and {len(w.out) - MAX_MESSAGES} more problems"]
    )
    return Lesson(lid, title, desc, tuple(steps), str(source), builtin, tuple(out))


# --------------------------------------------------------------------------- loading
def own_dir() -> Path:
    """The instructor's own lessons: ``$APP_LESSONS_DIR``, else a ``lessons`` folder beside the
    parameter file the editor writes (``$APP_PARAMS_FILE``), else ``lessons/`` at the top of the
    project (not the built-in ``assets/lessons``)."""
    env = os.environ.get(LESSONS_ENV, "").strip()
    if env:
        return Path(env)
    if os.environ.get(_spec.PARAMS_ENV, "").strip():
        return _spec.params_file().parent / "lessons"
    return _spec.ROOT / "lessons"


def _files(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in Path(folder).glob("*.toml") if p.is_file())
    except OSError:
        return []


def _key(paths: list[Path]) -> tuple:
    out = []
    for p in paths:
        try:
            s = p.stat()  # an atomic save is a new file (inode): seen even within the clock's resolution
            out.append((str(p), s.st_mtime_ns, s.st_size, s.st_ino, s.st_ctime_ns))
        except OSError:
            out.append((str(p), None, None, None, None))
    return tuple(out)


_lock = threading.Lock()
_cache: dict = {}


def _load(path: Path, builtin: bool) -> Lesson:
    """The lesson in file ``path``; a file that cannot be read, or is not UTF-8, is a problem too."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else f"cannot be read ({exc.strerror})"
        return Lesson(_fallback_id(str(path)), {}, {}, (), str(path), builtin, (f"{path.name}: {why}",))
    return parse(text, str(path), builtin=builtin)


def load_all() -> list[Lesson]:
    """The built-in lessons (``assets/lessons``) then the instructor's own (:func:`own_dir`), each
    by its file name; re-read when a file, the parameter file or the folder changes. An own lesson
    with a built-in one's id is listed too, with a problem saying so (``get`` finds the own one)."""
    builtin, own = _files(BUILTIN_DIR), _files(own_dir())
    params = _spec.params_file()
    key = (_key(builtin), _key(own), _key([params]))
    got = _cache.get("all")
    if got is not None and got[0] == key:
        return list(got[1])
    with _lock:
        out = [_load(p, True) for p in builtin]
        ids = {x.id for x in out}
        for p in own:
            lesson = _load(p, False)
            if lesson.id in ids:
                lesson = _with_problem(
                    lesson, f"{p.name}: has the id of a built-in lesson; this copy is the one opened by that id"
                )
            out.append(lesson)
        _cache["all"] = (key, tuple(out))
    return out


def _with_problem(lesson: Lesson, msg: str) -> Lesson:
    from dataclasses import replace

    return replace(lesson, problems=(*lesson.problems, msg))


def get(lesson_id: str) -> Lesson | None:
    """The lesson with this id (an own lesson before a built-in one of the same id), or None."""
    found = [x for x in load_all() if x.id == lesson_id]
    own = [x for x in found if not x.builtin]
    return (own or found or [None])[0]


# --------------------------------------------------------------------------- questions
def step_question(step: Step, lang: str) -> dict | None:
    """The step's question as the class store's ``ask()`` takes it (the shape of
    ``ui.teaching.teacher``'s bank and own questions), with its exact value for the step's
    parameters: a bank question's computed by ``sim/`` (``ui.kit.predict.live_question``, as the
    class console does), an own number's the teacher's value, a choice's its right option's id
    (None for a poll), none for free text (``"kind": "text"``). ``"lesson_step"``: the step's index.
    ``lang`` only picks the text shown where a language is missing. None without a question."""
    q = step.question
    if q is None:
        return None
    values = step.values()
    plain = {k: v for k, v in values.items() if isinstance(v, (int, float, str, bool))}
    if q.kind == "bank":
        from ui.kit.predict import live_question

        bs = bank_step(step.page, q.bank)
        if bs is None:
            return None
        return {**live_question(bs, step.page, values), "lesson_step": step.index}

    def both(d: dict) -> dict:
        return {lg: str(d.get(lg) or d.get(lang) or next(iter(d.values()), "")) for lg in LANGS} if d else {}

    out = {
        "stem": step.page,
        "step": None,
        "kind": q.kind,
        "options": [],
        "prompt": both(q.prompt),
        "labels": {},
        "unit": both(q.unit),
        "truth": None,
        "rtol": DEFAULT_TOL,
        "atol": 0.0,
        "digits": 4,
        "values": plain,
        "lesson_step": step.index,
    }
    if q.kind == "number":
        out.update(truth=float(q.value), rtol=float(q.tol if q.tol is not None else DEFAULT_TOL))
    elif q.kind == "choice":
        ids = list(OPTION_IDS[: len(q.options)])
        out.update(
            options=ids,
            labels={lg: {i: both(o)[lg] for i, o in zip(ids, q.options)} for lg in LANGS},
            truth=None if q.correct is None else ids[q.correct],
        )
    return out
