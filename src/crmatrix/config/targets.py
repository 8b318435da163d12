"""The files a Matrix's aggregating rules and `rule all` ask for: every run and cell of the
matrix, what aggregates them (call graphs, release/candidate pairs, audits, baselines), and the
charts. `Plan` (crmatrix.config.plan) answers these questions with the per-job ones."""

from __future__ import annotations

from functools import cached_property

from crmatrix.config.matrix import Matrix


class Targets:
    """The matrix's runs and what aggregates them, its files under `root`."""

    matrix: Matrix
    root: str

    @cached_property
    def system_datasets(self) -> dict[str, list[str]]:
        """System -> the datasets of the phase matrix it runs on."""
        return {s: self.matrix.system_datasets(s) for s in sorted(self.matrix.systems)}

    def cells(self, pattern: str) -> list[str]:
        """`pattern` for every run of the matrix: each system on each of its datasets under each
        of its arms."""
        m = self.matrix
        return [pattern.format(d=d, s=s, a=a) for d in m.retrieval_datasets for s in sorted(m.systems)
                if d in self.system_datasets[s] for a in m.systems[s].arms]

    def run_files(self) -> list[str]:
        return self.cells(f"{self.root}/runs/{{d}}/{{s}}/{{a}}.json")

    def cell_files(self) -> list[str]:
        return self.cells(f"{self.root}/cells/{{d}}/{{s}}/{{a}}.json")

    def tracking_files(self) -> list[str]:
        """Each run's JSONL event log, and its receipt from the trackers the config names."""
        logs = self.cells(f"{self.root}/tracking/{{d}}/{{s}}/{{a}}.jsonl")
        return logs + self.cells(f"{self.root}/tracking/{{d}}/{{s}}/{{a}}.sent.json") if self.matrix.trackers else logs

    def callgraph_files(self) -> list[str]:
        m = self.matrix
        return [f"{self.root}/callgraph/{d}/{s}.json" for d in m.callgraph_datasets for s in sorted(m.systems)
                if m.systems[s].cls.ANSWERS_CALLS and d in m.systems[s].datasets]

    def compare_files(self) -> list[str]:
        """The runs of both sides of every release/candidate pair, on the datasets both run."""
        runs = set()
        for p in self.matrix.compare.values():
            both = set(self.system_datasets[p["release"]["system"]]) & set(
                self.system_datasets[p["candidate"]["system"]])
            runs |= {f"{self.root}/runs/{d}/{p[k]['system']}/{p[k]['arm']}.json"
                     for d in both for k in ("release", "candidate")}
        return sorted(runs)

    def audit_files(self) -> list[str]:
        return [f"{self.root}/audit/{d}.{ext}" for d in self.matrix.retrieval_datasets
                for ext in ("json", "md", "html")]

    def baseline_runs(self, systems: list[str]) -> list[str]:
        """The baseline arm's run of each of `systems` on each dataset it runs: systems as they ship."""
        return [f"{self.root}/runs/{d}/{s}/{self.matrix.baseline_arm}.json" for d in self.matrix.retrieval_datasets
                for s in systems if d in self.system_datasets[s]]

    def system_cells(self, system: str, arms: list[str]) -> list[str]:
        """The cells of these arms and the baseline's on every dataset of `system` (those it runs)."""
        wanted = {self.matrix.baseline_arm, *arms}
        return [f"{self.root}/cells/{d}/{system}/{a}.json" for d in self.system_datasets[system]
                for a in self.matrix.systems[system].arms if a in wanted]

    def summaries(self, datasets: list[str]) -> list[str]:
        return [f"{self.root}/datasets/{d}.summary.json" for d in datasets]

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
        return [f"{self.root}/plots/{stem}.{fmt}" for stem in self.plot_stems]
