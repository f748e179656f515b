"""The browser helpers live in :mod:`bench.browser` (bench/ and scripts/ never import tests/);
this module re-exports them for the tests (``from tests.e2e import browser as b``)."""
from bench.browser import *  # noqa: F401,F403
from bench.browser import _DRAWN  # noqa: F401 - the one private name, for completeness
