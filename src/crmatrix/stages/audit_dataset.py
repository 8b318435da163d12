"""audit_dataset: a dataset's normalized tasks audited (crmatrix.datasets.audit), as JSON, Markdown and
the same as a page for the report."""

from __future__ import annotations

from pathlib import Path

from crmatrix import atomic
from crmatrix.datasets import audit
from crmatrix.datasets.tasks import read_tasks
from crmatrix.labels import dataset_label
from crmatrix.plots.gallery import markdown_page


def run(tasks: Path, name: str, json_out: Path, md_out: Path, html_out: Path, note: str | None = None) -> dict:
    """`note`: the dataset's caveat (config `note`), shown with its name in the page's title."""
    result = {"dataset": name, **audit.audit(read_tasks(Path(tasks)))}
    label = dataset_label(name, note)
    text = audit.to_text(result, label)
    atomic.write_json(Path(json_out), result)
    atomic.write_text(Path(md_out), text)
    atomic.write_text(Path(html_out), markdown_page(f"Dataset audit — {label}", text))
    return result
