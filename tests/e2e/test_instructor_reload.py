"""A teacher who reloads one of the instructor's own pages stays on it.

The console, the parameter editor and the Lessons page are registered only for a signed-in
instructor. The check for an unknown address (``ui.kit.nav.take_unknown_page``) knew only the topic
pages, so a reload of ``/class_console`` opened the home page with "There is no page
/class_console" (seen in the lesson rehearsal): the teacher lost the console in the middle of a
class. A student who opens the same address still gets the home page.
"""

from __future__ import annotations

import pytest

from harness import browser as b
from tests.e2e.test_instructor import SB, T, see, signed_in_tab, tabs  # noqa: F401 (fixture)
from ui.kit.i18n import Text
from ui.teaching.console import CONSOLE_PATH


@pytest.mark.parametrize("lang", ["zh"])
def test_reloading_the_console_keeps_the_console(lang, teacher_server, tabs):  # noqa: F811
    pg = signed_in_tab(tabs, teacher_server, lang)
    title = Text("console", lang)("title")
    b.goto(pg, f"{teacher_server}/{CONSOLE_PATH}?lang={lang}")
    see(pg, title, '[data-testid="stMain"] h1')
    pg.reload()
    b.wait_ready(pg)
    see(pg, title, '[data-testid="stMain"] h1')
    assert "/" + CONSOLE_PATH in pg.url
    notice = Text("common", lang)("nav.unknown_page", path=CONSOLE_PATH)
    assert pg.get_by_text(notice.split("`")[0].strip()).count() == 0, "the unknown-page notice was shown"
    assert T(lang)("signin.signed_in") in pg.locator(SB).inner_text()

    student = tabs()  # a student at the same address: home, no console
    b.goto(student, f"{teacher_server}/{CONSOLE_PATH}?lang={lang}")
    assert student.locator('[data-testid="stMain"] h1', has_text=title).count() == 0
