"""``python -m ui.server [options]``: the same as ``python -m ui.server.serve [options]``."""

from ui.server.start import main  # sets the threading layer and BLAS threads before anything loads numpy

main()
