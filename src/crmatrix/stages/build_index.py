"""build_index: the builtin engine's embedding index of one corpus under one arm's index-time knobs.

A corpus has an index per set of index-time knobs (the seed's django has nine), but its BM25
depends on the documents and the tokenizer knobs alone, not on the knobs of the embedding text.
So a corpus's indexes share one BM25: the first build of a (documents, tokenizer) keeps it in
the cache (`crmatrix.versions.bases`, kind `bm25`, hard links), and the others link it into
their index rather than tokenize the corpus again (a second of each of django's builds). The
bytes are the same either way: `BM25Index.build` is deterministic.
"""

from __future__ import annotations

import functools
import importlib.metadata
import logging
import shutil
from pathlib import Path
from typing import Any

from crmatrix import CrmatrixError, atomic, codehash
from crmatrix.corpora.languages import dominant_language
from crmatrix.engine import bm25, index
from crmatrix.engine.knobs import Knobs, settle
from crmatrix.symbols import Symbol, read_symbols
from crmatrix.versions import bases

KIND = "bm25"  # the kept BM25s' kind among the cache's bases
LIBRARIES = ("bm25s", "PyStemmer", "numpy", "scipy")  # what BM25 is tokenized and scored with
log = logging.getLogger(__name__)


def run(*, symbols: Path, manifest: Path, model_dir: Path, knobs: dict[str, Any], cache_dir: Path, out: Path,
        threads: int | None = None) -> dict:
    """`knobs` are the index's fields (`crmatrix.config.plan.Plan.index_knobs`), already parsed; the ones it
    leaves to auto gating are settled on the corpus's dominant language."""
    kn = settle(knobs, dominant_language(atomic.read_json(manifest)))
    return index.build(read_symbols(symbols), kn, Path(model_dir), Path(cache_dir), Path(out), threads,
                       bm25=functools.partial(shared_bm25, Path(cache_dir)))


def bm25_key(knobs: Knobs) -> str:
    """What a BM25 depends on besides its documents: the code it runs (`crmatrix.engine.bm25` and
    what it imports), the versions of the libraries it tokenizes and scores with, the tokenizer's
    knobs."""
    return atomic.hash_obj({"code": codehash.module_hash(bm25.__name__),
                            "versions": [importlib.metadata.version(d) for d in LIBRARIES],
                            "tokenizer": knobs.tokenizer_fields()})[:16]


def shared_bm25(cache_dir: Path, symbols: list[Symbol], knobs: Knobs, into: Path) -> None:
    """`index.build_bm25`'s BM25 into `into`: linked from the one kept for these documents and
    knobs, else built and kept. A kept one that cannot be read or linked is built again, and
    the new one kept in its place."""
    documents = [bm25.document(s) for s in symbols]
    key, name = bm25_key(knobs), atomic.hash_obj(documents)
    with bases.held(cache_dir, KIND, key, name) as kept:
        if kept is not None:
            try:
                bm25.BM25Index.load(kept, len(symbols))  # a foreign or torn one is refused here
                into.mkdir()
                bases.link_tree(kept, into)
                return
            except (OSError, CrmatrixError) as e:
                log.warning("%s: not a BM25 to share (%s); built again", kept, e)
                shutil.rmtree(into, ignore_errors=True)
    if kept is not None:  # it could not be shared: the one built now takes its place
        bases.retire(kept)
    bm25.BM25Index.build_texts(documents, knobs).save(into)
    bases.keep(into, cache_dir, KIND, key, name)
