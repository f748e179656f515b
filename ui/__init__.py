"""Shared page machinery: parameter specs, URL state, languages, figures.

Pages stay thin: ``ctx = ui.page.setup(SCHEMA)`` draws the controls and
returns the current values; the page calls cached :mod:`sim` functions and
draws figures with :mod:`ui.figures`.
"""
