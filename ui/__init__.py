"""The page kit, the instructor and class features, and the server (docs/architecture.md).

Pages stay thin: ``ctx = ui.kit.page.setup(SCHEMA)`` draws the controls and returns the current
values; the page calls cached :mod:`sim` functions (through ``views/``) and draws figures with
:mod:`ui.kit.figures`. The layers and what each may import: tests/test_layering.py.
"""
