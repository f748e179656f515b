"""Where a lesson run lives: which lesson a class (or a homework link) runs, and everything of its
students (no Streamlit here). Two implementations on the class store's backends
(``ui.teaching.class_store``): :class:`MemoryLessons` beside a :class:`~ui.teaching.class_store.MemoryStore`,
:class:`RedisLessons` on the same Redis connection when ``APP_REDIS_URL`` is set, so a run spans every
replica and a student's progress survives a replica change.

A run has an id: a live (teacher-paced) run is the class's code; a self-paced run (homework, a lab)
gets a random id of its own (:func:`new_run_id`). It holds the lesson's id, the mode (``"live"`` /
``"self"``), the current step (0-based), the pacing (students may move freely within steps
``0 .. pace - 1``; 0: only the current step), the paused flag, the teacher's show-names switch, a
nickname per participant, where each participant is, one answer record per participant and step
(``{"value", "tries", "right", "at"}``: the latest try, how many tries, its verdict, when), and the
snapshot the teacher shows the class, the steps whose exact value the teacher revealed.
:meth:`Lessons.stamp` changes whenever anything a student sees
of the run changes (step, pacing, pause, names, snapshot); answers do not change it.

Participants are keyed by an id: in a live class the anonymous answer id of the class
(``ui.teaching.responses.answer_id``), in a self-paced run a per-student token from
:func:`new_token` (``secrets.token_urlsafe``) that stays in the student's address. Every key
expires ``class_store.TTL_S`` after the run's last write, as a class does; :meth:`Lessons.end`
forgets a run at once.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time

from ui.teaching import class_store as cs
from ui.teaching import responses

TTL_S = cs.TTL_S
MODES = ("live", "self")
MAX_NICK = 24
MAX_TEXT = responses.MAX_TEXT  # a free-text answer, in characters
MAX_SNAPSHOT = 6  # answers the teacher may show at once
RUN_ID_RE = re.compile(r"^[A-Za-z0-9_-]{6,32}$")
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
_NICK_BAD = re.compile(r"[\x00-\x1f\x7f<>`*_\[\]{}\\|#$&~^]")
_FIELDS = ("lesson", "mode", "step", "pace", "paused", "names", "owner", "created", "stamp", "snap", "revealed")


def new_run_id() -> str:
    """A self-paced run's id: random, not guessable (72 bits), URL-safe."""
    return secrets.token_urlsafe(9)


def new_token() -> str:
    """A student's token in a self-paced run (128 bits, URL-safe)."""
    return secrets.token_urlsafe(16)


def valid_run_id(x) -> bool:
    return isinstance(x, str) and bool(RUN_ID_RE.match(x))


def valid_token(x) -> bool:
    return isinstance(x, str) and bool(TOKEN_RE.match(x))


def clean_nick(raw) -> str:
    """A nickname as stored: trimmed, inner spaces collapsed, markup and control characters
    dropped, at most ``MAX_NICK`` characters ("" for none)."""
    text = _NICK_BAD.sub("", " ".join(str(raw or "").split()))
    return text[:MAX_NICK].strip()


def check_value(value):
    """An answer as stored: a finite number, or a text of at most ``MAX_TEXT`` characters
    (a choice's id or a free text); else ``ValueError``."""
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise ValueError("text too long")
        return value
    return cs.check_answer(value)


def _run_dict(raw: dict) -> dict:
    return {
        "lesson": str(raw.get("lesson", "")),
        "mode": str(raw.get("mode", "live")),
        "step": int(raw.get("step", 0) or 0),
        "pace": int(raw.get("pace", 0) or 0),
        "paused": bool(int(raw.get("paused", 0) or 0)),
        "names": bool(int(raw.get("names", 0) or 0)),
        "owner": str(raw.get("owner", "")),
        "created": float(raw.get("created", 0) or 0),
        "stamp": int(raw.get("stamp", 0) or 0),
        "snap": raw["snap"] if isinstance(raw.get("snap"), dict) else json.loads(raw.get("snap") or "null"),
        "revealed": _steps(raw.get("revealed")),
    }


def _steps(raw) -> list[int]:
    """The revealed steps as stored (a list, or its JSON in Redis)."""
    got = json.loads(raw) if isinstance(raw, str) else (raw or [])
    return sorted({int(x) for x in got if isinstance(x, int) and not isinstance(x, bool)})


class Lessons:
    """The interface; every method is safe to call from many sessions at once. Methods on a run
    that does not exist return nothing (reads) or raise ``KeyError`` (writes)."""

    def start(self, run_id: str, lesson_id: str, mode: str, owner: str = "") -> None: ...
    def run(self, run_id: str) -> dict | None: ...
    def update(self, run_id: str, **fields) -> None: ...
    def stamp(self, run_id: str) -> int | None: ...
    def set_nick(self, run_id: str, who: str, nick: str) -> None: ...
    def nicks(self, run_id: str, everyone: bool = False) -> dict[str, str]: ...
    def move(self, run_id: str, who: str, step: int) -> None: ...
    def positions(self, run_id: str) -> dict[str, int]: ...
    def record(self, run_id: str, step: int, who: str, value, right: bool | None) -> dict: ...
    def records(self, run_id: str) -> dict[int, dict[str, dict]]: ...
    def runs_of(self, owner: str) -> list[str]: ...
    def end(self, run_id: str) -> None: ...

    def mine(self, run_id: str, step: int, who: str) -> dict | None:
        """One participant's record at ``step`` (None before any answer)."""
        return self.records(run_id).get(int(step), {}).get(who)

    def show(self, run_id: str, step: int | None, items: list[str]) -> None:
        """The snapshot: ``items`` (answers the teacher picked, at most ``MAX_SNAPSHOT``) of step
        ``step`` shown to the class; ``step=None`` takes it down."""
        snap = None if step is None else {"step": int(step), "items": [str(x)[:MAX_TEXT] for x in items][:MAX_SNAPSHOT]}
        self.update(run_id, snap=snap)


def _new(lesson_id, mode, owner) -> dict:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    return {
        "lesson": str(lesson_id),
        "mode": mode,
        "step": 0,
        "pace": 0,
        "paused": 0,
        "names": 0,
        "owner": str(owner or ""),
        "created": time.time(),
        "stamp": 0,
        "snap": None,
        "revealed": [],
    }


def _fields(fields: dict) -> dict:
    bad = set(fields) - {"step", "pace", "paused", "names", "snap", "revealed"}
    if bad:
        raise ValueError(f"not a run field: {sorted(bad)}")
    out = {}
    for k, v in fields.items():
        if k in ("step", "pace"):
            out[k] = max(0, int(v))
        elif k in ("paused", "names"):
            out[k] = int(bool(v))
        elif k == "revealed":
            out[k] = sorted({int(x) for x in v})
        else:
            out[k] = v
    return out


def _record(old: dict | None, value, right) -> dict:
    return {
        "value": check_value(value),
        "tries": (old or {}).get("tries", 0) + 1,
        "right": None if right is None else bool(right),
        "at": time.time(),
    }


class MemoryLessons(Lessons):
    """In this process. Expired runs are dropped when any run is started or read."""

    def __init__(self):
        self._lock = threading.Lock()
        self._runs: dict[str, dict] = {}

    def _sweep(self) -> None:
        now = time.time()
        for k in [k for k, r in self._runs.items() if now - r["touched"] > TTL_S]:
            del self._runs[k]

    def _get(self, run_id) -> dict:
        r = self._runs.get(run_id)
        if r is None or time.time() - r["touched"] > TTL_S:
            raise KeyError(run_id)
        return r

    def start(self, run_id, lesson_id, mode, owner=""):
        with self._lock:
            self._sweep()
            self._runs[run_id] = {
                **_new(lesson_id, mode, owner),
                "nicks": {},
                "pos": {},
                "rec": {},
                "touched": time.time(),
            }

    def run(self, run_id):
        try:
            r = self._get(run_id)
        except KeyError:
            return None
        return _run_dict({k: r[k] for k in _FIELDS})

    def update(self, run_id, **fields):
        fields = _fields(fields)
        with self._lock:
            r = self._get(run_id)
            r.update(json.loads(json.dumps(fields)))
            r["stamp"] += 1
            r["touched"] = time.time()

    def stamp(self, run_id):
        r = self._runs.get(run_id)
        return None if r is None or time.time() - r["touched"] > TTL_S else r["stamp"]

    def set_nick(self, run_id, who, nick):
        with self._lock:
            r = self._get(run_id)
            r["nicks"][str(who)] = clean_nick(nick)
            r["touched"] = time.time()

    def nicks(self, run_id, everyone=False):
        r = self._runs.get(run_id)
        return {} if r is None else {k: v for k, v in r["nicks"].items() if v or everyone}

    def move(self, run_id, who, step):
        with self._lock:
            r = self._get(run_id)
            r["pos"][str(who)] = int(step)
            r["touched"] = time.time()

    def positions(self, run_id):
        r = self._runs.get(run_id)
        return {} if r is None else dict(r["pos"])

    def record(self, run_id, step, who, value, right):
        with self._lock:
            r = self._get(run_id)
            per = r["rec"].setdefault(int(step), {})
            per[str(who)] = rec = _record(per.get(str(who)), value, right)
            r["touched"] = time.time()
            return dict(rec)

    def records(self, run_id):
        r = self._runs.get(run_id)
        if r is None:
            return {}
        with self._lock:
            return {s: {w: dict(x) for w, x in per.items()} for s, per in r["rec"].items()}

    def runs_of(self, owner):
        with self._lock:
            self._sweep()
            mine = [(r["created"], k) for k, r in self._runs.items() if owner and r["owner"] == owner]
        return [k for _, k in sorted(mine, reverse=True)]

    def end(self, run_id):
        with self._lock:
            self._runs.pop(run_id, None)


class RedisLessons(Lessons):
    """Keys: ``lsn:<id>`` (hash: the run's fields), ``lsn:<id>:n`` (hash: participant -> nickname),
    ``lsn:<id>:p`` (hash: participant -> step), ``lsn:<id>:a`` (hash: ``<step>|<participant>`` ->
    record, JSON), ``lsn:own:<owner>`` (sorted set: the owner's runs by creation time); every one
    expires ``TTL_S`` after the run's last write."""

    def __init__(self, r):
        self.r = r

    def _keys(self, run_id) -> list[str]:
        return [f"lsn:{run_id}", f"lsn:{run_id}:n", f"lsn:{run_id}:p", f"lsn:{run_id}:a"]

    def _touch(self, pipe, run_id) -> None:
        for k in self._keys(run_id):
            pipe.expire(k, TTL_S)

    def _need(self, run_id) -> None:
        if not self.r.exists(f"lsn:{run_id}"):
            raise KeyError(run_id)

    def start(self, run_id, lesson_id, mode, owner=""):
        new = _new(lesson_id, mode, owner)
        new["snap"], new["revealed"] = json.dumps(None), json.dumps([])
        with self.r.pipeline() as p:
            p.delete(*self._keys(run_id))
            p.hset(f"lsn:{run_id}", mapping=new)
            self._touch(p, run_id)
            if new["owner"]:
                p.zadd(f"lsn:own:{new['owner']}", {run_id: new["created"]})
                p.zremrangebyscore(f"lsn:own:{new['owner']}", "-inf", time.time() - TTL_S)
                p.expire(f"lsn:own:{new['owner']}", TTL_S)
            p.execute()

    def run(self, run_id):
        got = self.r.hgetall(f"lsn:{run_id}")
        return _run_dict(got) if got else None

    def update(self, run_id, **fields):
        fields = _fields(fields)
        for k in ("snap", "revealed"):
            if k in fields:
                fields[k] = json.dumps(fields[k])
        self._need(run_id)
        with self.r.pipeline() as p:
            if fields:
                p.hset(f"lsn:{run_id}", mapping=fields)
            p.hincrby(f"lsn:{run_id}", "stamp", 1)
            self._touch(p, run_id)
            p.execute()

    def stamp(self, run_id):
        v = self.r.hget(f"lsn:{run_id}", "stamp")
        return None if v is None else int(v)

    def _write(self, run_id, key, field, value) -> None:
        self._need(run_id)
        with self.r.pipeline() as p:
            p.hset(key, field, value)
            self._touch(p, run_id)
            p.execute()

    def set_nick(self, run_id, who, nick):
        self._write(run_id, f"lsn:{run_id}:n", str(who), clean_nick(nick))

    def nicks(self, run_id, everyone=False):
        return {k: v for k, v in self.r.hgetall(f"lsn:{run_id}:n").items() if v or everyone}

    def move(self, run_id, who, step):
        self._write(run_id, f"lsn:{run_id}:p", str(who), int(step))

    def positions(self, run_id):
        return {k: int(v) for k, v in self.r.hgetall(f"lsn:{run_id}:p").items()}

    def record(self, run_id, step, who, value, right):
        field = f"{int(step)}|{who}"
        old = self.r.hget(f"lsn:{run_id}:a", field)
        rec = _record(json.loads(old) if old else None, value, right)
        self._write(run_id, f"lsn:{run_id}:a", field, json.dumps(rec))
        return rec

    def records(self, run_id):
        out: dict[int, dict[str, dict]] = {}
        for field, raw in self.r.hgetall(f"lsn:{run_id}:a").items():
            step, _, who = field.partition("|")
            out.setdefault(int(step), {})[who] = json.loads(raw)
        return out

    def runs_of(self, owner):
        if not owner:
            return []
        got = self.r.zrevrangebyscore(f"lsn:own:{owner}", "+inf", time.time() - TTL_S)
        return [k for k in got if self.r.exists(f"lsn:{k}")]

    def end(self, run_id):
        self.r.delete(*self._keys(run_id))


_lessons: Lessons | None = None
_of: object = None
_lock = threading.Lock()


def get_lessons() -> Lessons:
    """The lesson runs of this process, on the class store's backend (Redis when the class store is
    ``RedisStore``, else in memory); follows the class store when that is replaced."""
    global _lessons, _of
    store = cs.get_store()
    with _lock:
        if _lessons is None or _of is not store:
            _lessons = RedisLessons(store.r) if isinstance(store, cs.RedisStore) else MemoryLessons()
            _of = store
        return _lessons


def anon(who: str) -> str:
    """A participant's anonymous label (``#`` and six hex digits of a hash of their id): the same
    on every screen and in the CSV, and it does not give away a self-paced student's token."""
    import hashlib

    return "#" + hashlib.sha256(str(who).encode()).hexdigest()[:6]
