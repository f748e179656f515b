"""The instructor's Lessons page: the lessons (built-in and own) listed, one previewed step by step as a
student sees it (the instruction, the question, a button that opens the step's exact view; the
teacher's note and the answer only here), edited in place (add the current view as a step, reorder,
delete, the texts and the question of each step) and saved as the parameter editor saves
(``ui.teaching.params_file``: lock, compare-and-swap, backup and undo), downloaded and uploaded;
and taken home (``ui.teaching.lesson_export``: one notebook, a printable handout).

Registered in the navigation only for a signed-in instructor (:func:`pages`): a student who opens its
URL gets the home page. Built-in lessons are never written: "Make my copy" puts one into the
instructor's lessons folder (``ui.teaching.lessons.own_dir``), where it is edited. Every text a
teacher typed is shown literally (``st.text``/``st.code``), never as Markdown, HTML or LaTeX.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from ui.teaching import instructor
from ui.teaching import lesson_doc as D
from ui.teaching import lessons as L
from ui.teaching import params_file as pf
from ui.teaching.editor import undo_file
from ui.teaching.answers import LAST_VIEW
from ui.teaching.live import _page
from ui.teaching.responses import q_prompt, q_value
from ui.kit.i18n import Text
from ui.kit.lang import current_lang
from ui.kit.page import read_url_again
from ui.kit.safe import literal

URL_PATH = "instructor_lessons"
_SEL = "_le_sel"  # session: the source (file path) of the lesson shown
_NEXT = "_le_next"  # session: the lesson to show on the next run (one just saved)
_WORK = "_le_work"  # session: {"path", "text", "hash"}: the working copy of an own lesson
_GEN = "_le_gen"  # session: bumped after each edit, so that the step fields start from the new text
_FLASH = "_le_flash"  # session: a message for the next run
_FLASH_ERR = "_le_flash_err"  # session: the last edit could not be applied to the file's text
_UPLOADS = "_le_uploads"  # session: uploads taken (a new uploader key after each)


def pages(groups: dict, lang: str) -> dict:
    """The navigation plus the Lessons page for an instructor (registered for nobody else)."""
    if not instructor.is_instructor():
        return groups
    page = st.Page(render, title=Text("lessons", lang)("nav"), icon=":material/school:", url_path=URL_PATH)
    group = Text("instructor", lang)("editor.group")
    return {**groups, group: [*groups.get(group, []), page]}


def _show(msgs) -> None:
    """Messages that may quote a teacher's text: literally."""
    if msgs:
        st.code("\n".join(msgs), language=None, wrap_lines=True)


def _tr(d: dict, lang: str) -> str:
    return str((d or {}).get(lang) or (d or {}).get("en") or "")


def _read(path: Path) -> tuple[str, str]:
    """``(text, sha256 of the bytes)`` of a lesson file (``params_file.read``'s pair), whatever its
    bytes: a file that is not UTF-8 reads with replacement characters, a missing one as empty."""
    try:
        raw = Path(path).read_bytes()
    except OSError:
        raw = b""
    return raw.decode("utf-8", "replace"), pf.digest(raw)


def _root() -> str:
    """The app's address ending in ``/`` (as the share link builds it: ``ui.kit.share.share_base``),
    or "" when unknown (no browser, a Host header that is not a host)."""
    from ui.kit.share import share_base

    try:
        base = share_base("", st.context.headers.get("Host"), st.context.headers.get("X-Forwarded-Proto"))
    except Exception:  # noqa: BLE001 - no browser context (tests)
        base = ""
    return base if base.endswith("/") else ""


def _flash(key: str, **fmt) -> None:
    st.session_state[_FLASH] = (key, fmt)


def render() -> None:
    lang = current_lang()
    t = Text("lessons", lang)
    if not instructor.is_instructor():  # not registered for students; belt and braces
        st.stop()
    st.title(t("title"))
    st.markdown(t("intro"))
    flash = st.session_state.pop(_FLASH, None)
    if flash:
        st.success(t(flash[0], **flash[1]), icon=":material/check:")
    st.caption(t("own_dir"))
    st.code(str(L.own_dir()), language=None, wrap_lines=True)
    lessons = L.load_all()
    by_src = {x.source: x for x in lessons}
    if st.session_state.get(_NEXT) in by_src:
        st.session_state[_SEL] = st.session_state.pop(_NEXT)
    if st.session_state.get(_SEL) not in by_src:
        st.session_state.pop(_SEL, None)

    def label(src: str) -> str:
        x = by_src[src]
        return t(
            "item", title=_tr(x.title, lang) or x.id, id=x.id, kind=t("builtin" if x.builtin else "own"), n=len(x.steps)
        )

    if lessons:
        src = st.selectbox(t("choose"), list(by_src), key=_SEL, format_func=label)
        lesson = by_src[src]
    else:
        st.info(t("none"))
        lesson = None
    if lesson is not None:
        st.caption(t("file", id=lesson.id))
        st.code(lesson.source, language=None, wrap_lines=True)
        if lesson.description:
            st.text(_tr(lesson.description, lang))
        if lesson.problems:
            st.warning(t("problems", n=len(lesson.problems)), icon=":material/report:")
            _show(lesson.problems)
    tabs = st.tabs([t("tab_preview"), t("tab_edit"), t("tab_home"), t("tab_new")])
    if lesson is not None:
        with tabs[0]:
            _preview(lesson, lang, t)
        with tabs[1]:
            _edit(lesson, lang, t)
        with tabs[2]:
            _take_home(lesson, lang, t)
    with tabs[3]:
        _new_and_upload(lang, t)


# --------------------------------------------------------------------------- preview
def _preview(lesson: L.Lesson, lang: str, t: Text) -> None:
    n = len(lesson.steps)
    if not n:
        st.info(t("no_steps"))
        return
    i = st.radio(
        t("step"), list(range(n)), key=f"_le_prev:{lesson.source}", horizontal=True, format_func=lambda k: str(k + 1)
    )
    step = lesson.steps[i]
    st.subheader(t("step_of", k=i + 1, n=n, page=Text(step.page, lang)("title")))
    st.caption(t("view_params"))
    st.text(", ".join(f"{k} = {v}" for k, v in step.values().items()))
    c = st.columns(2)
    if c[0].button(t("open_view"), key="_le_open", icon=":material/open_in_new:", help=t("open_view_help")):
        read_url_again()
        st.switch_page(_page(step.page, lang), query_params={**step.query(), "lang": lang})
    root = _root()
    if root:  # the same view in a new tab (or on another device): its link, every parameter in it
        c[1].link_button(
            t("open_link"), f"{root}{step.page}?{urlencode({**step.query(), 'lang': lang})}", icon=":material/link:"
        )
    with st.container(border=True):
        st.caption(t("student_sees"))
        if step.instruction:
            st.text(_tr(step.instruction, lang))
        _question(step, lang, t)
    if step.note:
        with st.container(border=True):
            st.caption(t("note"))
            st.text(_tr(step.note, lang))


def _question(step: L.Step, lang: str, t: Text) -> None:
    if step.question is None:
        st.caption(t("no_question"))
        return
    try:
        q = L.step_question(step, lang)
    except Exception as exc:  # noqa: BLE001 - a page's computation failing here must not break the page
        st.warning(t("no_truth"))
        _show([f"{type(exc).__name__}: {exc}"])
        return
    if q is None:
        return
    kind = step.question.kind
    st.caption(t(f"kind_{kind}"))
    if kind == "bank":  # the page's own instruction and question (the app's texts, not typed)
        from ui.teaching.lesson_export import _bank_texts

        instr, question = _bank_texts(step, lang)
        st.markdown(f"{instr}\n\n**{question}**" if instr else question)
    else:
        st.text(q_prompt(q, lang))
    if q["kind"] == "choice":
        st.text("\n".join(f"{k + 1}. {q_value(q, lang, o)}" for k, o in enumerate(q["options"])))
    unit = _tr(q.get("unit") or {}, lang)
    if unit:
        st.text(t("unit", unit=unit))  # an own question's unit is typed: shown literally
    with st.expander(t("answer"), icon=":material/visibility:"):
        if kind == "text":
            st.caption(t("answer_text"))
        elif q.get("truth") is None:
            st.caption(t("answer_poll") if kind == "choice" else t("no_truth"))
            _show([q["error"]] if q.get("error") else [])
        else:
            st.text(q_value(q, lang, q["truth"]))
            if kind == "number":
                from ui.teaching.lesson_export import tolerance

                st.caption(t("tolerance", tol=tolerance(q, t)))


# --------------------------------------------------------------------------- editing
def _work(lesson: L.Lesson) -> dict:
    """The working copy of an own lesson (read again when another lesson is chosen)."""
    w = st.session_state.get(_WORK)
    if w is None or w["path"] != lesson.source:
        text, h = _read(Path(lesson.source))
        w = st.session_state[_WORK] = {"path": lesson.source, "text": text, "hash": h, "base": text}
    return w


def _op(fn, *args, **kw) -> None:
    """Apply ``fn(working text, *args)`` (a :mod:`ui.teaching.lesson_doc` edit) to the working copy;
    a text it cannot edit stays as it is, with a message (the page stays usable: undo, upload)."""
    w = st.session_state[_WORK]
    try:
        text = fn(w["text"], *args, **kw)
    except Exception:  # noqa: BLE001 - tomlkit refuses a text: said, not raised
        st.session_state[_FLASH_ERR] = True
        return
    w["text"] = text
    st.session_state[_GEN] = st.session_state.get(_GEN, 0) + 1


def _raw_steps(text: str) -> list:
    try:
        steps = tomllib.loads(text).get("step", [])
    except (tomllib.TOMLDecodeError, RecursionError):
        return []
    return [s if isinstance(s, dict) else {} for s in steps] if isinstance(steps, list) else []


def _edit(lesson: L.Lesson, lang: str, t: Text) -> None:
    on_disk, _ = _read(Path(lesson.source))
    st.download_button(
        t("download"),
        data=on_disk.encode("utf-8"),
        file_name=f"{lesson.id}.toml",
        mime="application/toml",
        key="_le_download",
        on_click="ignore",
        icon=":material/download:",
    )
    if lesson.builtin:
        st.info(t("builtin_readonly"))
        new_id = st.text_input(t("copy_id"), value=f"{lesson.id}_ours", key="_le_copy_id", max_chars=60)
        if st.button(t("copy"), key="_le_copy", type="primary"):
            _create(new_id, on_disk, t)
        return
    w = _work(lesson)
    _, disk = _read(Path(w["path"]))
    if disk != w["hash"]:
        st.warning(t("changed_on_disk"), icon=":material/sync_problem:")
        if st.button(t("reload"), key="_le_reload"):
            st.session_state.pop(_WORK, None)
            st.rerun()
    gen = st.session_state.get(_GEN, 0)
    if st.session_state.pop(_FLASH_ERR, None):
        st.error(t("not_editable"))
    try:
        head = tomllib.loads(w["text"]).get("lesson", {})
    except (tomllib.TOMLDecodeError, RecursionError):
        head = None
    if head is None:  # not TOML: nothing to edit field by field; undo, discard, upload or fix by hand
        st.error(t("not_editable"))
    else:
        _fields(w, head if isinstance(head, dict) else {}, gen, lang, t)
    st.divider()
    _save_row(w, D.check(w["text"], Path(w["path"]).name), t)


def _fields(w: dict, head: dict, gen: int, lang: str, t: Text) -> None:
    """The title, the description and every step of the working copy, each editable."""
    with st.expander(t("head"), icon=":material/title:"):
        vals = {}
        for key in ("title", "description"):
            cur = head.get(key) if isinstance(head.get(key), dict) else {}
            for lg in L.LANGS:
                box = st.text_input if key == "title" else st.text_area
                vals[(key, lg)] = box(
                    t(f"{key}_{lg}"),
                    value=str(cur.get(lg, "")),
                    key=f"_le:{gen}:{key}:{lg}",
                    max_chars=L.MAX_TITLE if key == "title" else L.MAX_TEXT,
                )
        if st.button(t("apply"), key=f"_le:{gen}:head"):
            _op(
                D.set_head,
                title={lg: vals[("title", lg)] for lg in L.LANGS},
                description={lg: vals[("description", lg)] for lg in L.LANGS},
            )
            st.rerun()
    raw = _raw_steps(w["text"])
    for i, s in enumerate(raw):
        _step_editor(i, len(raw), s, gen, lang, t)
    view = st.session_state.get(LAST_VIEW) or {}
    here = view.get("stem")
    st.button(
        t("add_view", page=Text(here, lang)("title") if here else "—"),
        key="_le_add_view",
        disabled=not here,
        help=t("add_view_help"),
        icon=":material/add_photo_alternate:",
        on_click=_op,
        args=(D.add_step, here, dict(view.get("values") or {})),
    )


def _save_row(w: dict, problems: list[str], t: Text) -> None:
    """The lesson's problems, then Save (refused while there are any), Undo and Discard."""
    if problems:
        st.error(t("cannot_save", n=len(problems)))
        _show(problems)
    c = st.columns(3)
    if c[0].button(t("save"), key="_le_save", type="primary", disabled=bool(problems) or w["text"] == w["base"]):
        _save(Path(w["path"]), w["text"], w["hash"], t, "saved")
    if c[1].button(
        t("undo"), key="_le_undo", disabled=not pf.backup_path(Path(w["path"])).exists(), help=t("undo_help")
    ):
        if undo_file(Path(w["path"]), w["hash"], t, _show, check=D.check):
            st.session_state.pop(_WORK, None)
            _flash("undone")
            st.rerun()
    if c[2].button(t("discard"), key="_le_discard"):
        st.session_state.pop(_WORK, None)
        st.rerun()


def _step_editor(i: int, n: int, s: dict, gen: int, lang: str, t: Text) -> None:
    page = s.get("page") if isinstance(s.get("page"), str) else repr(s.get("page"))
    title = Text(page, lang)("title") if page in L._stems() else literal(page)  # a label renders Markdown
    k = f"_le:{gen}:{i}"
    with st.expander(t("step_head", k=i + 1, page=title)):
        b = st.columns(4)
        view = st.session_state.get(LAST_VIEW) or {}
        b[3].button(
            t("use_view"),
            key=f"{k}:view",
            disabled=not view.get("stem"),
            help=t("use_view_help"),
            on_click=_op,
            args=(D.set_view, i, view.get("stem"), dict(view.get("values") or {})),
        )
        b[0].button("↑", key=f"{k}:up", disabled=i == 0, help=t("up"), on_click=_op, args=(D.move, i, -1))
        b[1].button("↓", key=f"{k}:down", disabled=i == n - 1, help=t("down"), on_click=_op, args=(D.move, i, 1))
        b[2].button("✕", key=f"{k}:del", help=t("delete"), on_click=_op, args=(D.delete, i))
        params = s.get("params") if isinstance(s.get("params"), dict) else {}
        st.text(
            ", ".join(f"{a} = {v}" for a, v in params.items())
            + (f"  preset = {s['preset']}" if s.get("preset") else "")
        )
        texts = {}
        for key in ("instruction", "note"):
            cur = s.get(key) if isinstance(s.get(key), dict) else {}
            for lg in L.LANGS:
                texts[(key, lg)] = st.text_area(
                    t(f"{key}_{lg}"), value=str(cur.get(lg, "")), key=f"{k}:{key}:{lg}", max_chars=L.MAX_TEXT, height=80
                )
        q = _question_fields(s.get("question") if isinstance(s.get("question"), dict) else {}, page, k, lang, t)
        if st.button(t("apply"), key=f"{k}:apply", type="primary"):
            _op(
                D.set_step,
                i,
                {lg: texts[("instruction", lg)] for lg in L.LANGS},
                {lg: texts[("note", lg)] for lg in L.LANGS},
                q,
            )
            st.rerun()


def _num(x, default=None):
    """A finite number from the file, else ``default`` (a field starts from what the file says)."""
    ok = isinstance(x, (int, float)) and not isinstance(x, bool) and abs(float(x)) < 1e300
    return x if ok else default


def _question_fields(q: dict, page: str, k: str, lang: str, t: Text) -> dict | None:
    kinds = ["none", *L.KINDS]
    cur = q.get("kind") if q.get("kind") in L.KINDS else "none"
    kind = st.selectbox(
        t("q_kind"), kinds, index=kinds.index(cur), key=f"{k}:kind", format_func=lambda x: t(f"kind_{x}")
    )
    if kind == "none":
        return None
    if kind == "bank":
        ids = [x.id for x in L._schema(page).steps] if page in L._stems() else []
        if not ids:
            st.caption(t("no_bank"))
            return None
        pick = st.selectbox(
            t("q_bank"), ids, index=ids.index(q["bank"]) if q.get("bank") in ids else 0, key=f"{k}:bank"
        )
        return {"kind": "bank", "bank": pick}

    def texts(name: str, limit: int) -> dict:
        cur = q.get(name) if isinstance(q.get(name), dict) else {}
        c = st.columns(2)
        return {
            lg: c[j].text_input(
                t(f"q_{name}_{lg}"), value=str(cur.get(lg, "")), key=f"{k}:{name}:{lg}", max_chars=limit
            )
            for j, lg in enumerate(L.LANGS)
        }

    out = {"kind": kind, "prompt": texts("prompt", L.MAX_PROMPT)}
    if kind == "number":
        c = st.columns(2)
        value = _num(q.get("value"))
        out["value"] = c[0].number_input(t("q_value"), value=value, key=f"{k}:value", format="%g", step=None)
        tol = _num(q.get("tol"), L.DEFAULT_TOL)
        out["tol"] = c[1].number_input(t("q_tol"), value=float(tol), key=f"{k}:tol", format="%g", step=0.01)
        out["unit"] = texts("unit", L.MAX_UNIT)
        if out["value"] is None:
            del out["value"]
    elif kind == "choice":
        opts = q.get("options") if isinstance(q.get("options"), list) else []
        lines = {lg: "\n".join(str(o.get(lg, "")) if isinstance(o, dict) else str(o) for o in opts) for lg in L.LANGS}
        c = st.columns(2)
        got = {
            lg: [
                x.strip()[: L.MAX_OPTION]
                for x in c[j]
                .text_area(
                    t(f"q_options_{lg}"), value=lines[lg], key=f"{k}:options:{lg}", help=t("q_options_help"), height=100
                )
                .splitlines()
                if x.strip()
            ][: L.MAX_OPTIONS]
            for j, lg in enumerate(L.LANGS)
        }
        m = max(len(got["en"]), len(got["zh"]))
        out["options"] = [{lg: (got[lg][j] if j < len(got[lg]) else "") for lg in L.LANGS} for j in range(m)]
        correct = int(_num(q.get("correct"), 0))
        pick = st.number_input(
            t("q_correct"),
            min_value=0,
            max_value=L.MAX_OPTIONS,
            value=min(max(correct, 0), 8),
            key=f"{k}:correct",
            help=t("q_correct_help"),
        )
        if pick:
            out["correct"] = int(pick)
    return out


# --------------------------------------------------------------------------- saving
def _save(path: Path, text: str, expected: str, t: Text, done: str) -> bool:
    try:
        pf.save(path, text, expected, check=D.check)
    except pf.Conflict:
        st.error(t("conflict"))
        return False
    except ValueError as exc:
        st.error(t("refused"))
        _show(str(exc).splitlines())
        return False
    except OSError as exc:
        st.error(t("write_failed"))
        _show([str(exc)])
        return False
    st.session_state.pop(_WORK, None)
    st.session_state[_NEXT] = str(path)
    _flash(done, id=path.stem)
    st.rerun()
    return True


def _create(lid: str, text: str, t: Text, replace: bool = False) -> None:
    """Write an own lesson ``lid`` (a new file, or with ``replace`` the one of that id, kept as backup)."""
    lid = str(lid or "").strip()
    if not L.LESSON_ID.match(lid):
        st.error(t("bad_id"))
        return
    folder = L.own_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        st.error(t("write_failed"))
        _show([str(exc)])
        return
    path = folder / f"{lid}.toml"
    old, h = _read(path)
    if old and not replace:
        st.error(t("exists", id=lid))
        return
    _save(path, D.set_head(text, lid=lid), h, t, "created")


def _new_and_upload(lang: str, t: Text) -> None:
    st.subheader(t("new"))
    c = st.columns(2)
    lid = c[0].text_input(t("new_id"), key="_le_new_id", max_chars=60, help=t("new_id_help"))
    title = c[1].text_input(t("new_title"), key="_le_new_title", max_chars=L.MAX_TITLE)
    view = st.session_state.get(LAST_VIEW) or {}
    if st.button(t("create"), key="_le_create", disabled=not (lid and title)):
        text = D.new(lid.strip(), {lg: title for lg in L.LANGS})
        if view.get("stem"):
            text = D.add_step(text, view["stem"], dict(view.get("values") or {}))
        else:
            text = D.add_step(text, "two_point", {})
        _create(lid, text, t)
    st.subheader(t("upload"))
    n_up = st.session_state.get(_UPLOADS, 0)
    up = st.file_uploader(
        t("upload_help"), type=["toml"], key=f"_le_upload_{n_up}", max_upload_size=max(1, L.MAX_BYTES // 2**20)
    )
    if up is None:
        return
    text, why = pf.upload_text(up.getvalue(), L.MAX_BYTES)
    if why:
        st.error(t(why, kb=L.MAX_BYTES // 1024))
        return
    lesson = L.parse(text, (up.name or "upload")[:80])
    if lesson.problems:
        st.error(t("upload_invalid"))
        _show(lesson.problems)
        return
    st.success(t("upload_ok", id=lesson.id, n=len(lesson.steps)))
    exists = (L.own_dir() / f"{lesson.id}.toml").exists()
    if st.button(t("upload_replace" if exists else "upload_save", id=lesson.id), key="_le_upload_save"):
        st.session_state[_UPLOADS] = n_up + 1
        _create(lesson.id, text, t, replace=True)


# --------------------------------------------------------------------------- take home
def _take_home(lesson: L.Lesson, lang: str, t: Text) -> None:
    from ui.teaching import lesson_export as X

    st.markdown(t("home_intro"))
    base = _root()  # the app's address, for the handout's links to each view (none when unknown)
    if not lesson.steps:
        st.info(t("no_steps"))
        return
    st.download_button(
        t("home_notebook"),
        data=lambda: X.notebook_bytes(lesson, lang),
        file_name=f"{lesson.id}.ipynb",
        mime="application/x-ipynb+json",
        key="_le_nb",
        on_click="ignore",
        icon=":material/description:",
    )
    c = st.columns(2)
    for col, teacher, label, end, icon in (
        (c[0], False, "home_handout", "", "print"),
        (c[1], True, "home_teacher", "_answers", "key"),
    ):
        col.download_button(
            t(label),
            data=lambda teacher=teacher: X.handout(lesson, lang, teacher=teacher, base=base).encode("utf-8"),
            file_name=f"{lesson.id}_{lang}{end}.html",
            mime="text/html",
            key=f"_le_{label}",
            on_click="ignore",
            icon=f":material/{icon}:",
        )
    st.caption(t("home_print"))
