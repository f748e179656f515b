"""The one registration point between the page kit and the features above it.

The kit (``ui.kit.page`` and what it uses) knows nothing of instructors, classes or answers; the app
registers what those features add at start (``app.py``)::

    hooks.register(after_section={"questions": answers.show_answers},
                   url_flags=(classroom.url_flags,))

* ``after_section[key](ctx)`` runs right after ``Ctx.section(key)`` (worked answers under the
  questions);
* every ``url_flags()`` returns query entries kept in every page's URL (a class code);
* ``answers_public(ctx)`` says whether the page's worked answers are public for this view (released
  by the instructor, or a preset that shows them): a downloaded notebook then includes them.

Registering again replaces what was registered (app.py does it on every run: cheap and idempotent).
"""

from __future__ import annotations

from collections.abc import Callable

_after_section: dict[str, Callable] = {}
_url_flags: list[Callable[[], dict]] = []
_answers_public: list[Callable] = []


def register(
    *,
    after_section: dict[str, Callable] | None = None,
    url_flags: tuple[Callable[[], dict], ...] = (),
    answers_public: Callable | None = None,
) -> None:
    """Set the hooks (each call replaces the previous registration)."""
    _after_section.clear()
    _after_section.update(after_section or {})
    _url_flags[:] = list(url_flags)
    _answers_public[:] = [answers_public] if answers_public is not None else []


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


def answers_public(ctx) -> bool:
    """True when a registered feature says the worked answers of page ``ctx`` are public now."""
    return any(fn(ctx) for fn in _answers_public)
