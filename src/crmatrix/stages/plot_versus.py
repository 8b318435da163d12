"""plot_versus: one system against the reference system per dataset, paired on the queries both
answered, and pooled (`crmatrix.plots.versus`), from the two systems' baseline-arm runs alone."""

from __future__ import annotations

from pathlib import Path

from crmatrix.analysis import versus as compared
from crmatrix.plots import frames, versus
from crmatrix.plots.style import save
from crmatrix.results.run import Run


def run(*, runs: list[Path], out: Path, system: str, reference: str, headline_method: str, runtime: Path
        ) -> list[Path]:
    """`runs`: the baseline arm's runs of `system` and of `reference` on every dataset; else as
    `crmatrix.stages.plot_leaderboard.run`."""
    docs = [Run.read(Path(p)) for p in runs]
    frames.check_comparable(docs)
    return save(versus.draw(compared.compare(docs, reference, headline_method), system), out, runtime)
