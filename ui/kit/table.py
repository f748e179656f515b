"""Columns of numbers as CSV text (the page's download button, a figure's plotted data)."""

from __future__ import annotations

import csv
import io


def to_csv(columns: dict) -> str:
    names = list(columns)
    cols = [list(map(_cell, columns[n])) for n in names]
    nrow = max((len(c) for c in cols), default=0)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(names)
    for i in range(nrow):
        w.writerow([c[i] if i < len(c) else "" for c in cols])
    return buf.getvalue()


def _cell(x):
    try:
        f = float(x)
    except (TypeError, ValueError):
        return x
    return f"{f:.12g}"
