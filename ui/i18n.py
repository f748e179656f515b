"""Two languages from one source.

Every visible string lives in ``assets/text/<lang>/<stem>.toml`` (one file per
page plus ``common.toml``), as Markdown with LaTeX. Keys are dotted paths
(``params.beta.label``). Files are re-read when they change on disk.
A test checks that both languages have exactly the same keys.
"""
from __future__ import annotations

import threading
import time
import tomllib
from functools import reduce
from pathlib import Path

from ui.spec import LANGS, ROOT

TEXT_DIR = ROOT / "assets" / "text"
LANG_NAMES = {"en": "English", "zh": "中文"}

_lock = threading.Lock()
_cache: dict[Path, tuple[tuple, dict]] = {}
_checked: dict[Path, float] = {}
#: a text file is looked at (stat) at most this often: a rerun builds a dozen Text objects and
#: with a class connected the stat calls were ~3 % of the server's CPU. Edits show within a second.
RECHECK_S = 1.0


def _load(path: Path) -> dict:
    now = time.monotonic()
    with _lock:
        hit = _cache.get(path)
        if hit and now - _checked.get(path, -1e9) < RECHECK_S:
            return hit[1]
    try:
        st_ = path.stat()
    except OSError:
        return {}
    key = (st_.st_mtime_ns, st_.st_size)
    with _lock:
        _checked[path] = now
        hit = _cache.get(path)
        if hit and hit[0] == key:
            return hit[1]
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        data = {}
    with _lock:
        _cache[path] = (key, data)
    return data


def flat_keys(d: dict, prefix: str = "") -> set[str]:
    """All dotted leaf keys of a nested table."""
    out = set()
    for k, v in d.items():
        path = f"{prefix}{k}"
        if isinstance(v, dict):
            out |= flat_keys(v, path + ".")
        else:
            out.add(path)
    return out


def normalize_lang(value) -> str | None:
    """Map ``zh``, ``zh-CN``, ``en-US``… to a supported language, else None."""
    if not isinstance(value, str):
        return None
    v = value.strip().lower().replace("_", "-")
    for lang in LANGS:
        if v == lang or v.startswith(lang + "-"):
            return lang
    return None


class Text:
    """Strings of one page in one language, with English as the fallback."""

    def __init__(self, stem: str, lang: str):
        self.stem, self.lang = stem, lang
        self._own = [_load(TEXT_DIR / lang / f"{stem}.toml"), _load(TEXT_DIR / lang / "common.toml")]
        self._fallback = [_load(TEXT_DIR / "en" / f"{stem}.toml"), _load(TEXT_DIR / "en" / "common.toml")]

    @staticmethod
    def _get(tables, key):
        for t in tables:
            try:
                v = reduce(lambda d, k: d[k], key.split("."), t)
            except (KeyError, TypeError):
                continue
            if not isinstance(v, dict):
                return v
        return None

    @property
    def version(self) -> tuple:
        """Changes when one of this page's text files changes on disk (a cache key for built figures)."""
        paths = [TEXT_DIR / lg / f for lg in {self.lang, "en"} for f in (f"{self.stem}.toml", "common.toml")]
        with _lock:
            return tuple(sorted((str(p), _cache[p][0] if p in _cache else None) for p in paths))

    def has(self, key: str) -> bool:
        return self._get(self._own, key) is not None

    def __call__(self, key: str, **fmt) -> str:
        v = self._get(self._own, key)
        if v is None:
            v = self._get(self._fallback, key)
        if v is None:
            return key
        s = str(v)
        if fmt:
            try:
                s = s.format(**fmt)
            except (KeyError, IndexError, ValueError):
                pass
        return s
