"""The page kit: what every page is built from (schemas and texts, controls, figures, the predict
steps, notebooks, ``setup``/``Ctx``). It imports nothing above it; the instructor and class
features plug in through :mod:`ui.kit.hooks`."""
