"""The instructor's parameter editor: an in-app page for what ``assets/params.toml`` holds.

Registered in the navigation only for a signed-in instructor (:func:`pages`); a student
who opens its URL gets the home page. Per page: each parameter's min, max, default and step (or
default and options for a choice), and the named presets (add, rename, delete, reorder, "save the
current view as a preset"). The checks are those of the file itself (``ui.teaching.params_file``), shown
next to the field; the save button stays disabled while anything is invalid, and the whole new file
is checked once more before it is written. Writing, backup, undo and conflict detection are in
``ui.teaching.params_file``.
"""

from __future__ import annotations

import itertools
import json
import re

import streamlit as st

from ui.teaching import instructor
from ui.teaching import params_file as pf
from ui.teaching.answers import LAST_VIEW
from ui.kit.i18n import Text
from ui.kit.nav import PAGES, page_module
from ui.kit.lang import current_lang
from ui.kit.spec import MAX_PRESETS, params_file, resolve

URL_PATH = "instructor_params"
_BASE = "_ed_base"
_FLASH = "_ed_flash"
_UPLOADS = "_ed_uploads"  # session: imports done (a new uploader key after each: it starts empty)
_uid = itertools.count()


def _keys(prefix: str = "ed") -> list[str]:
    return [k for k in st.session_state if isinstance(k, str) and k.startswith((prefix + ":", prefix + "p:"))]


def _reload() -> None:
    """Forget every edit and read the file again."""
    for k in _keys() + [k for k in st.session_state if isinstance(k, str) and k.startswith("_ed_presets:")]:
        del st.session_state[k]
    st.session_state.pop(_BASE, None)


def _base() -> dict:
    path = params_file()
    base = st.session_state.get(_BASE)
    if base is None or base["path"] != str(path):
        text, h = pf.read(path)
        base = st.session_state[_BASE] = {"path": str(path), "text": text, "hash": h}
    return base


_NUM = r"([-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|inf|nan))"
_PLAIN = [  # the file's messages (ui.kit.spec._check_numeric) -> a sentence in the instructor's language
    (re.compile(rf"^need min <= default <= max, got min={_NUM}, default={_NUM}, max={_NUM}$"), "order"),
    (re.compile(rf"^min={_NUM} is below the hard limit {_NUM}$"), "below"),
    (re.compile(rf"^max={_NUM} is above the hard limit {_NUM}$"), "above"),
    (re.compile(rf"^step must be > 0, got {_NUM}$"), "step_positive"),
    (re.compile(rf"^step={_NUM} is larger than the range max-min={_NUM}$"), "step_range"),
    (re.compile(r"^(min|max|default|step) is missing$"), "missing"),
    (re.compile(r"^(min|max|default|step) must be an integer, got .*$"), "integer"),
]


def explain(msgs: list[str], t: Text) -> list[str]:
    """Plain sentences (in ``t``'s language) for the numeric problems the editor knows; the file's
    own message is still shown below, literally. Only numbers and field names are put into the
    sentences (matched by the patterns above), never free text."""
    out = []
    for m in msgs:
        for rx, key in _PLAIN:
            g = rx.match(m)
            if g is None:
                continue
            a = g.groups()
            if key == "order" and float(a[0]) > float(a[2]):
                out.append(t("editor.why.min_above_max", min=a[0], max=a[2]))
            elif key in ("missing", "integer"):
                out.append(t(f"editor.why.{key}", field=t(f"editor.{a[0]}")))
            else:
                out.append(t(f"editor.why.{key}", **dict(zip(("a", "b", "c"), a))))
            break
    return out


def _uploader_words(t: Text) -> None:
    """The uploader in the page's language: Streamlit 1.67 offers no label for its button ("Upload")
    nor for its line "1MB per file • TOML"; the line is not drawn (the caption under the uploader
    says it) and the button shows our word instead of its own (CSS, this container only)."""
    word = json.dumps(t("editor.upload_button"))  # a CSS string: quoted and escaped as JSON is
    st.html(
        '<style>.st-key-tos_ed_upload [data-testid="stFileUploaderDropzoneInstructions"] { display: none; }'
        '.st-key-tos_ed_upload [data-testid="stFileUploaderDropzone"] button { font-size: 0; }'
        '.st-key-tos_ed_upload [data-testid="stFileUploaderDropzone"] button::after'
        f" {{ content: {word}; font-size: 1rem; }}</style>"
    )


_TOML_WHAT = {  # tomllib's messages (Python 3.11) -> editor.toml.<key>
    "Invalid value": "value",
    "Cannot overwrite a value": "overwrite",
    "Unterminated string": "string",
    "Expected ']' at the end of a table declaration": "table",
    "Expected '=' after a key in a key/value pair": "equals",
    "Expected newline or end of document after a statement": "newline",
    "Invalid statement": "statement",
    "Unclosed inline table": "inline",
    "Unclosed array": "array",
    "Illegal character": "character",
}
_TOML = re.compile(r"^.*: not valid TOML \((.*?)(?: \(at line (\d+), column (\d+)\)| \(at end of document\))?\)$")


def _toml_problem(m: str, t: Text) -> str | None:
    """The parser's message (``params_file.parse``) as a sentence in ``t``'s language: where (line and
    column, or the end of the file) and what, for the messages tomllib gives; None for others."""
    g = _TOML.match(m)
    if g is None:
        return None
    what, line, col = g.groups()
    key = _TOML_WHAT.get(what) or ("twice" if what.startswith("Cannot declare") else "other")
    where = t("editor.toml.at", line=line, column=col) if line else t("editor.toml.at_end")
    return t("editor.toml.sentence", where=where, what=t(f"editor.toml.{key}"))


def undo_file(path, expected: str, say, show, **kw) -> bool:
    """Undo the last save of ``path`` (``params_file.undo``: compare-and-swap on ``expected``); a
    conflict or a failed write is said in words (``say("conflict")``, ``say("write_failed")`` and
    the reasons through ``show``). True when the file was put back."""
    try:
        pf.undo(path, expected, **kw)
    except pf.Conflict:
        st.error(say("conflict"))
    except (ValueError, OSError) as exc:
        st.error(say("write_failed"))
        show(str(exc).splitlines())
    else:
        return True
    return False


def _show_problems(msgs: list[str], t: Text | None = None) -> None:
    """Messages that may quote the instructor's own text: shown literally, never as Markdown; with
    ``t``, a parser's message is said first in the instructor's language."""
    for m in msgs if t is not None else ():
        said = _toml_problem(m, t)
        if said:
            st.markdown(said)
    """Messages that may quote the instructor's own text: shown literally, never as Markdown."""
    if msgs:
        st.code("\n".join(msgs), language=None, wrap_lines=True)


# --------------------------------------------------------------------------- parameters
def _num_input(label: str, key: str, value, kind: str, step) -> None:
    if key not in st.session_state:
        st.session_state[key] = value
    if kind == "int":
        st.number_input(label, key=key, step=1, format="%d")
    else:
        st.number_input(label, key=key, step=float(step) if step else 0.01, format="%g")


def _param_rows(stem: str, res, file_params: dict, t: Text, pt: Text) -> tuple[dict, int]:
    """Draw one row per parameter; return (edits for apply_edits, number of invalid rows)."""
    edits, bad = {}, 0
    for p in res.params.values():
        k = f"ed:{stem}:{p.name}"
        in_file = file_params.get(p.name, {}) if isinstance(file_params.get(p.name), dict) else {}
        label = pt(f"params.{p.name}.label") if pt.has(f"params.{p.name}.label") else p.name
        with st.container(border=True):
            st.markdown(f"**{p.name}** · {label}")
            if p.kind in ("float", "int"):
                st.caption(t("editor.hard_limits", lo=p.lo, hi=p.hi))
                cols = st.columns(4)
                fields = {}
                for col, f in zip(cols, ("min", "max", "default", "step")):
                    with col:
                        _num_input(t(f"editor.{f}"), f"{k}:{f}", getattr(p, f), p.kind, p.step)
                    v = st.session_state[f"{k}:{f}"]
                    fields[f] = (int(v) if p.kind == "int" else float(v)) if v is not None else None
                problems = pf.numeric_problems(p, fields)
            else:
                fields, problems = {}, []
                base = page_module(stem).SCHEMA.param(p.name)
                if p.kind == "select":
                    ok = f"{k}:options"
                    st.session_state.setdefault(ok, list(p.options))
                    st.multiselect(t("editor.options"), list(base.options), key=ok)
                    opts = [o for o in base.options if o in st.session_state[ok]]
                    fields["options"] = opts
                    if not opts:
                        problems.append("options: keep at least one")
                    dk = f"{k}:default"
                    st.session_state.setdefault(dk, p.default)
                    if st.session_state[dk] not in (opts or base.options):
                        st.session_state[dk] = (opts or list(base.options))[0]
                    st.selectbox(t("editor.default"), opts or list(base.options), key=dk)
                    fields["default"] = st.session_state[dk]
                else:
                    dk = f"{k}:default"
                    st.session_state.setdefault(dk, bool(p.default))
                    st.toggle(t("editor.default"), key=dk)
                    fields["default"] = bool(st.session_state[dk])
            if problems:
                bad += 1
                st.error(t("editor.invalid") + " ".join(explain(problems, t)), icon=":material/error:")
                _show_problems(problems)
            cur = (
                {f: getattr(p, f) for f in fields}
                if p.kind != "select"
                else {"default": p.default, "options": list(p.options)}
            )
            changed = {f: v for f, v in fields.items() if f in in_file or v != cur.get(f)}
            if changed:
                edits[p.name] = changed
    return edits, bad


def _effective_params(res, edits: dict) -> dict:
    """The parameters as they would be after the edits (for checking preset values)."""
    from dataclasses import replace

    out = {}
    for name, p in res.params.items():
        e = edits.get(name, {})
        try:
            kw = {f: e[f] for f in ("min", "max", "default", "step") if f in e}
            if "options" in e:
                kw["options"] = tuple(e["options"])
            out[name] = replace(p, **kw) if kw else p
        except (ValueError, TypeError):
            out[name] = p
    return out


# --------------------------------------------------------------------------- presets
def _presets_state(stem: str, data: dict) -> list[dict]:
    key = f"_ed_presets:{stem}"
    if key not in st.session_state:
        st.session_state[key] = [{**pr, "uid": next(_uid)} for pr in pf.file_presets(data, stem)]
    return st.session_state[key]


def _move(stem: str, i: int, d: int) -> None:
    lst = st.session_state[f"_ed_presets:{stem}"]
    j = i + d
    if 0 <= j < len(lst):
        lst[i], lst[j] = lst[j], lst[i]


def _delete(stem: str, i: int) -> None:
    del st.session_state[f"_ed_presets:{stem}"][i]


def _add(stem: str, values: dict, title: dict) -> None:
    lst = st.session_state[f"_ed_presets:{stem}"]
    if len(lst) >= MAX_PRESETS:  # a forged click on the disabled button
        return
    ids = {st.session_state.get(f"edp:{stem}:{p['uid']}:id", p["id"]) for p in lst}
    n = 1
    while f"preset_{n}" in ids:
        n += 1
    lst.append({"id": f"preset_{n}", "title": dict(title), "values": dict(values), "answers": False, "uid": next(_uid)})
    st.session_state[f"_ed_page:{stem}"] = (len(lst) - 1) // PAGE_SIZE  # show the new one


#: presets drawn at once in the editor (a file with thousands drew 16 000 widgets and froze it)
PAGE_SIZE = 10


def _page_of(stem: str, n: int, t: Text) -> range:
    """The indexes of the presets on the page the instructor chose (a selector when more than one)."""
    pages = max(1, -(-n // PAGE_SIZE))
    key = f"_ed_page:{stem}"
    if not isinstance(st.session_state.get(key), int) or not 0 <= st.session_state[key] < pages:
        st.session_state[key] = pages - 1 if st.session_state.get(key) else 0
    if pages > 1:
        st.selectbox(
            t("editor.preset_page"),
            list(range(pages)),
            key=key,
            format_func=lambda i: f"{i * PAGE_SIZE + 1}–{min((i + 1) * PAGE_SIZE, n)} / {n}",
        )
    i = st.session_state[key]
    return range(i * PAGE_SIZE, min((i + 1) * PAGE_SIZE, n))


def _preset_fields(pr: dict) -> dict:
    """The preset's fields as the form holds them (its last drawn values, else the file's)."""
    return {
        "id": pr["id"],
        "en": pr["title"]["en"],
        "zh": pr["title"]["zh"],
        "values": pr.get("values_text", pf.format_values(pr["values"])),
        "answers": pr["answers"],
    }


def _preset_rows(stem: str, data: dict, params: dict, t: Text) -> tuple[list[dict], int]:
    lst = _presets_state(stem, data)
    out, bad = [], 0
    shown = _page_of(stem, len(lst), t)
    ids = [
        st.session_state.get(f"edp:{stem}:{p['uid']}:id", p["id"]) if i in shown else p["id"] for i, p in enumerate(lst)
    ]
    hidden_bad = 0
    for i, pr in enumerate(lst):
        k = f"edp:{stem}:{pr['uid']}"
        if i in shown:
            for f, v in _preset_fields(pr).items():
                st.session_state.setdefault(f"{k}:{f}", v)
            _preset_row(stem, i, len(lst), k, t)
            s = st.session_state
            f = {name: s[f"{k}:{name}"] for name in ("id", "en", "zh", "values", "answers")}
            # kept in the list, so the row's edits survive while another page of presets is shown
            pr.update(
                id=f["id"], title={"en": f["en"], "zh": f["zh"]}, values_text=f["values"], answers=bool(f["answers"])
            )
        else:
            f = _preset_fields(pr)
        pid = str(f["id"]).strip()
        title = {"en": str(f["en"]).strip(), "zh": str(f["zh"]).strip()}
        try:
            values = pf.parse_values(str(f["values"]))
            problems = []
        except ValueError as exc:
            values, problems = {}, [f"values: {exc}"]
        problems += [
            m
            for m in pf.preset_problems(pid, title, values, params, ids[:i] + ids[i + 1 :])
            if not (problems and m.startswith("values: give"))
        ]
        if problems:
            bad += 1
            if i in shown:
                with st.container():
                    st.error(t("editor.invalid"), icon=":material/error:")
                    _show_problems(problems)
            else:
                hidden_bad += 1
        out.append({"id": pid, "title": title, "values": values, "answers": bool(f["answers"])})
    if hidden_bad:
        st.warning(t("editor.invalid_elsewhere", n=hidden_bad), icon=":material/error:")
    return out, bad


def _preset_row(stem: str, i: int, n: int, k: str, t: Text) -> None:
    with st.container(border=True):
        c = st.columns([2, 3, 3])
        c[0].text_input(t("editor.preset_id"), key=f"{k}:id", max_chars=40)
        c[1].text_input(t("editor.title_en"), key=f"{k}:en", max_chars=200)
        c[2].text_input(t("editor.title_zh"), key=f"{k}:zh", max_chars=200)
        st.text_input(t("editor.values"), key=f"{k}:values", help=t("editor.values_help"), max_chars=2000)
        b = st.columns([3, 1, 1, 1])
        b[0].checkbox(t("editor.preset_answers"), key=f"{k}:answers")
        b[1].button("↑", key=f"{k}:up", on_click=_move, args=(stem, i, -1), disabled=i == 0, help=t("editor.up"))
        b[2].button("↓", key=f"{k}:down", on_click=_move, args=(stem, i, 1), disabled=i == n - 1, help=t("editor.down"))
        b[3].button("✕", key=f"{k}:del", on_click=_delete, args=(stem, i), help=t("editor.delete"))


# --------------------------------------------------------------------------- the page
def _save(path, new_text: str, base: dict, t: Text, done: str) -> None:
    try:
        pf.save(path, new_text, base["hash"])
    except pf.Conflict:
        st.error(t("editor.conflict"))
        return
    except ValueError as exc:
        st.error(t("editor.refused"))
        _show_problems(str(exc).splitlines())
        return
    except OSError as exc:
        st.error(t("editor.write_failed"))
        _show_problems([str(exc)])
        return
    _reload()
    st.session_state[_FLASH] = done
    if done == "imported":  # the file is in use now: the uploader no longer offers to apply it
        st.session_state[_UPLOADS] = st.session_state.get(_UPLOADS, 0) + 1
    st.rerun()


def pages(groups: dict, lang: str) -> dict:
    """The navigation ``{group: [st.Page, ...]}`` plus the editor when an instructor is signed in.
    (Not registered for anyone else: a student opening the editor's URL gets the home page.)"""
    if not instructor.is_instructor():
        return groups
    t = Text("instructor", lang)
    page = st.Page(render, title=t("editor.nav"), icon=":material/tune:", url_path=URL_PATH)
    return {**groups, t("editor.group"): [page]}


def render() -> None:
    lang = current_lang()
    t = Text("instructor", lang)
    if not instructor.is_instructor():  # not registered for students; belt and braces
        st.stop()
    path = params_file()
    base = _base()
    st.title(t("editor.title"))
    st.markdown(t("editor.intro"))
    st.caption(t("editor.file"))
    st.code(str(path), language=None)
    flash = st.session_state.pop(_FLASH, None)
    if flash:
        st.success(t(f"editor.{flash}"), icon=":material/check:")
        st.toast(t(f"editor.{flash}"), icon=":material/check:")  # seen where the button was pressed, too

    _, disk_hash = pf.read(path)
    if disk_hash != base["hash"]:
        st.warning(t("editor.changed_on_disk"), icon=":material/sync_problem:")
        if st.button(t("editor.reload"), key="_ed_reload"):
            _reload()
            st.rerun()
    file_errors = pf.validate_text(base["text"], source=path.name)
    if file_errors:
        st.error(t("editor.file_errors"))
        _show_problems(file_errors, t)
    data, unparsable = pf.parse(base["text"], path.name)

    stems = [e.stem for e in PAGES if page_module(e.stem).SCHEMA.params]
    stem = st.selectbox(t("editor.page"), stems, key="_ed_stem", format_func=lambda s: Text(s, lang)("title"))
    schema = page_module(stem).SCHEMA
    pt = Text(stem, lang)
    res = resolve(schema, data, source=path.name)
    section = data.get(stem, {}) if isinstance(data.get(stem), dict) else {}
    file_params = section.get("params", {}) if isinstance(section.get("params"), dict) else {}

    st.header(t("editor.params"))
    edits, bad_p = _param_rows(stem, res, file_params, t, pt)
    st.header(t("editor.presets"))
    presets, bad_s = _preset_rows(stem, data, _effective_params(res, edits), t)
    c = st.columns(2)
    view = st.session_state.get(LAST_VIEW) or {}
    defaults = {n: p.default for n, p in res.params.items()}
    full = len(presets) >= MAX_PRESETS
    c[0].button(
        t("editor.add"),
        key="_ed_add",
        on_click=_add,
        disabled=full,
        args=(stem, defaults, {"en": "New preset", "zh": "新预设"}),
    )
    c[1].button(
        t("editor.add_view"),
        key="_ed_add_view",
        on_click=_add,
        disabled=full or view.get("stem") != stem,
        args=(stem, view.get("values", {}), {"en": "Saved view", "zh": "保存的视图"}),
        help=t("editor.add_view_help"),
    )

    st.divider()
    invalid = bad_p + bad_s
    if invalid:
        st.error(t("editor.cannot_save", n=invalid))
    c = st.columns(3)
    if c[0].button(t("editor.save"), key="_ed_save", type="primary", disabled=bool(invalid)):
        if invalid:  # a forged click on the disabled button
            st.error(t("editor.refused"))
        else:
            try:
                new_text = pf.apply_edits(base["text"], stem, edits, presets)
            except Exception:  # noqa: BLE001 - a file tomlkit cannot edit: Undo or an upload fixes it
                new_text = None
            if new_text is None or unparsable:
                st.error(t("editor.refused"))
                _show_problems([unparsable or f"{path.name}: cannot be edited in place"], t)
            elif new_text == base["text"]:
                st.info(t("editor.nothing"))
            else:
                _save(path, new_text, base, t, "saved")
    if c[1].button(
        t("editor.undo"), key="_ed_undo", disabled=not pf.backup_path(path).exists(), help=t("editor.undo_help")
    ):
        if undo_file(path, base["hash"], lambda k: t(f"editor.{k}"), _show_problems):
            _reload()
            st.session_state[_FLASH] = "undone"
            st.rerun()
    if c[2].button(t("editor.discard"), key="_ed_discard"):
        _reload()
        st.rerun()

    st.header(t("editor.transfer"))
    disk_text, _ = pf.read(path)
    st.download_button(
        t("editor.export"),
        data=disk_text.encode("utf-8"),
        file_name=path.name,
        mime="application/toml",
        key="_ed_export",
        on_click="ignore",
    )
    n_up = st.session_state.get(_UPLOADS, 0)
    with st.container(key="tos_ed_upload"):
        _uploader_words(t)
        # max_upload_size: the browser refuses a larger file (our caption states the limit, not 200 MB)
        up = st.file_uploader(
            t("editor.import"),
            type=["toml"],
            max_upload_size=pf.MAX_IMPORT_BYTES // 2**20,
            key="_ed_upload" if not n_up else f"_ed_upload_{n_up}",
        )
        st.caption(t("editor.import_help", mb=pf.MAX_IMPORT_BYTES // 2**20))
    if up is not None:
        text, why = pf.upload_text(up.getvalue(), pf.MAX_IMPORT_BYTES)
        if why:
            st.error(t(f"editor.{why}", kb=pf.MAX_IMPORT_BYTES // 1024))
            return
        # the messages name the uploaded file (shown literally, as every problem is)
        problems = pf.validate_text(text, source=up.name[:80] or "upload")
        if problems:
            st.error(t("editor.import_invalid"))
            _show_problems(problems, t)
            return
        st.success(t("editor.import_ok"))
        if st.button(t("editor.import_apply"), key="_ed_import_apply"):
            _save(path, text, base, t, "imported")
