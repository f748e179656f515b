"""Class sessions: the instructor opens a class, students join and follow.

The live class lives in five modules of ``ui.teaching``, each one job:

* ``responses``: the answers, pure (no Streamlit): the answer id, an answer checked and judged,
  the histogram of a class's answers, the results as CSV;
* ``student``: what a student sees: joining, the banner with the live question and its answer
  box, the poll that follows the instructor's pushes (:func:`follow_push`, :func:`url_flags`);
* ``teacher``: the instructor's panel on a lesson page: push this view, ask a question from the
  page's own bank or ad hoc, the live answers and Reveal (:func:`on_page`);
* ``console``: the class console page (:func:`pages`) and the class box of the sidebar
  (:func:`sidebar`: the instructor's panel, or the student's banner / join box);
* ``live``: what they share (session keys, the store, texts, the join link).

State lives in ``ui.teaching.class_store`` (in memory, or Redis with ``APP_REDIS_URL``). This module
only gathers what app.py registers and calls.
"""

from __future__ import annotations

from ui.teaching.console import pages, sidebar
from ui.teaching.student import follow_push, url_flags
from ui.teaching.teacher import on_page

__all__ = ["follow_push", "on_page", "pages", "sidebar", "url_flags"]
