"""Tokens on the Sphere — entry point: ``make run`` (``python -m ui.server``: ``streamlit run app.py`` with
every server fix installed before it starts), or a plain ``streamlit run app.py`` (what it cannot have
then: docs/deploy.md)."""

from ui.server import start as _env  # noqa: F401 - first: a thread-safe Numba layer, one BLAS thread (a plain streamlit run)
from ui.server import prepare

prepare.wait()  # the served process imports the app at start, in the background (ui/server/prepare.py)

import streamlit as st  # noqa: E402

import gc
from pathlib import Path

from sim import _interrupt, _ready
from sim.warm import ensure_warm, start_background
from ui.kit import compute, cover, hooks, style
from ui.server import adapters, budgets, runs
from ui.teaching import answers, classroom, editor, instructor, lesson_editor, lesson_run
from ui.kit.i18n import Text
from ui.kit.nav import PAGES, navigation, page_module, take_unknown_page, unknown_page_notice
from ui.kit.lang import language_selector, mark_document
from ui.kit.page import entering


ICON = Path(__file__).resolve().parent / "assets" / "favicon.png"


def _start_up() -> tuple[str, ...]:
    """Once per server process: compile/load every Numba kernel (in the background when the server
    was started by ``ui.server.serve``: see :func:`sim.warm.ensure_warm`), import every page module,
    then freeze what start-up allocated. Streamlit runs a full ``gc.collect()`` after each
    rerun; with numba, scipy and plotly loaded that scans a few hundred thousand long-lived
    objects on every rerun. Frozen objects are never scanned again; per-run garbage is still
    collected (docs/performance.md has the measurements). Long simulations get their stopping
    points (``sim._interrupt``): a run the user has already superseded (a held arrow key) ends
    between two chunks of its simulation instead of at its end."""
    _interrupt.install(compute.stop_if_superseded)
    missing = adapters.install_late()  # a plain `streamlit run`: what can still be had (else nothing)
    if missing:
        start_background(on_ready=prepare.load_kernels)  # kernels compile in the background here too
    ensure_warm()
    for e in PAGES:
        page_module(e.stem)  # module level only: imports, SCHEMA
    gc.collect()
    gc.freeze()
    return missing


# Full runs take turns, first come first served (ui/server/runs.py): a burst of 30 students finishes
# one by one instead of all at the end.
classroom.follow_push()  # a push the class poll saw: its page opens before anything else is done
# A held key or a dragged slider: its newest value is waited for (holding no turn) before computing.
with runs.settled(), runs.turn():
    # The icon is a file the server serves (a ":material/…:" icon is fetched from a font host on the
    # internet, which a school network may not reach).
    st.set_page_config(page_title="Tokens on the Sphere", page_icon=str(ICON), layout="wide")
    plain_run = st.cache_resource(show_spinner=False)(_start_up)()
    # The one place where the instructor and class features plug into the page kit (ui/kit/hooks.py):
    # worked answers under a page's questions (and in its notebook once public), the class's push /
    # ask under its intro, the class code kept in every page's URL.
    hooks.register(
        after_section={"questions": answers.show_answers, "intro": classroom.on_page},
        url_flags=(classroom.url_flags, lesson_run.url_flags),
        answers_public=answers.public,
    )
    lang = language_selector()
    style.projector_toggle(Text("common", lang)("view.projector"))
    style.inject()
    cover.clear_open()  # a class or lesson question open on the page: said again by its box below
    if _ready.pending():  # the first visits after a start: the kernels are still being prepared (sim/warm.py)
        st.container(key="tos_warming").caption(Text("common", lang)("ui.warming"))
    if budgets.was_slowed():  # this browser went over its message budget (ui/server/budgets.py)
        st.warning(Text("common", lang)("ui.slowed"), icon=":material/speed:")
    teacher = instructor.sidebar(lang)  # draws nothing (None) unless instructor mode is configured
    if teacher is not None:
        classroom.sidebar(lang, teacher)
        if plain_run:  # started by a plain `streamlit run app.py`: say what is missing (docs/deploy.md)
            st.sidebar.caption(Text("instructor", lang)("server.plain_run"))
    lesson_run.alone(lang)  # a lesson at the student's own pace (/?lesson=<run>&me=<token>), teacher online or not
    # expanded: every page listed (Streamlit's own "View N more" button has no Chinese label)
    groups = editor.pages(navigation(lang), lang)  # the instructor's pages: the editor, the class console
    groups = classroom.pages(groups, lang, bool(teacher))
    groups = lesson_editor.pages(groups, lang)  # the instructor's Lessons page (prepared lessons)
    # /nosuchpage: the home page with a notice, not Streamlit's English dialog (an instructor's page
    # registered in this run is known: a teacher reloading the console stays on it)
    unknown = take_unknown_page({p.url_path for ps in groups.values() for p in ps})
    page = st.navigation(groups, position="sidebar", expanded=True)
    mark_document(lang, getattr(page, "title", None))  # <html lang> and the tab title follow the page, its language
    if unknown is not None:
        st.warning(unknown_page_notice(unknown, lang), icon="⚠️")
    entering(page.url_path)  # another page than the last run's: it reads its URL again
    if not lesson_run.paused():  # a live lesson the teacher paused: eyes on the teacher, no page to drag
        page.run()
