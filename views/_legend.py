"""Legend layout shared by the views of coordinates, rotation, width and low_temperature (a candidate for ui.figures)."""
from __future__ import annotations

import re


def tall_legend(fig, columns: int | None = None):
    """Lay the house legend (above the plot, under the title) out in rows and reserve them in the
    top margin, so several entries never reach up into the title and the plot keeps its size.

    ``columns`` defaults to 2, or 1 when an entry is long (it would overlap its neighbour on a
    phone). The same rule as pages/gaussian_width.py's ``_tall``."""
    names = [re.sub(r"<[^>]+>", "", tr.name or "") for tr in fig.data if tr.showlegend is not False]
    if columns is None:          # a CJK character is about two Latin ones wide
        width = max((len(n) + len(re.findall(r"[\u3000-\u9fff\uff00-\uffef]", n)) for n in names), default=0)
        columns = 1 if width > 28 else 2
    rows = -(-len(names) // columns)
    fig.update_layout(legend=dict(entrywidth=1.0 / columns - 0.01, entrywidthmode="fraction"),
                      margin=dict(t=62 + 21 * rows), height=(fig.layout.height or 440) + 21 * rows)
    return fig
