"""Where a class session lives: one store interface, two implementations (no Streamlit here).

* :class:`MemoryStore` — in this server process (enough for one server).
* :class:`RedisStore` — in Redis when ``APP_REDIS_URL`` is set (``redis://host:6379/0``): a class
  then spans every replica, and a replica that dies loses neither the class nor an answer.

A class holds: the pushed view (page + query, with a version number that grows by one per push),
the open live question (with an id that grows by one per question), the anonymous answers to each
question (one per student, keyed by an anonymous id: sending again replaces the answer, so an
answer sent twice — a retry, or again after a replica died — is counted once) and the revealed
values. :meth:`Store.stamp` is one cheap read that changes whenever anything a student sees
changes (push, question, reveal, close): the students' poll reads only that. Every question asked
stays (:meth:`Store.questions`, the results download); students say they are there now and then
(:meth:`Store.here`), so the instructor sees how many are in the class now; a class closed by its
instructor leaves a marker for an hour (:meth:`Store.ended`), so its students can be told "closed"
rather than "lost". An answer is a finite number or a short text; anything else is refused
(``ValueError``). Keys expire ``TTL_S`` after the last write.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import threading
import time

REDIS_ENV = "APP_REDIS_URL"
TTL_S = 12 * 3600
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
CODE_LEN = 6
CODE_RE = re.compile(rf"^[{CODE_ALPHABET}]{{{CODE_LEN}}}$")
MAX_ANSWER_LEN = 64
ENDED_TTL_S = 3600
HERE_S = 15.0  # a student counts as "here now" this long after their last poll said so


def check_answer(value):
    """``value`` if it can be stored as an answer (a finite number, or a text of at most
    ``MAX_ANSWER_LEN`` characters), else ``ValueError``."""
    import math

    if isinstance(value, bool):
        raise ValueError("not an answer")
    if isinstance(value, (int, float)):
        if not math.isfinite(float(value)):
            raise ValueError("not a finite number")
        return float(value)
    if isinstance(value, str) and len(value) <= MAX_ANSWER_LEN:
        return value
    raise ValueError("not an answer")


try:  # what a store call may raise when the store is unreachable
    from redis import RedisError as _RedisError

    STORE_ERRORS: tuple = (OSError, _RedisError)
except ImportError:  # pragma: no cover - redis not installed: only the memory store
    STORE_ERRORS = (OSError,)


def valid_code(code) -> bool:
    return isinstance(code, str) and bool(CODE_RE.match(code))


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LEN))


class Store:
    """The interface; every method is safe to call from many sessions at once."""

    def create(self) -> str: ...
    def exists(self, code: str) -> bool: ...
    def close(self, code: str) -> None: ...
    def push(self, code: str, view: dict) -> int: ...
    def current(self, code: str) -> tuple[int, dict | None, float]: ...
    def stamp(self, code: str) -> tuple[int, int, int] | None: ...
    def ask(self, code: str, question: dict) -> int: ...
    def question(self, code: str) -> dict | None: ...
    def answer(self, code: str, qid: int, who: str, value) -> None: ...
    def answers(self, code: str, qid: int) -> list: ...
    def answered(self, code: str, qid: int, who: str): ...
    def reveal(self, code: str, qid: int, value) -> None: ...
    def revealed(self, code: str, qid: int): ...
    def questions(self, code: str) -> list[dict]: ...
    def here(self, code: str, who: str) -> None: ...
    def present(self, code: str) -> int: ...
    def ended(self, code: str) -> bool: ...
    # the pages whose worked answers an instructor released to everyone (ui/teaching/answers.py; not per class)
    def released_pages(self) -> set[str]: ...
    def set_released(self, stem: str, on: bool) -> None: ...
    # the pages released while class ``code`` was open (withdrawn when it ends: ui/teaching/teacher.py)
    def note_release(self, code: str, stem: str, on: bool) -> None: ...
    def released_in(self, code: str) -> set[str]: ...
    # signed-out instructor cookies (ui/kit/safe.py), by nonce, until the cookie's own expiry
    def revoke(self, nonce: str, until: float) -> None: ...
    def revoked(self, nonce: str) -> bool: ...
    # the class a signed-in instructor teaches, by their sign-in (ui/instructor.identity): a reload
    # (a new session with the same cookie) takes it back; ``code=None`` forgets it
    def set_teaching(self, who: str, code: str | None) -> None: ...
    def teaching(self, who: str) -> str | None: ...


class MemoryStore(Store):
    def __init__(self):
        self._lock = threading.Lock()
        self._classes: dict[str, dict] = {}
        self._released: set[str] = set()
        self._ended: dict[str, float] = {}
        self._revoked: dict[str, float] = {}
        self._teaching: dict[str, str] = {}

    def set_teaching(self, who: str, code: str | None) -> None:
        with self._lock:
            if code is None:
                self._teaching.pop(str(who), None)
            else:
                self._teaching[str(who)] = str(code)

    def teaching(self, who: str) -> str | None:
        return self._teaching.get(str(who))

    def revoke(self, nonce: str, until: float) -> None:
        now = time.time()
        with self._lock:
            for n in [n for n, e in self._revoked.items() if e <= now]:
                del self._revoked[n]
            if until > now:
                self._revoked[str(nonce)] = float(until)

    def revoked(self, nonce: str) -> bool:
        return self._revoked.get(str(nonce), 0.0) > time.time()

    def released_pages(self) -> set[str]:
        with self._lock:
            return set(self._released)

    def set_released(self, stem: str, on: bool) -> None:
        with self._lock:
            (self._released.add if on else self._released.discard)(str(stem))

    def note_release(self, code: str, stem: str, on: bool) -> None:
        with self._lock:
            c = self._classes.get(code)
            if c is not None:
                (c["rel"].add if on else c["rel"].discard)(str(stem))

    def released_in(self, code: str) -> set[str]:
        with self._lock:
            c = self._classes.get(code)
            return set() if c is None else set(c["rel"])

    def create(self) -> str:
        with self._lock:
            code = new_code()
            while code in self._classes:
                code = new_code()
            self._classes[code] = {
                "version": 0,
                "view": None,
                "at": 0.0,
                "qid": 0,
                "question": None,
                "answers": {},
                "reveal": {},
                "rv": 0,
                "qs": {},
                "here": {},
                "rel": set(),
            }
            return code

    def _get(self, code):
        c = self._classes.get(code)
        if c is None:
            raise KeyError(code)
        return c

    def exists(self, code: str) -> bool:
        return code in self._classes

    def close(self, code: str) -> None:
        with self._lock:
            if self._classes.pop(code, None) is not None:
                self._ended[code] = time.time()

    def ended(self, code: str) -> bool:
        return time.time() - self._ended.get(code, -1e18) < ENDED_TTL_S

    def questions(self, code: str) -> list[dict]:
        c = self._classes.get(code)
        return [] if c is None else [c["qs"][k] for k in sorted(c["qs"])]

    def here(self, code: str, who: str) -> None:
        with self._lock:
            c = self._classes.get(code)
            if c is not None:
                c["here"][who] = time.time()

    def present(self, code: str) -> int:
        c = self._classes.get(code)
        now = time.time()
        return 0 if c is None else sum(1 for t in list(c["here"].values()) if now - t < HERE_S)

    def push(self, code: str, view: dict) -> int:
        with self._lock:
            c = self._get(code)
            c["version"] += 1
            c["view"], c["at"] = json.loads(json.dumps(view)), time.time()
            return c["version"]

    def current(self, code: str):
        c = self._classes.get(code)
        return (0, None, 0.0) if c is None else (c["version"], c["view"], c["at"])

    def stamp(self, code: str):
        c = self._classes.get(code)
        return None if c is None else (c["version"], c["qid"], c["rv"])

    def ask(self, code: str, question: dict) -> int:
        with self._lock:
            c = self._get(code)
            c["qid"] += 1
            c["question"] = {"asked_at": time.time(), **json.loads(json.dumps(question)), "id": c["qid"]}
            c["qs"][c["qid"]] = c["question"]
            return c["qid"]

    def question(self, code: str):
        c = self._classes.get(code)
        return None if c is None else c["question"]

    def answer(self, code: str, qid: int, who: str, value) -> None:
        value = check_answer(value)
        with self._lock:
            self._get(code)["answers"].setdefault(qid, {})[who] = value

    def answers(self, code: str, qid: int) -> list:
        with self._lock:
            c = self._classes.get(code)
            return [] if c is None else list(c["answers"].get(qid, {}).values())

    def answered(self, code: str, qid: int, who: str):
        c = self._classes.get(code)
        return None if c is None else c["answers"].get(qid, {}).get(who)

    def reveal(self, code: str, qid: int, value) -> None:
        with self._lock:
            c = self._get(code)
            c["reveal"][qid] = value
            c["rv"] += 1

    def revealed(self, code: str, qid: int):
        c = self._classes.get(code)
        return None if c is None else c["reveal"].get(qid)


class RedisStore(Store):
    """Keys: ``cls:<code>`` (hash: version, view, at, qid, question, rv = number of reveals),
    ``cls:<code>:a:<qid>`` (hash: anonymous student id -> answer), ``cls:<code>:r`` (hash: qid ->
    revealed value), ``cls:<code>:q`` (hash: qid -> question), ``cls:<code>:p`` (sorted set:
    anonymous id -> time last here), ``cls:<code>:rel`` (set: the pages released while it was open),
    ``end:<code>`` (closed by its instructor, for an hour),
    ``rel:pages`` (set: the pages whose answers are released; no expiry), ``rev:<nonce>`` (a
    signed-out instructor cookie, until the cookie's own expiry), ``fail:<who>:<window>`` (wrong
    sign-in keys counted for every replica)."""

    def __init__(self, url: str):
        import redis

        self.r = redis.Redis.from_url(
            url, decode_responses=True, socket_timeout=2, socket_connect_timeout=2, health_check_interval=30
        )

    def _touch(self, pipe, code, *extra):
        for k in (f"cls:{code}", f"cls:{code}:r", f"cls:{code}:q", *extra):
            pipe.expire(k, TTL_S)

    def create(self) -> str:
        while True:
            code = new_code()
            if self.r.hsetnx(f"cls:{code}", "version", 0):
                self.r.hset(f"cls:{code}", mapping={"qid": 0, "at": 0, "rv": 0})
                self.r.expire(f"cls:{code}", TTL_S)
                return code

    def exists(self, code: str) -> bool:
        return bool(self.r.exists(f"cls:{code}"))

    def close(self, code: str) -> None:
        keys = [
            f"cls:{code}",
            f"cls:{code}:r",
            f"cls:{code}:q",
            f"cls:{code}:p",
            f"cls:{code}:rel",
            *self.r.scan_iter(f"cls:{code}:a:*"),
        ]
        with self.r.pipeline() as p:
            p.delete(*keys)
            p.set(f"end:{code}", 1, ex=ENDED_TTL_S)
            p.execute()

    def ended(self, code: str) -> bool:
        return bool(self.r.exists(f"end:{code}"))

    def questions(self, code: str) -> list[dict]:
        got = self.r.hgetall(f"cls:{code}:q")
        return [json.loads(got[k]) for k in sorted(got, key=int)]

    def here(self, code: str, who: str) -> None:
        if not self.exists(code):
            return
        with self.r.pipeline() as p:
            p.zadd(f"cls:{code}:p", {who: time.time()})
            p.zremrangebyscore(f"cls:{code}:p", "-inf", time.time() - 4 * HERE_S)
            p.expire(f"cls:{code}:p", TTL_S)
            p.execute()

    def present(self, code: str) -> int:
        return int(self.r.zcount(f"cls:{code}:p", time.time() - HERE_S, "+inf"))

    def push(self, code: str, view: dict) -> int:
        if not self.exists(code):
            raise KeyError(code)
        with self.r.pipeline() as p:
            p.hincrby(f"cls:{code}", "version", 1)
            p.hset(f"cls:{code}", mapping={"view": json.dumps(view), "at": time.time()})
            self._touch(p, code)
            return int(p.execute()[0])

    def current(self, code: str):
        v, view, at = self.r.hmget(f"cls:{code}", "version", "view", "at")
        if v is None:
            return 0, None, 0.0
        return int(v), (json.loads(view) if view else None), float(at or 0)

    def stamp(self, code: str):
        v, qid, rv = self.r.hmget(f"cls:{code}", "version", "qid", "rv")
        return None if v is None else (int(v), int(qid or 0), int(rv or 0))

    def ask(self, code: str, question: dict) -> int:
        if not self.exists(code):
            raise KeyError(code)
        qid = int(self.r.hincrby(f"cls:{code}", "qid", 1))
        q = json.dumps({"asked_at": time.time(), **question, "id": qid})
        with self.r.pipeline() as p:
            p.hset(f"cls:{code}", "question", q)
            p.hset(f"cls:{code}:q", str(qid), q)
            self._touch(p, code)
            p.execute()
        return qid

    def question(self, code: str):
        q = self.r.hget(f"cls:{code}", "question")
        return json.loads(q) if q else None

    def answer(self, code: str, qid: int, who: str, value) -> None:
        value = check_answer(value)
        if not self.exists(code):
            raise KeyError(code)
        with self.r.pipeline() as p:
            p.hset(f"cls:{code}:a:{qid}", who, json.dumps(value))
            p.expire(f"cls:{code}:a:{qid}", TTL_S)
            p.execute()

    def answers(self, code: str, qid: int) -> list:
        return [json.loads(v) for v in self.r.hvals(f"cls:{code}:a:{qid}")]

    def answered(self, code: str, qid: int, who: str):
        v = self.r.hget(f"cls:{code}:a:{qid}", who)
        return json.loads(v) if v else None

    def reveal(self, code: str, qid: int, value) -> None:
        if not self.exists(code):
            raise KeyError(code)
        with self.r.pipeline() as p:
            p.hset(f"cls:{code}:r", str(qid), json.dumps(value))
            p.hincrby(f"cls:{code}", "rv", 1)
            self._touch(p, code)
            p.execute()

    def revealed(self, code: str, qid: int):
        v = self.r.hget(f"cls:{code}:r", str(qid))
        return json.loads(v) if v else None

    def revoke(self, nonce: str, until: float) -> None:
        ttl = int(until - time.time()) + 1
        if ttl > 0:
            self.r.set(f"rev:{nonce}", 1, ex=ttl)

    def revoked(self, nonce: str) -> bool:
        return bool(self.r.exists(f"rev:{nonce}"))

    def add_failure(self, key: str, window_s: float, now: float) -> int:
        """Count one wrong sign-in key under ``key`` in the current window (``fail:<key>:<window>``,
        kept two windows); the count so far (:class:`ui.teaching.signin.Attempts`)."""
        k = f"fail:{key}:{int(now // window_s)}"
        with self.r.pipeline() as p:
            p.incr(k)
            p.expire(k, int(2 * window_s) + 1)
            return int(p.execute()[0])

    def failures(self, key: str, window_s: float, now: float) -> int:
        return int(self.r.get(f"fail:{key}:{int(now // window_s)}") or 0)

    def set_teaching(self, who: str, code: str | None) -> None:
        if code is None:
            self.r.delete(f"tch:{who}")
        else:
            self.r.set(f"tch:{who}", str(code), ex=TTL_S)

    def teaching(self, who: str) -> str | None:
        v = self.r.get(f"tch:{who}")
        return v.decode() if isinstance(v, bytes) else v

    def released_pages(self) -> set[str]:
        return set(self.r.smembers("rel:pages"))

    def set_released(self, stem: str, on: bool) -> None:
        (self.r.sadd if on else self.r.srem)("rel:pages", str(stem))

    def note_release(self, code: str, stem: str, on: bool) -> None:
        if not self.exists(code):
            return
        with self.r.pipeline() as p:
            (p.sadd if on else p.srem)(f"cls:{code}:rel", str(stem))
            p.expire(f"cls:{code}:rel", TTL_S)
            p.execute()

    def released_in(self, code: str) -> set[str]:
        return set(self.r.smembers(f"cls:{code}:rel"))


_store: Store | None = None
_store_key: str | None = None
_store_lock = threading.Lock()


def get_store() -> Store:
    """The store of this process: Redis when ``APP_REDIS_URL`` is set, else in memory."""
    global _store, _store_key
    url = os.environ.get(REDIS_ENV, "").strip()
    with _store_lock:
        if _store is None or _store_key != url:
            _store = RedisStore(url) if url else MemoryStore()
            _store_key = url
        return _store
