"""The one registration point between the page kit and the features above it.

The kit (``ui.page`` and what it uses) knows nothing of instructors, classes or answers; the app
registers what those features add at start (``app.py``)::

    hooks.register(after_section={"questions": answers.show_answers},
                   url_flags=(classroom.url_flags,))

* ``after_section[key](ctx)`` runs right after ``Ctx.section(key)`` (worked answers under the
  questions);
* every ``url_flags()`` returns query entries kept in every page's URL (a class code).

Registering again replaces what was registered (app.py does it on every run: cheap and idempotent).
"""
from __future__ import annotations

from typing import Callable

_after_section: dict[str, Callable] = {}
_url_flags: list[Callable[[], dict]] = []


def register(*, after_section: dict[str, Callable] | None = None,
             url_flags: tuple[Callable[[], dict], ...] = ()) -> None:
    """Set the hooks (each call replaces the previous registration)."""
    _after_section.clear()
    _after_section.update(after_section or {})
    _url_flags[:] = list(url_flags)


def after_section(key: str, ctx) -> None:
    """Run what a feature added under section ``key`` of the page ``ctx``."""
    fn = _after_section.get(key)
    if fn is not None:
        fn(ctx)


def url_flags() -> dict:
    """The query entries the registered features keep in every page's URL."""
    out: dict = {}
    for fn in _url_flags:
        out.update(fn())
    return out
