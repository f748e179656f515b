"""Parameter schemas and the instructor-editable parameter file.

Each page has a :class:`PageSchema`, read from its table ``pages/<stem>.toml`` by
:meth:`PageSchema.from_file`: the built-in defaults and the *hard limits* that bound compute. The instructor file
(``assets/params.toml``, or the file named by ``$APP_PARAMS_FILE``) may change
ranges, defaults, steps and presets inside those hard limits. The file is
validated on every load; a broken entry is reported (file, key, problem) and
that entry falls back to the built-in value, so a typo never breaks a page.

File format (one table per page, keyed by the page stem)::

    [two_point.params.beta]
    min = 0.1
    max = 8.0
    default = 1.0
    step = 0.1

    [two_point.presets.seed_figure]
    title = { en = "Seed figure", zh = "原文图例" }
    values = { beta = 1.0, theta0 = 1.0 }
"""

from __future__ import annotations

import math
import os
import threading
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from ui.kit import files

ROOT = files.ROOT
DEFAULT_PARAMS_FILE = ROOT / "assets" / "params.toml"
PARAMS_ENV = "APP_PARAMS_FILE"
LANGS = ("en", "zh")

_NUMERIC = ("float", "int")


def _float(value) -> float:
    """``float(value)``; a number too large for a float is not finite (ValueError, not OverflowError)."""
    try:
        return float(value)
    except OverflowError:
        raise ValueError("not a finite number") from None


@dataclass(frozen=True)
class Param:
    """One control. ``lo``/``hi`` are hard limits the file cannot exceed."""

    name: str
    kind: str  # "float" | "int" | "select" | "bool"
    default: object
    min: float | None = None
    max: float | None = None
    step: float | None = None
    options: tuple = ()
    lo: float | None = None
    hi: float | None = None

    def __post_init__(self):
        if self.kind in _NUMERIC:
            lo = self.min if self.lo is None else self.lo
            hi = self.max if self.hi is None else self.hi
            object.__setattr__(self, "lo", lo)
            object.__setattr__(self, "hi", hi)
            problems = _check_numeric(self.kind, vars(self))
            if problems:
                raise ValueError(f"built-in parameter {self.name!r}: {'; '.join(problems)}")

    def coerce(self, value):
        """Return ``value`` as this parameter's type, or raise ValueError."""
        if self.kind == "float":
            if isinstance(value, bool):
                raise ValueError("expected a number")
            v = _float(value)
            if not math.isfinite(v):
                raise ValueError("not a finite number")
            return v
        if self.kind == "int":
            if isinstance(value, bool):
                raise ValueError("expected an integer")
            v = _float(value)
            if not math.isfinite(v) or not v.is_integer():
                raise ValueError("not an integer")
            return int(v)
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            s = str(value).strip().lower()
            if s in ("1", "true", "yes", "on"):
                return True
            if s in ("0", "false", "no", "off"):
                return False
            raise ValueError("expected true/false")
        if self.kind == "select":
            if isinstance(value, (list, dict)) or value not in self.options:
                raise ValueError(f"expected one of {list(self.options)}")
            return value
        raise ValueError(f"unknown kind {self.kind!r}")

    def other_value(self):
        """A valid value other than the default (on the slider's grid): for tests and benchmarks."""
        if self.kind in _NUMERIC:
            v = self.clamp(self.min + 0.37 * (self.max - self.min))
            return v if v != self.default else self.clamp(self.max)
        if self.kind == "select":
            return next((o for o in self.options if o != self.default), self.default)
        return not self.default

    def clamp(self, value):
        """Clamp a coerced numeric value into [min, max] and snap it to the step grid."""
        if self.kind not in _NUMERIC:
            return value
        v = min(max(value, self.min), self.max)
        if self.step:
            k = round((v - self.min) / self.step)
            v = min(self.min + k * self.step, self.max)
            v = round(v, 12)
        return int(round(v)) if self.kind == "int" else float(v)


def _finite(v) -> bool:
    """A finite number that a float can hold (TOML integers have no size limit in tomllib)."""
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


def _short(v, limit: int = 60) -> str:
    """``repr(v)`` cut to ``limit`` characters: a message never carries a whole huge value."""
    r = repr(v) if not isinstance(v, (str, int)) or len(str(v)) < 4 * limit else repr(str(v)[: 4 * limit])
    return r if len(r) <= limit else r[: limit - 1] + "…"


def _check_numeric(kind: str, f: dict) -> list[str]:
    """Problems of a numeric parameter given its fields (min, max, default, step, lo, hi)."""
    out = []
    vals = {k: f.get(k) for k in ("min", "max", "default", "step")}
    for k, v in vals.items():
        if v is None:
            if k != "step":
                out.append(f"{k} is missing")
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not _finite(v):
            out.append(f"{k} must be a finite number, got {_short(v)}")
        elif kind == "int" and not float(v).is_integer():
            out.append(f"{k} must be an integer, got {_short(v)}")
    if out:
        return out
    lo_, hi_, lo, hi, step = vals["min"], vals["max"], f.get("lo"), f.get("hi"), vals["step"]
    if not lo_ <= vals["default"] <= hi_:
        out.append(f"need min <= default <= max, got min={lo_}, default={vals['default']}, max={hi_}")
    if lo is not None and lo_ < lo:
        out.append(f"min={lo_} is below the hard limit {lo}")
    if hi is not None and hi_ > hi:
        out.append(f"max={hi_} is above the hard limit {hi}")
    if step is not None:
        if step <= 0:
            out.append(f"step must be > 0, got {step}")
        elif step > hi_ - lo_ and hi_ > lo_:
            out.append(f"step={step} is larger than the range max-min={hi_ - lo_}")
    return out


@dataclass(frozen=True)
class Preset:
    id: str
    title: dict  # lang -> str
    values: dict


@dataclass(frozen=True)
class PageSchema:
    """The built-in parameters and presets of one page."""

    stem: str
    params: tuple[Param, ...]
    presets: tuple[Preset, ...] = ()
    steps: tuple = ()  # its "Predict first" steps (ui.kit.predict.Step), beside its views

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @classmethod
    def from_file(
        cls, stem: str, *, options: dict | None = None, steps: tuple = (), path: Path | None = None
    ) -> PageSchema:
        """The page's built-in table ``pages/<stem>/params.toml`` (one ``[params.<name>]`` table per control,
        in slider order, keys as :class:`Param`'s); ``options`` gives select options held in code.
        A bad file raises ValueError naming the file and the key."""
        path = path or files.params_file(stem)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise ValueError(f"{path}: {e}") from e
        return cls(stem, params=_params_from_table(data, path, dict(options or {})), steps=steps)


_BUILTIN_KEYS = ("kind", "default", "min", "max", "step", "lo", "hi", "options")


def _params_from_table(data: dict, path: Path, options: dict) -> tuple[Param, ...]:
    if set(data) - {"params"}:
        raise ValueError(f"{path}: unknown top-level key(s) {sorted(set(data) - {'params'})}")
    out = []
    for name, entry in data.get("params", {}).items():
        where = f"{path}: params.{name}"
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: expected a table")
        bad = sorted(set(entry) - set(_BUILTIN_KEYS))
        if bad:
            raise ValueError(f"{where}: unknown key(s) {bad} (allowed: {', '.join(_BUILTIN_KEYS)})")
        if "kind" not in entry or "default" not in entry:
            raise ValueError(f"{where}: 'kind' and 'default' are required")
        fields = dict(entry)
        if name in options:
            if "options" in fields:
                raise ValueError(f"{where}: options are given both in the file and in code")
            fields["options"] = options.pop(name)
        fields["options"] = tuple(fields.get("options", ()))
        if fields["kind"] == "select" and fields["default"] not in fields["options"]:
            raise ValueError(f"{where}: default {fields['default']!r} is not one of the options")
        try:
            out.append(Param(name, **fields))
        except (TypeError, ValueError) as e:
            raise ValueError(f"{where}: {e}") from e
    if options:
        raise ValueError(f"{path}: options given for unknown parameter(s) {sorted(options)}")
    return tuple(out)


@dataclass(frozen=True)
class Resolved:
    """A page's effective spec after applying the instructor file."""

    stem: str
    params: dict[str, Param]
    presets: dict[str, Preset]
    errors: tuple[str, ...] = ()
    source: str = ""


@dataclass
class _FileCache:
    snapshot: tuple | None = None  # (file key, parsed data, error message)
    lock: threading.Lock = field(default_factory=threading.Lock)


_cache = _FileCache()


def params_file() -> Path:
    """The parameter file in force: ``$APP_PARAMS_FILE`` or the shipped one."""
    env = os.environ.get(PARAMS_ENV, "").strip()
    return Path(env) if env else DEFAULT_PARAMS_FILE


def load_file(path: Path | None = None) -> tuple[dict, str | None]:
    """Parse the TOML file (re-read when it changes on disk).

    Returns ``(data, error)``; on any error ``data`` is ``{}``. Messages name the file by its
    name only: they are shown to students, and the server's directories are none of their business.
    """
    path = params_file() if path is None else Path(path)
    name = path.name
    try:
        st_ = path.stat()
        key = (str(path), st_.st_mtime_ns, st_.st_size)
    except OSError as exc:
        return {}, f"{name}: cannot read the parameter file ({exc.strerror or type(exc).__name__})"
    snap = _cache.snapshot  # (key, data, error), replaced as a whole: read without the lock
    if snap is not None and snap[0] == key:
        return snap[1], snap[2]
    with _cache.lock:
        try:
            with open(path, "rb") as fh:
                data, err = tomllib.load(fh), None
        except tomllib.TOMLDecodeError as exc:
            data, err = {}, f"{name}: not valid TOML ({exc})"
        except RecursionError:
            data, err = {}, f"{name}: not valid TOML (nested too deeply)"
        except OSError as exc:
            data, err = {}, f"{name}: cannot read the parameter file ({exc.strerror or type(exc).__name__})"
        except UnicodeDecodeError as exc:
            data, err = {}, f"{name}: cannot read the parameter file ({exc})"
        _cache.snapshot = (key, data, err)
        return data, err


_PARAM_KEYS = {"min", "max", "default", "step", "options"}


def resolve(
    schema: PageSchema,
    data: dict | None = None,
    source: str | None = None,
    known_pages: tuple[str, ...] = (),
    *,
    in_use: bool = True,
) -> Resolved:
    """Apply the instructor file's section for ``schema.stem`` to the built-ins.

    ``known_pages`` (all page stems) lets sections for unknown pages be reported too.
    Every problem becomes one message ``"<file>: [<stem>.params.<name>] <key>: problem"``
    and the broken entry keeps its built-in value. ``in_use``: the file is the one the pages use
    (a broken range's message then says the page falls back to the built-in one); False for a
    file that is only checked (an instructor's upload, refused whole when broken).
    """
    errors: list[str] = []
    if data is None:
        data, ferr = load_file()
        if ferr:
            errors.append(ferr)
    src = params_file().name if source is None else source  # the file name only, never its directory
    params = {p.name: p for p in schema.params}
    presets = {p.id: p for p in schema.presets}
    section = _page_section(schema.stem, data, src, known_pages, errors)
    if section is None:
        return Resolved(schema.stem, params, presets, _capped(errors, src), src)
    for name, entry in _table_items(section, "params", f"{src}: [{schema.stem}.params]", errors):
        where = f"{src}: [{schema.stem}.params.{name}]"
        if name not in params:
            errors.append(f"{where} unknown parameter (known: {', '.join(params)})")
        elif not isinstance(entry, dict):
            errors.append(f"{where} must be a table")
        else:
            params[name] = _resolve_param(params[name], entry, where, errors, _FALLBACK if in_use else "")
    for pid, entry in _table_items(section, "presets", f"{src}: [{schema.stem}.presets]", errors)[:MAX_PRESETS]:
        preset = _resolve_preset(pid, entry, params, f"{src}: [{schema.stem}.presets.{pid}]", errors)
        if preset is not None:
            presets[pid] = preset
    return Resolved(schema.stem, params, presets, _capped(errors, src), src)


#: messages per page: a file with thousands of broken entries does not flood every student's page
MAX_MESSAGES = 20


def _capped(errors: list[str], src: str) -> tuple[str, ...]:
    if len(errors) <= MAX_MESSAGES:
        return tuple(errors)
    return (*errors[:MAX_MESSAGES], f"{src}: … and {len(errors) - MAX_MESSAGES} more problems")


#: presets per page: more are reported and ignored (a page's sidebar and the editor draw each one)
MAX_PRESETS = 50


def _table_items(section: dict, key: str, where: str, errors: list[str]) -> list:
    """``section[key]``'s ``(name, entry)`` pairs; a value that is not a table (``presets = ["hot"]``,
    ``params = 5``, an array of tables ``[[page.params]]``) is reported and counts as empty."""
    value = section.get(key)
    if value is None:
        return []
    if not isinstance(value, dict):
        errors.append(f"{where} must be a table with one table per entry, got {_kind(value)}")
        return []
    items = list(value.items())
    if key == "presets" and len(items) > MAX_PRESETS:
        errors.append(f"{where} {len(items)} presets: at most {MAX_PRESETS} per page are used, the rest are ignored")
    return items


def _kind(value) -> str:
    """A short word for a TOML value's type (an array of tables is an array too)."""
    return {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )


def _page_section(stem: str, data: dict, src: str, known_pages: tuple[str, ...], errors: list[str]) -> dict | None:
    """The file's table for page ``stem`` (``{}`` when absent; ``None`` when it is not a table).
    Reports sections of unknown pages and unknown keys in the page's table."""
    for other in data:
        if known_pages and other not in known_pages:
            errors.append(f"{src}: [{other}] is not a page of this app (pages: {', '.join(known_pages)})")
    section = data.get(stem, {})
    if not isinstance(section, dict):
        errors.append(f"{src}: [{stem}] must be a table")
        return None
    for key in section:
        if key not in ("params", "presets"):
            errors.append(f"{src}: [{stem}] unknown key {key!r} (expected 'params' or 'presets')")
    return section


#: what a page's message adds when it falls back to the built-in range of a broken entry
_FALLBACK = " — using the built-in range"


def _resolve_param(base: Param, entry: dict, where: str, errors: list[str], note: str) -> Param:
    """``base`` with the file's ``entry`` applied, or ``base`` itself when the entry is broken."""
    unknown = set(entry) - _PARAM_KEYS
    if unknown:
        errors.append(f"{where} unknown key(s) {sorted(unknown)}; allowed: {sorted(_PARAM_KEYS)}")
    upd = {k: entry[k] for k in ("min", "max", "default", "step") if k in entry}
    if base.kind in _NUMERIC:
        fields = {**vars(base), **upd}
        probs = _check_numeric(base.kind, fields)
        if probs:
            errors.append(f"{where} {'; '.join(probs)}{note}")
            return base
        cast = int if base.kind == "int" else float
        lo, step = fields["min"], fields["step"]
        if step is not None:
            lo, step = _on_grid(lo, fields["max"], fields["default"], step)
        return replace(
            base,
            min=cast(lo),
            max=cast(fields["max"]),
            default=cast(fields["default"]),
            step=None if step is None else cast(step),
        )
    return _resolve_choice(base, entry, set(upd), where, errors)


def _on_grid(lo, hi, default, step):
    """``(min, step)`` of a slider whose grid ``min + k·step`` holds its default. A file that moves
    ``min`` (or the default) off the built-in grid (β opened down to 0.01 with step 0.1 showed the
    default 1.0 as 1.01, and every preset shifted alike) gets the largest step whose grid holds both
    ``min`` and the default (their greatest common divisor in decimal notation: 0.01 there), unless
    that makes more than :data:`MAX_POSITIONS` positions; then the step stays and ``min`` moves up
    to the first grid point through the default (a position 1..100000 with step 100 starts at 100).
    A grid that holds the default already is kept."""
    from fractions import Fraction
    from math import floor, gcd

    try:
        a, s = Fraction(str(default)) - Fraction(str(lo)), Fraction(str(step))
    except (ValueError, ZeroDivisionError):
        return lo, step
    if s <= 0 or (a / s).denominator == 1:
        return lo, step
    den = a.denominator * s.denominator // gcd(a.denominator, s.denominator)
    g = Fraction(gcd(int(a * den), int(s * den)), den)
    if g > 0 and (Fraction(str(hi)) - Fraction(str(lo))) / g <= MAX_POSITIONS:
        return lo, float(g) if isinstance(step, float) else int(g)
    d = Fraction(str(default))
    return type(lo)(d - s * floor((d - Fraction(str(lo))) / s)), step


#: the most positions a slider gets from :func:`_on_grid` by a finer step
MAX_POSITIONS = 20_000


def _resolve_choice(base: Param, entry: dict, keys: set, where: str, errors: list[str]) -> Param:
    """A select or bool parameter: only its default (and a subset of the options) can change."""
    if keys - {"default"}:
        errors.append(f"{where} only 'default' (and 'options' for a choice) can be set here")
        return base
    cand = base
    if "options" in entry:
        opts = entry["options"]
        if base.kind != "select" or not isinstance(opts, list) or not opts or any(o not in base.options for o in opts):
            errors.append(f"{where} options must be a non-empty subset of {list(base.options)}")
            return base
        cand = replace(cand, options=tuple(opts))
    if "default" in entry:
        try:
            cand = replace(cand, default=cand.coerce(entry["default"]))
        except (ValueError, TypeError) as exc:
            errors.append(f"{where} default: {exc}")
            return base
    if cand.kind == "select" and cand.default not in cand.options:
        cand = replace(cand, default=cand.options[0])
    return cand


def _resolve_preset(pid: str, entry, params: dict[str, Param], where: str, errors: list[str]) -> Preset | None:
    """The file's preset ``pid`` checked against the (resolved) parameters; ``None`` when broken."""
    if not isinstance(entry, dict):
        errors.append(f"{where} must be a table")
        return None
    title, values = entry.get("title"), entry.get("values")
    if isinstance(title, str):
        title = {lang: title for lang in LANGS}
    if not isinstance(title, dict) or not all(isinstance(title.get(l), str) for l in LANGS):
        errors.append(f"{where} title must be a string or a table with keys {list(LANGS)}")
        return None
    if not isinstance(values, dict) or not values:
        errors.append(f"{where} values must be a non-empty table of parameter = value")
        return None
    clean, bad = {}, []
    for k, v in values.items():
        if k not in params:
            bad.append(f"unknown parameter {k!r}")
            continue
        p = params[k]
        try:
            c = p.coerce(v)
        except (ValueError, TypeError) as exc:
            bad.append(f"{k}: {exc}")
            continue
        if p.kind in _NUMERIC and not p.min <= c <= p.max:
            bad.append(f"{k}={c} outside [{p.min}, {p.max}]")
            continue
        clean[k] = c
    if bad:
        errors.append(f"{where} {'; '.join(bad)} — preset skipped")
        return None
    return Preset(pid, dict(title), clean)
