"""build_index: the builtin engine's embedding index of one corpus under one arm's index-time knobs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crmatrix import atomic
from crmatrix.corpora.languages import dominant_language
from crmatrix.engine import index
from crmatrix.engine.knobs import settle
from crmatrix.symbols import read_symbols


def run(*, symbols: Path, manifest: Path, model_dir: Path, knobs: dict[str, Any], cache_dir: Path, out: Path,
        threads: int | None = None) -> dict:
    """`knobs` are the index's fields (`crmatrix.config.plan.Plan.index_knobs`), already parsed; the ones it
    leaves to auto gating are settled on the corpus's dominant language."""
    kn = settle(knobs, dominant_language(atomic.read_json(manifest)))
    return index.build(read_symbols(symbols), kn, Path(model_dir), Path(cache_dir), Path(out), threads)
