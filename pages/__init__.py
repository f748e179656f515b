"""The pages: one folder each, ``pages/<stem>/`` (its page, parameters, views, steps, notebook
recipe and texts; ui/kit/files.py). The registry, their order and icons: ``ui/kit/nav.py``."""
