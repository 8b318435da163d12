"""What a resolved Matrix must satisfy that its schema cannot say: pins well formed, names fit
for paths and wildcards, every cross-reference (models, arms, trackers) to something that
exists (`check`); and, where it is to run, the files and directories it names present
(`files`: the workflow and `crmatrix validate` ask, before any job would miss one). The first
problem is one CrmatrixError naming the config, the key and what was expected.
"""

from __future__ import annotations

import re
from pathlib import Path

from crmatrix import CrmatrixError
from crmatrix.config.matrix import Matrix
from crmatrix.corpora import views
from crmatrix.corpora.languages import LANGUAGES
from crmatrix.corpora.pins import Pin
from crmatrix.datasets import derived
from crmatrix.datasets.registry import corpus_kinds
from crmatrix.systems import templates
from crmatrix.trackers import ALWAYS_TRACKED, TRACKERS

KNOWN_LANGUAGES = frozenset(LANGUAGES.values())
# A corpus, dataset, system or arm name becomes a path component and a Snakemake wildcard value.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+@-]*")


def check(matrix: Matrix) -> Matrix:
    """`matrix` itself when it holds together, else the first problem."""
    try:
        _names(matrix)
        _corpora(matrix)
        _datasets(matrix)
        _models(matrix)
        _systems(matrix)
        _trackers(matrix)
    except CrmatrixError as e:
        raise CrmatrixError(f"{matrix.source}: {e}") from None
    return matrix


def _names(m: Matrix) -> None:
    for key, names in (("corpora", [c for c, corpus in m.corpora.items() if corpus.kind != "view"]),
                       ("datasets", m.datasets), ("systems", m.systems), ("arms", m.arms)):
        for name in names:
            if views.SEPARATOR in name and key == "corpora":
                raise CrmatrixError(f"corpora.{name}: {views.SEPARATOR!r} is kept for the views crmatrix makes "
                                    f"of a corpus ({views.view_name('NAME')}); rename the corpus")
            if not NAME.fullmatch(name):
                raise CrmatrixError(f"{key}.{name}: {name!r} cannot name files and jobs (expected a letter or digit, "
                                    "then letters, digits, '.', '_', '+', '@' or '-')")


def _corpora(m: Matrix) -> None:
    written = tuple(corpus_kinds())
    for name, corpus in m.corpora.items():
        if corpus.kind in ("view", "repository"):  # made by crmatrix, of a corpus or of a dataset's rows
            continue
        Pin.from_config(name, corpus.conf, written)
        if corpus.language is not None and corpus.language not in KNOWN_LANGUAGES:
            raise CrmatrixError(f"corpora.{name}.language: expected one of: {', '.join(sorted(KNOWN_LANGUAGES))}, "
                                f"got {corpus.language!r}")


def _datasets(m: Matrix) -> None:
    for name, ds in m.datasets.items():
        if ds.format != derived.FORMAT:
            if "max_queries" in ds.conf:
                raise CrmatrixError(f"datasets.{name}.max_queries: samples only a derived dataset "
                                    f"(format: {derived.FORMAT}), not format {ds.format!r}")
            if "seed" in ds.conf and ds.split["split"] in ("all", "structural"):
                raise CrmatrixError(f"datasets.{name}.seed: shuffles only a held-out split (split: dev, test, "
                                    f"small_dev or small_test) or a derived dataset's sample, not split "
                                    f"{ds.split['split']!r}")
        if ds.derived_split and not any(s.embeds_with_arm_model for s in m.systems.values()):
            raise CrmatrixError(f"datasets.{name}.split: needs a builtin system with the semantic method "
                                "(its baseline-arm index ranks the split)")
    for i, arm in enumerate(m.comparisons or ()):
        if arm not in m.arms or arm == m.baseline_arm:
            raise CrmatrixError(f"comparisons.{i}: {arm!r} is not an arm compared with the baseline "
                                f"({', '.join(a for a in m.arms if a != m.baseline_arm)})")


def _models(m: Matrix) -> None:
    if m.default_model not in m.models:
        raise CrmatrixError(f"default_model: {m.default_model!r} is not one of the models ({', '.join(m.models)})")
    from crmatrix.embed.backends import check_model  # each kind checks the keys it reads

    for name, model in m.models.items():
        check_model(name, model)
    for name, arm in m.arms.items():
        if arm.model not in m.models:
            raise CrmatrixError(f"arms.{name}.CRMATRIX_MODEL: {arm.model!r} is not one of the models "
                                f"({', '.join(m.models)})")


def _systems(m: Matrix) -> None:
    """Each `{model:NAME}` of a system's options names a model of the config."""
    for name, system in m.systems.items():
        for key, value in system.options.items():
            for where, model in templates.model_uses(key, value):
                if model not in m.models:
                    raise CrmatrixError(f"systems.{name}.options.{where}: {{model:{model}}} names no model of the "
                                        f"config (known models: {', '.join(m.models)})")


def _trackers(m: Matrix) -> None:
    for name in m.trackers:
        if name == ALWAYS_TRACKED:
            raise CrmatrixError(f"trackers.{name}: always written (results/tracking/), not named in the config")
        TRACKERS.get(name, f"trackers.{name}")


def files(matrix: Matrix) -> None:
    """Each dataset file, path corpus and benchmark file the matrix names is there (relative to
    the working directory): a missing one is named by its key now, not by a job that misses it."""
    named = [(f"datasets.{d}.file", ds.file, Path.is_file) for d, ds in matrix.datasets.items() if not ds.written]
    for c, corpus in matrix.corpora.items():
        if "path" in corpus.conf:
            named.append((f"corpora.{c}.path", corpus.conf["path"], Path.is_dir))
        if corpus.written_file is not None:
            named.append((f"corpora.{c}.{corpus.written_kind}.file", corpus.written_file, Path.is_file))
    for key, path, exists in named:
        if not exists(Path(path)):
            what = "directory" if exists is Path.is_dir else "file"
            raise CrmatrixError(f"{matrix.source}: {key}: {path!r} is not a {what} (from {Path.cwd()})")
