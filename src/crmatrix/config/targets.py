"""The files a Matrix's aggregating rules and `rule all` ask for: every run and cell of the
matrix, what aggregates them (call graphs, release/candidate pairs, audits, baselines), and the
charts. `Plan` (crmatrix.config.plan) answers these questions with the per-job ones."""

from __future__ import annotations

from functools import cached_property

from crmatrix.config.matrix import Matrix
from crmatrix.config.paths import Layout


class Targets:
    """The matrix's runs and what aggregates them, its files under `root` (`paths`: the layout there)."""

    matrix: Matrix
    root: str
    paths: Layout

    @cached_property
    def system_datasets(self) -> dict[str, list[str]]:
        """System -> the datasets of the phase matrix it runs on."""
        return {s: self.matrix.system_datasets(s) for s in sorted(self.matrix.systems)}

    def cells(self, kind: str) -> list[str]:
        """The file of `kind` (a run's: run, cell, tracking, ...) for every run of the matrix: each
        system on each of its datasets under each of its arms."""
        m, pattern = self.matrix, self.paths.pattern(kind)
        return [pattern.format(dataset=d, system=s, arm=a) for d in m.retrieval_datasets for s in sorted(m.systems)
                if d in self.system_datasets[s] for a in m.systems[s].arms]

    def run_files(self) -> list[str]:
        return self.cells("run")

    def cell_files(self) -> list[str]:
        return self.cells("cell")

    def times_files(self) -> list[str]:
        return self.cells("times")

    def tracking_files(self) -> list[str]:
        """Each run's JSONL event log, and its receipt from the trackers the config names."""
        logs = self.cells("tracking")
        return logs + self.cells("sent") if self.matrix.trackers else logs

    def callgraph_files(self) -> list[str]:
        m = self.matrix
        return [self.paths.file("callgraph", dataset=d, system=s) for d in m.callgraph_datasets
                for s in sorted(m.systems) if m.systems[s].cls.ANSWERS_CALLS and d in m.systems[s].datasets]

    def compare_files(self) -> list[str]:
        """The runs of both sides of every release/candidate pair, on the datasets both run."""
        runs = set()
        for p in self.matrix.compare.values():
            both = set(self.system_datasets[p["release"]["system"]]) & set(
                self.system_datasets[p["candidate"]["system"]])
            runs |= {self.paths.file("run", dataset=d, system=p[k]["system"], arm=p[k]["arm"])
                     for d in both for k in ("release", "candidate")}
        return sorted(runs)

    def audit_files(self) -> list[str]:
        return [self.paths.file("audit", dataset=d, ext=ext) for d in self.matrix.retrieval_datasets
                for ext in ("json", "md", "html")]

    def baseline_runs(self, systems: list[str]) -> list[str]:
        """The baseline arm's run of each of `systems` on each dataset it runs: systems as they ship."""
        return [self.paths.file("run", dataset=d, system=s, arm=self.matrix.baseline_arm)
                for d in self.matrix.retrieval_datasets for s in systems if d in self.system_datasets[s]]

    def system_cells(self, system: str, arms: list[str]) -> list[str]:
        """The cells of these arms and the baseline's on every dataset of `system` (those it runs)."""
        wanted = {self.matrix.baseline_arm, *arms}
        return [self.paths.file("cell", dataset=d, system=system, arm=a) for d in self.system_datasets[system]
                for a in self.matrix.systems[system].arms if a in wanted]

    def summaries(self, datasets: list[str]) -> list[str]:
        return [self.paths.file("summary", dataset=d) for d in datasets]

    def chart_models(self, system: str) -> dict[str, str]:
        """arm -> the config's name of the model the system embeds with under it (none: no
        model), the name a chart's legend gives it: a run records a model by its hash and source."""
        sc = self.matrix.systems[system]
        return {a: self.matrix.arms[a].model for a in sc.arms} if sc.embeds_with_arm_model else {}

    @cached_property
    def row_chart_groups(self) -> list[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]]:
        """(datasets, systems, kinds of chart) for each set of datasets some systems run on and
        the row charts they get (`names.row_kinds`: no transitions for a system that runs the
        baseline alone), the full set with both kinds first: one rule drawing the row charts of each."""
        from crmatrix.plots import names

        m = self.matrix
        key = {s: (tuple(d), names.row_kinds(list(m.systems[s].arms), m.baseline_arm))
               for s, d in self.system_datasets.items()}
        groups = {k: tuple(s for s in key if key[s] == k) for k in key.values()}
        return sorted(((d, systems, kinds) for (d, kinds), systems in groups.items()),
                      key=lambda g: (g[0] != tuple(m.retrieval_datasets), len(g[2]) != 2, g))

    @cached_property
    def plot_stems(self) -> list[str]:
        from crmatrix.plots import names

        m = self.matrix
        return names.stems(self.system_datasets, {s: list(m.systems[s].arms) for s in sorted(m.systems)},
                           m.baseline_arm, {w: [c["arm"] for c in g["cells"]] for w, g in m.sweeps.items()},
                           m.reference_system)

    def plot_outputs(self, fmt: str) -> list[str]:
        return [self.paths.file("chart", stem=stem, ext=fmt) for stem in self.plot_stems]
