"""How a dataset is named to a reader: with its caveat (config `note`) when it has one.

A module of its own, outside the analysis package, because the Markdown tables, every chart
and the audit page name datasets alike, and a chart's code hash (crmatrix.codehash)
must not hold the matrix's writer: an edit of the tables redraws no chart.
"""

from __future__ import annotations


def dataset_label(name: str, note: str | None) -> str:
    """A dataset's name as every table and chart shows it: with its caveat when it has one."""
    return f"{name} ({note})" if note else name
