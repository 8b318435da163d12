"""plot_leaderboard: every system's headline metric per dataset, the systems in order of their
pooled Δ against the reference system (`crmatrix.plots.leaderboard`), from the baseline arm's runs."""

from __future__ import annotations

from pathlib import Path

from crmatrix.analysis import versus
from crmatrix.plots import frames, leaderboard
from crmatrix.plots.style import save
from crmatrix.results.run import Run


def run(*, runs: list[Path], out: Path, reference: str, headline_method: str, runtime: Path) -> list[Path]:
    """`runs`: the baseline arm's run of every system on every dataset; `reference`: the system
    the others are compared with; `headline_method`: the config's (a system without it is scored
    on its first method); `out`: the charts' stem; `runtime`: the Vega runtime their HTML loads."""
    docs = [Run.read(Path(p)) for p in runs]
    frames.check_comparable(docs)
    return save(leaderboard.draw(versus.compare(docs, reference, headline_method)), out, runtime)
