"""Two languages from one source.

Every visible string lives in a page's own ``pages/<stem>/<lang>.toml`` or in a shared
``assets/text/<lang>/<name>.toml`` (``common``, ``predict``, …; :func:`ui.kit.files.text_file`), as
Markdown with LaTeX. Keys are dotted paths (``params.beta.label``). Files are re-read when they
change on disk.
A test checks that both languages have exactly the same keys.
"""

from __future__ import annotations

import functools
import time
import tomllib
from functools import reduce
from pathlib import Path

from ui.kit.files import text_file
from ui.kit.spec import LANGS

LANG_NAMES = {"en": "English", "zh": "中文"}

#: path -> (file key (mtime_ns, size) or None, parsed table, time of the last stat). Reads and
#: whole-entry replacements of a dict are atomic in CPython: no lock (with 50 sessions rerunning,
#: a lock here became a convoy point behind the GIL). Two threads may parse one file twice; harmless.
_cache: dict[Path, tuple[tuple | None, dict, float]] = {}
#: a text file is looked at (stat) at most this often: a rerun builds a dozen Text objects and
#: with a class connected the stat calls were a visible share of the server's CPU. Edits show within a second.
RECHECK_S = 1.0


def _entry(path: Path) -> tuple[tuple | None, dict, float]:
    now = time.monotonic()
    hit = _cache.get(path)
    if hit is not None and now - hit[2] < RECHECK_S:
        return hit
    try:
        st_ = path.stat()
        key = (st_.st_mtime_ns, st_.st_size)
    except OSError:
        key = None
    if hit is not None and hit[0] == key:
        entry = (key, hit[1], now)
    else:
        try:
            with open(path, "rb") as fh:
                data = tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
            data = {}
        entry = (key, data, now)
    _cache[path] = entry
    return entry


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


@functools.lru_cache(maxsize=256)
def _paths(stem: str, lang: str) -> tuple[Path, ...]:
    """The four files of a page in a language (own, common; then English's): a rerun makes ~25
    ``Text`` objects, and building their paths anew was a third of their cost."""
    return tuple(text_file(name, lg) for lg in (lang, "en") for name in (stem, "common"))


class Text:
    """Strings of one page in one language, with English as the fallback."""

    def __init__(self, stem: str, lang: str):
        self.stem, self.lang = stem, lang
        files = [_entry(path) for path in _paths(stem, lang)]
        self._own = [files[0][1], files[1][1]]
        self._fallback = [files[2][1], files[3][1]]
        #: changes when one of this page's text files changes on disk (a cache key for built figures)
        self.version = (stem, lang, *(f[0] for f in files))

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
