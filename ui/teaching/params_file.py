"""Reading, checking and writing the instructor parameter file (no Streamlit here).

* :func:`validate_text` applies exactly the checks a page applies when it reads the file
  (``ui.kit.spec.resolve`` for every page): a text with any problem is never written.
* :func:`apply_edits` changes a file's text with ``tomlkit``: comments, blank lines and the order of
  everything not edited stay as the instructor wrote them; only the edited values change.
* :func:`save` writes atomically (temporary file in the same folder, ``fsync``, ``os.replace``)
  after checking that the file on disk is still the one the editor loaded (content hash): a file
  edited by hand meanwhile is never overwritten silently. The previous version goes to
  ``<file>.bak``; :func:`undo` swaps it back (and a second undo redoes).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import tempfile
import tomllib
from pathlib import Path

import tomlkit
from tomlkit.items import Comment, Table, Whitespace

from ui.kit import spec as _spec

MAX_IMPORT_BYTES = 2**20  # 1 MB (the shipped file is ~25 KB); the editor's uploader states the same limit
PRESET_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,39}$")


def upload_text(raw: bytes, max_bytes: int) -> tuple[str | None, str | None]:
    """An uploaded file's text, or why there is none: ``"too_big"`` (over ``max_bytes``) or
    ``"not_utf8"``; the editors say it in the page's language."""
    if len(raw) > max_bytes:
        return None, "too_big"
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, "not_utf8"


class Conflict(RuntimeError):
    """The file on disk is not the version the editor started from."""


def digest(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def read(path: Path) -> tuple[str, str]:
    """``(text, sha256 of the bytes)``; a missing file reads as empty."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raw = b""
    return raw.decode("utf-8"), digest(raw)


def backup_path(path: Path) -> Path:
    return Path(path).with_name(Path(path).name + ".bak")


# --------------------------------------------------------------------------- validation
def _schemas():
    from ui.kit.nav import PAGES, page_module

    return [page_module(e.stem).SCHEMA for e in PAGES]


def parse(text: str, source: str = "file") -> tuple[dict, str | None]:
    """``(data, None)``, or ``({}, message)`` for a text that is not TOML (nested too deeply included)."""
    try:
        return tomllib.loads(text), None
    except tomllib.TOMLDecodeError as exc:
        return {}, f"{source}: not valid TOML ({exc})"
    except RecursionError:
        return {}, f"{source}: not valid TOML (nested too deeply)"


def validate_text(text: str, source: str = "file") -> list[str]:
    """Every problem a page would report for this file text (empty list: valid)."""
    data, err = parse(text, source)
    if err:
        return [err]
    schemas = _schemas()
    known = tuple(s.stem for s in schemas)
    errors: list[str] = []
    for s in schemas:
        for e in _spec.resolve(s, data, source=source, known_pages=known, in_use=False).errors:
            if e not in errors:
                errors.append(e)
    for stem, section in data.items():
        presets = section.get("presets", {}) if isinstance(section, dict) else {}
        for pid, entry in presets.items() if isinstance(presets, dict) else ():
            if not PRESET_ID.match(pid):
                errors.append(
                    f"{source}: [{stem}.presets] name {pid!r}: use letters, digits and _ "
                    "(it appears in links as ?preset=...)"
                )
            if isinstance(entry, dict) and "answers" in entry and not isinstance(entry["answers"], bool):
                errors.append(f"{source}: [{stem}.presets.{pid}] answers must be true or false")
    return errors


def numeric_problems(p: _spec.Param, fields: dict) -> list[str]:
    """The file's checks for one numeric parameter with the given min/max/default/step."""
    return _spec._check_numeric(p.kind, {**fields, "lo": p.lo, "hi": p.hi})


def preset_problems(
    pid: str, title: dict, values: dict, params: dict[str, _spec.Param], others: list[str]
) -> list[str]:
    """Problems of one preset (name, titles, values within the edited ranges)."""
    out = []
    if not PRESET_ID.match(pid or ""):
        out.append("name: letters, digits and _ only, starting with a letter (at most 40)")
    elif pid in others:
        out.append(f"name: {pid!r} is used twice")
    for lang in _spec.LANGS:
        if not str(title.get(lang, "")).strip():
            out.append(f"title ({lang}) is empty")
    if not values:
        out.append("values: give at least one parameter")
    for k, v in values.items():
        p = params.get(k)
        if p is None:
            out.append(f"values: unknown parameter {k!r}")
            continue
        try:
            c = p.coerce(v)
        except (ValueError, TypeError) as exc:
            out.append(f"values: {k}: {exc}")
            continue
        if p.kind in ("float", "int") and not p.min <= c <= p.max:
            out.append(f"values: {k}={c} outside [{p.min}, {p.max}]")
    return out


def parse_values(text: str) -> dict:
    """``"beta = 1.0, theta0 = 0.8"`` -> ``{"beta": 1.0, "theta0": 0.8}`` (ValueError if not TOML)."""
    try:
        return dict(tomllib.loads(f"v = {{ {text} }}")["v"]) if text.strip() else {}
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"write name = value, separated by commas ({exc})") from None


def format_values(values: dict) -> str:
    return ", ".join(f"{k} = {tomlkit.item(v).as_string()}" for k, v in values.items())


# --------------------------------------------------------------------------- editing with tomlkit
def _super(parent, key: str):
    if key not in parent:
        parent[key] = tomlkit.table(is_super_table=True)
    return parent[key]


def _tables_of(section) -> list[Table]:
    """The leaf tables of one page's section, in document order."""
    out = []
    for sub in ("params", "presets"):
        if sub in section:
            out.extend(v for v in section[sub].values() if isinstance(v, Table))
    return out


def _take_trailing(tbl: Table) -> list:
    """Remove and return the comments / blank lines at the end of a table's body (they usually
    belong to the next section, e.g. its ``# --- Page`` banner)."""
    body = tbl.value.body
    k = len(body)
    while k and body[k - 1][0] is None and isinstance(body[k - 1][1], (Comment, Whitespace)):
        k -= 1
    tail = body[k:]
    del body[k:]
    return tail


def _same(a, b) -> bool:
    a, b = _unwrap(a), _unwrap(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return type(a) is type(b) and a == b


_HEADER = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_-]+)")  # a table header and the first part of its key
_NOTE = re.compile(r"^\s*(#.*)?$")  # a comment or a blank line


def _blocks(text: str) -> tuple[str, list[tuple[str, str]]] | None:
    """``(preamble, [(stem, block), ...])``: the file cut into one block per page section, each block
    beginning with the comments right above its first table (its banner: tomlkit would make them the
    end of the previous page's last table) and ending with the blank lines before the next banner;
    None when the file is not laid out that way (a key outside every table, a page in two places)."""
    lines = text.splitlines(keepends=True)
    cuts, seen = [], []
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        if m is None:
            continue
        if seen and seen[-1] == m.group(1):
            continue
        if m.group(1) in seen:
            return None
        seen.append(m.group(1))
        k = i
        while k and lines[k - 1].strip().startswith("#"):
            k -= 1
        cuts.append(k)
    if not cuts or any(not _NOTE.match(x) for x in lines[: cuts[0]]):
        return None
    ends = [*cuts[1:], len(lines)]
    return "".join(lines[: cuts[0]]), [(st, "".join(lines[a:e])) for st, a, e in zip(seen, cuts, ends)]


def _blank_before_tables(text: str) -> str:
    """A blank line between a table's last value and the next table's header (tomlkit writes a
    table added after another one right under it)."""
    return re.sub(r"(?m)^(?!\s*(?:#|$)).*\n(?=\s*\[)", lambda m: m.group(0) + "\n", text)


def _tidy(block: str) -> str:
    """A page's rewritten block as the file writes one: its banner comments right above its first
    table, one blank line between tables (never two), no blank line at its ends."""
    lines = _blank_before_tables(block).strip("\n").splitlines()
    k = 0
    while k < len(lines) and lines[k].strip().startswith("#"):
        k += 1
    rest = "\n".join(lines[k:]).lstrip("\n")
    return re.sub(r"\n{3,}", "\n\n", "\n".join([*lines[:k], rest] if rest else lines[:k]))


def apply_edits(text: str, stem: str, params: dict, presets: list[dict] | None) -> str:
    """Return ``text`` with page ``stem``'s parameters and (if not None) presets replaced.

    ``params``: ``{name: {field: value}}`` — only fields whose value differs from the file's (or
    that the file lacks) are written. ``presets``: the complete ordered list
    ``[{"id", "title": {"en", "zh"}, "values": {...}, "answers": bool}]``; None leaves them alone.

    Only the page's own block of the file (:func:`_blocks`: its banner comments and its tables) is
    rewritten: every other page's block, comments and blank lines included, stays byte for byte, and
    a page new to the file is added at its end after a blank line.
    """
    cut = _blocks(text)
    if cut is None:
        return _blank_before_tables(_apply_doc(text, stem, params, presets))
    head, blocks = cut
    for i, (st, block) in enumerate(blocks):
        if st == stem:
            body = block.rstrip("\n")
            new = _tidy(_apply_doc(body + "\n", stem, params, presets))
            blocks[i] = (st, new + "\n" + block[len(body) + 1 :] if new else block[len(body) + 1 :])
            return head + "".join(b for _, b in blocks)
    new = _tidy(_apply_doc("", stem, params, presets))
    if not new:
        return text
    rest = head + "".join(b for _, b in blocks)
    return rest.rstrip("\n") + ("\n\n" if rest.strip() else "") + new + "\n"


def _apply_doc(text: str, stem: str, params: dict, presets: list[dict] | None) -> str:
    """:func:`apply_edits` on a whole TOML text with tomlkit (a page's block, or a file laid out otherwise)."""
    doc = tomlkit.parse(text)
    section = _super(doc, stem)
    # The file holds only what it overrides: the first override of a page adds its [params] tables
    # at the end of the page's section, before the comments that open the next page's section.
    first_params = "params" not in section
    before = _tables_of(section)
    tail = None
    for name, fields in params.items():
        ptab = section.get("params", {}).get(name) if "params" in section else None
        for field_, value in fields.items():
            if value is None:
                if ptab is not None and field_ in ptab:
                    del ptab[field_]
                continue
            if ptab is not None and field_ in ptab and _same(ptab[field_], value):
                continue
            if ptab is None:
                if first_params and tail is None and before:
                    tail = _take_trailing(before[-1])
                _super(section, "params")[name] = tomlkit.table()
                ptab = section["params"][name]
            ptab[field_] = value
    if tail:
        last = list(section["params"].values())[-1]
        _take_trailing(last)
        last.value.body.extend(tail)
    if presets is not None and presets == file_presets(tomllib.loads(text), stem):
        presets = None  # nothing changed: leave them exactly as written
    if presets is not None:
        before = _tables_of(section)
        tail = _take_trailing(before[-1]) if before else []
        old = dict(section["presets"]) if "presets" in section else {}
        if "presets" in section:
            del section["presets"]
        if presets:
            new = tomlkit.table(is_super_table=True)
            for pr in presets:
                t = tomlkit.table()
                title = tomlkit.inline_table()
                title.update({lang: pr["title"][lang] for lang in _spec.LANGS})
                t["title"] = title
                vals = tomlkit.inline_table()
                vals.update(pr["values"])
                t["values"] = vals
                if pr.get("answers"):
                    t["answers"] = True
                prev = old.get(pr["id"])
                if prev is not None and _unwrap(prev) == _unwrap(t):
                    t = prev  # unchanged preset: keep it as written (comments inside it too)
                new[pr["id"]] = t
            section["presets"] = new
        after = _tables_of(section)
        if tail and after:
            last = after[-1]
            _take_trailing(last)
            for item in tail:
                last.value.body.append(item)
    out = tomlkit.dumps(doc)
    # Presets re-added as the first table of a section that has no [params] tables get a blank line
    # from tomlkit before them: keep the line breaks the file had before the page's first preset.
    first = re.compile(r"\n+(?=\[" + re.escape(stem) + r"\.presets\.)")
    m = first.search(text)
    if m:
        out = first.sub(m.group(0), out, count=1)
    return out


def _unwrap(x):
    return x.unwrap() if hasattr(x, "unwrap") else x


def file_presets(data: dict, stem: str) -> list[dict]:
    """The presets of page ``stem`` as written in the parsed file, in file order."""
    out = []
    section = data.get(stem, {})
    presets = section.get("presets", {}) if isinstance(section, dict) else {}
    for pid, e in presets.items() if isinstance(presets, dict) else ():
        if not isinstance(e, dict):
            continue
        title = e.get("title")
        if isinstance(title, str):
            title = {lang: title for lang in _spec.LANGS}
        title = {lang: str((title or {}).get(lang, "")) for lang in _spec.LANGS}
        values = e.get("values") if isinstance(e.get("values"), dict) else {}
        out.append({"id": pid, "title": title, "values": dict(values), "answers": e.get("answers") is True})
    return out


# --------------------------------------------------------------------------- writing
def _atomic_write(path: Path, text: str) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def lock_path(path: Path) -> Path:
    return Path(path).with_name(f".{Path(path).name}.lock")


@contextlib.contextmanager
def locked(path: Path):
    """An exclusive lock for the file's compare-and-swap (``flock`` on ``.<name>.lock`` beside it):
    every save and undo of this file, in any thread, session or replica on the same disk, takes it
    around "compare the hash, write the backup, write the file"."""
    with open(lock_path(path), "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def save(path: Path, text: str, expected: str, check=None) -> str:
    """Write ``text`` if the file still has hash ``expected`` (compare-and-swap under
    :func:`locked`: of two saves from the same version one wins, the other gets
    :class:`Conflict`); returns the new hash. ``check(text, source)`` lists the text's problems
    (default :func:`validate_text`; the lesson editor passes the lesson file's own).

    Raises :class:`Conflict` (file changed on disk) or ``ValueError`` (text invalid)."""
    errors = (check or validate_text)(text, source=str(path))
    if errors:
        raise ValueError("\n".join(errors))
    with locked(path):
        current, h = read(path)
        if h != expected:
            raise Conflict(str(path))
        _atomic_write(backup_path(path), current)
        _atomic_write(path, text)
    return digest(text)


def undo(path: Path, expected: str, check=None) -> str:
    """Swap the file and its backup (undo the last save; again to redo). Returns the new hash."""
    bak = backup_path(path)
    if not bak.exists():
        raise FileNotFoundError(str(bak))
    with locked(path):
        current, h = read(path)
        if h != expected:
            raise Conflict(str(path))
        previous, _ = read(bak)
        errors = (check or validate_text)(previous, source=str(bak))
        if errors:
            raise ValueError("\n".join(errors))
        _atomic_write(bak, current)
        _atomic_write(path, previous)
    return digest(previous)
