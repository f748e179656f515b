"""Per-page data adapters (``@cached``) and figure builders (``@cached_figure``): ``views/<page>.py``."""
